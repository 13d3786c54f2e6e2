"""Where a path leads, decided as the host's kernel would — every symlink followed, one at
a time, in a *view* of the workspace — without ever looking outside the workspace.

A view answers what is at a workspace-relative path (its kind, a symlink's target): the
workspace itself (:class:`WorkspaceView`), or the workspace as a command's effects would
leave it (``_observe``'s merged view, so links made by the same command count, chained).
Resolution stops as soon as it would leave the workspace (a ``..`` above its root, an
absolute target elsewhere): what lies outside is never looked at, so no answer depends
on a host file's existence. :func:`glob` lists workspace paths on the same terms, and
:func:`visible_in` decides whether a host path exists inside the sandbox.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from ._fs import lstat_at, open_at, open_dir

Kind = Literal["file", "dir", "symlink", "other"]
MAX_LINKS = 40
"""Symlinks followed in one resolution before it counts as a loop (Linux's limit)."""


def kind_of(mode: int) -> Kind:
    """The kind of a file of ``mode``."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


class View(Protocol):
    """What a workspace looks like, path by path."""

    def lookup(self, rel: str) -> tuple[Kind, str | None] | None:
        """The kind of what is at the normalised relative path ``rel`` whose every parent
        is a directory of the view (a symlink's target with it), None when nothing is."""
        ...


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a path leads: ``rel`` (workspace-relative, ``""`` the root) and what is
    there (``kind``, None when nothing is yet), or ``escape`` — ``"outside"`` (it leaves
    the workspace) or ``"loop"`` (more than :data:`MAX_LINKS` links)."""

    rel: str | None
    kind: Kind | None = None
    escape: Literal["outside", "loop"] | None = None


def resolve(view: View, rel: str, roots: tuple[str, ...] = ()) -> Resolution:
    """Where the workspace-relative ``rel`` leads in ``view``, every symlink followed (a
    missing component and what follows it taken as written). ``roots`` are the
    workspace's absolute paths: an absolute link target beneath one of them stays inside."""
    todo = deque(rel.split("/"))
    cur: list[str] = []
    kind: Kind | None = "dir"
    links = 0
    while todo:
        part = todo.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not cur:
                return Resolution(None, escape="outside")
            cur.pop()
            kind = "dir" if kind is not None else None
            continue
        found = view.lookup("/".join([*cur, part])) if kind == "dir" else None
        if found is not None and found[0] == "symlink":
            links += 1
            if links > MAX_LINKS:
                return Resolution(None, escape="loop")
            target = found[1] or ""
            if target.startswith("/"):
                inside = _beneath(target, roots)
                if inside is None:
                    return Resolution(None, escape="outside")
                cur, target = [], inside
            todo.extendleft(reversed(target.split("/")))
            continue
        cur.append(part)
        kind = found[0] if found is not None else None
    return Resolution("/".join(cur), kind)


def _beneath(target: str, roots: tuple[str, ...]) -> str | None:
    norm = os.path.normpath(target)
    for root in roots:
        if norm == root:
            return ""
        if norm.startswith(root.rstrip("/") + "/"):
            return norm[len(root.rstrip("/")) + 1 :]
    return None


def link_escape(view: View, rel: str, target: str, roots: tuple[str, ...] = ()) -> str | None:
    """Why the symlink ``rel`` → ``target`` is a ``link`` hazard in ``view``, or None: it
    leads out of the workspace, it is a loop, or it leads to a directory that holds it (a
    cycle: a ``..`` after it climbs from where it leads, not from where it is)."""
    parent = rel.rpartition("/")[0]
    start = _beneath(target, roots) if target.startswith("/") else f"{parent}/{target}"
    where = resolve(view, start, roots) if start is not None else Resolution(None, escape="outside")
    if where.escape == "outside":
        return "a symbolic link that leads out of the workspace"
    if where.escape == "loop":
        return "a symbolic link loop"
    if where.kind == "dir" and where.rel is not None:
        if where.rel == "" or parent == where.rel or parent.startswith(where.rel + "/"):
            return "a symbolic link to a directory that holds it (a loop out through '..')"
    return None


class WorkspaceView:
    """The workspace as it is (``root``: an open descriptor of it, or its path), read
    without following a link."""

    def __init__(self, root: int | Path) -> None:
        self._owned = not isinstance(root, int)
        self.fd = root if isinstance(root, int) else open_dir(root)

    def lookup(self, rel: str) -> tuple[Kind, str | None] | None:
        """See :meth:`View.lookup`."""
        try:
            st = lstat_at(self.fd, rel)
        except OSError:
            return None
        if st is None:
            return None
        kind = kind_of(st.st_mode)
        if kind != "symlink":
            return kind, None
        head, _, name = rel.rpartition("/")
        try:
            pfd = open_at(self.fd, head, os.O_PATH | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            return kind, os.readlink(name, dir_fd=pfd)
        except OSError:
            return None
        finally:
            os.close(pfd)

    def close(self) -> None:
        """Close the descriptor when this view opened it."""
        if self._owned and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


# =========================================================================== glob
@dataclass(frozen=True, slots=True)
class Match:
    """A glob match: its path as matched (``shown``), where it leads (``rel``; None:
    a symlink out of the workspace, or a loop) and whether that is a directory."""

    shown: str
    rel: str | None
    is_dir: bool


def glob(view: WorkspaceView, pattern: str, roots: tuple[str, ...] = ()) -> list[Match]:
    """The workspace paths matching ``pattern`` (relative, normalised; ``*``, ``?``,
    ``[…]`` within a name — a leading dot included — and ``**`` for any number of
    directories), sorted. A directory is entered only where it resolves inside the
    workspace (a link leading out is never followed, so what is beyond it is never seen);
    ``**`` does not descend through links. A final component that is a link out of the
    workspace is a match whose ``rel`` is None."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    found: dict[str, Match] = {}
    states: list[tuple[str, str]] = [("", "")]  # (shown, resolved) directories so far
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: list[tuple[str, str]] = []
        for shown, real in states:
            if part == "**":
                for sub_shown, sub_real in _descendants(view, shown, real):
                    if last:
                        found.setdefault(sub_shown, Match(sub_shown, sub_real, True))
                    nxt.append((sub_shown, sub_real))
                continue
            for name in _names(view, real, part):
                child_shown = f"{shown}/{name}" if shown else name
                where = resolve(view, f"{real}/{name}" if real else name, roots)
                if last:
                    if where.rel is None:
                        found.setdefault(child_shown, Match(child_shown, None, False))
                    elif where.kind is not None:
                        found.setdefault(
                            child_shown, Match(child_shown, where.rel, where.kind == "dir")
                        )
                elif where.kind == "dir" and where.rel is not None:
                    nxt.append((child_shown, where.rel))
        states = list(dict.fromkeys(nxt))
    return sorted(found.values(), key=lambda m: m.shown.split("/"))


def _names(view: WorkspaceView, real: str, part: str) -> Iterator[str]:
    """The names in the directory ``real`` matching the component ``part``."""
    if not any(c in part for c in "*?["):
        yield part
        return
    try:
        fd = open_at(view.fd, real, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        names = sorted(os.listdir(fd))
    finally:
        os.close(fd)
    regex = re.compile(fnmatch.translate(part), re.DOTALL)
    yield from (n for n in names if regex.fullmatch(n))


def _descendants(view: WorkspaceView, shown: str, real: str) -> Iterator[tuple[str, str]]:
    """``(shown, real)`` itself and every directory beneath it, links not followed."""
    yield shown, real
    stack = [(shown, real)]
    while stack:
        s, r = stack.pop()
        try:
            fd = open_at(view.fd, r, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            below = []
            for name in sorted(os.listdir(fd)):
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    below.append((f"{s}/{name}" if s else name, f"{r}/{name}" if r else name))
        finally:
            os.close(fd)
        yield from below
        stack.extend(reversed(below))


# =========================================================================== the sandbox
def visible_in(path: Path, roots: tuple[Path, ...], hidden: tuple[Path, ...]) -> bool:
    """Whether ``path`` exists inside a sandbox that mounts the host's ``roots`` at their
    own paths (and nothing else but fresh directories), with ``hidden`` shown empty: its
    own location must be beneath a root — the directories on its way as they are, each
    symlink followed from where it is and its target judged again — never just where a
    link leads on the host (a virtualenv's ``python`` is a link into ``/usr``, but the
    virtualenv is not in the sandbox)."""
    todo = deque(os.path.abspath(path).split("/"))
    cur = "/"
    links = 0
    while todo:
        part = todo.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, part)
        inside = any(_under(nxt, str(r)) for r in roots)
        if not inside and not any(_under(str(r), nxt) for r in roots):
            return False  # neither mounted nor on the way to a mount
        if any(_under(nxt, str(h)) for h in hidden):
            return False
        if inside and os.path.islink(nxt):
            links += 1
            if links > MAX_LINKS:
                return False
            target = os.readlink(nxt)
            if target.startswith("/"):
                cur = "/"
            todo.extendleft(reversed(target.split("/")))
            continue
        cur = nxt
    return any(_under(cur, str(r)) for r in roots) and os.path.lexists(cur)


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"
