"""The sandbox's fork server: run once per host process as ``python -I -S
_sandbox_init.py SOCKET_FD``, with an environment of ``PATH`` and ``LANG`` only (a
single-threaded interpreter — a threaded process cannot enter a user namespace, and
forking this one costs a millisecond where starting an interpreter per command cost
ten). For each request it forks a helper that makes the storage the command writes to,
hands it to the host, and starts the command's init, which becomes ``bwrap``.

Imports nothing of artoo but its stdlib-only sibling :mod:`._cgroup`. The protocol on the
Unix socket ``SOCKET_FD``: the host sends a request — NUL-separated words ``WORKSPACE
SCRATCH BYTES INODES UID_BASE LIMITS N READ… M CGROUP… K ENV… BWRAP…`` with seven
descriptors (stdin, stdout, stderr, status, go, seccomp, the sandbox init's binary; the
helper gets them as 0–6) — and gets ``pid PID`` back, then ``exit PID CODE`` when that
helper ends (``CODE`` as ``subprocess``'s). ``SCRATCH`` is an empty directory outside the
workspace; ``BYTES`` and ``INODES`` the size of the storage; ``UID_BASE`` (when run as
root) the unprivileged host id the workspace's owner is shown as; ``LIMITS``
``NAME=value`` rlimits joined by commas; ``N`` host paths the command may read, bound at
``SCRATCH/read/I`` (where bwrap, run as ``UID_BASE``, can reach them); ``M`` cgroup
directories of the command: this server moves the helper into them before it answers
``pid`` (while the helper makes the storage: a move into a v1 group waits ~10 ms for the
kernel), so the command's processes are born there; it removes them if the host dies;
``K`` ``NAME=value`` items, bwrap's whole environment (which it passes on to the
command); ``BWRAP…`` binds ``SCRATCH/merged`` at the workspace's path and
``SCRATCH/read/I`` at each ``READ``.

A helper's steps (the only mounts artoo makes itself; the boundary is bubblewrap's):

1. A new session; a new mount namespace (and, when not root, a user namespace mapping the
   caller to 0, which the command never runs as: bwrap nests its own). Mounts private.
2. A tmpfs of ``BYTES`` and ``INODES`` on ``SCRATCH``: the overlay's upper layer lives
   there, so what a command writes is limited, and none of it reaches the host's disk.
   (Not root, on a kernel before 6.6 — a tmpfs without user xattrs — the upper layer
   stays on ``SCRATCH``'s own disk, limited by RLIMIT_FSIZE per file only.)
3. As root: the workspace cloned as an *idmapped* mount (host id ``k`` shown as
   ``UID_BASE + k``), so the command owns the workspace's files while its host id is
   ``UID_BASE`` — never 0. Otherwise the workspace itself.
4. An overlay of the workspace (lower) and ``SCRATCH/upper`` at ``SCRATCH/merged``; each
   ``READ`` bound at ``SCRATCH/read/I``.
5. ``ok PID`` written on the status pipe (or ``error: …``); the host opens the tmpfs
   through ``/proc/PID/root`` — it reads the upper layer through that descriptor after
   the namespace is gone — and then writes ``g`` on the go pipe, which it keeps open.
6. A new PID namespace, whose init the helper forks and waits for. When the go pipe ends
   — the host closed it (the command's timeout) or the host died — the helper kills that
   init; the kernel then kills every process of the namespace, and the helper reaps the
   init only once they have all ended. It exits with the init's code (128 + N for a
   signal N), so when the host hears ``exit``, nothing of the command runs any more.
7. The init: mounts a ``/proc`` of its namespace, sets the rlimits, as root drops every
   id to ``UID_BASE``, takes SIGKILL as its parent-death signal, and ``execve``s bwrap —
   which the command cannot see, in a namespace of its own.

The helper dies with this server, and the init with the helper (parent-death signals the
command cannot reach). When the host goes (end of file), every helper is killed, its
cgroups emptied and removed, and its scratch directory removed.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time

if __package__:
    from . import _cgroup
else:  # run as a script (the fork server): its sibling, which imports only the stdlib
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _cgroup  # type: ignore[no-redef, import-not-found]

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = os.O_CLOEXEC
AT_EMPTY_PATH = 0x1000
AT_RECURSIVE = 0x8000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_IDMAP = 0x00100000
ID_RANGE = 65536
# the mount API's system calls have one number on every architecture
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
_libc.mount.argtypes.append(ctypes.c_char_p)
_libc.unshare.argtypes = [ctypes.c_int]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.syscall.restype = ctypes.c_long


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class SetupError(Exception):
    """A step of the sandbox could not be made."""


def _check(result: int, step: str) -> int:
    if result < 0:
        raise SetupError(f"{step}: {os.strerror(ctypes.get_errno())}")
    return result


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """mount(2); raises SetupError naming the target."""
    enc = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    _check(
        _libc.mount(enc(source), enc(target), enc(fstype), flags, data.encode() or None),
        f"mount {fstype or 'bind'} on {target}",
    )


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _userns_fd(base: int) -> int:
    """A descriptor of a new user namespace mapping ids ``0..ID_RANGE`` to
    ``base..base+ID_RANGE`` (what an idmapped mount needs)."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child that enters the namespace and waits to be read
        os.close(ready_r)
        os.close(done_w)
        ok = _libc.unshare(CLONE_NEWUSER) == 0
        os.write(ready_w, b"y" if ok else b"n")
        os.read(done_r, 1)
        os._exit(0)
    os.close(ready_w)
    os.close(done_r)
    try:
        if os.read(ready_r, 1) != b"y":
            raise SetupError("a user namespace for the idmapped mount could not be made")
        _write(f"/proc/{pid}/uid_map", f"0 {base} {ID_RANGE}")
        _write(f"/proc/{pid}/gid_map", f"0 {base} {ID_RANGE}")
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_r)
        os.close(done_w)
        os.waitpid(pid, 0)


def _idmapped(source: str, target: str, base: int) -> None:
    """``source`` mounted at ``target`` with every id ``k`` shown as ``base + k``."""
    tree = _check(
        _libc.syscall(
            SYS_OPEN_TREE,
            ctypes.c_int(-100),
            os.fsencode(source),
            ctypes.c_uint(OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC),
        ),
        "open_tree on the workspace",
    )
    userns = _userns_fd(base)
    try:
        attr = _MountAttr(MOUNT_ATTR_IDMAP, 0, 0, userns)
        _check(
            _libc.syscall(
                SYS_MOUNT_SETATTR,
                ctypes.c_int(tree),
                b"",
                ctypes.c_uint(AT_EMPTY_PATH),
                ctypes.byref(attr),
                ctypes.c_size_t(ctypes.sizeof(attr)),
            ),
            "an idmapped mount of the workspace",
        )
        _check(
            _libc.syscall(
                SYS_MOVE_MOUNT,
                ctypes.c_int(tree),
                b"",
                ctypes.c_int(-100),
                os.fsencode(target),
                ctypes.c_uint(MOVE_MOUNT_F_EMPTY_PATH),
            ),
            "move the idmapped workspace",
        )
    finally:
        os.close(userns)
        os.close(tree)


def _storage(
    workspace: str, scratch: str, size: str, base: int, root: bool, reads: list[str]
) -> None:
    """Steps 1–4 of the module docstring."""
    if root:
        _check(_libc.unshare(CLONE_NEWNS), "unshare")
    else:
        uid, gid = os.getuid(), os.getgid()
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, size)
    if not root:
        try:  # the overlay keeps its marks in user xattrs: a tmpfs has them from Linux 6.6
            os.setxattr(scratch, "user.artoo", b"1")
        except OSError:  # older: the upper layer on the scratch directory's own disk
            _check(_libc.umount2(os.fsencode(scratch), MNT_DETACH), "umount the tmpfs")
    for sub in ("upper", "work", "lower", "merged", "read"):
        os.mkdir(f"{scratch}/{sub}", 0o711)
    for i, path in enumerate(reads):
        target = f"{scratch}/read/{i}"
        if os.path.isdir(path):
            os.mkdir(target, 0o711)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))
        mount(path, target, None, MS_BIND | MS_REC)
    st = os.stat(workspace)
    if root:
        _idmapped(workspace, f"{scratch}/lower", base)
        lower, options = f"{scratch}/lower", ",redirect_dir=off,metacopy=off"  # exact copies
        os.chown(f"{scratch}/upper", base + st.st_uid, base + st.st_gid)
    else:
        lower, options = workspace, ",userxattr"
    os.chmod(f"{scratch}/upper", st.st_mode & 0o7777)  # the workspace's root as it is
    mount(
        "overlay",
        f"{scratch}/merged",
        "overlay",
        0,
        f"lowerdir={lower},upperdir={scratch}/upper,workdir={scratch}/work{options}",
    )


STATUS_FD, GO_FD, SECCOMP_FD, INIT_FD = 3, 4, 5, 6
FDS = 7
"""A request's descriptors: stdin, stdout, stderr, status, go, seccomp, the init's binary."""
CLONE_NEWPID = 0x20000000
MS_NOEXEC = 8
PR_SET_PDEATHSIG = 1
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.prctl.argtypes.append(ctypes.c_ulong)


def _parse(words: list[str]) -> tuple[list[str], list[str], list[str], dict[str, str], list[str]]:
    """A request's words: ``(head, reads, cgroups, env, bwrap argv)`` (see the docstring)."""
    head, rest = words[:6], words[6:]
    lists: list[list[str]] = []
    for _ in range(3):  # READ…, CGROUP…, ENV…: each a count, then its items
        count = int(rest[0])
        lists.append(rest[1 : 1 + count])
        rest = rest[1 + count :]
    env = dict(item.split("=", 1) for item in lists[2])
    return head, lists[0], lists[1], env, rest


def _child(words: list[str]) -> None:
    """Steps 1–7 of the module docstring, as the helper (never returns)."""
    (workspace, scratch, size, inodes, base_s, limits), reads, _, env, argv = _parse(words)
    base = int(base_s)
    root = os.getuid() == 0
    try:
        os.setsid()
        options = f"size={size},nr_inodes={inodes},mode=0711"
        _storage(workspace, scratch, options, base, root, reads)
    except (SetupError, OSError) as exc:
        os.write(STATUS_FD, f"error: {exc}".encode())
        os._exit(125)
    os.write(STATUS_FD, f"ok {os.getpid()}".encode())
    os.close(STATUS_FD)
    if os.read(GO_FD, 1) != b"g":  # the host could not take the storage
        os._exit(125)
    try:  # the next child is the init of a PID namespace of its own
        _check(_libc.unshare(CLONE_NEWPID), "unshare a PID namespace")
        alive_r, alive_w = os.pipe()  # the command's init sees this helper's end
        pid = os.fork()
    except (SetupError, OSError) as exc:
        os.write(2, f"sandbox: {exc}\n".encode())
        os._exit(125)
    if pid == 0:
        try:
            os.close(alive_w)
            os.close(GO_FD)
            _command(argv, env, limits, base if root else -1, alive_r)
        except (SetupError, OSError, ValueError) as exc:
            os.write(2, f"sandbox: {exc}\n".encode())
        finally:
            os._exit(125)
    for fd in (alive_r, 0, 1, 2, SECCOMP_FD, INIT_FD):  # the command's, not the helper's
        os.close(fd)
    os._exit(_watch(pid))


def _watch(pid: int) -> int:
    """Wait for the init ``pid``; kill it when the go pipe ends (the host stopped the
    command, or died). Its exit code (128 + N for signal N): it is reaped only once every
    process of its PID namespace, the command's nested ones included, has ended."""
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd, GO_FD], [], [])
    if GO_FD in ready:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _command(argv: list[str], env: dict[str, str], limits: str, uid: int, alive: int) -> None:
    """Step 7, as the init of the new PID namespace: mount a ``/proc`` of this namespace
    (bwrap writes its child's id maps through it), set the rlimits, drop to ``uid`` (root
    only; -1: stay), die with the helper, become bwrap. Raises SetupError or OSError when
    a step fails."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for item in limits.split(","):
        name, _, value = item.partition("=")
        resource.setrlimit(getattr(resource, name), (int(value), int(value)))
    if uid >= 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after the ids: they reset it
    if select.select([alive], [], [], 0)[0]:  # the helper is gone already
        os._exit(125)
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        raise OSError(f"cannot run {argv[0]}: {exc.strerror}") from None


def _fork(words: list[str], fds: list[int]) -> int:
    """Fork a helper running ``words`` with ``fds`` as its descriptors 0–6; it dies with
    this server."""
    server = os.getpid()
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != server:
            os._exit(125)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in fds]  # out of the way
        for target, fd in enumerate(high):
            os.dup2(fd, target)  # inheritable
        os.closerange(len(high), os.sysconf("SC_OPEN_MAX"))  # the socket, other pidfds
        _child(words)
    finally:
        os._exit(125)


def _exactly(sock: socket.socket, n: int, got: bytes = b"") -> bytes | None:
    while len(got) < n:
        more = sock.recv(n - len(got))
        if not more:
            return None
        got += more
    return got


def _request(sock: socket.socket) -> tuple[bytes | None, list[int]]:
    """One request: its length (8 bytes, with the descriptors), then its words."""
    head, fds, _flags, _addr = socket.recv_fds(sock, 8, FDS)
    if not head:
        return None, fds
    full = _exactly(sock, 8, head)
    size = int.from_bytes(full, "big") if full is not None else 0
    return (_exactly(sock, size) if full is not None else None), fds


def serve(sock: socket.socket) -> None:
    """Answer the host's requests until it goes (see the module docstring)."""
    children: dict[int, tuple[int, list[str], str]] = {}  # pidfd -> pid, cgroups, scratch
    listening = sock.fileno()
    while True:
        ready, _, _ = select.select([listening, *children], [], [])
        for fd in ready:
            if fd == listening:
                message, fds = _request(sock)
                if message is None:  # the host is gone: so are its commands
                    _end(list(children.values()))
                    return
                words = message.decode("utf-8", "surrogateescape").split("\0")
                pid = _fork(words, fds)
                for received in fds:
                    os.close(received)
                groups = _parse(words)[2]
                for group in groups:  # while the helper makes the storage; not yet
                    try:  # reaped, its pid cannot be another process's
                        _cgroup.write(os.path.join(group, "cgroup.procs"), str(pid))
                    except OSError:
                        pass  # best effort: where this user may
                children[os.pidfd_open(pid)] = (pid, groups, words[1])
                sock.sendall(f"pid {pid}\n".encode())
            else:
                pid, _, _ = children.pop(fd)
                os.close(fd)
                _, status = os.waitpid(pid, 0)
                sock.sendall(f"exit {pid} {os.waitstatus_to_exitcode(status)}\n".encode())


def _end(children: list[tuple[int, list[str], str]]) -> None:
    """Kill the helpers still running (their commands' inits die with them) and their
    cgroups' processes; remove those cgroups and the commands' scratch directories."""
    for pid, _, _ in children:
        try:
            os.killpg(pid, signal.SIGKILL)  # the helper and its init (the same group)
        except OSError:
            pass
    for pid, groups, scratch in children:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
        if groups:
            _cgroup.end_group(groups, time.monotonic() + 2.0)
            _cgroup.remove_groups(groups)
        shutil.rmtree(scratch, ignore_errors=True)  # its tmpfs went with the helper


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
