"""Law 1 handlers: archives and synchronisation (tar, unzip, rsync, scp), checked
against what they would replace."""

from __future__ import annotations

import os
from dataclasses import replace

from ._core import (
    _Ctx,
    _expand,
    _into_dir,
    _is_dir,
    _long_word,
    _options,
    _Opts,
    _text_reason,
    _write_reason,
)
from ._lexer import _Word

_RSYNC_SHORT = "eBfTM"
_RSYNC_LONG = (
    "rsh", "rsync-path", "exclude", "include", "filter", "exclude-from", "include-from",
    "files-from", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest",
    "temp-dir", "partial-dir", "log-file", "log-file-format", "out-format", "chmod",
    "chown", "usermap", "groupmap", "timeout", "contimeout", "bwlimit", "max-size",
    "min-size", "max-delete", "block-size", "modify-window", "port", "password-file",
    "info", "debug", "sockopts", "protocol", "iconv", "checksum-choice",
    "compress-choice", "compress-level", "skip-compress", "remote-option", "outbuf",
)  # fmt: skip
_TREE_LIMIT = 10_000  # entries a classifier walks before it assumes the worst


def _remote(word: _Word) -> bool:
    """``host:path``, ``user@host:path``, ``host::module`` or ``rsync://…``: rsync reads a
    ':' before the first '/' as a host, quoted or not (``./a:b`` is the local file)."""
    return "://" in word.text or ":" in word.text.split("/", 1)[0]


def _rsync(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, _RSYNC_SHORT, _RSYNC_LONG)
    for name in o.longs:
        if name.startswith("del"):
            return f"{program}: --{name} deletes files at the destination"
    if "remove-source-files" in o.longs:
        return f"{program}: --remove-source-files deletes the source files"
    if o.flags & {"n", "b"} or o.longs.keys() & {"dry-run", "backup", "ignore-existing"}:
        return None
    if "list-only" in o.longs or len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if _remote(dest):
        return f"{program}: writes to another host ('{dest.text}')"
    if dest.dynamic or ctx.cwd is None or ctx.dynamic or any(s.dynamic for s in sources):
        return f"{program}: destination not known before the command runs"
    (dest_path,) = _expand(dest, ctx.cwd)[:1]
    if not os.path.lexists(dest_path):
        return None
    if not os.path.isdir(dest_path):
        return _write_reason(program, dest, ctx)
    for src in sources:
        if _remote(src):
            if os.listdir(dest_path):
                return f"{program}: may overwrite files in '{dest.text}' (remote source)"
            continue
        for path in _expand(src, ctx.cwd):
            into = (
                dest_path
                if src.text.endswith("/")
                else os.path.join(dest_path, os.path.basename(path.rstrip("/")))
            )
            hit = _overwritten(path, into)
            if hit:
                return f"{program}: overwrites existing file '{_shown_under(dest, dest_path, hit)}'"
    return None


def _overwritten(source: str, target: str) -> str | None:
    """The first existing non-directory under ``target`` that copying the tree ``source``
    onto ``target`` would replace ('…' when the trees are too large to compare)."""
    if not os.path.isdir(source):
        return target if os.path.lexists(target) and not os.path.isdir(target) else None
    if not os.path.isdir(target):
        return target if os.path.lexists(target) else None
    seen = 0
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        for name in (*files, *dirs):
            seen += 1
            if seen > _TREE_LIMIT:
                return target
            there = os.path.normpath(os.path.join(target, rel, name))
            if os.path.lexists(there) and not os.path.isdir(there):
                return there
    return None


def _shown_under(dest: _Word, dest_path: str, hit: str) -> str:
    rel = os.path.relpath(hit, dest_path)
    return dest.text if rel == "." else os.path.join(dest.text, rel)


_TAR_MAX_LIST = 256 * 1024 * 1024  # bytes of archive read to list its members


def _tar(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    if args and not args[0].text.startswith("-") and not args[0].dynamic:
        args = [replace(args[0], text="-" + args[0].text), *args[1:]]
    o = _options(
        args, "fCbHKLNTVXgFI", ("file", "directory", "exclude", "files-from", "format", *_TAR_RUNS)
    )
    for name in _TAR_RUNS:
        value = o.longs.get(name)
        if value is not None:
            command = value.split("=", 1)[1] if name == "checkpoint-action" else value
            if name == "checkpoint-action" and not value.startswith("exec="):
                continue
            reason = _text_reason(f"{program} --{name}", [_Word(command)], ctx)
            if reason:
                return reason
    for letter in "FI":
        if letter in o.values:
            reason = _text_reason(f"{program} -{letter}", [o.values[letter]], ctx)
            if reason:
                return reason
    if "remove-files" in o.longs:
        return f"{program}: --remove-files deletes the archived files"
    if "delete" in o.longs:
        return f"{program}: --delete removes members from the archive"
    archive = o.values.get("f") or _long_word(o, "file")
    if archive is not None and ("c" in o.flags or "create" in o.longs):
        return _write_reason(program, archive, ctx, how="-f")
    if "x" in o.flags or o.longs.keys() & {"extract", "get"}:
        return _tar_extract(program, o, archive, ctx)
    return None


_TAR_RUNS = (
    "checkpoint-action",
    "to-command",
    "use-compress-program",
    "info-script",
    "new-volume-script",
    "rsh-command",
    "rmt-command",
)  # options whose value is a command tar runs


def _tar_extract(program: str, o: _Opts, archive: _Word | None, ctx: _Ctx) -> str | None:
    """Extraction replaces existing files of the same names, unless told to keep them."""
    keep = {"keep-old-files", "skip-old-files", "to-stdout", "to-command"}
    if o.flags & {"k", "O"} or o.longs.keys() & keep:
        return None
    into = o.values.get("C") or _long_word(o, "directory") or _Word(".")
    if into.dynamic or ctx.cwd is None or (archive is not None and archive.dynamic):
        return f"{program}: -x target not known before the command runs"
    (dest,) = _expand(into, ctx.cwd)[:1]
    if not os.path.isdir(dest) or not os.listdir(dest):
        return None  # nothing there to overwrite (tar fails on a missing -C directory)
    names = _tar_members(archive, ctx.cwd)
    if names is None:
        return f"{program}: -x may overwrite files in '{into.text}' (archive not readable)"
    wanted = [w.text.rstrip("/") for w in o.operands if not w.dynamic]
    for name in names:
        name = name.lstrip("/")
        if wanted and not any(name == w or name.startswith(w + "/") for w in wanted):
            continue
        there = os.path.normpath(os.path.join(dest, name))
        if os.path.lexists(there) and not os.path.isdir(there):
            shown = name if into.text == "." else os.path.join(into.text, name)
            return f"{program}: -x overwrites existing file '{shown}'"
    return None


def _tar_members(archive: _Word | None, cwd: str) -> list[str] | None:
    """The member names of a local archive; None when it cannot be read here."""
    import tarfile

    if archive is None or archive.text == "-":
        return None  # stdin (or $TAPE)
    (path,) = _expand(archive, cwd)[:1]
    try:
        if os.path.getsize(path) > _TAR_MAX_LIST:
            return None
        with tarfile.open(path) as tar:
            return tar.getnames()
    except (OSError, tarfile.TarError, EOFError):
        return None


def _unzip(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "dxP")
    return f"{program}: -o overwrites files without asking" if "o" in o.flags else None


def _scp(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "cFiJloPSXD")
    if len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if _remote(dest):
        return f"{program}: copies to another host ('{dest.text}')"
    if dest.dynamic or ctx.cwd is None:
        return f"{program}: destination '{dest.text}' not known before the command runs"
    if _is_dir(dest, ctx):
        if any(_remote(src) or src.dynamic for src in sources):
            if os.listdir(_expand(dest, ctx.cwd)[0]):
                return f"{program}: may overwrite files in '{dest.text}' (remote source)"
            return None
        return _into_dir(program, dest, sources, ctx)
    return _write_reason(program, dest, ctx)
