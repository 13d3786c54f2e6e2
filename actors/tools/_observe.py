"""What a sandboxed command changed: its overlay upper layer compared with the workspace.

The upper layer is read as the sandbox's unprivileged user with no link followed
(:class:`~._upper.UpperLayer`), the workspace by descriptors with no link followed
(:mod:`._fs`); every regular file is recorded with the SHA-256 of the bytes read, every
symlink with its target, every path with its mode, so that apply writes what was judged
or nothing (:mod:`._apply`). New paths are ``created`` (reversible) unless they carry a
hazard (:mod:`._hazard`: git's layout, start-up files, executables …; a symlink by where
it resolves in the workspace as the command leaves it, links made by the same command
included, :mod:`._resolve`) or their volume is above the sandbox's threshold; deleted
paths (whiteouts, opaque directories), changed content, a changed kind and a changed
mode are irreversible. The walk is iterative (any depth), reads each directory once,
and stops at a deadline (:class:`ObserveTimeout`); a git index is compared only up to
:data:`INDEX_LIMIT`. Every path a removal would take away is stamped.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from artoo.schemas import FileEffect, Hazard

from ._fs import READ_FILE, Dirs, open_dir, walk_at
from ._hazard import git_hazard, git_name, hazard_of, is_git_dir, path_hazard, plain_hazard
from ._resolve import Kind, WorkspaceView, kind_of, link_escape
from ._upper import Entry, LayerChanged, UpperLayer

MAX_LISTED = 1000
"""Effects listed one by one in a confirmation; beyond, one line sums up the rest (every
path is still checked: :attr:`Observed.touched`)."""
_DIFF_BYTES = 256 * 1024  # larger text files get sizes only, no line counts
_DIFF_CELLS = 250_000  # difflib only on middles whose product of line counts is below
DIFF_CHARS = 4000
"""The longest ``FileEffect.diff`` kept: a longer one is None, never cut — a cut diff
could hide a change the proof must see (``reads_back`` in ``verification.checks``)."""
_KEEP = 4 * (DIFF_CHARS + 1)  # a new file's bytes kept for its diff: at most 4 bytes a char
INDEX_LIMIT = 32 << 20
"""A git index larger than this is not parsed to tell a refresh of its file times from
a change of its entries: it counts as changed (and asks, as all of git's files do)."""
_OPAQUE = ("trusted.overlay.opaque", "user.overlay.opaque")
_REDIRECT = ("trusted.overlay.redirect", "user.overlay.redirect")

__all__ = [
    "DIFF_CHARS",
    "INDEX_LIMIT",
    "MAX_LISTED",
    "ObserveTimeout",
    "Observed",
    "hazard_of",
    "line_diff",
    "observe",
    "path_hazard",
    "write_effect",
]


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What a workspace path looked like when the command's effects were observed."""

    exists: bool
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    mode: int = 0

    @classmethod
    def of(cls, st: os.stat_result | None) -> _Stamp:
        """The stamp of a path whose own status is ``st`` (None: nothing there)."""
        if st is None:
            return cls(False)
        return cls(True, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


Action = Literal["remove", "mkdir", "file", "symlink", "chmod", "fifo"]


@dataclass(frozen=True, slots=True)
class _Op:
    """One operation of an apply, with what was observed: the permission bits (``mode``)
    of what it makes, a file's SHA-256 and size, a symlink's target."""

    action: Action
    path: str  # workspace-relative
    stamp: _Stamp  # the workspace path when observed; apply refuses if it changed
    tree: tuple[tuple[str, _Stamp], ...] = ()  # a removed directory: every path beneath
    mode: int = 0
    sha256: str = ""
    size: int = 0
    target: str = ""


@dataclass(frozen=True)
class Observed:
    """A command's effects on the workspace: ``effects`` for people and the log (at most
    :data:`MAX_LISTED` one by one), ``ops`` to apply them, ``touched`` every workspace
    path they create, change or remove (all of them, for blocked targets), ``source`` the
    upper layer they were read from (:meth:`close` releases it)."""

    effects: tuple[FileEffect, ...]
    ops: tuple[_Op, ...]
    touched: tuple[str, ...] = ()
    source: UpperLayer | None = None

    @property
    def irreversible(self) -> tuple[FileEffect, ...]:
        """The effects that delete or change existing data, or plant code."""
        return tuple(e for e in self.effects if e.irreversible)

    def close(self) -> None:
        """Release the upper layer the effects were read from."""
        if self.source is not None:
            self.source.close()


class ObserveTimeout(RuntimeError):
    """Observing the command's effects did not finish before the call's deadline."""


# =========================================================================== diff summary
def _middles(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """The changed middles of two line lists (pure): their common head and tail trimmed."""
    head = 0
    while head < len(old) and head < len(new) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < len(old) - head and tail < len(new) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return old[head : len(old) - tail], new[head : len(new) - tail]


def _line_counts(a: bytes, b: bytes) -> str | None:
    """``"+A -R lines"`` in time linear in the size (common head and tail trimmed; difflib
    only on a small middle, else lines counted as multisets), None for binary data."""
    try:
        old, new = a.decode("utf-8").splitlines(), b.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
    mid_old, mid_new = _middles(old, new)
    added = removed = 0
    if len(mid_old) * len(mid_new) <= _DIFF_CELLS:
        matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                removed += i2 - i1
            if tag in ("replace", "insert"):
                added += j2 - j1
    else:  # lines that moved count as unchanged: a lower bound, in linear time
        c_old = Counter(hashlib.blake2b(x.encode(), digest_size=8).digest() for x in mid_old)
        c_new = Counter(hashlib.blake2b(x.encode(), digest_size=8).digest() for x in mid_new)
        removed, added = sum((c_old - c_new).values()), sum((c_new - c_old).values())
    return f"+{added} -{removed} lines"


def _lines(text: str) -> list[str]:
    """``text``'s lines, split at ``\n`` only (a ``\r`` stays in its line); a final
    newline ends the last line and adds none."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def line_diff(a: bytes, b: bytes) -> str | None:
    """``FileEffect.diff`` of a text file whose content ``a`` became ``b`` (pure): ``-``
    and each line removed, ``+`` and each line added, no context, no headers, no hunk
    markers, in file order (a replaced block's removed lines first), joined by ``\n``;
    ``""`` when no line changed (only the final newline, or nothing). None — never a part
    — when a side is not UTF-8, when a side is over ``_DIFF_BYTES``, when its changed
    middle is too long to compare exactly (``_DIFF_CELLS``) or when the diff is over
    :data:`DIFF_CHARS` characters."""
    if max(len(a), len(b)) > _DIFF_BYTES:
        return None
    try:
        old, new = _lines(a.decode("utf-8")), _lines(b.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    mid_old, mid_new = _middles(old, new)
    if len(mid_old) * len(mid_new) > _DIFF_CELLS:
        return None
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out += [f"-{line}" for line in mid_old[i1:i2]]
            out += [f"+{line}" for line in mid_new[j1:j2]]
    diff = "\n".join(out)
    return diff if len(diff) <= DIFF_CHARS else None


def _created_diff(size: int, read: Callable[[], bytes]) -> str | None:
    """The diff of a new file of ``size`` bytes whose content ``read`` gives: None
    unread when it is too large for its diff to be kept (every character is in it, and a
    character is at most four bytes)."""
    if size > 4 * (DIFF_CHARS + 1):
        return None
    try:
        return line_diff(b"", read())
    except OSError:
        return None


def _summary(a: bytes | None, b: bytes | None, size_before: int, size_after: int) -> str:
    """``"+2 -1 lines, 6 -> 8 bytes"`` (text), ``"binary, …"``, or only the sizes when a
    side is too large to compare line by line (``None``)."""
    sizes = f"{size_before:,} -> {size_after:,} bytes"
    if a is None or b is None:
        return sizes
    lines = _line_counts(a, b)
    return f"{lines}, {sizes}" if lines else f"binary, {sizes}"


def write_effect(
    path: str,
    before: bytes | None,
    after: bytes,
    mode: int | None = None,
    *,
    git_dirs: Callable[[str], bool] | None = None,
) -> FileEffect | None:
    """The effect of writing ``after`` to ``path`` whose content is ``before`` (None: no
    such file; ``mode``: the existing file's) — None when nothing changes. A path with a
    hazard (:func:`~._hazard.path_hazard`; ``git_dirs`` tells which directories are laid
    out as git repositories) carries it, and its reason in the summary; a text file, its
    lines removed and added (``diff``: :func:`line_diff`)."""
    found = path_hazard(path, mode, git_dirs=git_dirs or (lambda d: False))
    hazard, why = found if found else (None, "")
    if before is None:
        return FileEffect(
            path=path,
            change="created",
            size_after=len(after),
            hazard=hazard,
            summary=why,
            diff=_created_diff(len(after), lambda: after),
        )
    if before == after:
        return None
    small = max(len(before), len(after)) <= _DIFF_BYTES
    summary = _summary(before if small else None, after if small else None, len(before), len(after))
    return FileEffect(
        path=path,
        change="modified",
        size_before=len(before),
        size_after=len(after),
        summary=f"{summary}; {why}" if why else summary,
        hazard=hazard,
        diff=line_diff(before, after),
    )


# =========================================================================== the walk
def _whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _xattr(fd: int, names: tuple[str, ...]) -> bytes | None:
    """The first of the attributes ``names`` the directory ``fd`` has (read by this
    process: the overlay's ``trusted.`` ones need it), or None."""
    for name in names:
        try:
            return os.getxattr(fd, name)
        except OSError:
            continue
    return None


def _hash_fd(fd: int, keep: int, deadline: float) -> tuple[str, int, bytes | None]:
    digest = hashlib.sha256()
    kept: list[bytes] = []
    size = 0
    while chunk := os.read(fd, 1 << 20):
        digest.update(chunk)
        size += len(chunk)
        if size <= keep:
            kept.append(chunk)
        if time.monotonic() > deadline:
            raise ObserveTimeout("observing the command's effects took past the call's timeout")
    return digest.hexdigest(), size, b"".join(kept) if size <= keep else None


def _index_entries(data: bytes) -> Iterator[bytes]:
    """The entries of a git index (version 2 or 3) without their file-system stat data
    (times, device, inode, uid, gid, size): mode, object id, flags and path, one at a
    time. Raises ValueError when the data is not such an index."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise ValueError("not an index")
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3):
        raise ValueError("an index version not read")
    pos = 12
    for _ in range(count):
        start = pos
        if pos + 62 > len(data):
            raise ValueError("a cut index")
        mode = data[pos + 24 : pos + 28]
        rest = data[pos + 40 : pos + 62]  # object id and flags
        flags = int.from_bytes(data[pos + 60 : pos + 62], "big")
        pos += 62
        if version == 3 and flags & 0x4000:  # extended flags
            rest += data[pos : pos + 2]
            pos += 2
        end = data.find(b"\0", pos)
        if end < 0:
            raise ValueError("a cut index")
        path = data[pos:end]
        pos = end + 1
        pos += (8 - (pos - start) % 8) % 8  # NUL padding to a multiple of 8
        yield mode + rest + path


def _index_refresh(old: bytes, new: bytes) -> bool:
    """True when the git index ``old`` became ``new`` by a refresh of its stat data only
    — what ``git diff`` or ``git status`` do; staging or unstaging still counts. Compared
    entry by entry (memory: the two indexes, nothing per entry)."""
    missing = b""
    try:
        a, b = _index_entries(old), _index_entries(new)
        while True:
            x, y = next(a, missing), next(b, missing)
            if x != y:
                return False
            if x is missing:
                return True
    except ValueError:
        return False


def _printable(path: str) -> str:
    """``path`` as text the log can hold: a byte that is not UTF-8 as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def tree_stamps(
    root_fd: int, rel: str, tick: Callable[[], None] = lambda: None
) -> tuple[tuple[str, _Stamp], ...]:
    """The stamp of every path beneath the workspace directory ``rel`` (``root_fd``: the
    workspace), links not followed."""
    return tuple((sub, _Stamp.of(st)) for sub, st in walk_at(root_fd, rel, tick))


class _MergedView:
    """The workspace as the command leaves it: the upper layer's entries over the
    workspace's, whiteouts and directories made anew hiding what was beneath (see
    :class:`~._resolve.View`)."""

    def __init__(self, lower: WorkspaceView) -> None:
        self.lower = lower
        self.upper: dict[str, tuple[Kind, str | None]] = {}
        self.gone: set[str] = set()
        self.hidden: set[str] = set()  # upper directories the workspace's entries do not show in

    def lookup(self, rel: str) -> tuple[Kind, str | None] | None:
        if rel in self.upper:
            return self.upper[rel]
        if rel in self.gone or rel.rpartition("/")[0] in self.hidden:
            return None
        return self.lower.lookup(rel)


@dataclass
class _Item:
    """One upper entry's outcome, emitted in path order."""

    effects: list[FileEffect] = field(default_factory=list)
    ops: list[_Op] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    links: list[tuple[int, str, str]] = field(default_factory=list)  # (effect, path, target)
    descend: _Sub | None = None


@dataclass(frozen=True, slots=True)
class _Sub:
    """A directory of the upper layer to walk: whether the workspace's entries show in it
    (``lower``), and why its entries are git's (``git``), if they are."""

    rel: str
    lower: bool
    git: str | None


_GIT_DIR_WHY = "in a .git directory: git's own configuration, hooks and state"
_LAID_OUT_WHY = "in a directory laid out as a git repository: git reads it as one"


class _Walk:
    """One observation: the upper layer ``layer`` against the workspace (``ws``, an open
    descriptor of ``workspace``)."""

    def __init__(
        self, layer: UpperLayer, workspace: Path, ws: int, deadline: float, uid_shift: int
    ) -> None:
        self.layer = layer
        self.workspace = workspace
        self.ws = ws
        self.deadline = deadline
        self.uid_shift = uid_shift
        self.lower_dirs = Dirs(ws)
        self.view = _MergedView(WorkspaceView(ws))
        self.effects: list[FileEffect] = []
        self.ops: list[_Op] = []
        self.touched: list[str] = []
        self.links: list[tuple[int, str, str]] = []
        self.computed = 0  # effects computed so far (a bound on those listed before)
        self.created_bytes = 0
        self.created_paths = 0
        self._ticks = 0

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks % 16 == 0 and time.monotonic() > self.deadline:
            raise ObserveTimeout("observing the command's effects took past the call's timeout")

    def effect(
        self, item: _Item, path: str, change: str, st: os.stat_result | None, **kw: object
    ) -> int:
        """Add an effect to ``item``; its index there."""
        kind = kind_of(st.st_mode) if st is not None else "other"
        if isinstance(kw.get("summary"), str):
            kw["summary"] = _printable(str(kw["summary"]))
        self.computed += 1
        item.effects.append(FileEffect(path=_printable(path), change=change, kind=kind, **kw))  # type: ignore[arg-type]
        return len(item.effects) - 1

    # ----------------------------------------------------------------- the order
    def run(self) -> None:
        """Depth first, in path order; each directory scanned once, when reached."""
        root_git = (
            _GIT_DIR_WHY if any(git_name(p) == ".git" for p in self.workspace.parts) else None
        )
        stack: list[Iterator[_Item]] = [iter(self.directory(_Sub("", True, root_git)))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                continue
            self.tick()
            base = len(self.effects)
            self.effects += item.effects
            self.ops += item.ops
            self.touched += item.touched
            self.links += [(base + i, path, target) for i, path, target in item.links]
            if item.descend is not None:
                stack.append(iter(self.directory(item.descend)))
        self.lower_dirs.close()
        self.judge_links()

    def judge_links(self) -> None:
        """Each new or changed symlink, by where it resolves once every effect is made."""
        roots = (str(self.workspace),)
        for index, path, target in self.links:
            self.tick()
            why = link_escape(self.view, path, target, roots)
            if why is not None:
                e = self.effects[index]
                summary = f"{e.summary}; {why}" if e.summary else why
                self.effects[index] = FileEffect(
                    path=e.path,
                    change=e.change,
                    kind=e.kind,
                    size_before=e.size_before,
                    size_after=e.size_after,
                    summary=summary,
                    hazard="link",
                )

    # ----------------------------------------------------------------- a directory
    def directory(self, sub: _Sub) -> list[_Item]:
        """The outcome of every entry of the upper directory ``sub``, in name order
        (removals of an opaque directory's old entries first)."""
        keep = _KEEP if self.computed < MAX_LISTED else 0
        scan = self.layer.scan(sub.rel, keep, self.deadline)
        try:
            if _xattr(scan.fd, _REDIRECT) is not None:
                raise LayerChanged(f"'{sub.rel}' is a directory the overlay redirects")
            opaque = bool(sub.rel) and _xattr(scan.fd, _OPAQUE) == b"y"
        finally:
            os.close(scan.fd)
        lower: int | None = None
        if sub.lower:
            try:
                lower = self.lower_dirs.open(sub.rel)
            except OSError:
                lower = None
        items: list[_Item] = []
        if opaque:
            self.view.hidden.add(sub.rel)
            if lower is not None:
                upper_names = {e.name for e in scan.entries}
                for name in sorted(set(os.listdir(lower)) - upper_names):
                    try:
                        old = os.stat(name, dir_fd=lower, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    items.append(self.removal(_join(sub.rel, name), old))
            lower = None
        git = sub.git
        if git is None and self.laid_out(scan.entries, lower):
            git = _LAID_OUT_WHY
        for e in scan.entries:
            lst: os.stat_result | None = None
            if lower is not None:
                try:
                    lst = os.stat(e.name, dir_fd=lower, follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    lst = None
            items.append(self.entry(sub, e, lst, lower, git))
        return items

    def laid_out(self, entries: tuple[Entry, ...], lower: int | None) -> bool:
        """Whether the directory, as the command leaves it, is laid out as a git
        repository (its upper ``entries`` over its workspace directory ``lower``)."""
        names = {e.name for e in entries if not _whiteout(e.st)}
        gone = {e.name for e in entries if _whiteout(e.st)}
        if lower is not None:
            for mark in ("HEAD", "refs", "objects", "commondir"):
                if mark not in gone and mark not in names:
                    try:
                        os.stat(mark, dir_fd=lower, follow_symlinks=False)
                        names.add(mark)
                    except OSError:
                        pass
        return is_git_dir(names)

    def removal(self, rel: str, lst: os.stat_result) -> _Item:
        """``rel`` (in the workspace, ``lst``) and everything beneath it deleted."""
        item = _Item()
        self.view.gone.add(rel)
        isdir = stat.S_ISDIR(lst.st_mode)
        self.effect(item, rel, "deleted", lst, size_before=None if isdir else lst.st_size)
        tree = self.deleted_tree(item, rel, lst)
        item.ops.append(_Op("remove", rel, _Stamp.of(lst), tree))
        item.touched.append(rel)
        return item

    def deleted_tree(
        self, item: _Item, rel: str, lst: os.stat_result
    ) -> tuple[tuple[str, _Stamp], ...]:
        """Everything beneath the workspace directory ``rel`` deleted: its stamps."""
        if not stat.S_ISDIR(lst.st_mode):
            return ()
        tree = []
        for sub, sst in walk_at(self.ws, rel, self.tick):
            tree.append((sub, _Stamp.of(sst)))
            isdir = stat.S_ISDIR(sst.st_mode)
            self.effect(
                item, f"{rel}/{sub}", "deleted", sst, size_before=None if isdir else sst.st_size
            )
            item.touched.append(f"{rel}/{sub}")
        return tuple(tree)

    # ----------------------------------------------------------------- an entry
    def entry(
        self, sub: _Sub, e: Entry, lst: os.stat_result | None, lower: int | None, git: str | None
    ) -> _Item:
        """The outcome of the upper entry ``e`` of ``sub`` (``lst``: the workspace's path
        there, read in its directory ``lower``)."""
        rel = _join(sub.rel, e.name)
        ust = e.st
        if _whiteout(ust):
            self.view.gone.add(rel)
            return self.removal(rel, lst) if lst is not None else _Item()
        ukind = kind_of(ust.st_mode)
        self.view.upper[rel] = (ukind, e.target)
        item = _Item()
        why = git or git_hazard(e.name, directory=ukind == "dir")
        found: tuple[Hazard, str] | None = ("hook", why) if why else plain_hazard(rel, ust.st_mode)
        hazard: Hazard | None = found[0] if found else None
        reason = found[1] if found else ""
        stamp = _Stamp.of(lst)
        replaced = False
        if lst is not None and kind_of(lst.st_mode) != ukind:
            i = self.effect(
                item,
                rel,
                "replaced",
                ust,
                size_before=lst.st_size,
                size_after=ust.st_size,
                summary=f"{kind_of(lst.st_mode)} -> {ukind}" + (f"; {reason}" if reason else ""),
                hazard=hazard,
            )
            if ukind == "symlink":
                item.links.append((i, rel, e.target or ""))
            tree = self.deleted_tree(item, rel, lst)
            item.ops.append(_Op("remove", rel, stamp, tree))
            lst, stamp, replaced = None, _Stamp(False), True
        elif lst is None:
            self.created(item, rel, e, hazard, reason)
        item.touched.append(rel)
        mode = stat.S_IMODE(ust.st_mode)
        if ukind == "dir":
            inner = git or (_GIT_DIR_WHY if git_name(e.name) == ".git" else None)
            if lst is None:
                self.view.hidden.add(rel)
                item.ops.append(_Op("mkdir", rel, stamp, mode=mode))
                item.descend = _Sub(rel, False, inner)
            else:
                self.meta_changed(item, rel, lst, ust, stamp, hazard, reason)
                item.descend = _Sub(rel, True, inner)
        elif ukind == "symlink":
            target = e.target or ""
            if lst is not None:
                old = os.readlink(e.name, dir_fd=lower) if lower is not None else None
                if old == target:
                    return _Item()
                i = self.effect(
                    item, rel, "modified", ust, summary=f"link -> {target}", hazard=hazard
                )
                item.links.append((i, rel, target))
            item.ops.append(_Op("symlink", rel, stamp, target=target))
        elif ukind == "file":
            op = _Op("file", rel, stamp, mode=mode, sha256=e.sha256 or "", size=e.size)
            if lst is None:
                item.ops.append(op)
            elif self.changed_file(item, rel, e, lst, lower, hazard, reason):
                item.ops.append(op)
            elif not self.meta_changed(item, rel, lst, ust, stamp, hazard, reason):
                item.touched.pop()
        elif stat.S_ISFIFO(ust.st_mode) and lst is None:
            item.ops.append(_Op("fifo", rel, stamp, mode=mode))
        elif lst is not None and not replaced:
            item.touched.pop()
        return item

    def created(self, item: _Item, rel: str, e: Entry, hazard: Hazard | None, reason: str) -> None:
        self.created_paths += 1
        ust = e.st
        if stat.S_ISDIR(ust.st_mode):
            self.effect(item, rel, "created", ust, hazard=hazard, summary=reason)
            return
        self.created_bytes += ust.st_size
        i = self.effect(
            item,
            rel,
            "created",
            ust,
            size_after=e.size if stat.S_ISREG(ust.st_mode) else ust.st_size,
            hazard=hazard,
            summary=reason,
            diff=_created_diff(e.size, lambda: e.data or b"") if e.data is not None else None,
        )
        if stat.S_ISLNK(ust.st_mode):
            item.links.append((i, rel, e.target or ""))

    def changed_file(
        self,
        item: _Item,
        rel: str,
        e: Entry,
        lst: os.stat_result,
        lower: int | None,
        hazard: Hazard | None,
        reason: str,
    ) -> bool:
        """Whether the file ``rel`` changed content (recorded in ``item`` if so): sizes,
        then SHA-256 against the workspace's bytes; a git index refreshed only is not."""
        assert lower is not None
        parent = rel.rpartition("/")[0].rpartition("/")[2]
        index = e.name == "index" and git_name(parent) == ".git"
        small = max(lst.st_size, e.size) <= _DIFF_BYTES
        limit = INDEX_LIMIT if index else _DIFF_BYTES
        want = max(lst.st_size, e.size) <= limit
        old: bytes | None = None
        if want or lst.st_size == e.size:
            fd = os.open(e.name, READ_FILE | os.O_NOFOLLOW, dir_fd=lower)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise LayerChanged(f"'{rel}' in the workspace changed while it was observed")
                old_sha, _, old = _hash_fd(fd, limit if want else 0, self.deadline)
            finally:
                os.close(fd)
            if old_sha == e.sha256 and lst.st_size == e.size:
                return False
        new = None
        if want:
            new = e.data
            if new is None:
                new = self.layer.read(rel, e.sha256 or "", self.deadline)
        if index and old is not None and new is not None and _index_refresh(old, new):
            return False
        summary = _summary(old if small else None, new if small else None, lst.st_size, e.size)
        if index and not want:
            summary += f"; an index over {INDEX_LIMIT >> 20} MiB is not compared entry by entry"
        self.effect(
            item,
            rel,
            "modified",
            e.st,
            size_before=lst.st_size,
            size_after=e.size,
            summary=f"{summary}; {reason}" if reason else summary,
            hazard=hazard,
            diff=line_diff(old, new) if small and old is not None and new is not None else None,
        )
        return True

    def meta_changed(
        self,
        item: _Item,
        rel: str,
        lst: os.stat_result,
        ust: os.stat_result,
        stamp: _Stamp,
        hazard: Hazard | None,
        reason: str,
    ) -> bool:
        before, after = stat.S_IMODE(lst.st_mode), stat.S_IMODE(ust.st_mode)
        notes = []
        if before != after:
            notes.append(f"mode {before:o} -> {after:o}")
        owner = (ust.st_uid - self.uid_shift, ust.st_gid - self.uid_shift)
        if (lst.st_uid, lst.st_gid) != owner:
            notes.append(f"owner {lst.st_uid}:{lst.st_gid} -> {owner[0]}:{owner[1]}")
        if not notes:
            return False
        gains_x = stat.S_ISREG(ust.st_mode) and after & 0o111 and not before & 0o111
        keep = hazard if hazard == "hook" or gains_x else None
        self.effect(
            item,
            rel,
            "metadata",
            ust,
            summary=", ".join(notes) + (f"; {reason}" if keep else ""),
            hazard=keep,
        )
        item.ops.append(_Op("chmod", rel, stamp, mode=after))
        return True


def observe(
    upper: UpperLayer | Path,
    workspace: Path,
    *,
    deadline: float = float("inf"),
    uid_shift: int = 0,
    ask_bytes: int | None = None,
    ask_paths: int | None = None,
) -> Observed:
    """The effects of the command whose overlay upper layer is ``upper`` on
    ``workspace`` (the overlay's lower layer), in path order; the returned Observed owns
    ``upper`` (a Path: a hand-made layer, read as this process). Raises ObserveTimeout
    past ``deadline`` (``time.monotonic``), OSError when the layer cannot be read as it
    was (:class:`~._upper.LayerChanged`) — the layer closed then. Creations above
    ``ask_bytes`` or ``ask_paths`` add one ``volume`` effect (which asks)."""
    layer = UpperLayer.at(upper) if isinstance(upper, Path) else upper
    try:
        ws = open_dir(workspace)
        try:
            w = _Walk(layer, workspace, ws, deadline, uid_shift)
            w.run()
        finally:
            os.close(ws)
    except BaseException:
        layer.close()
        raise
    effects = w.effects
    if len(effects) > MAX_LISTED:
        rest = effects[MAX_LISTED:]
        effects = [
            *effects[:MAX_LISTED],
            FileEffect(
                path="…",
                change="deleted" if any(e.irreversible for e in rest) else "created",
                kind="other",
                summary=f"and {len(rest):,} more paths",
                hazard=next((e.hazard for e in rest if e.hazard), None),
            ),
        ]
    if (ask_bytes is not None and w.created_bytes > ask_bytes) or (
        ask_paths is not None and w.created_paths > ask_paths
    ):
        effects.append(
            FileEffect(
                path=".",
                change="created",
                kind="other",
                size_after=w.created_bytes,
                summary=f"{w.created_paths:,} paths, {w.created_bytes:,} bytes created",
                hazard="volume",
            )
        )
    return Observed(tuple(effects), tuple(w.ops), tuple(w.touched), layer)
