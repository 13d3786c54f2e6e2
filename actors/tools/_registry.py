"""The ToolRegistry: the tools one Executor may call, every call guarded and recorded."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from artoo.actors.law1 import Scope
from artoo.schemas import FileEffect, Refusal, ToolCall, ToolSpec

from ._apply import Changes
from ._builtins import _Builtins
from ._images import ImageKeeper
from ._sandbox import Sandbox
from ._schema import _BUILTIN_SPECS, _bind, _describe
from ._secrets import Redactor, secret_values, tool_env
from ._spill import _last_spill_number, _record_args, _render
from ._testrun import _TestTool
from ._types import (
    _TARGET_PARAMS,
    _TOOL_NAME,
    CONTEXT_LIMIT,
    SPILL_LIMIT,
    ConfirmationNeeded,
    F,
    ToolOutcome,
    _BadArgs,
    _Call,
    _Result,
    _Tool,
    _ToolError,
    deny,
    head_tail,
)
from .catalog import BUILTIN_TOOLS


# =========================================================================== the registry
class ToolRegistry(_Builtins, _TestTool):
    """The tools one Executor may call, with confinement, blocked targets, Law 1 and
    spillover applied to every call.

    ``workspace`` is the root file tools are confined to and ``shell`` runs in;
    ``spill_dir`` receives the full result of every call; ``blocked_targets`` are
    workspace-relative (or absolute) paths, or program names, that no call may touch;
    ``confirm`` is asked before an irreversible action (default: :func:`deny`);
    ``clock`` is the monotonic clock that times calls; ``secrets`` are values to redact
    besides the host's secret-looking variables, and ``env_allow`` names host variables a
    shell command may see besides the allowlist (see :mod:`._secrets`). With ``sandbox``
    every ``shell`` command runs in it and Law 1 decides by what it changed; without,
    the parser (:func:`~artoo.actors.law1.classify_shell`) decides by reading it.
    ``tests_timeout_s`` bounds one ``run_tests`` call (:mod:`._testrun`).
    ``images`` keeps the before-image of every path a call changes (``artoo undo``);
    ``scope`` is the subtask's reading, which Law 1 by effect judges against
    (:func:`~artoo.actors.law1.decide_by_effect`: out-of-scope effects ask, or refuse
    during a question; reversible changes of its targets go ahead).
    ``record``, when given, is called with the :class:`~._apply.Changes` of every
    sandboxed command's apply and every ``write_file`` before they become final: the
    exact before-image of each path changed or removed, the after-image (SHA-256) of
    each path written; raising cancels them.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        spill_dir: str | os.PathLike[str],
        *,
        blocked_targets: Iterable[str] = (),
        shell_timeout_s: float = 30.0,
        output_cap: int = 1_000_000,
        confirm: Callable[[ConfirmationNeeded], bool] = deny,
        clock: Callable[[], float] = time.monotonic,
        secrets: Iterable[str] = (),
        env_allow: Iterable[str] = (),
        context_limit: int = CONTEXT_LIMIT,
        spill_limit: int = SPILL_LIMIT,
        sandbox: Sandbox | None = None,
        tests_timeout_s: float = 120.0,
        images: ImageKeeper | None = None,
        scope: Scope | None = None,
        record: Callable[[Changes], None] | None = None,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise ValueError(f"workspace {str(root)!r} is not a directory")
        if shell_timeout_s <= 0 or output_cap <= 0 or tests_timeout_s <= 0:
            raise ValueError("shell_timeout_s, tests_timeout_s and output_cap must be positive")
        self.workspace = root.resolve()
        self._given_root = Path(os.path.abspath(root))
        self.spill_dir = Path(spill_dir)
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        self.blocked_targets = tuple(blocked_targets)
        self.context_limit = context_limit
        self.spill_limit = spill_limit
        self.env = tool_env(allow=env_allow)
        self._redact = Redactor(secret_values(extra=secrets))
        self.shell_timeout_s = shell_timeout_s
        self.tests_timeout_s = tests_timeout_s
        self.output_cap = output_cap
        self._confirm = confirm
        self.sandbox = sandbox
        self.images = images
        self.scope = scope
        self._record = record
        self._clock = clock
        self._lock = threading.Lock()
        self._counter = _last_spill_number(self.spill_dir)
        self._tools: dict[str, _Tool] = {}
        for name in BUILTIN_TOOLS:  # each built-in is the method ``_<name>``
            method: Callable[..., _Result] = getattr(self, "_" + name)
            key = (getattr(type(self), "_" + name), name)
            if key not in _BUILTIN_SPECS:  # describing a function is slow; do it once
                _BUILTIN_SPECS[key] = _describe(method, name, skip=1)
            spec, args_type = _BUILTIN_SPECS[key]
            self._tools[name] = _Tool(spec, args_type, _bound(method), spill=name != "load_data")

    # ----------------------------------------------------------------- public API
    def specs(self, only: Iterable[str] | None = None) -> list[ToolSpec]:
        """The tools as described to the model (all, or those named in ``only``)."""
        if only is None:
            return [t.spec for t in self._tools.values()]
        wanted = set(only)
        return [t.spec for name, t in self._tools.items() if name in wanted]

    def register(self, fn: F, *, name: str | None = None) -> F:
        """Add a host function as a tool; its schema comes from its type hints
        (``str``, ``int``, ``float``, ``bool``, ``list[...]``, ``dict``, ``Literal``,
        ``X | None``, defaults) and its docstring (summary; Google ``Args:`` or Sphinx
        ``:param:`` descriptions). Returns ``fn``, so it works as a decorator.

        A parameter named path, file, filename, target, directory, dir or url is the
        call's target (checked against blocked targets). The return value is shown as
        text: ``str`` as is, anything else as pretty-printed JSON.
        """
        tool_name: str = name or str(getattr(fn, "__name__", ""))
        if not _TOOL_NAME.match(tool_name):
            raise ValueError(f"invalid tool name {tool_name!r}")
        if tool_name in self._tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered")
        spec, args_type = _describe(fn, tool_name, skip=0)
        targets = [f for f in args_type.__struct_fields__ if f in _TARGET_PARAMS]

        def run(args: dict[str, Any], call: _Call) -> _Result:
            value = next((args[t] for t in targets if isinstance(args.get(t), str)), None)
            if value is not None:
                self._check_blocked_name(value, call)
                self._gate_named_path(call, tool_name, value)  # the one hazard check
            try:
                return _Result(_render(fn(**args)), value)
            except Exception as exc:
                raise _ToolError(f"{type(exc).__name__}: {exc}", value) from exc

        self._tools[tool_name] = _Tool(spec, args_type, run)
        return fn

    def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        subtask_id: str = "",
        attempt: int = 1,
        blocked_targets: Iterable[str] = (),
        blocked_tools: Iterable[str] = (),
    ) -> ToolOutcome:
        """Run one tool call; never raises. ``blocked_targets``/``blocked_tools`` add
        to the registry's own for this call (a SubTask's MUST NOT sets)."""
        started = self._clock()
        call = _Call(
            args if isinstance(args, dict) else {},
            subtask_id,
            attempt,
            (*self.blocked_targets, *blocked_targets),
        )
        tool = self._tools.get(name)
        target: str | None = None
        try:
            if tool is None:
                known = ", ".join(sorted(self._tools))
                raise _ToolError(f"unknown tool {name!r} (known tools: {known})")
            if name in set(blocked_tools):
                raise _ToolError(f"blocked tool {name!r}")
            try:
                bound = _bind(tool, args)
            except _BadArgs as exc:
                raise _ToolError(f"bad arguments for {name}: {exc}") from None
            result = tool.run(bound, call)
        except _ToolError as exc:
            return self._failure(
                name,
                args,
                exc.target or target,
                exc.message,
                started,
                call,
                exc.refusal,
                effects=exc.effects,
                sandboxed=exc.sandboxed,
            )
        except Exception as exc:  # a host function or the file system failed
            return self._failure(name, args, target, f"{type(exc).__name__}: {exc}", started, call)
        return self._outcome(name, args, result, started, call, spill=tool.spill)

    # ----------------------------------------------------------------- outcomes
    def _failure(
        self,
        name: str,
        args: Any,
        target: str | None,
        error: str,
        started: float,
        call: _Call,
        refusal: Refusal | None = None,
        *,
        effects: tuple[FileEffect, ...] = (),
        sandboxed: bool = False,
    ) -> ToolOutcome:
        error = self._redact(error)
        record = ToolCall(
            refusal=refusal,
            effects=effects,
            sandboxed=sandboxed,
            tool=name,
            args=_record_args(args),
            target=target,
            ok=False,
            error=error,
            elapsed_ms=(self._clock() - started) * 1000.0,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
            law1=tuple(call.law1),
        )
        return ToolOutcome(call=record, content=f"error: {error}")

    def _outcome(
        self, name: str, args: Any, result: _Result, started: float, call: _Call, *, spill: bool
    ) -> ToolOutcome:
        text = self._redact(result.text)
        preview = head_tail(text, self.context_limit)
        spill_ref: str | None = None
        if not spill:
            content = text
        else:
            filename = self._spill(name, text)
            if len(text) <= self.context_limit:
                content = text
            elif len(text) <= self.spill_limit:
                content = f"{preview}\n[Full result ({len(text):,} chars) saved to '{filename}'.]"
            else:
                spill_ref = filename
                content = (
                    f"{preview}\n[Result from {name}: {len(text):,} chars — too large for "
                    f"context, saved to '{filename}'. Use load_data(filename='{filename}') "
                    "to read the full result.]"
                )
        if result.notes:  # the tool's own, after the result: never part of it
            content += "\n" + "\n".join(self._redact(note) for note in result.notes)
        record = ToolCall(
            tool=name,
            args=_record_args(args),
            target=result.target,
            ok=result.ok,
            output_preview=preview,
            spill_ref=spill_ref,
            error=result.error,
            elapsed_ms=(self._clock() - started) * 1000.0,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
            exit_code=result.exit_code,
            effects=result.effects,
            sandboxed=result.sandboxed,
            law1=tuple(call.law1),
            stdout=self._stream(result.stdout),
            stderr=self._stream(result.stderr),
            content=self._stream(result.content, whole=result.whole),
        )
        return ToolOutcome(call=record, content=content, output=text)

    def _stream(self, text: str | None, *, whole: bool = False) -> str | None:
        """A command's stream, or a tool's content, as recorded: redacted, head and tail
        when long — the cut marked without a figure ("[330 chars omitted]" would back 330:
        a number of the tool's own is no value the proof may read). ``whole``: never cut
        (a record the proof parses, ``run_tests``' JSON)."""
        if text is None:
            return None
        if whole:
            return self._redact(text)
        return head_tail(self._redact(text), self.context_limit, count=False)

    def _spill(self, tool: str, text: str) -> str:
        safe = re.sub(r"[^A-Za-z0-9_]", "_", tool)
        with self._lock:
            while True:
                self._counter += 1
                filename = f"{safe}_{self._counter}.txt"
                try:
                    with open(self.spill_dir / filename, "x", encoding="utf-8", newline="") as f:
                        f.write(text)
                except FileExistsError:  # another registry shares the directory
                    continue
                return filename


def _bound(method: Callable[..., _Result]) -> Callable[[dict[str, Any], _Call], _Result]:
    """A built-in tool method as a tool's ``run``: the call first, then the arguments."""

    def run(args: dict[str, Any], call: _Call) -> _Result:
        return method(call, **args)

    return run
