"""Applying a sandboxed command's observed effects to the workspace: exactly what was
observed, all or nothing, within the call's deadline.

First every workspace path an operation touches is compared with its stamp (a removed
directory: every path beneath it) and every path of the upper layer with what was
observed — kind, mode, size, a symlink's target; any difference is :class:`StaleEffects`,
nothing done. Then each operation is done so it can be undone, by directory descriptors
with no symlink followed, any depth, any name length (short temporary names): a removed
or overwritten path is renamed aside; a new file is written from the upper layer, read
as the sandbox's user, its bytes checked against the SHA-256 observed as they are
written; a tree the apply made is undone by one rename. Operations stop at half the time
left; when one fails, all are undone and :class:`ApplyFailed` says so. ``record`` gets
the before- and after-images (:class:`Changes`) before anything is final. What was set
aside or undone is removed until the deadline, the rest in the background (:func:`settle`).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import queue
import secrets
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Literal

from ._fs import READ_FILE, Dirs, open_at, open_dir, remove_at, walk_at
from ._observe import Observed, _Op, _Stamp, tree_stamps
from ._upper import LayerChanged, UpperLayer

ImageKind = Literal["file", "dir", "symlink", "fifo", "other"]


class StaleEffects(RuntimeError):
    """The workspace, or the upper layer, is not as observed; nothing was applied."""


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


# =========================================================================== the seam
@dataclass(frozen=True)
class BeforeImage:
    """What a workspace path was before a change: its kind, permission bits, size, a
    symlink's target, and — for a removed directory — every path beneath it
    (``tree``, paths relative to the workspace, parents first). A regular file's exact
    bytes come from :meth:`open` or :meth:`read`, valid only while the record callback
    runs."""

    path: str
    kind: ImageKind
    mode: int
    size: int = 0
    target: str | None = None
    tree: tuple[BeforeImage, ...] = ()
    _source: Callable[[], BinaryIO] | None = field(default=None, repr=False, compare=False)

    def open(self) -> BinaryIO:
        """The file's bytes as they were (raises OSError when not a regular file, or
        after the callback returned)."""
        if self.kind != "file" or self._source is None:
            raise OSError(f"'{self.path}' was not a regular file")
        return self._source()

    def read(self) -> bytes:
        """The file's bytes as they were (see :meth:`open`)."""
        with self.open() as f:
            return f.read()


@dataclass(frozen=True)
class AfterImage:
    """What a path was made: its kind, permission bits, a file's SHA-256 (hex) and size,
    a symlink's target."""

    path: str
    kind: ImageKind
    mode: int = 0
    sha256: str | None = None
    size: int = 0
    target: str | None = None


@dataclass(frozen=True)
class Changes:
    """One apply (or ``write_file``) about to become final: the before-image of every
    path it modifies, replaces, changes the metadata of or removes, the after-image of
    every path it writes, in the order done; the ToolRegistry adds the call's tool,
    subtask and attempt."""

    before: tuple[BeforeImage, ...]
    after: tuple[AfterImage, ...]
    tool: str = ""
    subtask_id: str = ""
    attempt: int = 0


Record = Callable[[Changes], None]
"""Given a call's :class:`Changes` before they become final; raising cancels them."""


def _image_kind(mode: int) -> ImageKind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "fifo" if stat.S_ISFIFO(mode) else "other"


# =========================================================================== checks
def _check_stamps(observed: Observed, ws: int, tick: Callable[[], None]) -> None:
    dirs = Dirs(ws)
    missing: set[str] = set()  # directories known not to be there: nor anything beneath
    try:
        for op in observed.ops:
            tick()
            head = op.path.rpartition("/")[0]
            st: os.stat_result | None = None
            if head not in missing:
                try:
                    pfd, name = dirs.parent(op.path)
                except (FileNotFoundError, NotADirectoryError):
                    missing.add(head)
                    pfd = -1
                except OSError as exc:
                    raise StaleEffects(
                        f"'{op.path}' cannot be reached ({exc.strerror}); nothing applied"
                    ) from None
                if pfd >= 0:
                    try:
                        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                    except (FileNotFoundError, NotADirectoryError):
                        st = None
            if st is None:
                missing.add(op.path)
            if _Stamp.of(st) != op.stamp:
                raise StaleEffects(f"'{op.path}' changed since the command ran; nothing applied")
            if op.tree and tree_stamps(ws, op.path, tick) != op.tree:
                raise StaleEffects(
                    f"something beneath '{op.path}' changed since the command ran; nothing applied"
                )
    finally:
        dirs.close()


def _check_layer(observed: Observed, layer: UpperLayer) -> None:
    expected = []
    for op in observed.ops:
        if op.action == "file":
            expected.append((op.path, "file", op.mode, op.size, ""))
        elif op.action == "mkdir":
            expected.append((op.path, "dir", op.mode, 0, ""))
        elif op.action == "symlink":
            expected.append((op.path, "symlink", 0, 0, op.target))
        elif op.action == "fifo":
            expected.append((op.path, "fifo", op.mode, 0, ""))
    why = layer.differs(expected)
    if why is not None:
        raise StaleEffects(
            f"the command's files changed after they were observed ({why}); nothing applied"
        )


# =========================================================================== the transaction
# =========================================================================== the trash
_trash: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
_trash_state = threading.Condition()
_trash_pending = 0
_trash_thread: threading.Thread | None = None


def _drop(ws: int, paths: list[str], deadline: float) -> None:
    """Remove ``paths`` (hidden names the apply gave them) beneath the workspace ``ws``
    until ``deadline``; what is left, by the background thread."""
    global _trash_pending, _trash_thread
    for rel in paths:
        try:
            remove_at(ws, rel, deadline)
            continue
        except TimeoutError:
            pass
        except OSError:
            continue
        with _trash_state:
            _trash_pending += 1
            if _trash_thread is None or not _trash_thread.is_alive():
                _trash_thread = threading.Thread(target=_empty, daemon=True, name="artoo-trash")
                _trash_thread.start()
        _trash.put((os.dup(ws), rel))


def _empty() -> None:
    global _trash_pending
    while True:
        fd, rel = _trash.get()
        with contextlib.suppress(OSError):
            remove_at(fd, rel)
        os.close(fd)
        with _trash_state:
            _trash_pending -= 1
            _trash_state.notify_all()


def settle(timeout: float | None = None) -> bool:
    """Wait until what applies set aside or undid is removed; False if ``timeout`` passed
    first."""
    with _trash_state:
        return _trash_state.wait_for(lambda: _trash_pending == 0, timeout)


atexit.register(settle, 30.0)


class _Txn:
    """The operations done so far, how to undo each, and the images of what they did."""

    def __init__(self, ws: int, images: bool, deadline: float) -> None:
        self.ws = ws
        self.dirs = Dirs(ws)
        self.token = secrets.token_hex(4)
        self.count = 0
        self.images = images
        self.deadline = deadline
        self.undo: list[tuple[str, Callable[[], None]]] = []
        self.aside: list[str] = []  # set-aside paths (workspace-relative) to drop
        self.made: set[str] = set()  # paths this apply made (new directories, files …)
        self.undone: list[str] = []  # what undoing set aside, to drop
        self.modes: list[tuple[str, int]] = []  # directories' permission bits, set last
        self.before: list[BeforeImage] = []
        self.after: list[AfterImage] = []
        self.live = True  # before-images readable

    def _name(self, what: str) -> str:
        """A short name no one else uses (a long target name stays within NAME_MAX)."""
        self.count += 1
        return f".artoo-{what}-{self.token}-{self.count}"

    def set_aside(self, rel: str) -> bool:
        """Rename ``rel`` aside (undoable); False when there is nothing there."""
        pfd, name = self.dirs.parent(rel)
        try:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        target = os.readlink(name, dir_fd=pfd) if stat.S_ISLNK(st.st_mode) else None
        aside = self._name("old")
        os.rename(name, aside, src_dir_fd=pfd, dst_dir_fd=pfd)
        self.dirs.forget(rel)
        parent = rel.rpartition("/")[0]
        moved = f"{parent}/{aside}" if parent else aside
        self.aside.append(moved)
        if self.images:
            self.before.append(self._image(rel, moved, st, target))

        def back() -> None:
            with contextlib.suppress(FileNotFoundError):
                self._discard(rel)
            bfd, _ = self.dirs.parent(rel)
            os.rename(aside, name, src_dir_fd=bfd, dst_dir_fd=bfd)
            self.dirs.forget(rel)

        self.undo.append((rel, back))
        return True

    def _image(self, rel: str, where: str, st: os.stat_result, target: str | None) -> BeforeImage:
        """The before-image of ``rel``, now at ``where`` (set aside)."""
        tree: list[BeforeImage] = []
        if stat.S_ISDIR(st.st_mode):
            for sub, sst in walk_at(self.ws, where):
                link = None
                if stat.S_ISLNK(sst.st_mode):
                    head, _, name = f"{where}/{sub}".rpartition("/")
                    link = os.readlink(name, dir_fd=self.dirs.open(head))
                tree.append(self._one(f"{rel}/{sub}", f"{where}/{sub}", sst, link))
        return replace(self._one(rel, where, st, target), tree=tuple(tree))

    def _one(self, rel: str, where: str, st: os.stat_result, target: str | None) -> BeforeImage:
        def source() -> BinaryIO:
            if not self.live:
                raise OSError(f"the before-image of '{rel}' is gone (read it in the callback)")
            return os.fdopen(open_at(self.ws, where, READ_FILE | os.O_NOFOLLOW), "rb")

        return BeforeImage(
            rel,
            _image_kind(st.st_mode),
            stat.S_IMODE(st.st_mode),
            st.st_size,
            target,
            _source=source if stat.S_ISREG(st.st_mode) else None,
        )

    def put(self, rel: str, make: Callable[[int, str], None]) -> None:
        """Make ``rel`` by ``make(dir_fd, temporary name)`` and rename it in, setting aside
        what was there."""
        pfd, name = self.dirs.parent(rel)
        tmp = self._name("new")
        try:
            make(pfd, tmp)
            try:
                os.stat(name, dir_fd=pfd, follow_symlinks=False)
                exists = True
            except FileNotFoundError:
                exists = False
            if exists:
                self.set_aside(rel)
                pfd, name = self.dirs.parent(rel)
            os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
        except BaseException:
            with contextlib.suppress(OSError):
                tfd, _ = self.dirs.parent(rel)
                os.unlink(tmp, dir_fd=tfd)
            raise
        self._made(rel)

    def _made(self, rel: str) -> None:
        """``rel`` was made: undone by setting it aside, unless it lies in a directory
        this apply made (which goes aside whole, with it)."""
        self.made.add(rel)
        if rel.rpartition("/")[0] not in self.made:
            self.undo.append((rel, lambda: self._discard(rel)))

    def _discard(self, rel: str) -> None:
        """Rename ``rel`` aside, to be dropped (one rename, whatever it holds)."""
        pfd, name = self.dirs.parent(rel)
        os.stat(name, dir_fd=pfd, follow_symlinks=False)
        aside = self._name("undone")
        os.rename(name, aside, src_dir_fd=pfd, dst_dir_fd=pfd)
        self.dirs.forget(rel)
        parent = rel.rpartition("/")[0]
        self.undone.append(f"{parent}/{aside}" if parent else aside)

    def mkdir(self, rel: str, mode: int) -> None:
        pfd, name = self.dirs.parent(rel)
        os.mkdir(name, 0o700, dir_fd=pfd)  # its own bits last: a read-only one still fills
        self._made(rel)
        self.modes.append((rel, mode & 0o777))
        self.after.append(AfterImage(rel, "dir", mode & 0o777))

    def chmod(self, rel: str, mode: int) -> None:
        pfd, name = self.dirs.parent(rel)
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise OSError(f"'{rel}' is now a symlink")
        os.chmod(name, mode & 0o777, dir_fd=pfd, follow_symlinks=False)
        old = stat.S_IMODE(st.st_mode)
        if self.images:
            self.before.append(self._one(rel, rel, st, None))
        self.after.append(AfterImage(rel, _image_kind(st.st_mode), mode & 0o777))

        def back() -> None:
            bfd, bname = self.dirs.parent(rel)
            os.chmod(bname, old, dir_fd=bfd, follow_symlinks=False)

        self.undo.append((rel, back))

    def finish_modes(self) -> None:
        """Give the directories made their observed permission bits, deepest first."""
        for rel, mode in reversed(self.modes):
            pfd, name = self.dirs.parent(rel)
            os.chmod(name, mode, dir_fd=pfd, follow_symlinks=False)

    def rollback(self) -> tuple[str, ...]:
        """Undo every operation, newest first; the paths that could not be restored."""
        self.live = False
        self.dirs.forget()
        left = []
        for rel, back in reversed(self.undo):
            try:
                back()
            except (OSError, ValueError):
                left.append(rel)
        self.undo.clear()
        self.aside.clear()
        self.dirs.close()
        _drop(self.ws, self.undone, self.deadline)
        return tuple(left)

    def commit(self) -> None:
        """Drop what was set aside (the removed and overwritten paths)."""
        self.live = False
        self.dirs.close()
        _drop(self.ws, self.aside, self.deadline)


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _copy(op: _Op, layer: UpperLayer, deadline: float) -> Callable[[int, str], None]:
    """Make a temporary file holding ``op``'s observed bytes, read from ``layer`` as the
    sandbox's user and checked against their SHA-256 as they are written."""

    def make(dfd: int, tmp: str) -> None:
        src = layer.open(op.path)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            dst = os.open(tmp, flags, 0o600, dir_fd=dfd)
            try:
                digest, size = hashlib.sha256(), 0
                while chunk := os.read(src, 1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
                    _write_all(dst, memoryview(chunk))
                    if time.monotonic() > deadline:
                        raise TimeoutError("applying took past the call's timeout")
                if size != op.size or digest.hexdigest() != op.sha256:
                    raise LayerChanged(
                        f"'{op.path}' changed after it was observed: its bytes are not those judged"
                    )
                os.fchmod(dst, op.mode & 0o777)
            finally:
                os.close(dst)
        finally:
            os.close(src)

    return make


def apply(
    observed: Observed,
    workspace: Path,
    *,
    deadline: float = float("inf"),
    record: Record | None = None,
) -> tuple[str, ...]:
    """Make ``workspace`` what the command made of it in the sandbox — the bytes, modes
    and targets observed, read from the upper layer ``observed`` was read from — all or
    nothing; the paths applied. Raises StaleEffects (nothing done) when the workspace or
    the upper layer differs from what was observed, ApplyFailed (everything undone) when
    an operation fails, the bytes read differ from those observed, ``record`` raises, or
    half the time to ``deadline`` (``time.monotonic``) passes (the other half is kept to
    undo)."""
    layer = observed.source
    if layer is None and any(op.action == "file" for op in observed.ops):
        raise StaleEffects("the command's files are gone; nothing applied")
    start = time.monotonic()
    stop = start + (deadline - start) / 2 if deadline != float("inf") else deadline
    ticks = [0]

    def tick() -> None:
        ticks[0] += 1
        if ticks[0] % 256 == 0 and time.monotonic() > stop:
            raise TimeoutError("checking the workspace took past the call's timeout")

    ws = open_dir(workspace)
    try:
        try:
            _check_stamps(observed, ws, tick)
            if layer is not None:
                _check_layer(observed, layer)
        except TimeoutError as exc:
            raise ApplyFailed(f"{exc}; nothing applied") from None
        except LayerChanged as exc:
            raise StaleEffects(f"{exc}; nothing applied") from None
        return _run(observed, layer, ws, stop, deadline, record)
    finally:
        os.close(ws)


def _run(
    observed: Observed,
    layer: UpperLayer | None,
    ws: int,
    stop: float,
    deadline: float,
    record: Record | None,
) -> tuple[str, ...]:
    removes = sorted(
        (op for op in observed.ops if op.action == "remove"), key=lambda o: o.path, reverse=True
    )
    rest = [op for op in observed.ops if op.action != "remove"]
    txn = _Txn(ws, images=record is not None, deadline=deadline)
    done: list[str] = []
    what = ""
    try:
        for op in [*removes, *rest]:
            what = f"{op.action} '{op.path}'"
            if time.monotonic() > stop:
                raise TimeoutError("applying took past the call's timeout")
            _do(txn, op, layer, stop)
            done.append(op.path)
        what = "setting the directories' modes"
        txn.finish_modes()
        if record is not None:
            what = "recording the changes"
            record(Changes(tuple(txn.before), tuple(txn.after)))
    except Exception as exc:
        left = txn.rollback()
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if left:
            raise ApplyFailed(
                f"{what} failed ({detail}); undoing failed for {', '.join(left)}", left
            ) from None
        raise ApplyFailed(
            f"{what} failed ({detail}); nothing applied (every change undone)"
        ) from None
    txn.commit()
    return tuple(dict.fromkeys(done))


def _do(txn: _Txn, op: _Op, layer: UpperLayer | None, stop: float) -> None:
    if op.action == "remove":
        txn.set_aside(op.path)
    elif op.action == "mkdir":
        txn.mkdir(op.path, op.mode)
    elif op.action == "file":
        assert layer is not None
        txn.put(op.path, _copy(op, layer, stop))
        txn.after.append(AfterImage(op.path, "file", op.mode & 0o777, op.sha256, op.size))
    elif op.action == "symlink":
        target = op.target
        txn.put(op.path, lambda dfd, tmp: os.symlink(target, tmp, dir_fd=dfd))
        txn.after.append(AfterImage(op.path, "symlink", target=target))
    elif op.action == "fifo":
        mode = op.mode & 0o777
        txn.put(op.path, lambda dfd, tmp: os.mkfifo(tmp, mode, dir_fd=dfd))
        txn.after.append(AfterImage(op.path, "fifo", mode))
    elif op.action == "chmod":
        txn.chmod(op.path, op.mode)


def memory_image(rel: str, data: bytes, mode: int) -> BeforeImage:
    """The before-image of a regular file whose bytes are ``data`` (``write_file``)."""
    return BeforeImage(rel, "file", stat.S_IMODE(mode), len(data), _source=lambda: io.BytesIO(data))
