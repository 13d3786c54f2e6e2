"""Law 1 handlers: interpreters running inline code, shells running command strings, awk."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..shell import _Word
from ._core import _Ctx, _options, _Opts, _text_reason
from ._system import _packages


def _perl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    inline = False
    skip = False
    for w in args:
        t = w.text
        if skip:
            skip = False
            continue
        if t == "--" or not t.startswith("-") or t == "-":
            break
        for j, ch in enumerate(t[1:], 1):
            if ch == "i":
                return f"{program}: edits files in place (-i)"
            if ch in "eE":
                inline = True
                skip = j == len(t) - 1
                break
            if ch in "IMmFdDxC0l":
                skip = ch in "IMmF" and j == len(t) - 1
                break
    if inline:
        return f"{program} -e: runs inline code"
    return _script_or_stdin(program, args, "IMm")


def _script_or_stdin(program: str, args: list[_Word], short_arg: str) -> str | None:
    o = _options(args, short_arg, stop_at_operand=True)
    if o.flags & {"v", "V", "h"}:
        return None
    if not o.operands or o.operands[0].text == "-":
        return f"{program}: runs code read from stdin"
    return None


def _python(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "--":
            return None if i + 1 < len(args) else f"{program}: runs code read from stdin"
        if t == "-":
            return f"{program}: runs code read from stdin"
        if not t.startswith("-"):
            return None  # a script file
        if not t.startswith("--"):
            for j, ch in enumerate(t[1:], 1):
                if ch == "c":
                    return f"{program} -c: runs inline code"
                if ch == "m":
                    attached = t[j + 1 :]
                    module = attached or (args[i + 1].text if i + 1 < len(args) else "")
                    rest = args[i + 1 :] if attached else args[i + 2 :]
                    if module in ("pip", "pip3"):
                        return _packages("pip", rest, ctx)
                    return None
                if ch in "VhH?":
                    return None
                if ch in "WX":
                    i += 0 if t[j + 1 :] else 1
                    break
        i += 1
    return f"{program}: runs code read from stdin"


@dataclass(frozen=True, slots=True)
class _Interp:
    inline: frozenset[str]  # option words that take inline code
    short_arg: str = ""  # short options taking an argument
    subcommand: str = ""  # a subcommand that runs inline code (deno eval)
    stdin: bool = True  # no script given: code is read from stdin


_INTERPRETERS: dict[str, _Interp] = {
    "node": _Interp(frozenset({"-e", "--eval", "-p", "--print", "-pe"}), "r"),
    "nodejs": _Interp(frozenset({"-e", "--eval", "-p", "--print", "-pe"}), "r"),
    "ruby": _Interp(frozenset({"-e"}), "rIC"),
    "php": _Interp(frozenset({"-r"}), "cdz"),
    "lua": _Interp(frozenset({"-e"}), "l"),
    "Rscript": _Interp(frozenset({"-e"})),
    "osascript": _Interp(frozenset({"-e"})),
    "bun": _Interp(frozenset({"-e", "--eval", "-p", "--print"}), stdin=False),
    "deno": _Interp(frozenset(), subcommand="eval", stdin=False),
    "pwsh": _Interp(
        frozenset({"-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand"}),
        stdin=False,
    ),
    "powershell": _Interp(
        frozenset({"-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand"}),
        stdin=False,
    ),
}


def _interpreter(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    spec = _INTERPRETERS[program]
    for w in args:
        if w.text in spec.inline or (program == "ruby" and re.fullmatch(r"-\w*e", w.text)):
            return f"{program} {w.text}: runs inline code"
    o = _options(args, spec.short_arg, stop_at_operand=True)
    if spec.subcommand and o.operands and o.operands[0].text == spec.subcommand:
        return f"{program} {spec.subcommand}: runs inline code"
    if spec.stdin and not (o.flags & {"v", "V", "h"}) and "version" not in o.longs:
        if not o.operands or o.operands[0].text == "-":
            return f"{program}: runs code read from stdin"
    return None


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})


def _shell_options(args: list[_Word]) -> _Opts:
    """A shell's options up to its first operand (the script, or the ``-c`` string)."""
    return _options(args, "oO", ("rcfile", "init-file"), stop_at_operand=True)


def _shell(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _shell_options(args)
    if "c" in o.flags or "command" in o.longs:
        if not o.operands:
            return None
        return _text_reason(f"{program} -c", o.operands[:1], ctx)
    if "s" in o.flags or not o.operands or o.operands[0].text == "-":
        return f"{program}: runs commands read from stdin"
    return None


def _awk(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    texts = [w.text for w in args]
    for a, b in zip(texts, [*texts[1:], ""], strict=False):
        if a in ("-iinplace", "--include=inplace", "-i inplace") or (
            a in ("-i", "--include") and b == "inplace"
        ):
            return f"{program}: edits files in place (-i inplace)"
    o = _options(args, "Fvfil E", ("include", "load", "file", "assign", "field-separator", "exec"))
    if "f" in o.flags or "E" in o.flags or "file" in o.longs or not o.operands:
        return None
    code = o.operands[0].text
    if "system(" in code or re.search(r'\|\s*(&|")', code):
        return f"{program}: program runs shell commands"
    if re.search(r"\bprintf?\b[^;}]*[^>]>(?!>)", code):
        return f"{program}: program writes files ('>' in print)"
    return None
