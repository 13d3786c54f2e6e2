"""File-system steps that never follow a symbolic link, at any depth.

Every path is opened relative to a directory descriptor with ``openat2`` and
``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` (Linux ≥ 5.6), a long
path in pieces shorter than ``PATH_MAX``; where the system call is missing, component by
component with ``O_NOFOLLOW``. A symlink, a ``..`` or an absolute path met on the way is
refused (``ELOOP``, ``EXDEV``), never followed. Removal is iterative and reopens each
directory from the root, so neither Python's recursion limit nor the open-file limit
bounds a tree's depth.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every architecture (a syscall added after 5.1)
_PIECE = 3000  # bytes of a path opened at once: well under PATH_MAX (4096)
_DIR = os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
_READ_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
READ_FILE = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
"""Flags to open a file for reading without blocking on a FIFO or taking a terminal."""


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
if _libc is not None:
    _libc.syscall.restype = ctypes.c_long
_openat2_works: bool | None = None if _libc is not None else False


def _openat2(dirfd: int, path: bytes, flags: int, mode: int, resolve: int) -> int | None:
    """``openat2``; None when the kernel lacks it. Raises OSError."""
    global _openat2_works
    if _openat2_works is False or _libc is None:
        return None
    how = _OpenHow(flags, mode, resolve)
    for _ in range(16):  # EAGAIN: a rename raced the lookup (RESOLVE_BENEATH); try again
        fd = _libc.syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dirfd),
            ctypes.c_char_p(path),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            _openat2_works = True
            return int(fd)
        err = ctypes.get_errno()
        if err == errno.ENOSYS:
            _openat2_works = False
            return None
        if err not in (errno.EAGAIN, errno.EINTR):
            raise OSError(err, os.strerror(err), os.fsdecode(path))
    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), os.fsdecode(path))


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "a '..' in a path that must stay beneath its root", rel)
    return parts


def _pieces(parts: list[str]) -> list[bytes]:
    """``parts`` joined into paths of at most :data:`_PIECE` bytes (a longer name alone)."""
    raw = os.fsencode("/".join(parts))
    if len(raw) <= _PIECE:
        return [raw] if raw else []
    pieces: list[bytes] = []
    start = 0
    while start < len(raw):
        end = start + _PIECE
        if end >= len(raw):
            pieces.append(raw[start:])
            break
        cut = raw.rfind(b"/", start, end + 1)
        if cut <= start:  # one name longer than a piece: alone
            cut = raw.find(b"/", start + 1)
            cut = len(raw) if cut < 0 else cut
        pieces.append(raw[start:cut])
        start = cut + 1
    return pieces


def open_at(dirfd: int, rel: str, flags: int, mode: int = 0, *, xdev: bool = False) -> int:
    """A descriptor of ``rel`` beneath the directory ``dirfd``, no symlink followed on the
    way or at the end (``ELOOP``), no ``..`` (``EXDEV``); ``xdev`` also refuses to cross a
    mount. ``rel`` may be longer than ``PATH_MAX``. ``""`` opens ``dirfd`` itself."""
    parts = _parts(rel)
    resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
    if xdev:
        resolve |= RESOLVE_NO_XDEV
    pieces = _pieces(parts) or [b"."]
    here, owned = dirfd, False
    try:
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            want = flags | os.O_CLOEXEC if last else _DIR
            fd = _openat2(here, piece, want, mode if last and flags & os.O_CREAT else 0, resolve)
            if fd is None:
                fd = _open_walk(here, piece, want, mode, xdev)
            if owned:
                os.close(here)
            here, owned = fd, True
        return here
    except BaseException:
        if owned:
            os.close(here)
        raise


def _open_walk(dirfd: int, path: bytes, flags: int, mode: int, xdev: bool) -> int:
    """:func:`open_at` without ``openat2``: one component at a time, ``O_NOFOLLOW``."""
    names = path.split(b"/")
    dev = os.fstat(dirfd).st_dev if xdev else None
    here, owned = dirfd, False
    try:
        for i, name in enumerate(names):
            last = i == len(names) - 1
            want = (flags if last else _DIR) | os.O_NOFOLLOW | os.O_CLOEXEC
            if name == b".":
                want &= ~os.O_NOFOLLOW
            fd = os.open(name, want, mode, dir_fd=here)
            if dev is not None and os.fstat(fd).st_dev != dev:
                os.close(fd)
                raise OSError(errno.EXDEV, "crosses a mount", os.fsdecode(path))
            if owned:
                os.close(here)
            here, owned = fd, True
        return here
    except BaseException:
        if owned:
            os.close(here)
        raise


def open_parent(dirfd: int, rel: str, *, xdev: bool = False) -> tuple[int, str]:
    """A descriptor (``O_PATH``) of ``rel``'s parent beneath ``dirfd`` and ``rel``'s last
    component (see :func:`open_at`); the caller closes the descriptor."""
    parts = _parts(rel)
    if not parts:
        raise OSError(errno.EINVAL, "the root has no parent", rel)
    return open_at(dirfd, "/".join(parts[:-1]), _DIR, xdev=xdev), parts[-1]


def lstat_at(dirfd: int, rel: str, *, xdev: bool = False) -> os.stat_result | None:
    """``rel``'s own status beneath ``dirfd`` (a symlink's, not its target's); None when
    it, or a directory above it, is missing or is not a directory."""
    try:
        if not _parts(rel):
            return os.fstat(dirfd)
        pfd, name = open_parent(dirfd, rel, xdev=xdev)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink above it: nothing there beneath the root
            return None
        raise
    try:
        return os.stat(name, dir_fd=pfd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        os.close(pfd)


def list_at(dirfd: int, rel: str, *, xdev: bool = False) -> list[str]:
    """The names in the directory ``rel`` beneath ``dirfd``, sorted."""
    fd = open_at(dirfd, rel, _READ_DIR, xdev=xdev)
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


class Dirs:
    """Directory descriptors beneath ``root`` (opened for reading, no symlink followed),
    the last one kept: a directory below it, or its parent, is opened from it — so a walk
    or an apply down a deep chain costs one step a level, not one a component — any other
    from the root (:func:`open_at`). A descriptor :meth:`open` returns is borrowed: valid
    until the next call. :meth:`forget` after renaming or removing a directory."""

    def __init__(self, root: int, *, xdev: bool = False) -> None:
        self.root = root
        self.xdev = xdev
        self._rel: str | None = None
        self._fd = -1
        self._ids: dict[str, tuple[int, int]] = {}

    def open(self, rel: str) -> int:
        """The directory ``rel``, a normalised relative path (raises OSError as
        :func:`open_at`)."""
        if self._rel == rel:
            return self._fd
        fd = None
        here = self._rel
        if here is not None and (rel.startswith(here + "/") or (here == "" and rel)):
            below = rel[len(here) + 1 :] if here else rel
            fd = open_at(self._fd, below, _READ_DIR, xdev=self.xdev)
        elif here and rel == here.rpartition("/")[0] and rel in self._ids:
            up = os.open("..", _READ_DIR, dir_fd=self._fd)
            st = os.fstat(up)
            if (st.st_dev, st.st_ino) == self._ids[rel]:
                fd = up
            else:  # moved meanwhile: from the root
                os.close(up)
        if fd is None:
            fd = open_at(self.root, rel, _READ_DIR, xdev=self.xdev)
        st = os.fstat(fd)
        self._ids[rel] = (st.st_dev, st.st_ino)
        self.close()
        self._rel, self._fd = rel, fd
        return fd

    def parent(self, rel: str) -> tuple[int, str]:
        """The (borrowed) descriptor of ``rel``'s parent and ``rel``'s last component."""
        if not rel:
            raise OSError(errno.EINVAL, "the root has no parent", rel)
        head, _, name = rel.rpartition("/")
        return self.open(head), name

    def forget(self, rel: str = "") -> None:
        """Drop what is known of ``rel`` (all by default): the kept descriptor when it is
        ``rel`` or beneath it. (A stale identity kept for a path beneath is harmless: it
        only lets ``..`` be trusted when it still names the same directory.)"""
        if self._rel is not None and (
            not rel or self._rel == rel or self._rel.startswith(rel + "/")
        ):
            self.close()
        if rel:
            self._ids.pop(rel, None)
        else:
            self._ids.clear()

    def close(self) -> None:
        """Close the kept descriptor."""
        if self._fd >= 0:
            os.close(self._fd)
        self._rel, self._fd = None, -1


def walk_at(
    dirfd: int, rel: str, tick: Callable[[], None] = lambda: None
) -> Iterator[tuple[str, os.stat_result]]:
    """Every path beneath the directory ``rel`` (relative to it, sorted, parents first)
    with its own status — iterative, any depth, no symlink followed; ``tick`` is called
    once a path (it may raise to stop the walk)."""
    dirs = Dirs(dirfd)
    stack: list[str] = [""]
    try:
        while stack:
            sub = stack.pop()
            try:
                fd = dirs.open(f"{rel}/{sub}" if rel and sub else rel or sub)
                names = sorted(os.listdir(fd))
            except OSError:
                continue
            below = []
            for name in names:
                tick()
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                child = f"{sub}/{name}" if sub else name
                yield child, st
                if stat.S_ISDIR(st.st_mode):
                    below.append(child)
            stack.extend(reversed(below))
    finally:
        dirs.close()


def remove_at(dirfd: int, rel: str, deadline: float = float("inf")) -> None:
    """Remove ``rel`` beneath ``dirfd`` — a file, a link, or a whole tree of any depth —
    without following a symlink; a directory its owner left without write or search
    permission is opened up first. Raises OSError (FileNotFoundError: nothing there;
    TimeoutError past ``deadline``, ``time.monotonic``: what is left can be removed by
    calling it again)."""
    dirs = Dirs(dirfd)
    try:
        pfd, name = dirs.parent(rel)
        if not stat.S_ISDIR(os.stat(name, dir_fd=pfd, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=pfd)
            return
        stack: list[tuple[str, bool]] = [(rel, False)]  # (directory, its children are gone)
        while stack:
            if time.monotonic() > deadline:
                raise TimeoutError(f"removing '{rel}' took past its deadline")
            where, emptied = stack.pop()
            if emptied:
                pfd, name = dirs.parent(where)
                os.rmdir(name, dir_fd=pfd)
                dirs.forget(where)
                continue
            fd = _open_for_removal(dirs, where)
            subdirs = []
            for entry in os.listdir(fd):
                try:
                    est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISDIR(est.st_mode):
                    subdirs.append(f"{where}/{entry}")
                else:
                    os.unlink(entry, dir_fd=fd)
            stack.append((where, True))
            stack.extend((d, False) for d in subdirs)
    finally:
        dirs.close()


def _open_for_removal(dirs: Dirs, rel: str) -> int:
    try:
        fd = dirs.open(rel)
    except PermissionError:
        pfd, name = dirs.parent(rel)
        os.chmod(name, 0o700, dir_fd=pfd, follow_symlinks=False)
        dirs.forget(rel)
        fd = dirs.open(rel)
    st = os.fstat(fd)
    if stat.S_IMODE(st.st_mode) & 0o300 != 0o300:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
    return fd


def open_dir(path: str | os.PathLike[str]) -> int:
    """A descriptor (``O_PATH``) of the directory ``path`` (its own symlinks followed:
    the root a caller names)."""
    return os.open(path, _DIR)
