"""Law 1's reading of a command line: :func:`classify_shell`, :func:`classify_write`,
:func:`parse_commands`, :func:`program_names` (the package's public functions; see its
docstring for the rules).

Importing this module wires the core's recursion (:data:`._core._WALK`) to the line walk and
the handler table, which import the core and so cannot be imported by it.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from ._core import (
    _MAX_DEPTH,
    _WALK,
    GlobTooWide,
    _classify_text,
    _Ctx,
    _program,
    _strip_keywords,
    _su_command,
    _unwrap,
    _writes,
)
from ._interp import _SHELLS, _shell_options
from ._lexer import ShellSyntaxError, _parse, _Word
from ._line import BraceTooWide, _classify_line, _expand_braces
from ._table import _handler

_WALK.line = _classify_line
_WALK.handler = _handler

MAX_COMMAND_CHARS = 64 * 1024
"""A longer command is irreversible unread ("too long to read")."""


class Law1Verdict(msgspec.Struct, frozen=True):
    """Whether an action is irreversible and, if so, why (names the program)."""

    irreversible: bool
    reason: str = ""


ALLOWED = Law1Verdict(False, "")


class ShellCommand(msgspec.Struct, frozen=True):
    """One simple command of a command line, after keywords and wrappers are removed.

    ``program`` is the basename of the program ("" for a bare redirection), ``args``
    its arguments with quotes removed, ``redirects`` the targets of its redirections,
    ``inline`` the command strings among the args that it runs (``sh -c STR``, ``eval``),
    whose commands :func:`parse_commands` lists as well.
    """

    program: str
    args: tuple[str, ...] = ()
    redirects: tuple[str, ...] = ()
    inline: tuple[str, ...] = ()


# =========================================================================== public API
def classify_shell(command: str, cwd: str | os.PathLike[str]) -> Law1Verdict:
    """Decide whether running ``command`` in ``cwd`` would be irreversible.

    The first irreversible part found gives the reason, e.g. ``"rm: deletes files"``
    or ``"echo: '>' overwrites existing file 'notes.txt'"``.
    """
    if len(command) > MAX_COMMAND_CHARS:
        return Law1Verdict(True, f"too long to read ({len(command):,} characters)")
    if "\x00" in command:  # no shell runs it as written; no path with one exists
        return Law1Verdict(True, "cannot parse: a NUL character in the command")
    root = os.path.abspath(os.fspath(cwd))
    try:
        reason = _classify_text(command, _Ctx(cwd=root, root=root))
    except ShellSyntaxError as exc:
        return Law1Verdict(True, f"cannot parse: {exc}")
    except BraceTooWide as exc:
        return Law1Verdict(True, f"the brace expression {exc} expands to too many words")
    except GlobTooWide as exc:
        return Law1Verdict(True, f"the glob {exc} names too many paths to check")
    return Law1Verdict(True, reason) if reason else ALLOWED


def classify_write(path: str | os.PathLike[str], workspace: str | os.PathLike[str]) -> Law1Verdict:
    """Decide whether write_file onto ``path`` (relative to ``workspace``) is irreversible.

    Writing onto an existing file overwrites its data; a new file is not irreversible.
    """
    full = Path(workspace) / path
    if full.is_symlink() or (full.exists() and not full.is_dir()):
        return Law1Verdict(True, f"write_file: overwrites existing file '{path}'")
    return ALLOWED


def parse_commands(command: str) -> list[ShellCommand]:
    """Every simple command of ``command``, wrappers removed.

    Commands inside substitutions (``$(…)``, backticks, ``<(…)``) and inside command strings
    (``sh -c``/``bash -c``…, ``su -c``, ``eval``) are listed too, after the command that
    holds them. Raises ShellSyntaxError when the command cannot be read, or nests deeper
    than the classifier follows.
    """
    return [c for c, _ in _parse_commands(command, 0)]


def program_names(command: str) -> list[str]:
    """The name each simple command of ``command`` (in :func:`parse_commands`' order)
    runs, as the line writes it — its first word after keywords, assignments and
    wrappers, quotes removed: ``python3`` stays ``python3`` where
    :attr:`ShellCommand.program` is ``python``, and ``/usr/bin/python`` stays a path. A
    shell looks a name without ``/`` up on PATH. "" for a bare redirection or a name
    known only at run time (``$CMD``). Raises ShellSyntaxError as :func:`parse_commands`
    does."""
    return [name for _, name in _parse_commands(command, 0)]


def _parse_commands(command: str, depth: int) -> list[tuple[ShellCommand, str]]:
    """Every simple command of ``command`` with the name it runs (:func:`program_names`)."""
    if depth > _MAX_DEPTH:
        raise ShellSyntaxError("command nests too deeply to read")
    parsed = _parse(command)
    out: list[tuple[ShellCommand, str]] = []
    inner: list[str] = []
    for simple in parsed.commands:
        words = _strip_keywords(_expand_braces(simple.words))
        ctx = _Ctx(cwd=None)
        while words:
            step = _unwrap(words, ctx)
            if step is None:
                break
            words, ctx = step
        program = _program(words[0].text) if words else ""
        strings = _command_strings(program, words[1:])
        shell_command = ShellCommand(
            program=program,
            args=tuple(w.text for w in words[1:]),
            redirects=tuple(r.target.text for r in simple.redirects if _writes(r)),
            inline=tuple(strings),
        )
        out.append((shell_command, words[0].text if words and not words[0].dynamic else ""))
        inner.extend(strings)
    for text in (*parsed.substitutions, *inner):
        out.extend(_parse_commands(text, depth + 1))
    return out


def _command_strings(program: str, args: list[_Word]) -> list[str]:
    """The command text a shell, ``su -c`` or ``eval`` runs (empty for other programs)."""
    if program in _SHELLS:
        o = _shell_options(args)
        if ("c" in o.flags or "command" in o.longs) and o.operands and not o.operands[0].dynamic:
            return [o.operands[0].text]
    elif program == "su":
        text = _su_command(args)
        return [text.text] if text is not None and not text.dynamic else []
    elif program == "eval" and args and not any(w.dynamic for w in args):
        return [" ".join(w.text for w in args)]
    return []
