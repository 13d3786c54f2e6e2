"""Law 1 handlers: coreutils and file tools (cp, mv, ln, tee, sed, sort, dd, chmod, find,
patch) and media/crypto tools with an output option."""

from __future__ import annotations

import os
from dataclasses import replace
from itertools import pairwise

from ..shell import _Word
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
    skip = False
    for w in args:
        t = w.text
        if skip:
            skip = False
            continue
        if t == "--":
            break
        if t.startswith("--in-place"):
            return f"{program}: edits files in place (--in-place)"
        if t.startswith("-") and not t.startswith("--"):
            for j, ch in enumerate(t[1:], 1):
                if ch == "i":
                    return f"{program}: edits files in place (-i)"
                if ch in "efl":
                    skip = j == len(t) - 1
                    break
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
