"""Counting in the workspace, for the ``count_matches`` check (equipment of the checks).

:func:`measure` counts lines, words, bytes or characters of the files a path names, or
the files themselves — pure but for reading the workspace, which it does beneath its
root: no symlink is followed, no file opened through one, no path outside the root named.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from artoo.actors.tools import open_beneath

__all__ = [
    "MAX_ENTRIES",
    "UNITS",
    "glob_regex",
    "measure",
    "parse_unit",
]

UNITS = ("lines", "words", "bytes", "chars", "files", "lines containing <text>")
"""What ``count_matches`` can count."""

_CONTAINING = re.compile(r"lines\s+containing\s+(.+)", re.IGNORECASE | re.DOTALL)


def parse_unit(value: object) -> tuple[str, str | None] | None:
    """``(unit, text)`` for a ``count_matches`` value, or None when it names no unit (pure):
    ``lines containing TODO`` is ``("lines", "TODO")`` (quotes around the text dropped)."""
    raw = str(value if value is not None else "").strip()
    if raw.lower() in UNITS[:5]:
        return raw.lower(), None
    m = _CONTAINING.fullmatch(raw)
    if m is None:
        return None
    text = m.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1]
    return ("lines", text) if text else None


MAX_ENTRIES = 100_000
"""A walk visits at most this many entries: a larger tree is not counted."""

_MAX_BYTES = 64 * 1024 * 1024  # at most this much is read in all
_WILD = re.compile(r"[*?\[]")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression a workspace-relative glob stands for (pure): ``*`` and ``?``
    stay within one name, ``**`` spans any number of directories, ``[…]`` is a class
    (``[!…]`` negated), and a wildcard does not match a leading ``.``."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(r"(?:[^/.][^/]*/)*" if not last else r"(?:[^/.][^/]*/)*[^/.][^/]*")
            continue
        seg = "" if part.startswith((".", "[")) or not _WILD.match(part) else r"(?!\.)"
        j = 0
        while j < len(part):
            c = part[j]
            if c == "*":
                seg += "[^/]*"
            elif c == "?":
                seg += "[^/]"
            elif c == "[" and (end := part.find("]", j + 2)) > 0:
                body = part[j + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                seg += "[" + body.replace("\\", "\\\\") + "]"
                j = end
            else:
                seg += re.escape(c)
            j += 1
        out.append(seg + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z")


def measure(
    raw: str, unit: str, workspace: Path, containing: str | None = None
) -> tuple[set[int], str] | str:
    """The accepted counts of ``unit`` for the workspace path or glob ``raw`` and what was
    seen; a text when there is nothing to count (missing, not a file, too large). With
    ``containing``, only the lines that contain that text (case-sensitive) count.

    Raises ValueError for a path that cannot be used: empty, or outside the workspace.
    """
    raw = raw.strip()
    if not raw:
        raise ValueError("count_matches: path is empty (a workspace file, directory or glob)")
    root = workspace.resolve()
    norm = os.path.normpath(raw)
    if os.path.isabs(norm):
        if norm != str(root) and not norm.startswith(str(root) + os.sep):
            raise ValueError(f"count_matches: path {raw!r} is outside the workspace")
        norm = os.path.relpath(norm, root)
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"count_matches: path {raw!r} is outside the workspace")
    relative = "" if norm == "." else norm.replace(os.sep, "/")
    if _WILD.search(relative):
        files = _glob(root, relative)
        if isinstance(files, str):
            return files
        what = f"{len(files)} file(s) match '{relative}'"
    else:
        node = _kind(root, relative)
        if node is None:
            return f"'{relative or '.'}' does not exist"
        if node == "dir":
            files = _walk(root, relative)
            if isinstance(files, str):
                return files
            what = f"'{relative or '.'}' holds {len(files)} file(s)"
        elif node == "file":
            files, what = [relative], f"'{relative}'"
        else:
            return f"'{relative}' is not a regular file or a directory"
    if unit == "files":
        return {len(files)}, what
    return _content(root, files, unit, what, containing)


def _kind(root: Path, relative: str) -> str | None:
    path = root / relative
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _walk(root: Path, under: str) -> list[str] | str:
    """The regular files beneath ``under`` (workspace-relative), no symlink followed."""
    out: list[str] = []
    seen = 0
    for top, dirs, names in os.walk(root / under, followlinks=False):
        seen += len(dirs) + len(names)
        if seen > MAX_ENTRIES:
            return f"more than {MAX_ENTRIES:,} entries under '{under or '.'}': not counted"
        dirs.sort()
        for name in sorted(names):
            full = Path(top) / name
            if stat.S_ISREG(os.lstat(full).st_mode):
                out.append(full.relative_to(root).as_posix())
    return out


def _glob(root: Path, pattern: str) -> list[str] | str:
    regex = glob_regex(pattern)
    static = []  # the directories before the first wildcard: where the walk starts
    for part in pattern.split("/"):
        if _WILD.search(part):
            break
        static.append(part)
    start = "/".join(static)
    if start and _kind(root, start) != "dir":
        return []
    files = _walk(root, start)
    if isinstance(files, str):
        return files
    return [f for f in files if regex.match(f)]


def _content(
    root: Path, files: list[str], unit: str, what: str, containing: str | None
) -> tuple[set[int], str] | str:
    total, wc_lines, read = 0, 0, 0
    for relative in files:
        try:
            fd = open_beneath(root, relative, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            return f"'{relative}' cannot be read beneath the workspace: {exc}"
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return f"'{relative}' is not a regular file"
            data = f.read(_MAX_BYTES - read + 1)
        read += len(data)
        if read > _MAX_BYTES:
            return f"over {_MAX_BYTES:,} bytes to read: not counted"
        if unit == "bytes":
            total += len(data)
        elif unit == "chars":
            total += len(data.decode("utf-8", errors="replace"))
        elif unit == "words":
            total += len(data.split())
        elif containing is not None:
            needle = containing.encode()
            total += sum(needle in line for line in data.splitlines())
        else:
            newlines = data.count(b"\n")
            wc_lines += newlines
            total += newlines + (1 if data and not data.endswith(b"\n") else 0)
    if containing is not None:
        return {total}, f"{what}: {total} lines containing {containing!r}"
    if unit != "lines" or wc_lines == total:
        return {total}, f"{what}: {total} {unit}"
    return {total, wc_lines}, f"{what}: {total} {unit} ({wc_lines} by wc -l)"
