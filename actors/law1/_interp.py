"""Law 1 handlers: interpreters running inline code, shells running command strings, awk."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._core import _Ctx, _options, _Opts, _text_reason
from ._lexer import _Word
from ._scripts import _script_reason
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
            if ch in "l0C" and t[j + 1 : j + 2].isdigit():
                continue  # -l[octal], -0[digits], -C[number]: digits follow, then more letters
            if ch in "l0CanpsTtuUwWXcS":
                continue  # a flag without an argument: more letters may follow (-le, -lne)
            if ch in "IMmdDxF":
                skip = ch in "IMm" and j == len(t) - 1
                break
    if inline:
        return f"{program} -e: runs inline code"
    return _script_or_stdin(program, args, "IMm", ctx)


def _script_or_stdin(program: str, args: list[_Word], short_arg: str, ctx: _Ctx) -> str | None:
    o = _options(args, short_arg, stop_at_operand=True)
    if o.flags & {"v", "V", "h"}:
        return None
    if not o.operands or o.operands[0].text == "-":
        return f"{program}: runs code read from stdin"
    return _script_reason(program, o.operands[0], ctx, program)


def _python(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "--":
            return None if i + 1 < len(args) else f"{program}: runs code read from stdin"
        if t == "-":
            return f"{program}: runs code read from stdin"
        if not t.startswith("-"):
            return _script_reason(program, args[i], ctx, "python")
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


_LANGUAGE = {"nodejs": "node"}


def _interpreter(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    spec = _INTERPRETERS[program]
    for w in args:
        if w.text in spec.inline or (program == "ruby" and re.fullmatch(r"-\w*e", w.text)):
            return f"{program} {w.text}: runs inline code"
    o = _options(args, spec.short_arg, stop_at_operand=True)
    if spec.subcommand and o.operands and o.operands[0].text == spec.subcommand:
        return f"{program} {spec.subcommand}: runs inline code"
    if o.flags & {"v", "V", "h"} or o.longs.keys() & {"version", "help"}:
        return None
    if not o.operands or o.operands[0].text == "-":
        return f"{program}: runs code read from stdin" if spec.stdin else None
    if spec.subcommand or program in ("bun", "deno"):
        return None  # a subcommand (deno run, bun test) names no script here
    return _script_reason(program, o.operands[0], ctx, _LANGUAGE.get(program, program))


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
    if "n" in o.flags:
        return None  # -n reads commands without running them
    if "s" in o.flags or not o.operands or o.operands[0].text == "-":
        return f"{program}: runs commands read from stdin"
    return _script_reason(program, o.operands[0], ctx, "sh")


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
    if "system(" in code or re.search(r'(?<!\|)\|(?!\|)\s*(&|"|getline)|"\s*\|(?!\|)', code):
        return f"{program}: program runs shell commands"
    for m in re.finditer(r"\bprintf?\b[^;}]*[^>]>(?!>)\s*(\"[^\"]*\")?", _awk_outside(code)):
        if m.group(1) not in ('"/dev/stdout"', '"/dev/stderr"', '"/dev/null"'):
            return f"{program}: program writes files ('>' in print)"
    return None


def _awk_outside(code: str) -> str:
    """awk code with string literals, regex literals and parenthesised expressions blanked:
    a ``>`` inside them is text or a comparison (``print ($1 > 5)``), not a redirection."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(code):
        c = code[i]
        if c == '"' or (c == "/" and not out[-1:] == [")"] and _regex_may_start(out)):
            end = i + 1
            while end < len(code) and code[end] != c:
                end += 2 if code[end] == "\\" else 1
            if depth == 0:  # kept, so a redirection's target can be read; no > | ; { }
                out.append(re.sub(r"[>|;{}]", " ", code[i : end + 1]))
            i = end + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            out.append(")" if depth == 0 else "")
            i += 1
            continue
        out.append(c if depth == 0 else "")
        i += 1
    return "".join(out)


def _regex_may_start(out: list[str]) -> bool:
    """A ``/`` starts a regex literal where an operand is expected, not after a value."""
    before = "".join(out).rstrip()
    return not before or before[-1] in "{(;,!~&|=<>?:+-*%^\n" or before.endswith("print")
