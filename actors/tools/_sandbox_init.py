"""The sandbox's first process: run as ``python -I -S _sandbox_init.py SPEC`` (a fresh,
single-threaded interpreter — a threaded process cannot enter a user namespace).

Imports nothing of artoo. SPEC is JSON: ``workspace``, ``scratch`` (a directory outside
the workspace holding ``lower``, ``upper``, ``work``, ``merged``, ``root``), ``shell``,
``command``, ``env``, ``network``, ``hide`` (paths shown empty) and ``status_fd`` (a pipe
to the host: ``ok`` just before the command starts, or ``error: …`` when the sandbox could
not be made).

Steps, all by system calls (no helper programs):

1. ``unshare`` new user, mount, PID, IPC and UTS namespaces (and network unless
   ``network``); map the caller's uid/gid to root inside.
2. ``fork``: the child is PID 1 of the new PID namespace; this process waits for it and
   exits with its status. When PID 1 exits, the kernel kills every process left in the
   namespace (``sleep 100 &`` included). ``PR_SET_PDEATHSIG`` kills the child if this
   process is killed.
3. In the child: every mount private; the workspace bind-mounted at ``lower``; an
   overlay (``lower`` below, a fresh ``upper``) at ``merged``; the host's root tree
   bind-mounted recursively at ``root`` and every mount of it remounted read-only
   (keeping its locked flags); fresh tmpfs on ``/tmp``, ``/var/tmp``, ``/run`` and
   ``/dev/shm`` (also hiding the host's Unix sockets); ``merged`` bind-mounted at the
   workspace's own path; an empty read-only tmpfs over each ``hide`` path (the store);
   a new ``/proc``; ``pivot_root`` into ``root`` and the old root
   detached, so nothing writable of the host stays reachable.
4. ``execve`` the shell with the command in the workspace.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_SYNCHRONOUS = 16
MS_REMOUNT = 32
MS_MANDLOCK = 64
MS_NOSYMFOLLOW = 256
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

# statvfs f_flag bit -> mount flag (the flags a user namespace may not clear)
_ST_TO_MS = (
    (1, MS_RDONLY),
    (2, MS_NOSUID),
    (4, MS_NODEV),
    (8, MS_NOEXEC),
    (16, MS_SYNCHRONOUS),
    (64, MS_MANDLOCK),
    (1024, MS_NOATIME),
    (2048, MS_NODIRATIME),
    (4096, MS_RELATIME),
    (8192, MS_NOSYMFOLLOW),
)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_libc.syscall.restype = ctypes.c_long

_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


class SetupError(Exception):
    """A step of the sandbox could not be made."""


def _b(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def _check(result: int, step: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{step}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """mount(2); raises SetupError naming the target."""
    _check(
        _libc.mount(_b(source), _b(target), _b(fstype), flags, data.encode() if data else None),
        f"mount {fstype or 'bind'} on {target}",
    )


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mountpoints() -> list[str]:
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            raw = line.split(b" ")[4]
            points.append(os.fsdecode(_unescape(raw)))
    return points


def _unescape(raw: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i : i + 1] == b"\\" and raw[i + 1 : i + 4].isdigit():
            out.append(int(raw[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def _remount_read_only(root: str) -> None:
    """Every mount at or beneath ``root`` read-only, keeping the flags it has."""
    prefix = root.rstrip("/") + "/"
    for point in _mountpoints():
        if point != root and not point.startswith(prefix):
            continue
        try:
            st = os.statvfs(point)
        except OSError:  # hidden under a later mount, or gone
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for st_bit, ms_bit in _ST_TO_MS:
            if st.f_flag & st_bit:
                flags |= ms_bit
        try:
            mount(None, point, None, flags)
        except SetupError:
            if os.path.realpath(point) != point:  # a mount point under a symlink
                continue
            raise


def _tmpfs(root: str, path: str) -> None:
    target = root + path
    if os.path.isdir(target) and not os.path.islink(target):
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def _makedirs(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise SetupError(f"mkdir {path}: {exc.strerror}") from None


def _pivot(root: str) -> None:
    number = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise SetupError(f"pivot_root: unknown machine {os.uname().machine}")
    os.chdir(root)
    _check(_libc.syscall(number, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")


def _inside(spec: dict[str, object]) -> None:
    """PID 1: build the file system view, then become the shell."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    workspace = str(spec["workspace"])
    scratch = str(spec["scratch"])
    lower, upper, work = scratch + "/lower", scratch + "/upper", scratch + "/work"
    merged, root = scratch + "/merged", scratch + "/root"
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount(workspace, lower, None, MS_BIND | MS_REC)
    mount(
        "overlay",
        merged,
        "overlay",
        0,
        f"lowerdir={lower},upperdir={upper},workdir={work},userxattr",
    )
    mount("/", root, None, MS_BIND | MS_REC)
    _remount_read_only(root)
    for path in ("/tmp", "/var/tmp", "/run", "/dev/shm"):
        _tmpfs(root, path)
    _makedirs(root + workspace)
    mount(merged, root + workspace, None, MS_BIND)
    hide = spec.get("hide") or []
    assert isinstance(hide, list)
    for hidden in hide:  # e.g. the store: empty and read-only inside
        target = root + str(hidden)
        if os.path.isdir(target) and not os.path.islink(target):
            mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")
        elif os.path.isfile(target) and not os.path.islink(target):
            mount("/dev/null", target, None, MS_BIND)
    try:
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except SetupError:
        pass  # a masked /proc (some containers): the read-only host /proc stays
    _pivot(root)
    os.chdir(workspace)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def main() -> None:
    """Make the sandbox and run the command in it (see the module docstring)."""
    spec = json.loads(sys.argv[1])
    status = int(spec["status_fd"])
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if not spec.get("network"):
        flags |= CLONE_NEWNET
    try:
        _check(_libc.unshare(flags), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    except (SetupError, OSError) as exc:
        os.write(status, f"error: {exc}".encode())
        os._exit(125)
    pid = os.fork()
    if pid == 0:
        try:
            _inside(spec)
        except (SetupError, OSError) as exc:
            os.write(status, f"error: {exc}".encode())
            os._exit(125)
        os.write(status, b"ok")
        os.close(status)
        shell = str(spec["shell"])
        env = {str(k): str(v) for k, v in dict(spec["env"]).items()}
        try:
            bash = os.path.basename(shell) == "bash"  # globstar: as _shell.shell_argv
            argv = [shell, "-O", "globstar", "-c"] if bash else [shell, "-c"]
            os.execve(shell, [*argv, str(spec["command"])], env)
        except OSError as exc:
            os.write(2, f"cannot run {shell}: {exc.strerror}\n".encode())
            os._exit(127)
    os.close(status)

    def kill_child(signum: int, frame: object) -> None:
        os.kill(pid, signal.SIGKILL)

    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, kill_child)
    _, code = os.waitpid(pid, 0)
    if os.WIFSIGNALED(code):
        died_of = os.WTERMSIG(code)
        signal.signal(died_of, signal.SIG_DFL)
        os.kill(os.getpid(), died_of)
    os._exit(os.waitstatus_to_exitcode(code) if os.WIFEXITED(code) else 128)


if __name__ == "__main__":
    main()
