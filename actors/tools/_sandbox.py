"""The sandbox: a shell command runs where it cannot harm anything, what it changed is
observed, and only then applied to the workspace — or discarded (Law 1 by observed effect).

Mechanism (Linux): a fresh interpreter runs :mod:`._sandbox_init`, which enters new
user, mount, PID, IPC, UTS and (unless the network is allowed) network namespaces by
system calls, mounts the workspace as the lower layer of an overlay with a fresh upper
layer, makes the rest of the file system read-only, gives ``/tmp``, ``/var/tmp``, ``/run``
and ``/dev/shm`` fresh tmpfs, pivots into that root and runs ``bash -c``. Why this and not
util-linux ``unshare``/``mount`` or bubblewrap: it needs nothing the README's install
command does not already bring (Python itself), and the same code runs everywhere the
kernel allows unprivileged user namespaces with overlayfs (Linux ≥ 5.11).

When the command ends, its upper layer is compared with the workspace
(:func:`observe`): new paths are ``created`` (reversible); deleted paths (whiteouts,
opaque directories), changed content, a file replaced by another kind, and changed mode
or ownership are irreversible. :meth:`SandboxRun.apply` copies the computed changes into
the workspace race-free (every path opened beneath it by directory descriptors, no
symlink followed) after checking that nothing it touches changed since the command ran.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from artoo.actors.law1 import describe_effects
from artoo.schemas import FileEffect

from ._shell import _SHELL, _Run, _run_shell

_INIT = Path(__file__).with_name("_sandbox_init.py")
_SETUP_FAILED = 125
MAX_LISTED = 1000
"""Files listed one by one in a confirmation; beyond, one line sums up the rest."""
SANDBOX_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` must not refresh (rewrite) .git/index
    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ left in the workspace
    "TMPDIR": "/tmp",  # a fresh tmpfs per command
    "XDG_CACHE_HOME": "/tmp/.cache",  # the home directory is read-only
}
"""Variables every sandboxed command gets besides the tool environment."""
_DIFF_BYTES = 256 * 1024  # larger text files get sizes only, no line counts


SCRATCH_BASES: tuple[Path | None, ...] = (None, Path("/dev/shm"))
"""Where upper layers may live, in order of preference: the system's temporary directory,
then a tmpfs (in a container whose ``/tmp`` is itself an overlay, which cannot hold one)."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be made here (the message says why, in one line)."""


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What a workspace path looked like when the command's effects were observed."""

    exists: bool
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    mode: int = 0

    @classmethod
    def of(cls, path: Path) -> _Stamp:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return cls(False)
        return cls(True, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


Action = Literal["remove", "mkdir", "file", "symlink", "chmod", "fifo"]


@dataclass(frozen=True, slots=True)
class _Op:
    action: Action
    path: str  # workspace-relative
    stamp: _Stamp  # the workspace path when observed; apply refuses if it changed


@dataclass(frozen=True)
class Observed:
    """A command's effects on the workspace: ``effects`` for people and the log, ``ops``
    to apply them."""

    effects: tuple[FileEffect, ...]
    ops: tuple[_Op, ...]

    @property
    def irreversible(self) -> tuple[FileEffect, ...]:
        """The effects that delete or change existing data."""
        return tuple(e for e in self.effects if e.irreversible)


# =========================================================================== observing
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


def _line_counts(a: bytes, b: bytes) -> str | None:
    try:
        old, new = a.decode("utf-8").splitlines(), b.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return f"+{added} -{removed} lines"


def _summary(a: bytes | None, b: bytes | None, size_before: int, size_after: int) -> str:
    """``"+2 -1 lines, 6 -> 8 bytes"`` (text), ``"binary, …"``, or only the sizes when a
    side is too large to compare line by line (``None``)."""
    sizes = f"{size_before:,} -> {size_after:,} bytes"
    if a is None or b is None:
        return sizes
    lines = _line_counts(a, b)
    return f"{lines}, {sizes}" if lines else f"binary, {sizes}"


def _diff_summary(before: Path, after: Path, size_before: int, size_after: int) -> str:
    if max(size_before, size_after) > _DIFF_BYTES:
        return _summary(None, None, size_before, size_after)
    try:
        return _summary(before.read_bytes(), after.read_bytes(), size_before, size_after)
    except OSError:
        return _summary(None, None, size_before, size_after)


def write_effect(path: str, before: bytes | None, after: bytes) -> FileEffect | None:
    """The effect of writing ``after`` to ``path`` whose content is ``before`` (None: no
    such file); None when the content is the same (nothing changes)."""
    if before is None:
        return FileEffect(path=path, change="created", size_after=len(after))
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
    )


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


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


@dataclass
class _Walk:
    upper: Path
    lower: Path
    effects: list[FileEffect] = field(default_factory=list)
    ops: list[_Op] = field(default_factory=list)

    def effect(self, path: str, change: str, st: os.stat_result | None, **kw: object) -> None:
        kind = _kind(st.st_mode) if st is not None else "other"
        self.effects.append(FileEffect(path=path, change=change, kind=kind, **kw))  # type: ignore[arg-type]

    def deleted(self, rel: str, st: os.stat_result) -> None:
        """``rel`` and, for a directory, everything beneath it."""
        self.effect(
            rel, "deleted", st, size_before=st.st_size if not stat.S_ISDIR(st.st_mode) else None
        )
        if stat.S_ISDIR(st.st_mode):
            for root, dirs, files in os.walk(self.lower / rel):
                dirs.sort()
                for name in sorted(dirs) + sorted(files):
                    full = Path(root) / name
                    sub = _lstat(full)
                    if sub is not None:
                        self.effect(
                            full.relative_to(self.lower).as_posix(),
                            "deleted",
                            sub,
                            size_before=None if stat.S_ISDIR(sub.st_mode) else sub.st_size,
                        )

    def walk(self, rel: str, opaque: bool) -> None:
        here = self.upper / rel if rel else self.upper
        names = sorted(os.listdir(here))
        if opaque:  # the directory was removed and made again: its old entries are gone
            for name in sorted(set(os.listdir(self.lower / rel)) - set(names)):
                sub = _lstat(self.lower / rel / name)
                if sub is not None:
                    child = f"{rel}/{name}" if rel else name
                    self.ops.append(_Op("remove", child, _Stamp.of(self.lower / child)))
                    self.deleted(child, sub)
        for name in names:
            child = f"{rel}/{name}" if rel else name
            self.entry(child)

    def entry(self, rel: str) -> None:
        up = self.upper / rel
        ust = os.lstat(up)
        lst = _lstat(self.lower / rel)
        stamp = _Stamp.of(self.lower / rel)
        if _whiteout(ust):
            if lst is not None:
                self.ops.append(_Op("remove", rel, stamp))
                self.deleted(rel, lst)
            return
        if lst is not None and _kind(lst.st_mode) != _kind(ust.st_mode):
            self.ops.append(_Op("remove", rel, stamp))
            self.effect(
                rel,
                "replaced",
                ust,
                size_before=lst.st_size,
                size_after=ust.st_size,
                summary=f"{_kind(lst.st_mode)} -> {_kind(ust.st_mode)}",
            )
            lst = None
            stamp = _Stamp(False)
        elif lst is None:
            if not stat.S_ISDIR(ust.st_mode):
                self.effect(rel, "created", ust, size_after=ust.st_size)
            else:
                self.effect(rel, "created", ust)
        if stat.S_ISDIR(ust.st_mode):
            if lst is None:
                self.ops.append(_Op("mkdir", rel, stamp))
            elif self._meta_changed(rel, lst, ust, stamp):
                pass
            self.walk(rel, opaque=lst is not None and _opaque(up))
            return
        if stat.S_ISLNK(ust.st_mode):
            if lst is not None and os.readlink(up) != os.readlink(self.lower / rel):
                self.effect(rel, "modified", ust, summary=f"link -> {os.readlink(up)}")
            elif lst is not None:
                return
            self.ops.append(_Op("symlink", rel, stamp))
            return
        if stat.S_ISREG(ust.st_mode):
            if lst is None:
                self.ops.append(_Op("file", rel, stamp))
            elif _index_refresh(rel, self.lower / rel, up):
                return  # git refreshed its cache of file times: no entry changed
            elif lst.st_size != ust.st_size or not _same_content(self.lower / rel, up):
                self.effect(
                    rel,
                    "modified",
                    ust,
                    size_before=lst.st_size,
                    size_after=ust.st_size,
                    summary=_diff_summary(self.lower / rel, up, lst.st_size, ust.st_size),
                )
                self.ops.append(_Op("file", rel, stamp))
            else:
                self._meta_changed(rel, lst, ust, stamp)
            return
        if stat.S_ISFIFO(ust.st_mode) and lst is None:
            self.ops.append(_Op("fifo", rel, stamp))

    def _meta_changed(
        self, rel: str, lst: os.stat_result, ust: os.stat_result, stamp: _Stamp
    ) -> bool:
        before, after = stat.S_IMODE(lst.st_mode), stat.S_IMODE(ust.st_mode)
        notes = []
        if before != after:
            notes.append(f"mode {before:o} -> {after:o}")
        if (lst.st_uid, lst.st_gid) != (ust.st_uid, ust.st_gid):
            notes.append(f"owner {lst.st_uid}:{lst.st_gid} -> {ust.st_uid}:{ust.st_gid}")
        if not notes:
            return False
        self.effect(rel, "metadata", ust, summary=", ".join(notes))
        self.ops.append(_Op("chmod", rel, stamp))
        return True


def observe(upper: Path, workspace: Path) -> Observed:
    """The effects of the command whose overlay upper layer is ``upper`` on
    ``workspace`` (the overlay's lower layer), in path order."""
    w = _Walk(upper, workspace)
    w.walk("", opaque=False)
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
            ),
        ]
    return Observed(tuple(effects), tuple(w.ops))


# =========================================================================== applying
class StaleEffects(RuntimeError):
    """The workspace changed after the command ran; nothing was applied."""


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


def _copy_in(upper: Path, root: Path, rel: str, dfd: int, name: str) -> None:
    src = upper / rel
    mode = stat.S_IMODE(os.lstat(src).st_mode) & 0o777
    tmp = f".{name}.artoo-{os.getpid()}-{threading.get_ident()}"
    fd = os.open(
        tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd
    )
    try:
        with open(src, "rb") as fin, open(fd, "wb", closefd=False) as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)


def _remove(dfd: int, name: str) -> None:
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dfd)
    else:
        os.unlink(name, dir_fd=dfd)


def apply(observed: Observed, upper: Path, workspace: Path) -> None:
    """Make ``workspace`` what the command made of it in the sandbox. Raises
    StaleEffects (changing nothing) when a path it touches changed since it was observed."""
    for op in observed.ops:
        if _Stamp.of(workspace / op.path) != op.stamp:
            raise StaleEffects(f"'{op.path}' changed since the command ran; nothing applied")
    removes = sorted(
        (op for op in observed.ops if op.action == "remove"), key=lambda o: o.path, reverse=True
    )
    rest = [op for op in observed.ops if op.action != "remove"]
    for op in [*removes, *rest]:
        dfd, name = _parent_fd(workspace, op.path)
        try:
            src = upper / op.path
            if op.action == "remove":
                _remove(dfd, name)
            elif op.action == "mkdir":
                os.mkdir(name, stat.S_IMODE(os.lstat(src).st_mode) & 0o777, dir_fd=dfd)
            elif op.action == "file":
                _copy_in(upper, workspace, op.path, dfd, name)
            elif op.action == "symlink":
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=dfd)
                os.symlink(os.readlink(src), name, dir_fd=dfd)
            elif op.action == "fifo":
                os.mkfifo(name, stat.S_IMODE(os.lstat(src).st_mode) & 0o777, dir_fd=dfd)
            elif op.action == "chmod":
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
                fd = os.open(name, flags, dir_fd=dfd)
                try:
                    os.fchmod(fd, stat.S_IMODE(os.lstat(src).st_mode) & 0o777)
                finally:
                    os.close(fd)
        finally:
            os.close(dfd)


# =========================================================================== running
@dataclass
class SandboxRun:
    """One command run in the sandbox: its output (``run``) and its effects
    (``observed``), waiting to be applied or discarded. Discard it in every case."""

    run: _Run
    observed: Observed
    scratch: Path
    workspace: Path

    def apply(self) -> None:
        """Apply the observed effects to the workspace (see :func:`apply`)."""
        apply(self.observed, self.scratch / "upper", self.workspace)

    def discard(self) -> None:
        """Remove the scratch directory (the upper layer with it)."""
        _rmtree(self.scratch)


def _rmtree(path: Path) -> None:
    """Remove ``path`` even where a command (or the overlay's work directory) left
    directories without write or search permission."""
    shutil.rmtree(path, ignore_errors=True)
    for _ in range(3):
        if not path.exists():
            return
        for root, dirs, _files in os.walk(path):
            for name in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)
        shutil.rmtree(path, ignore_errors=True)


class Sandbox:
    """Runs shell commands in a throw-away view of the workspace (see the module
    docstring); ``network`` lets them reach the network; ``scratch_base`` is where the
    per-command upper layers live (default: the system's temporary directory); ``hide``
    are paths commands see as empty and read-only (the System hides its store, which may
    lie inside the workspace: nothing written there is observed or applied)."""

    def __init__(
        self,
        *,
        network: bool = False,
        scratch_base: Path | None = None,
        hide: tuple[Path, ...] = (),
    ) -> None:
        self.network = network
        self.scratch_base = scratch_base
        self.hide = tuple(Path(p).resolve() for p in hide)

    def run(
        self, command: str, workspace: Path, timeout_s: float, cap: int, env: dict[str, str]
    ) -> SandboxRun:
        """Run ``command`` with ``env`` in the sandbox; the workspace is not touched.
        Raises SandboxUnavailable when the sandbox could not be made."""
        if sys.platform != "linux":
            raise SandboxUnavailable(f"no sandbox on {sys.platform} (it needs Linux namespaces)")
        workspace = workspace.resolve()
        scratch = Path(tempfile.mkdtemp(prefix="artoo-sandbox-", dir=self.scratch_base))
        try:
            for sub in ("lower", "upper", "work", "merged", "root"):
                (scratch / sub).mkdir()
            if scratch == workspace or workspace in scratch.parents:
                raise SandboxUnavailable("the sandbox's scratch directory lies in the workspace")
            read_end, write_end = os.pipe()
            spec = {
                "workspace": str(workspace),
                "scratch": str(scratch),
                "shell": _SHELL,
                "command": command,
                "env": {**env, **SANDBOX_ENV},
                "network": self.network,
                "hide": [str(p) for p in self.hide],
                "status_fd": write_end,
            }
            try:
                run = _run_shell(
                    command,
                    workspace,
                    timeout_s,
                    cap,
                    {"PATH": env.get("PATH", os.defpath)},
                    argv=[sys.executable, "-I", "-S", str(_INIT), json.dumps(spec)],
                    pass_fds=(write_end,),
                )
            finally:
                os.close(write_end)
                with os.fdopen(read_end, "rb") as status_pipe:
                    status = status_pipe.read().decode("utf-8", "replace")
            if status != "ok":
                why = status.removeprefix("error: ") or (run.stderr.strip() or "no status")
                raise SandboxUnavailable(f"the sandbox could not be made: {why}")
            return SandboxRun(run, observe(scratch / "upper", workspace), scratch, workspace)
        except BaseException:
            _rmtree(scratch)
            raise


_probe_lock = threading.Lock()
_probed: dict[tuple[bool, Path | None], str | None] = {}


def probe(*, network: bool = False, scratch_base: Path | None = None) -> str | None:
    """None when the sandbox works on this machine, else why not (one line). Tried once
    per process (a command ``true`` in a scratch workspace)."""
    key = (network, scratch_base)
    with _probe_lock:
        if key in _probed:
            return _probed[key]
        why: str | None = None
        ws = Path(tempfile.mkdtemp(prefix="artoo-probe-"))
        try:
            (ws / "probe").write_text("x")
            run = Sandbox(network=network, scratch_base=scratch_base).run(
                "echo ok > probe && cat probe", ws, 10.0, 4096, {"PATH": os.defpath}
            )
            try:
                changed = [e.change for e in run.observed.effects]
                if run.run.exit_code != 0 or run.run.stdout.strip() != "ok":
                    detail = run.run.stderr.strip()[:200] or run.run.exit_code
                    why = f"a probe command failed: {detail}"
                elif changed != ["modified"] or (ws / "probe").read_text() != "x":
                    why = f"the overlay does not show a command's effects (saw {changed})"
            finally:
                run.discard()
        except SandboxUnavailable as exc:
            why = str(exc)
        except OSError as exc:
            why = f"the sandbox could not be made: {exc.strerror or exc}"
        finally:
            shutil.rmtree(ws, ignore_errors=True)
        _probed[key] = why
        return why


__all__ = [
    "Observed",
    "Sandbox",
    "SandboxRun",
    "SandboxUnavailable",
    "StaleEffects",
    "apply",
    "describe_effects",
    "observe",
    "probe",
    "write_effect",
]
