"""What a sandboxed command changed: its overlay upper layer compared with the workspace.

New paths are ``created`` (reversible), unless they plant code the host may run later
(:func:`hazard_of`) or their volume is above the sandbox's threshold; deleted paths
(whiteouts, opaque directories), changed content, a file replaced by another kind, and a
changed mode are irreversible. The walk is iterative (any depth), linear in the number of
paths, and stops at a deadline (:class:`ObserveTimeout`). Every path a removal would take
away is stamped, so apply refuses when a tree changed meanwhile.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from artoo.schemas import FileEffect, Hazard

MAX_LISTED = 1000
"""Files listed one by one in a confirmation; beyond, one line sums up the rest."""
_DIFF_BYTES = 256 * 1024  # larger text files get sizes only, no line counts
_DIFF_CELLS = 250_000  # difflib only on middles whose product of line counts is below
DIFF_CHARS = 4000
"""The longest ``FileEffect.diff`` kept: a longer one is None, never cut — a cut diff
could hide a change the proof must see (``verification.proof.read_back_by_effect``)."""


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What a workspace path looked like when the command's effects were observed."""

    exists: bool
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    mode: int = 0

    @classmethod
    def of(cls, path: Path | str, dir_fd: int | None = None) -> _Stamp:
        try:
            st = os.lstat(path, dir_fd=dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            return cls(False)
        return cls(True, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


Action = Literal["remove", "mkdir", "file", "symlink", "chmod", "fifo"]


@dataclass(frozen=True, slots=True)
class _Op:
    action: Action
    path: str  # workspace-relative
    stamp: _Stamp  # the workspace path when observed; apply refuses if it changed
    tree: tuple[tuple[str, _Stamp], ...] = ()  # a removed directory: every path beneath


@dataclass(frozen=True)
class Observed:
    """A command's effects on the workspace: ``effects`` for people and the log, ``ops``
    to apply them."""

    effects: tuple[FileEffect, ...]
    ops: tuple[_Op, ...]

    @property
    def irreversible(self) -> tuple[FileEffect, ...]:
        """The effects that delete or change existing data, or plant code."""
        return tuple(e for e in self.effects if e.irreversible)


class ObserveTimeout(RuntimeError):
    """Observing the command's effects did not finish before the call's deadline."""


# =========================================================================== planted code
_STARTUP_NAMES = frozenset(
    {
        ".envrc",
        "sitecustomize.py",
        "usercustomize.py",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".inputrc",
        ".pythonrc",
        ".pythonstartup",
        ".xprofile",
        ".xinitrc",
        ".xsessionrc",
        ".gitconfig",
        ".npmrc",
        ".hgrc",
        "config.fish",
    }
)
_STARTUP_DIRS = frozenset({".ssh", ".bashrc.d"})
"""Directories whose files a login, a desktop session or ssh reads (a workspace that is a
home directory)."""
_EDITOR_FILES = frozenset({"settings.json", "tasks.json", "launch.json", "extensions.json"})
_GIT_CONFIG_RUNS = (
    "fsmonitor",
    "hookspath",
    "sshcommand",
    "pager",
    "editor",
    "askpass",
    "textconv",
    "[filter",
    "[include",
    "helper",
    "!",
    "program",
    "[alias",
    "gpg",
)
"""Words of a git configuration that may make a host ``git`` run a command."""


def git_config_hazard(rel: str, data: bytes) -> Hazard | None:
    """``"hook"`` when ``rel`` is a repository's ``.git/config`` whose text ``data`` may
    make git run a command (what ``git init`` writes does not)."""
    parts = PurePosixPath(rel).parts
    if len(parts) < 2 or parts[-2:] != (".git", "config"):
        return None
    text = data.decode("utf-8", "replace").lower()
    return "hook" if any(word in text for word in _GIT_CONFIG_RUNS) else None


def hazard_of(rel: str, mode: int | None = None) -> Hazard | None:
    """Why a new or changed workspace file at ``rel`` (mode ``mode``) is code the host may
    run later without anyone choosing to, or None (pure). Chosen: files a tool runs on its
    own — git hooks, shell and interpreter start-up files, direnv's ``.envrc``, editor
    configuration that runs tasks, CI workflows — and anything made executable. Not: a
    ``Makefile``, ``conftest.py``, ``package.json`` or any other project file, which runs
    only when someone runs that project's build or tests (as any of its source does)."""
    parts = PurePosixPath(rel).parts
    name = parts[-1] if parts else ""
    if len(parts) >= 2 and parts[-2] == "hooks" and ".git" in parts[:-2]:
        return None if name.endswith(".sample") else "hook"
    folders = set(parts[:-1])
    session = ".config" in folders and bool({"autostart", "systemd"} & folders)
    if name in _STARTUP_NAMES or name.endswith(".pth") or _STARTUP_DIRS & folders or session:
        return "startup"
    if (".vscode" in parts[:-1] and name in _EDITOR_FILES) or ".idea" in parts[:-1]:
        return "editor"
    if (".github" in parts and "workflows" in parts) or name == ".gitlab-ci.yml":
        return "ci"
    if mode is not None and stat.S_ISREG(mode) and mode & 0o111:
        if len(parts) >= 2 and parts[-2] == "hooks" and ".git" in parts:
            return None  # a sample hook: git runs only hooks by their exact name
        return "executable"
    return None


_HAZARD_TEXT: dict[str, str] = {
    "executable": "an executable file",
    "hook": "a git hook or configuration that runs commands",
    "startup": "a file run when a shell or interpreter starts",
    "editor": "editor configuration that runs commands",
    "ci": "a CI workflow",
    "link": "a symbolic link out of the workspace",
}


def link_hazard(rel: str, target: str) -> Hazard | None:
    """``"link"`` when a symbolic link at ``rel`` to ``target`` leads out of the
    workspace (pure: read lexically, as a later host program may follow it)."""
    if os.path.isabs(target):
        return "link"
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return "link" if joined == ".." or joined.startswith("../") else None


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


def _diff_summary(
    before: Path, after: Path, size_before: int, size_after: int
) -> tuple[str, str | None]:
    """The summary and the diff (:func:`line_diff`) of a file changed from ``before`` to
    ``after``."""
    if max(size_before, size_after) > _DIFF_BYTES:
        return _summary(None, None, size_before, size_after), None
    try:
        a, b = before.read_bytes(), after.read_bytes()
    except OSError:
        return _summary(None, None, size_before, size_after), None
    return _summary(a, b, size_before, size_after), line_diff(a, b)


def write_effect(
    path: str, before: bytes | None, after: bytes, mode: int | None = None
) -> FileEffect | None:
    """The effect of writing ``after`` to ``path`` whose content is ``before`` (None: no
    such file; ``mode``: the existing file's) — None when nothing changes. A file the host
    may run later (:func:`hazard_of`) carries its hazard; a text file, its lines removed
    and added (``diff``: :func:`line_diff`)."""
    hazard = hazard_of(path, mode)
    if before is None:
        return FileEffect(
            path=path,
            change="created",
            size_after=len(after),
            hazard=hazard,
            summary=_HAZARD_TEXT.get(hazard or "", ""),
            diff=_created_diff(len(after), lambda: after),
        )
    if before == after:
        return None
    small = max(len(before), len(after)) <= _DIFF_BYTES
    return FileEffect(
        path=path,
        change="modified",
        size_before=len(before),
        size_after=len(after),
        summary=_summary(
            before if small else None, after if small else None, len(before), len(after)
        ),
        hazard=hazard,
        diff=line_diff(before, after),
    )


# =========================================================================== the walk
def _kind(mode: int) -> Literal["file", "dir", "symlink", "other"]:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def _whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _opaque(path: Path) -> bool:
    for name in ("user.overlay.opaque", "trusted.overlay.opaque"):
        with contextlib.suppress(OSError):
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
    return False


def _same_content(a: Path, b: Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 16), fb.read(1 << 16)
            if x != y:
                return False
            if not x:
                return True


def _index_entries(data: bytes) -> list[bytes] | None:
    """The entries of a git index (version 2 or 3) without their file-system stat data
    (times, device, inode, uid, gid, size): mode, object id, flags and path. None when
    the data is not such an index."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3):
        return None
    entries, pos = [], 12
    for _ in range(count):
        start = pos
        if pos + 62 > len(data):
            return None
        mode = data[pos + 24 : pos + 28]
        rest = data[pos + 40 : pos + 62]  # object id and flags
        flags = int.from_bytes(data[pos + 60 : pos + 62], "big")
        pos += 62
        if version == 3 and flags & 0x4000:  # extended flags
            rest += data[pos : pos + 2]
            pos += 2
        end = data.find(b"\0", pos)
        if end < 0:
            return None
        path = data[pos:end]
        pos = end + 1
        pos += (8 - (pos - start) % 8) % 8  # NUL padding to a multiple of 8
        entries.append(mode + rest + path)
    return entries


def _index_refresh(rel: str, before: Path, after: Path) -> bool:
    """True when ``rel`` is a git index whose rewrite changed only stat data — what
    ``git diff`` or ``git status`` do to refresh it; staging or unstaging still counts."""
    if rel != ".git/index" and not rel.endswith("/.git/index"):
        return False
    try:
        old, new = _index_entries(before.read_bytes()), _index_entries(after.read_bytes())
    except OSError:
        return False
    return old is not None and old == new


def _printable(path: str) -> str:
    """``path`` as text the log can hold: a byte that is not UTF-8 as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def walk_tree(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every path beneath ``root`` (relative, sorted, parents first) with its lstat —
    iterative, so any depth; symlinks not followed."""
    stack: list[str] = [""]
    while stack:
        rel = stack.pop()
        try:
            names = sorted(os.listdir(root / rel if rel else root))
        except OSError:
            continue
        below = []
        for name in names:
            child = f"{rel}/{name}" if rel else name
            st = _lstat(root / child)
            if st is None:
                continue
            yield child, st
            if stat.S_ISDIR(st.st_mode):
                below.append(child)
        stack.extend(reversed(below))


def tree_stamps(root: Path) -> tuple[tuple[str, _Stamp], ...]:
    """The stamp of every path beneath ``root`` (see :func:`walk_tree`)."""
    return tuple(
        (rel, _Stamp(True, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode))
        for rel, st in walk_tree(root)
    )


@dataclass
class _Walk:
    upper: Path
    lower: Path
    deadline: float
    uid_shift: int = 0  # the upper layer's owners are the workspace's plus this
    effects: list[FileEffect] = field(default_factory=list)
    ops: list[_Op] = field(default_factory=list)
    created_bytes: int = 0
    created_paths: int = 0
    _ticks: int = 0

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks % 256 == 0 and time.monotonic() > self.deadline:
            raise ObserveTimeout("observing the command's effects took past the call's timeout")

    def effect(self, path: str, change: str, st: os.stat_result | None, **kw: object) -> None:
        kind = _kind(st.st_mode) if st is not None else "other"
        shown = _printable(path)
        if isinstance(kw.get("summary"), str):
            kw["summary"] = _printable(str(kw["summary"]))
        self.effects.append(FileEffect(path=shown, change=change, kind=kind, **kw))  # type: ignore[arg-type]

    def deleted(
        self, rel: str, st: os.stat_result, *, top: bool = True
    ) -> tuple[tuple[str, _Stamp], ...]:
        """``rel`` (unless not ``top``) and, for a directory, everything beneath it; the
        stamps of the tree beneath."""
        isdir = stat.S_ISDIR(st.st_mode)
        if top:
            self.effect(rel, "deleted", st, size_before=None if isdir else st.st_size)
        if not isdir:
            return ()
        tree = []
        for sub, sst in walk_tree(self.lower / rel):
            self.tick()
            tree.append((sub, _Stamp(True, sst.st_ino, sst.st_size, sst.st_mtime_ns, sst.st_mode)))
            self.effect(
                f"{rel}/{sub}",
                "deleted",
                sst,
                size_before=None if stat.S_ISDIR(sst.st_mode) else sst.st_size,
            )
        return tuple(tree)

    def remove(self, rel: str, lst: os.stat_result, stamp: _Stamp) -> None:
        tree = self.deleted(rel, lst)
        self.ops.append(_Op("remove", rel, stamp, tree))

    def run(self) -> None:
        """The walk: a stack of directory listings, depth first, in path order."""
        stack: list[Iterator[str]] = [iter(self.listing("", opaque=False))]
        while stack:
            rel = next(stack[-1], None)
            if rel is None:
                stack.pop()
                continue
            self.tick()
            descend = self.entry(rel)
            if descend is not None:
                stack.append(iter(self.listing(rel, descend)))

    def listing(self, rel: str, opaque: bool) -> list[str]:
        here = self.upper / rel if rel else self.upper
        names = sorted(os.listdir(here))
        if opaque:  # the directory was removed and made again: its old entries are gone
            for name in sorted(set(os.listdir(self.lower / rel)) - set(names)):
                child = f"{rel}/{name}" if rel else name
                sub = _lstat(self.lower / child)
                if sub is not None:
                    self.remove(child, sub, _Stamp.of(self.lower / child))
        return [f"{rel}/{name}" if rel else name for name in names]

    def created(self, rel: str, ust: os.stat_result) -> None:
        self.created_paths += 1
        if stat.S_ISDIR(ust.st_mode):
            self.effect(rel, "created", ust)
            return
        self.created_bytes += ust.st_size
        if stat.S_ISLNK(ust.st_mode):
            hazard = link_hazard(rel, os.readlink(self.upper / rel))
        else:
            hazard = hazard_of(rel, ust.st_mode)
        if hazard is None and rel.endswith(".git/config") and stat.S_ISREG(ust.st_mode):
            with open(self.upper / rel, "rb") as f:
                hazard = git_config_hazard(rel, f.read(1 << 16))
        diff = None
        if stat.S_ISREG(ust.st_mode):
            diff = _created_diff(ust.st_size, (self.upper / rel).read_bytes)
        self.effect(
            rel,
            "created",
            ust,
            size_after=ust.st_size,
            hazard=hazard,
            summary=_HAZARD_TEXT.get(hazard or "", ""),
            diff=diff,
        )

    def entry(self, rel: str) -> bool | None:
        """Record ``rel``'s effect; for a directory to walk into, whether it is opaque."""
        up = self.upper / rel
        ust = os.lstat(up)
        lst = _lstat(self.lower / rel)
        stamp = _Stamp.of(self.lower / rel)
        if _whiteout(ust):
            if lst is not None:
                self.remove(rel, lst, stamp)
            return None
        if lst is not None and _kind(lst.st_mode) != _kind(ust.st_mode):
            self.effect(
                rel,
                "replaced",
                ust,
                size_before=lst.st_size,
                size_after=ust.st_size,
                summary=f"{_kind(lst.st_mode)} -> {_kind(ust.st_mode)}",
                hazard=hazard_of(rel, ust.st_mode),
            )
            self.ops.append(_Op("remove", rel, stamp, self.deleted(rel, lst, top=False)))
            lst = None
            stamp = _Stamp(False)
        elif lst is None:
            self.created(rel, ust)
        if stat.S_ISDIR(ust.st_mode):
            if lst is None:
                self.ops.append(_Op("mkdir", rel, stamp))
            else:
                self._meta_changed(rel, lst, ust, stamp)
            return lst is not None and _opaque(up)
        if stat.S_ISLNK(ust.st_mode):
            if lst is not None and os.readlink(up) != os.readlink(self.lower / rel):
                target = os.readlink(up)
                self.effect(
                    rel,
                    "modified",
                    ust,
                    summary=f"link -> {target}",
                    hazard=link_hazard(rel, target),
                )
            elif lst is not None:
                return None
            self.ops.append(_Op("symlink", rel, stamp))
            return None
        if stat.S_ISREG(ust.st_mode):
            if lst is None:
                self.ops.append(_Op("file", rel, stamp))
            elif _index_refresh(rel, self.lower / rel, up):
                return None  # git refreshed its cache of file times: no entry changed
            elif lst.st_size != ust.st_size or not _same_content(self.lower / rel, up):
                summary, diff = _diff_summary(self.lower / rel, up, lst.st_size, ust.st_size)
                self.effect(
                    rel,
                    "modified",
                    ust,
                    size_before=lst.st_size,
                    size_after=ust.st_size,
                    summary=summary,
                    hazard=hazard_of(rel, ust.st_mode),
                    diff=diff,
                )
                self.ops.append(_Op("file", rel, stamp))
            else:
                self._meta_changed(rel, lst, ust, stamp)
            return None
        if stat.S_ISFIFO(ust.st_mode) and lst is None:
            self.ops.append(_Op("fifo", rel, stamp))
        return None

    def _meta_changed(
        self, rel: str, lst: os.stat_result, ust: os.stat_result, stamp: _Stamp
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
        self.effect(
            rel,
            "metadata",
            ust,
            summary=", ".join(notes),
            hazard=hazard_of(rel, ust.st_mode) if gains_x else None,
        )
        self.ops.append(_Op("chmod", rel, stamp))
        return True


def observe(
    upper: Path,
    workspace: Path,
    *,
    deadline: float = float("inf"),
    uid_shift: int = 0,
    ask_bytes: int | None = None,
    ask_paths: int | None = None,
) -> Observed:
    """The effects of the command whose overlay upper layer is ``upper`` on
    ``workspace`` (the overlay's lower layer), in path order. Raises ObserveTimeout past
    ``deadline`` (``time.monotonic``). Creations above ``ask_bytes`` or ``ask_paths`` add
    one ``volume`` effect (which asks)."""
    w = _Walk(upper, workspace, deadline, uid_shift)
    w.run()
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
    return Observed(tuple(effects), tuple(w.ops))
