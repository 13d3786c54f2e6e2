"""Counting in the workspace, for the ``count_matches`` check (equipment of the checks).

:func:`measure` counts lines, words, bytes or characters of the files a path names, or
the files themselves; :func:`stated_number` reads the number an output states. Both are
pure but for reading the workspace, which they do beneath its root: no symlink is
followed, no file opened through one, no path outside the root named.
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
    "count_command",
    "files_measured",
    "glob_regex",
    "measure",
    "parse_unit",
    "spans_files",
    "stated_number",
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


_PLAIN = re.compile(r"[\w./*?\[\]-]+")
_WC = {"lines": "-l", "words": "-w", "bytes": "-c", "chars": "-m"}


def count_command(path: str, value: object, *, directory: bool = False) -> str | None:
    """A bash command (globstar on) that prints the count a ``count_matches`` check of
    ``path`` and ``value`` measures, first thing on its output, or None (pure): a hint
    for the Executor — the check still counts by itself. ``directory``: the path names a
    directory (the caller looked). None for a path that would need quoting."""
    parsed = parse_unit(value)
    path = path.strip()
    if parsed is None or not path or not _PLAIN.fullmatch(path) or path.startswith("-"):
        return None
    unit, containing = parsed
    wild = _WILD.search(path) is not None
    quoted = None if containing is None else "'" + containing.replace("'", "'\\''") + "'"
    if not wild and not directory:  # one file: the plain commands
        if unit == "files":
            return f"find {path} -type f | wc -l"
        if quoted is not None:
            return f"grep -c -F {quoted} {path}"
        return f"wc {_WC[unit]} {path}"
    files = f"find {path} -maxdepth 0 -type f" if wild else f"find {path} -type f"
    if unit == "files":
        return f"{files} | wc -l"
    if quoted is not None:
        return f"{files} -exec grep -h -F {quoted} {{}} + | wc -l"
    return f"{files} -exec wc {_WC[unit]} {{}} + | tail -n 1"


MAX_ENTRIES = 100_000
"""A walk visits at most this many entries: a larger tree is not counted."""

_MAX_BYTES = 64 * 1024 * 1024  # at most this much is read in all
_WILD = re.compile(r"[*?\[]")
# a whole number standing alone: not part of a name (todo2.txt, v2, /1/), a decimal or a
# date; "1,234" is one number
_ALONE = r"(?<![\w./\\-])(?<!\d:)"
_NUMBER = re.compile(_ALONE + r"(?:\d{1,3}(?:,\d{3})+|\d+)(?![\w/]|[.,:-]\d)")


def stated_number(output: str) -> int | None:
    """The first whole number standing alone in ``output``, or None (pure)."""
    m = _NUMBER.search(output)
    return None if m is None else int(m.group().replace(",", ""))


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


_HOLDS = re.compile(r"^'.*' holds (\d+) file\(s\)(?::|$)|^(\d+) file\(s\) match '", re.S)


def files_measured(seen: str) -> int | None:
    """How many files a count's observation (what :func:`measure` saw, logged as a
    ``count_matches`` verdict's ``observed["seen"]``) reports it counted over — a
    directory's ("'src' holds 6 file(s): 49 lines") or a glob's ("2 file(s) match …") —
    or None for one file named by its path ("'src/a.py': 22 lines") or no observation
    (pure)."""
    m = _HOLDS.match(seen)
    return None if m is None else int(m.group(1) or m.group(2))


def spans_files(path: str, seen: str = "") -> bool:
    """Whether a ``count_matches`` of ``path`` counts over other than one file (pure): a
    directory or a glob over 0 or several files, as its observation (``seen``,
    :func:`files_measured`) reports; with none (a check not yet measured), a glob."""
    if seen:
        n = files_measured(seen)
        return n is not None and n != 1
    return _WILD.search(path) is not None


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
