"""Per-command cgroups: every sandboxed command's processes, counted, limited, killed
and checked gone as one group, where the host lets this process make cgroups.

Found in ``/proc/self/mountinfo`` and ``/proc/self/cgroup``, so it works on cgroup v2
(``cgroup2`` mounted anywhere), v1 and hybrids (v1 controllers beside a v2 hierarchy
without them). In the cgroup this process belongs to, wherever that directory is
writable, a command gets a child named ``artoo-sandbox-PID-START-TOKEN`` (this process's
pid and start time, so a later process can tell an orphan from a live owner's):

- cgroup v2: the group to kill (``cgroup.kill``, Linux ≥ 5.14) and to watch
  (``cgroup.events``: ``populated 0``), with ``pids.max`` and ``memory.max`` where those
  controllers are delegated to this cgroup (its ``cgroup.subtree_control``);
- cgroup v1: ``memory`` (``memory.limit_in_bytes``) when v2 does not have it, ``freezer``
  when no v2 group can be killed — a kill is then freeze, SIGKILL every listed process (by
  pidfd, re-checked to be a member), thaw, until the group is empty — and ``pids``
  (``pids.max``) only where no other group can be made: moving a process into a v1 group
  waits for the kernel (an RCU grace period, ~5 ms each), and a command's processes are
  counted per command already (RLIMIT_NPROC in its own user namespace).

Where nothing is writable (an unprivileged user without cgroup delegation) there is no
group; the command's own PID namespace still ends it (see :mod:`._sandbox`). Imports
nothing of artoo: the fork server (:mod:`._sandbox_init`) uses :func:`end_group` too.
"""

from __future__ import annotations

import os
import secrets
import signal
import time

PREFIX = "artoo-sandbox-"
_V1_USED = ("pids", "memory", "freezer")


def _fields(line: str) -> tuple[str, str, str, str] | None:
    """``(fstype, mount point, root, super options)`` of one mountinfo line."""
    left, sep, right = line.partition(" - ")
    if not sep:
        return None
    head, tail = left.split(), right.split()
    if len(head) < 5 or len(tail) < 3:
        return None
    unescape = lambda s: s.replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")  # noqa: E731
    return tail[0], unescape(head[4]), unescape(head[3]), tail[2]


def _under_root(path: str, root: str) -> str | None:
    """``path`` relative to the mount's ``root`` (both absolute), None outside it."""
    if root == "/":
        return path.lstrip("/")
    if path == root:
        return ""
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return None


def places(mountinfo: str, membership: str) -> list[tuple[int, str, frozenset[str]]]:
    """Pure: ``(version, directory, controllers)`` of every cgroup this process belongs
    to, from the texts of ``/proc/self/mountinfo`` and ``/proc/self/cgroup``: the v2 one
    (controllers: none named) and each v1 hierarchy of :data:`_V1_USED` (its controllers
    among them). Whether a directory is writable is not looked at."""
    mounts = [m for m in (_fields(line) for line in mountinfo.splitlines()) if m is not None]
    found: list[tuple[int, str, frozenset[str]]] = []
    for line in membership.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        wanted = frozenset(n for n in names.split(",") if n in _V1_USED) if names else None
        if wanted is not None and not wanted:
            continue
        for fstype, point, root, options in mounts:
            if wanted is None and fstype != "cgroup2":
                continue
            if wanted is not None and (
                fstype != "cgroup" or set(names.split(",")) - set(options.split(","))
            ):
                continue
            rel = _under_root(path, root)
            if rel is not None:
                found.append((1 if wanted else 2, os.path.join(point, rel), wanted or frozenset()))
                break
    return found


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def write(path: str, text: str) -> None:
    """Write ``text`` to an existing (cgroup) file: never creates one."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks after boot), None if it does not exist."""
    try:
        return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_alive(name: str) -> bool:
    """Whether the process that made the group ``name`` still runs (same pid and start)."""
    parts = name[len(PREFIX) :].split("-")
    if not parts or not parts[0].isdigit():
        return True  # not ours to judge
    started = start_time(int(parts[0]))
    if started is None:
        return False
    return len(parts) < 3 or parts[1] == started  # the older name had no start time


def _procs(group: str) -> list[int]:
    try:
        return [int(p) for p in _read(os.path.join(group, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def _populated(group: str) -> bool:
    """Whether any process is in ``group`` (v2: ``cgroup.events``; v1: ``cgroup.procs``)."""
    try:
        for line in _read(os.path.join(group, "cgroup.events")).splitlines():
            if line.startswith("populated "):
                return line.split()[1] != "0"
    except OSError:
        pass
    return bool(_procs(group))


def _kill_members(group: str) -> None:
    """SIGKILL every process listed in ``group``, each through a pidfd opened and then
    checked to be a member still (a pid reused by another process is left alone)."""
    name = os.path.basename(group)
    for pid in _procs(group):
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            lines = _read(f"/proc/{pid}/cgroup").splitlines()
            if any(line.endswith("/" + name) or f"/{name}/" in line for line in lines):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(fd)


def kill_group(groups: list[str]) -> None:
    """Kill every process of one command's ``groups``: ``cgroup.kill`` in a v2 group;
    in the others, freeze (a v1 freezer group), SIGKILL each member, thaw."""
    rest = []
    for group in groups:
        try:
            write(os.path.join(group, "cgroup.kill"), "1")  # every member, and its forks
        except OSError:
            rest.append(group)
    freezers = [g for g in rest if os.path.exists(os.path.join(g, "freezer.state"))]
    _freeze(freezers, "FROZEN")  # a frozen process neither forks nor exits: no pid reused
    for group in rest:
        _kill_members(group)
    _freeze(freezers, "THAWED")  # the killed ones die


def _freeze(groups: list[str], state: str) -> None:
    for group in groups:
        try:
            write(os.path.join(group, "freezer.state"), state)
        except OSError:
            pass


def end_group(groups: list[str], deadline: float) -> bool:
    """Kill ``groups`` (one command's) until none has a process, by ``deadline``
    (monotonic); True when they are empty. Never raises."""
    pause = 0.001
    while True:
        if not any(_populated(g) for g in groups):
            return True
        kill_group(groups)
        if not any(_populated(g) for g in groups):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)  # the kernel finishes the exits
        pause = min(pause * 2, 0.02)


def remove_groups(groups: list[str]) -> list[str]:
    """``rmdir`` each of ``groups``; the ones that could not be removed (still busy)."""
    left = []
    for group in groups:
        try:
            os.rmdir(group)
        except FileNotFoundError:
            pass
        except OSError:
            left.append(group)
    return left


# --------------------------------------------------------------------- host side
_discovered: list[tuple[int, str, frozenset[str]]] | None = None


def usable() -> list[tuple[int, str, frozenset[str]]]:
    """:func:`places` of this process that it may make groups in (writable), the v2
    one's controllers being those delegated to it; found once, and the orphans there
    (groups of owners no longer running) killed and removed then."""
    global _discovered
    if _discovered is not None:
        return _discovered
    try:
        found = places(_read("/proc/self/mountinfo"), _read("/proc/self/cgroup"))
    except OSError:
        found = []
    out = []
    for version, path, controllers in found:
        if not (os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)):
            continue
        if version == 2:
            try:
                delegated = _read(os.path.join(path, "cgroup.subtree_control")).split()
            except OSError:
                continue
            controllers = frozenset(c for c in delegated if c in ("pids", "memory"))
        out.append((version, path, controllers))
        sweep(path)
    _discovered = out
    return out


def sweep(parent: str) -> None:
    """Kill and remove the groups under ``parent`` whose owner no longer runs."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        if not _owner_alive(name):
            group = os.path.join(parent, name)
            end_group([group], time.monotonic() + 1.0)
            remove_groups([group])


def make_groups(processes: int, memory_bytes: int) -> list[str]:
    """One command's groups (see the module docstring; [] where none can be made), their
    limits set: ``processes`` tasks and ``memory_bytes`` of memory for all together."""
    name = f"{PREFIX}{os.getpid()}-{start_time(os.getpid())}-{secrets.token_hex(4)}"
    limits = {
        (2, "pids"): ("pids.max", processes),
        (2, "memory"): ("memory.max", memory_bytes),
        (1, "pids"): ("pids.max", processes),
        (1, "memory"): ("memory.limit_in_bytes", memory_bytes),
    }
    made: list[str] = []

    def make(version: int, parent: str, controllers: frozenset[str]) -> bool:
        group = os.path.join(parent, name)
        try:
            os.mkdir(group)
        except OSError:
            return False
        made.append(group)
        for controller in controllers:
            file, value = limits.get((version, controller), ("", 0))
            if file:
                try:
                    write(os.path.join(group, file), str(value))
                except OSError:
                    pass
        return True

    found = usable()
    covered: set[str] = set()
    killable = False
    for _, parent, controllers in (p for p in found if p[0] == 2):
        if make(2, parent, controllers):
            covered |= controllers
            killable = os.path.exists(os.path.join(made[-1], "cgroup.kill"))
        break
    v1 = [(parent, controllers) for version, parent, controllers in found if version == 1]
    for parent, controllers in v1:
        wanted = (controllers & {"memory"}) - covered
        if not killable:  # no cgroup.kill: a freezer makes the kill loop safe
            wanted |= controllers & {"freezer"}
        if wanted and make(1, parent, frozenset(wanted)):
            covered |= wanted
    for parent, controllers in v1:  # v1 pids only to have a group at all: each v1
        if made or "pids" not in controllers:  # group costs the move ~5 ms, and the
            continue  # processes are counted per command already (RLIMIT_NPROC)
        make(1, parent, frozenset({"pids"}))
    return made
