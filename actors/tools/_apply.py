"""Applying a sandboxed command's observed effects to the workspace, all or nothing.

First every path an operation touches is compared with its stamp — for a removed
directory, every path beneath it — so nothing that changed while the operator decided is
overwritten or deleted (:class:`StaleEffects`). Then each operation is done so it can be
undone: a removed or overwritten path is renamed aside (beside itself, so on the same file
system), a new file is written under a temporary name and renamed in, every path opened
beneath the workspace by directory descriptors with no symlink followed. When one fails,
or the deadline passes, every done operation is undone in reverse and :class:`ApplyFailed`
says so; when all succeed, the set-aside paths are removed and the applied paths returned.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

from ._observe import Observed, _Op, _Stamp, tree_stamps


class StaleEffects(RuntimeError):
    """The workspace changed after the command ran; nothing was applied."""


class ApplyFailed(RuntimeError):
    """An operation failed (or the deadline passed) while applying; every operation done
    before it was undone (``undone_all``; else ``left`` names what could not be)."""

    def __init__(self, message: str, left: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.left = left

    @property
    def undone_all(self) -> bool:
        """The workspace is as it was before the apply."""
        return not self.left


def _parent_fd(root: Path, rel: str) -> tuple[int, str]:
    """A descriptor of ``rel``'s parent directory beneath ``root`` (no symlink followed)
    and ``rel``'s last component."""
    parts = rel.split("/")
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


def _check_stamps(observed: Observed, workspace: Path) -> None:
    for op in observed.ops:
        if _Stamp.of(workspace / op.path) != op.stamp:
            raise StaleEffects(f"'{op.path}' changed since the command ran; nothing applied")
        if op.tree and tree_stamps(workspace / op.path) != op.tree:
            raise StaleEffects(
                f"something beneath '{op.path}' changed since the command ran; nothing applied"
            )


class _Txn:
    """The operations done so far and how to undo each."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.token = secrets.token_hex(4)
        self.undo: list[tuple[str, Callable[[], None]]] = []
        self.aside: list[tuple[str, str]] = []  # (parent rel, set-aside name) to drop

    def _aside_name(self, name: str) -> str:
        return f".{name}.artoo-old-{self.token}"

    def set_aside(self, rel: str) -> bool:
        """Rename ``rel`` aside (undoable); False when there is nothing there."""
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            try:
                os.lstat(name, dir_fd=dfd)
            except FileNotFoundError:
                return False
            aside = self._aside_name(name)
            os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            os.close(dfd)
        parent = rel.rpartition("/")[0]
        self.aside.append((parent, aside))

        def back() -> None:
            pfd, _ = _parent_fd(self.workspace, rel)
            try:
                with contextlib.suppress(FileNotFoundError):
                    _remove_at(pfd, name)
                os.rename(aside, name, src_dir_fd=pfd, dst_dir_fd=pfd)
            finally:
                os.close(pfd)

        self.undo.append((rel, back))
        return True

    def put(self, rel: str, make: Callable[[int, str], None]) -> None:
        """Make ``rel`` by ``make(dir_fd, temporary name)`` and rename it in, setting aside
        what was there."""
        dfd, name = _parent_fd(self.workspace, rel)
        tmp = f".{name}.artoo-new-{self.token}"
        try:
            make(dfd, tmp)
            try:
                os.lstat(name, dir_fd=dfd)
                exists = True
            except FileNotFoundError:
                exists = False
            if exists:
                self.set_aside(rel)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                _remove_at(dfd, tmp)
            raise
        finally:
            os.close(dfd)
        self.undo.append((rel, lambda: self._unlink(rel)))

    def _unlink(self, rel: str) -> None:
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            _remove_at(dfd, name)
        finally:
            os.close(dfd)

    def mkdir(self, rel: str, mode: int) -> None:
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            os.mkdir(name, mode, dir_fd=dfd)
        finally:
            os.close(dfd)
        self.undo.append((rel, lambda: self._unlink(rel)))

    def chmod(self, rel: str, mode: int) -> None:
        dfd, name = _parent_fd(self.workspace, rel)
        try:
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(name, flags, dir_fd=dfd)
        finally:
            os.close(dfd)
        try:
            old = stat.S_IMODE(os.fstat(fd).st_mode)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

        def back() -> None:
            pfd, pname = _parent_fd(self.workspace, rel)
            try:
                os.chmod(pname, old, dir_fd=pfd, follow_symlinks=False)
            finally:
                os.close(pfd)

        self.undo.append((rel, back))

    def rollback(self) -> tuple[str, ...]:
        """Undo every operation, newest first; the paths that could not be restored."""
        left = []
        for rel, back in reversed(self.undo):
            try:
                back()
            except OSError:
                left.append(rel)
        self.undo.clear()
        self.aside.clear()
        return tuple(left)

    def commit(self) -> None:
        """Drop what was set aside (the removed and overwritten paths)."""
        for parent, aside in self.aside:
            with contextlib.suppress(OSError):
                dfd = os.open(
                    self.workspace / parent if parent else self.workspace,
                    os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                )
                try:
                    _remove_at(dfd, aside)
                finally:
                    os.close(dfd)


def _remove_at(dfd: int, name: str) -> None:
    st = os.lstat(name, dir_fd=dfd)
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dfd)
    else:
        os.unlink(name, dir_fd=dfd)


def _copy_file(src: Path) -> Callable[[int, str], None]:
    def make(dfd: int, tmp: str) -> None:
        mode = stat.S_IMODE(os.lstat(src).st_mode) & 0o777
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dfd,
        )
        try:
            with open(src, "rb") as fin, open(fd, "wb", closefd=False) as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    return make


def apply(
    observed: Observed, upper: Path, workspace: Path, deadline: float = float("inf")
) -> tuple[str, ...]:
    """Make ``workspace`` what the command made of it in the sandbox, all or nothing; the
    paths applied. Raises StaleEffects (nothing done) when a path it touches changed since
    it was observed, ApplyFailed (everything undone) when an operation fails or
    ``deadline`` (``time.monotonic``) passes."""
    _check_stamps(observed, workspace)
    removes = sorted(
        (op for op in observed.ops if op.action == "remove"), key=lambda o: o.path, reverse=True
    )
    rest = [op for op in observed.ops if op.action != "remove"]
    txn = _Txn(workspace)
    done: list[str] = []
    try:
        for op in [*removes, *rest]:
            if time.monotonic() > deadline:
                raise TimeoutError("applying took past the call's timeout")
            _do(txn, op, upper / op.path)
            done.append(op.path)
    except (OSError, TimeoutError) as exc:
        left = txn.rollback()
        what = f"{op.action} '{op.path}' failed ({exc})"
        if left:
            raise ApplyFailed(f"{what}; undoing failed for {', '.join(left)}", left) from None
        raise ApplyFailed(f"{what}; nothing applied (every change undone)") from None
    txn.commit()
    return tuple(dict.fromkeys(done))


def _do(txn: _Txn, op: _Op, src: Path) -> None:
    if op.action == "remove":
        txn.set_aside(op.path)
    elif op.action == "mkdir":
        txn.mkdir(op.path, stat.S_IMODE(os.lstat(src).st_mode) & 0o777)
    elif op.action == "file":
        txn.put(op.path, _copy_file(src))
    elif op.action == "symlink":
        target = os.readlink(src)
        txn.put(op.path, lambda dfd, tmp: os.symlink(target, tmp, dir_fd=dfd))
    elif op.action == "fifo":
        mode = stat.S_IMODE(os.lstat(src).st_mode) & 0o777
        txn.put(op.path, lambda dfd, tmp: os.mkfifo(tmp, mode, dir_fd=dfd))
    elif op.action == "chmod":
        txn.chmod(op.path, stat.S_IMODE(os.lstat(src).st_mode) & 0o777)
