"""The Executor's tools: a registry of built-in and host-registered tools.

Equipment of the Executor (R3), not a role: it imports only ``artoo.schemas``, its
sibling ``law1`` and the standard library (the blob store it keeps before-images in is
given: :class:`artoo.eventstore.BlobStore`).

Built-in tools (their JSON schemas come from the type hints and docstrings below):

* ``glob(pattern)`` — how many workspace paths match a glob pattern, then the paths.
* ``read_file(path, offset=0, limit=SPILL_LIMIT)`` — a page of a text file (offsets in
  characters).
* ``write_file(path, content)`` — create or replace a text file.
* ``shell(command, timeout_s=None)`` — run a command with cwd = workspace, a timeout and
  an output cap; the result carries the exit code, stdout and stderr (a non-zero exit or
  a timeout makes the call ``ok=False``). A command line that exits 127 (command not
  found) is followed, in what the model is shown only, by a note for each program it
  names that is not on the shell's PATH while the name with ``3`` is: ``[python is not
  installed here; python3 is: use python3]`` (:func:`._shell.sibling_notes`).
* ``run_tests(select=None)`` — run the workspace's tests (pytest, or unittest where the
  interpreter has no pytest; found by :func:`._testsuite.discover`) and report which pass
  and which fail, each failure with its first error line; ``select``: test ids or paths.
  In the sandbox like ``shell``, its effects always discarded — never applied, so Law 1
  has nothing to ask; without one, in a temporary copy of the workspace. Its
  ``ToolCall.content`` is the record ``{"runner", "outcomes", "collected", "exit_code",
  "error"}`` (JSON, never cut; :mod:`._testrun`), ``ok=False`` only when the run gave no
  result (a timeout: ``tests_timeout_s``; a usage error). Failing tests are a result.
* ``load_data(filename, offset=0, limit=SPILL_LIMIT)`` — read a spilled result back (the
  Executor offers it to its model only once a result of the conversation was spilled).

Hosts add their own with :meth:`ToolRegistry.register`.

Guards, in the order they apply to a call:

1. **Arguments** are checked against the tool's schema; a wrong call never raises, it
   gives a ToolCall with ``ok=False`` and an error naming the problem.
2. **Workspace confinement**: file tools resolve paths inside the workspace root only;
   ``..`` escapes, absolute paths outside and symlinks leading outside are refused.
3. **Blocked targets** (docs/design.md C1) are refused, matched on the resolved path and its
   parents (for ``shell``: on every path-like argument, redirection and the program).
4. **Law 1, by effect**: with a :class:`Sandbox` (the System's default where the machine
   allows it) a ``shell`` command first runs in a throw-away overlay of the workspace
   under bubblewrap and seccomp (no capabilities, its own namespaces, only the workspace
   and the system directories visible, limits on everything; see :mod:`._sandbox`); what
   it changed is observed. Only new paths → applied at once. Deleted paths, changed
   content or mode, planted code (``FileEffect.hazard``) or a large volume → ``confirm``
   is called with the exact list (``ConfirmationNeeded.effects``: each path, sizes, a
   ``+N -M lines`` summary); approved → the computed changes are applied, all or
   nothing; denied → discarded, the workspace untouched, ``ok=False`` with an error
   starting ``"[LAW1] denied: "``; killed by its timeout or a limit → discarded.
   What a command would do to other systems (``curl -X DELETE``, ``kubectl delete``, SQL
   clients, ``git push``…) is read first by :func:`~artoo.actors.law1.classify_remote`.
   ``write_file`` follows the same rule: writing onto an existing file with different
   content asks; the same content changes nothing. One hazard check (:mod:`._hazard`:
   git's layout, start-up files, executables; symlinks by where they resolve) marks what
   asks for every tool, a host tool's named path included. Without a sandbox the parser
   (:func:`~artoo.actors.law1.classify_shell`) decides by reading the command.
   With the subtask's reading (``scope``: ``SubTask.targets``) the effects are judged
   against it first (:func:`~artoo.actors.law1.decide_by_effect`): an effect outside
   its targets asks (during a question: the call is refused, ``out_of_scope``); a
   modification of a target whose before-image is kept (``images``: each changed or
   removed path's image in the store's blobs, ``FileEffect.before``/``after``;
   :mod:`._images`) is reversible and goes ahead unasked (``artoo undo``).

Results follow Hive's spillover pattern: the full result of every call that ran is
saved to ``spill_dir/{tool}_{n}.txt`` (``n`` monotonic across tools, restored from the
files already there). The model's context gets the result whole when it fits in
:data:`CONTEXT_LIMIT` characters, otherwise its head and tail within that limit and the
file name; over :data:`SPILL_LIMIT` characters the content ends with the pointer
``Use load_data(filename='shell_3.txt') to read the full result.`` and the ToolCall's
``spill_ref`` names the file. ``load_data`` results are never spilled again; a page over
:data:`SPILL_LIMIT` is cut with a pagination hint.
"""

from __future__ import annotations

from ._apply import AfterImage, BeforeImage, Changes
from ._builtins import open_beneath
from ._images import ImageKeeper, Restorer, UndoConflict, after_of, current_of
from ._registry import ToolRegistry
from ._sandbox import Sandbox, SandboxUnavailable, probe
from ._secrets import Redactor, secret_values
from ._spill import cleanup_spill
from ._testsuite import discover as discover_tests
from ._types import (
    CONTEXT_LIMIT,
    SPILL_LIMIT,
    Confirm,
    ConfirmationNeeded,
    ToolOutcome,
    ToolRunner,
    ToolRunnerFactory,
    Unasked,
    deny,
    head_tail,
)
from .catalog import BUILTIN_TOOLS

__all__ = [
    "BUILTIN_TOOLS",
    "CONTEXT_LIMIT",
    "SPILL_LIMIT",
    "AfterImage",
    "BeforeImage",
    "Changes",
    "Confirm",
    "ConfirmationNeeded",
    "ImageKeeper",
    "Redactor",
    "Restorer",
    "Sandbox",
    "SandboxUnavailable",
    "ToolOutcome",
    "ToolRegistry",
    "ToolRunner",
    "ToolRunnerFactory",
    "Unasked",
    "UndoConflict",
    "after_of",
    "cleanup_spill",
    "current_of",
    "deny",
    "discover_tests",
    "head_tail",
    "open_beneath",
    "probe",
    "secret_values",
]
