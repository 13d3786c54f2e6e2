"""Law 1 handlers: coreutils and file tools (cp, mv, ln, tee, sed, sort, dd, chmod, find,
patch) and media/crypto tools with an output option."""

from __future__ import annotations

import os
from dataclasses import replace
from itertools import pairwise

from ._core import (
    _classify_argv,
    _Ctx,
    _exempt,
    _expand,
    _Handler,
    _inside,
    _into_dir,
    _is_dir,
    _long_word,
    _options,
    _write_reason,
)
from ._lexer import _Word


def _dd(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    for w in args:
        if w.text.startswith("of="):
            target = replace(w, text=w.text[3:], tilde=w.text[3:4] == "~")
            if target.dynamic or ctx.cwd is None:
                return f"{program}: writes raw data to '{target.text}'"
            if not all(_exempt(p) for p in _expand(target, ctx.cwd)):
                return f"{program}: writes raw data to '{target.text}'"
    return None


_COPY_SHORT = {"cp": "tS", "mv": "tS", "install": "tSmog"}


def _copy(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args,
        _COPY_SHORT.get(program, "tS"),
        ("target-directory", "suffix", "mode", "owner", "group"),
    )
    if program == "install" and ("d" in o.flags or "directory" in o.longs):
        return None
    if o.flags & {"n", "b"} or "no-clobber" in o.longs or "backup" in o.longs:
        return None
    if o.longs.get("update") in ("none", "none-fail"):
        return None
    directory = o.values.get("t") or _long_word(o, "target-directory")
    if directory is not None:
        return _into_dir(program, directory, o.operands, ctx)
    if ctx.dynamic:
        return f"{program}: destination not known before the command runs"
    if len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if dest.dynamic or ctx.cwd is None:
        return f"{program}: destination '{dest.text}' not known before the command runs"
    if "T" not in o.flags and "no-target-directory" not in o.longs and _is_dir(dest, ctx):
        return _into_dir(program, dest, sources, ctx)
    return _write_reason(program, dest, ctx)


def _ln(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "tS", ("target-directory", "suffix"))
    if not ("f" in o.flags or "force" in o.longs) or "b" in o.flags or "backup" in o.longs:
        return None
    directory = o.values.get("t") or _long_word(o, "target-directory")
    if directory is not None:
        return _into_dir(f"{program} -f", directory, o.operands, ctx)
    if ctx.dynamic:
        return f"{program} -f: destination not known before the command runs"
    if not o.operands:
        return None
    if len(o.operands) == 1:
        return _into_dir(f"{program} -f", _Word("."), o.operands, ctx)
    *sources, dest = o.operands
    if dest.dynamic or ctx.cwd is None:
        return f"{program} -f: destination '{dest.text}' not known before the command runs"
    no_deref = o.flags & {"n", "T"} or "no-dereference" in o.longs
    if not no_deref and _is_dir(dest, ctx):
        return _into_dir(f"{program} -f", dest, sources, ctx)
    if ctx.cwd and any(os.path.lexists(p) for p in _expand(dest, ctx.cwd)):
        return f"{program} -f: replaces existing '{dest.text}'"
    return _write_reason(f"{program} -f", dest, ctx)


def _tee(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("output-error",))
    append = "a" in o.flags or "append" in o.longs
    for w in o.operands:
        reason = _write_reason(program, w, ctx, append=append)
        if reason:
            return reason
    return None


def _sed(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    for w in args:
        t = w.text
        if t == "--":
            break
        if t.startswith("--in-place"):
            return f"{program}: edits files in place (--in-place)"
        if t.startswith("-") and not t.startswith("--"):
            for ch in t[1:]:
                if ch == "i":
                    return f"{program}: edits files in place (-i)"
                if ch in "efl":
                    break
    o = _options(args, "efl", ("expression", "file", "line-length"))
    scripts = [args[i + 1] for i, w in enumerate(args[:-1]) if w.text in ("-e", "--expression")]
    scripts += [
        replace(w, text=w.text[2:]) for w in args if w.text.startswith("-e") and w.text != "-e"
    ]
    scripts += [_Word(w.text.split("=", 1)[1]) for w in args if w.text.startswith("--expression=")]
    script_file = o.values.get("f") or _long_word(o, "file")
    if script_file is not None:
        if script_file.dynamic or ctx.cwd is None:
            return f"{program}: runs a sed script not known before the command runs"
        path = _expand(script_file, ctx.cwd)[0]
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                scripts.append(_Word(f.read(1024 * 1024)))
        except OSError:
            if os.path.lexists(path) or ctx.earlier:
                return f"{program}: runs a sed script that cannot be read"
    if not scripts and script_file is None and o.operands:
        scripts.append(o.operands[0])
    for script in scripts:
        if script.dynamic:
            return f"{program}: script not known before the command runs"
        writes, executes = _sed_effects(script.text)
        if executes:
            return f"{program}: script runs shell commands (e)"
        for target in writes:
            reason = _write_reason(program, _Word(target), ctx, how="w")
            if reason:
                return reason
    return None


def _sed_effects(script: str) -> tuple[list[str], bool]:
    """The files a sed script writes (``w FILE``, ``W FILE``, ``s///w FILE``) and whether it
    runs shell commands (``e``, ``s///e``)."""
    writes: list[str] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!0123456789$,~+":
            i += 1
        elif c in "/\\":
            delim = c if c == "/" else script[i + 1 : i + 2]
            i = _sed_delimited(script, i + (1 if c == "/" else 2), delim) + 1
            while i < n and script[i] in "IM":
                i += 1
        elif c in "wW":
            end = script.find("\n", i)
            end = n if end < 0 else end
            writes.append(script[i + 1 : end].strip())
            i = end
        elif c in "rRaicbtT:#":
            end = script.find("\n" if c in "rRaic#" else ";", i)
            if c in "bTt:":
                nl = script.find("\n", i)
                end = min(e for e in (end, nl, n) if e >= 0)
            i = n if end < 0 else end + 1
        elif c == "e":
            return writes, True
        elif c in "sy" and i + 1 < n:
            delim = script[i + 1]
            i = _sed_delimited(script, i + 2, delim) + 1
            i = _sed_delimited(script, i, delim) + 1
            if c == "s":
                while i < n and script[i] not in ";\n}":
                    if script[i] == "e":
                        return writes, True
                    if script[i] == "w":
                        end = script.find("\n", i)
                        end = n if end < 0 else end
                        writes.append(script[i + 1 : end].strip())
                        i = end
                        break
                    i += 1
        else:
            i += 1
    return [w for w in writes if w not in ("/dev/stdout", "/dev/stderr")], False


def _sed_delimited(script: str, i: int, delim: str) -> int:
    """The index of the ``delim`` that ends the part starting at ``i`` (escapes skipped)."""
    while i < len(script) and script[i] != delim:
        i += 2 if script[i] == "\\" else 1
    return i


def _uniq(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """``uniq [INPUT [OUTPUT]]``: the second operand is written."""
    o = _options(args, "fsw", ("skip-fields", "skip-chars", "check-chars", "group"))
    if len(o.operands) < 2:
        return None
    return _write_reason(program, o.operands[1], ctx, how="OUTPUT")


def _output_flag(short: str, long: str, short_args: str, long_args: tuple[str, ...]) -> _Handler:
    """A program that writes the file given to ``-o``/``--output`` (shuf, iconv)."""

    def handler(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
        o = _options(args, short_args, long_args)
        out = o.values.get(short) or _long_word(o, long)
        return _write_reason(program, out, ctx, how=f"-{short}") if out is not None else None

    return handler


def _editor(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """ed, ex, vi, vim: without a terminal they take editing commands from stdin, and
    ``-c``/``+cmd``/``-s``/``-S`` give them more; any of them may write the files."""
    return f"{program}: edits files with commands that cannot be read ahead"


def _emacs(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    batch = {"--batch", "-batch", "--script", "-script", "--eval", "-eval", "-l", "--load", "-f"}
    if any(w.text in batch or w.text.startswith(("--eval=", "--load=")) for w in args):
        return f"{program}: runs Emacs Lisp in batch mode"
    return None


def _sevenzip(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """7z: ``d`` deletes archive members, ``a``/``u`` change an existing archive, ``x``/``e``
    with ``-y`` or ``-aoa`` overwrite existing files (``-aos``/``-aou``/``-aot`` keep them)."""
    words = [w.text for w in args]
    commands = [t for t in words if not t.startswith("-")]
    if not commands:
        return None
    command = commands[0].lower()
    if command in ("d", "rn"):
        return f"{program} {command}: changes the archive's members"
    if command in ("a", "u") and len(commands) > 1:
        return _write_reason(program, _Word(commands[1]), ctx, how=command)
    if command in ("x", "e"):
        keep = any(t.lower() in ("-aos", "-aou", "-aot") for t in words)
        if not keep and any(t.lower() in ("-y", "-aoa") for t in words):
            return f"{program} {command}: overwrites existing files without asking"
    return None


def _unrar(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    words = [w.text for w in args]
    if program == "rar" and words[:1] and words[0] in ("d", "rn"):
        return f"{program} {words[0]}: changes the archive's members"
    if "-o-" in words:
        return None
    if any(t in ("-o+", "-y") for t in words):
        return f"{program}: overwrites existing files without asking"
    return None


def _find(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "-delete":
            return f"{program}: -delete deletes files"
        if t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            reason = _classify_argv(args[i + 1 : j], ctx.deeper(dynamic=True))
            if reason:
                return f"{program} {t}: {reason}"
            i = j
        elif t in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            reason = _write_reason(program, args[i + 1], ctx, how=t)
            if reason:
                return reason
            i += 1
        i += 1
    return None


def _patch(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "pidoDrBFgVYzi", ("directory", "input", "output", "reject-file"))
    if "dry-run" in o.longs or "b" in o.flags or "backup" in o.longs:
        return None
    return f"{program}: edits files in place"


def _sort(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args,
        "okStT",
        ("output", "key", "field-separator", "buffer-size", "temporary-directory", "parallel"),
    )
    out = o.values.get("o") or _long_word(o, "output")
    return _write_reason(program, out, ctx, how="-o") if out is not None else None


def _chmod(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("reference", "from"))
    if "R" not in o.flags and "recursive" not in o.longs:
        return None
    home = os.path.expanduser("~").rstrip("/")
    cwd = ctx.cwd or "/"
    for w in o.operands:
        if w.dynamic:
            continue
        for path in _expand(w, cwd):
            top = os.path.dirname(path) == "/" and not _inside(path, cwd)
            if path == "/" or path == home or top:
                return f"{program} -R: changes every file under '{path}'"
    return None


def _output_option(option: str) -> _Handler:
    """A program that writes the file named after ``option`` (``-out f``, ``-o f``)."""

    def handler(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
        for word, value in pairwise(args):
            if word.text == option:
                return _write_reason(program, value, ctx, how=option)
        return None

    return handler


def _ffmpeg(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    # without -y ffmpeg asks before overwriting, and declines when nobody answers
    if not any(w.text == "-y" for w in args) or not args:
        return None
    return _write_reason(program, args[-1], ctx, how="-y")


def _convert(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    operands = [w for w in args if not w.text.startswith(("-", "+"))]
    if program == "magick" and operands[:1] and operands[0].text in ("mogrify",):
        return f"{program}: mogrify rewrites images in place"
    return _write_reason(program, operands[-1], ctx) if len(operands) >= 2 else None
