"""Before-images: what a workspace path held just before a tool call changed it, kept in
the store's blobs (:class:`~artoo.eventstore.BlobStore`), and put back by ``artoo undo``.

An image is one msgpack :class:`Image` blob — the path's own entry first, then (a
directory's whole tree, for a removal) every path beneath it, parents first — each entry
its kind, mode, owner, a symlink's target, and a regular file's bytes as a blob of their
own (content-addressed: the same bytes are kept once). ``FileEffect.before`` is the
image's address; ``FileEffect.after`` the sha256 of what was applied (:func:`after_of`).

Everything is read and written beneath the workspace through directory descriptors, no
symlink followed (a component swapped for a symlink is refused, never followed out). An
image over the size cap, or holding a socket or device, is not kept (``""``): the change
is then not reversible. :class:`Restorer` puts images back all or nothing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    from artoo.eventstore import BlobStore

__all__ = [
    "Entry",
    "Image",
    "ImageKeeper",
    "Restorer",
    "UndoConflict",
    "after_of",
    "current_of",
]

Kind = Literal["file", "dir", "symlink", "fifo"]
_CHUNK = 1 << 20


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One path of an image: ``path`` relative to the image's root (``b""`` for the root),
    as file-system bytes."""

    path: bytes
    kind: Kind
    mode: int = 0
    """Permission bits (``stat.S_IMODE``)."""
    uid: int = -1
    gid: int = -1
    blob: str = ""
    """A regular file's bytes: the address of their blob."""
    target: bytes = b""
    """A symlink's target."""


class Image(msgspec.Struct, frozen=True, kw_only=True):
    """A path's before-image: its own entry first, then (a tree) every path beneath it,
    parents first."""

    entries: list[Entry]
    version: int = 1


class _Unkept(Exception):
    """The image cannot be kept (over the cap, a socket or device, gone)."""


class UndoConflict(RuntimeError):
    """A path is not what undo expects (it changed since the task): nothing is restored."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise OSError(errno.EINVAL, f"not a path beneath the workspace: {rel!r}")
    return parts


def _parent_fd(root: Path, rel: str) -> tuple[int, str]:
    """A descriptor of ``rel``'s parent beneath ``root`` (no symlink followed), and
    ``rel``'s last component."""
    parts = _parts(rel)
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            nfd = os.open(
                name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd
            )
            os.close(dfd)
            dfd = nfd
    except BaseException:
        os.close(dfd)
        raise
    return dfd, parts[-1]


def _lstat_at(dfd: int, name: str | bytes) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _read_regular(dfd: int, name: str | bytes, st: os.stat_result) -> bytes:
    """The bytes of the regular file ``name`` in ``dfd`` that ``st`` describes (opened
    without following a symlink or blocking; refused when it is another file now)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or now.st_ino != st.st_ino:
            raise _Unkept("the file changed while it was read")
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _hash_regular(dfd: int, name: str | bytes) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    try:
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


def current_of(root: Path, rel: str) -> tuple[str, str]:
    """What ``rel`` beneath ``root`` holds now (no symlink followed): ``(kind, sha)`` —
    kind ``absent``, ``file``, ``dir``, ``symlink`` or ``other``; sha the sha256 of a
    regular file's bytes or a symlink's target, else ``""``. A parent that is no
    directory (or a symlink) reads as ``other``."""
    try:
        dfd, name = _parent_fd(root, rel)
    except FileNotFoundError:
        return "absent", ""
    except OSError:
        return "other", ""
    try:
        st = _lstat_at(dfd, name)
        if st is None:
            return "absent", ""
        if stat.S_ISREG(st.st_mode):
            return "file", _hash_regular(dfd, name)
        if stat.S_ISLNK(st.st_mode):
            return "symlink", hashlib.sha256(os.readlink(os.fsencode(name), dir_fd=dfd)).hexdigest()
        if stat.S_ISDIR(st.st_mode):
            return "dir", ""
        return "other", ""
    finally:
        os.close(dfd)


def after_of(root: Path, rel: str) -> str:
    """``FileEffect.after`` of ``rel`` beneath ``root`` (the sandbox's upper layer, or the
    workspace): the sha256 of a regular file's bytes or a symlink's target; ``""`` for a
    directory, anything else, or nothing there."""
    try:
        return current_of(root, rel)[1]
    except OSError:
        return ""


class ImageKeeper:
    """Keeps before-images in ``blobs``, each at most ``max_bytes`` of file bytes (a
    larger one is not kept: ``""``)."""

    def __init__(self, blobs: BlobStore, max_bytes: int) -> None:
        self.blobs = blobs
        self.max_bytes = max_bytes

    def keep(self, root: Path, rel: str, *, tree: bool = True) -> str:
        """The address of ``rel``'s image beneath ``root`` (its whole tree for a directory,
        unless not ``tree``: its own entry only), or ``""`` when it cannot be kept."""
        try:
            dfd, name = _parent_fd(root, rel)
        except OSError:
            return ""
        try:
            entries, data = self._walk(dfd, name, tree)
        except (_Unkept, OSError):
            return ""
        finally:
            os.close(dfd)
        for chunk in data:
            self.blobs.put(chunk)
        return self.blobs.put(msgspec.msgpack.encode(Image(entries=entries)))

    def _walk(self, dfd: int, name: str, tree: bool) -> tuple[list[Entry], list[bytes]]:
        """Every entry of the image of ``name`` in ``dfd`` and the file bytes it names."""
        entries: list[Entry] = []
        data: list[bytes] = []
        budget = self.max_bytes
        stack: list[tuple[int, bytes, bytes]] = [(os.dup(dfd), os.fsencode(name), b"")]
        try:
            while stack:
                parent, leaf, rel = stack.pop()
                try:
                    st = _lstat_at(parent, leaf)
                    if st is None:
                        raise _Unkept("gone")
                    kind = _kind(st.st_mode)
                    entry = Entry(
                        path=rel,
                        kind=kind,
                        mode=stat.S_IMODE(st.st_mode),
                        uid=st.st_uid,
                        gid=st.st_gid,
                    )
                    if kind == "file":
                        if st.st_size > budget:
                            raise _Unkept("over the cap")
                        content = _read_regular(parent, leaf, st)
                        budget -= len(content)
                        if budget < 0:
                            raise _Unkept("over the cap")
                        data.append(content)
                        entry = msgspec.structs.replace(
                            entry, blob=hashlib.sha256(content).hexdigest()
                        )
                    elif kind == "symlink":
                        entry = msgspec.structs.replace(
                            entry, target=os.readlink(leaf, dir_fd=parent)
                        )
                    elif kind == "dir" and (tree or rel):
                        sub = _dir_at(parent, leaf)
                        try:
                            names = sorted(os.fsencode(n) for n in os.listdir(sub))
                            for child in reversed(names):  # popped in name order
                                path = rel + b"/" + child if rel else child
                                stack.append((os.dup(sub), child, path))
                        finally:
                            os.close(sub)
                    entries.append(entry)
                finally:
                    os.close(parent)
        finally:
            for parent, _, _ in stack:
                os.close(parent)
        return entries, data

    def image(self, sha: str) -> Image:
        """The image at ``sha``."""
        return msgspec.msgpack.decode(self.blobs.get(sha), type=Image)


class Restorer:
    """Changes to ``workspace`` made so they can be undone: a path taken away is moved
    into a holding directory at the workspace's root (one rename), an image is built under
    a temporary name and renamed in. :meth:`rollback` undoes every step, newest first;
    :meth:`commit` drops what was taken away."""

    def __init__(self, workspace: Path, keeper: ImageKeeper) -> None:
        self.workspace = workspace
        self.keeper = keeper
        self.token = secrets.token_hex(4)
        self.hold = workspace / f".artoo-undo-{self.token}"
        self._held = 0
        self._undo: list[tuple[str, Callable[[], None]]] = []

    # ------------------------------------------------------------------ steps
    def take_away(self, rel: str, *, empty_dir: bool = False) -> None:
        """Move what ``rel`` holds into the holding directory (nothing there: nothing
        done); with ``empty_dir``, a directory must be empty (else UndoConflict)."""
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            st = _lstat_at(dfd, name)
            if st is None:
                return
            if empty_dir and stat.S_ISDIR(st.st_mode):
                sub = _dir_at(dfd, name)
                try:
                    if os.listdir(sub):
                        raise UndoConflict(rel, f"'{rel}' holds paths the task did not create")
                finally:
                    os.close(sub)
            if not self.hold.exists():
                os.mkdir(self.hold, 0o700)
            self._held += 1
            held = str(self._held)
            hfd = os.open(self.hold, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.rename(name, held, src_dir_fd=dfd, dst_dir_fd=hfd)
            finally:
                os.close(hfd)
        finally:
            os.close(dfd)

        def back() -> None:
            pfd, pname = _parent_fd(self.workspace, rel)
            hfd = os.open(self.hold, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                if _lstat_at(pfd, pname) is not None:
                    _remove_at(pfd, pname)
                os.rename(held, pname, src_dir_fd=hfd, dst_dir_fd=pfd)
            finally:
                os.close(hfd)
                os.close(pfd)

        self._undo.append((rel, back))

    def put(self, rel: str, sha: str) -> None:
        """Make ``rel`` (which holds nothing) what the image ``sha`` was: built under a
        temporary name in its parent, then renamed in."""
        image = self.keeper.image(sha)
        dfd, name = _parent_fd(self.workspace, rel)
        tmp = f".{name}.artoo-undo-new-{self.token}"
        try:
            if _lstat_at(dfd, name) is not None:
                raise UndoConflict(rel, f"'{rel}' is in the way of its restoration")
            try:
                self._build(dfd, tmp, image)
                os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                if _lstat_at(dfd, tmp) is not None:
                    _remove_at(dfd, tmp)
                raise
        finally:
            os.close(dfd)

        def back() -> None:
            pfd, pname = _parent_fd(self.workspace, rel)
            try:
                _remove_at(pfd, pname)
            finally:
                os.close(pfd)

        self._undo.append((rel, back))

    def chmod(self, rel: str, sha: str) -> None:
        """Give ``rel`` the mode (and, where this process may, the owner) of the image
        ``sha``'s own entry."""
        entry = self.keeper.image(sha).entries[0]
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            st = _lstat_at(dfd, name)
            if st is None:
                raise UndoConflict(rel, f"'{rel}' is gone")
            _set_meta(dfd, name, entry)
        finally:
            os.close(dfd)
        old = Entry(
            path=b"", kind=entry.kind, mode=stat.S_IMODE(st.st_mode), uid=st.st_uid, gid=st.st_gid
        )

        def back() -> None:
            pfd, pname = _parent_fd(self.workspace, rel)
            try:
                _set_meta(pfd, pname, old)
            finally:
                os.close(pfd)

        self._undo.append((rel, back))

    # ------------------------------------------------------------------ building
    def _build(self, dfd: int, tmp: str, image: Image) -> None:
        """Make ``tmp`` in ``dfd`` as ``image`` (a tree: every entry, modes set last,
        deepest first, so a read-only directory is filled before it is made so)."""
        names: dict[bytes, bytes] = {b"": os.fsencode(tmp)}
        dirs: list[tuple[bytes, Entry]] = []
        for entry in image.entries:
            where = names[b""] if not entry.path else names[b""] + b"/" + entry.path
            parent_rel, _, leaf = where.rpartition(b"/")
            pfd = dfd if not parent_rel else self._open_dir(dfd, parent_rel)
            try:
                self._make(pfd, leaf, entry)
            finally:
                if pfd != dfd:
                    os.close(pfd)
            if entry.kind == "dir":
                dirs.append((where, entry))
        for where, entry in reversed(dirs):
            parent_rel, _, leaf = where.rpartition(b"/")
            pfd = dfd if not parent_rel else self._open_dir(dfd, parent_rel)
            try:
                _set_meta(pfd, leaf, entry)
            finally:
                if pfd != dfd:
                    os.close(pfd)

    @staticmethod
    def _open_dir(dfd: int, rel: bytes) -> int:
        fd = os.dup(dfd)
        for part in rel.split(b"/"):
            nfd = os.open(
                part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
            )
            os.close(fd)
            fd = nfd
        return fd

    def _make(self, pfd: int, leaf: bytes, entry: Entry) -> None:
        if entry.kind == "dir":
            os.mkdir(leaf, 0o700, dir_fd=pfd)
        elif entry.kind == "symlink":
            os.symlink(entry.target, leaf, dir_fd=pfd)
            if os.geteuid() == 0:
                os.chown(leaf, entry.uid, entry.gid, dir_fd=pfd, follow_symlinks=False)
        elif entry.kind == "fifo":
            os.mkfifo(leaf, 0o600, dir_fd=pfd)
            _set_meta(pfd, leaf, entry)
        else:
            data = self.keeper.blobs.get(entry.blob)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(leaf, flags, 0o600, dir_fd=pfd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            _set_meta(pfd, leaf, entry)

    # ------------------------------------------------------------------ the end
    def rollback(self) -> list[str]:
        """Undo every step, newest first; the paths that could not be put back."""
        left = []
        for rel, back in reversed(self._undo):
            try:
                back()
            except OSError:
                left.append(rel)
        self._undo.clear()
        self._drop_hold()
        return left

    def commit(self) -> None:
        """Keep every step: drop what was taken away."""
        self._undo.clear()
        self._drop_hold()

    def _drop_hold(self) -> None:
        if not os.path.lexists(self.hold):
            return
        dfd = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove_at(dfd, self.hold.name)
        finally:
            os.close(dfd)


def _set_meta(dfd: int, name: str | bytes, entry: Entry) -> None:
    """``entry``'s mode, and its owner where this process may set it (root), on ``name``
    (not followed)."""
    if os.geteuid() == 0 and entry.uid >= 0:
        os.chown(name, entry.uid, entry.gid, dir_fd=dfd, follow_symlinks=False)
    _chmod_at(dfd, name, entry.mode)


def _chmod_at(dfd: int, name: str | bytes, mode: int) -> None:
    """chmod ``name`` in ``dfd`` without following a symlink (Linux has no lchmod: the
    path is opened O_PATH|O_NOFOLLOW and changed through /proc's view of it)."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    try:
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            return  # a link has no mode of its own
        os.chmod(f"/proc/self/fd/{fd}", mode)
    finally:
        os.close(fd)


def _dir_at(dfd: int, name: str | bytes) -> int:
    """A descriptor of the directory ``name`` in ``dfd`` (a symlink is refused)."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)


def _kind(mode: int) -> Kind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISFIFO(mode):
        return "fifo"
    raise _Unkept("a socket or device")


def _remove_at(dfd: int, name: str | bytes) -> None:
    """Remove ``name`` in ``dfd``, a directory with everything beneath (no link followed)."""
    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError):  # a directory the task left without write
            _chmod_at(dfd, name, stat.S_IMODE(st.st_mode) | 0o700)
        sub = _dir_at(dfd, name)
        try:
            for child in os.listdir(sub):
                _remove_at(sub, child)
        finally:
            os.close(sub)
        os.rmdir(name, dir_fd=dfd)
    else:
        os.unlink(name, dir_fd=dfd)
