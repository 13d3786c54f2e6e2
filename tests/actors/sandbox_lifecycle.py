"""Scenarios of a sandboxed command's life and end (issue 41): each takes an empty
directory the calling user owns, runs real commands in real sandboxes, and returns
``{"failures": [...], ...}`` — run as root and as an unprivileged user by
``test_sandbox_lifecycle.py`` (through :func:`.unprivileged.as_nobody`).

- :func:`survivors`: processes that try to outlive the command — hijacking its init
  through ``/proc/1/mem``, double fork and ``setsid``, ignoring signals, stopped, holding
  its output, past its timeout — are all gone when the call returns, before anything was
  observed, and no cgroup is left;
- :func:`environment`: no variable of the host process is in any ``/proc/*/environ``
  inside the sandbox, nor in any of its helpers on the host, in any encoding;
- :func:`neighbour_of_a_fork_bomb`: while one command's fork bomb runs, another sandbox
  starts and its command runs;
- :func:`init_memory`: the init's memory, environment and descriptors are out of reach,
  ptrace and ``process_vm_writev`` refused, no helper visible;
- :func:`host_killed` and :func:`server_killed`: when the host process or its fork
  server is SIGKILLed mid-command, nothing of the command survives, nor its cgroups.
"""

from __future__ import annotations

import base64
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

HIJACK = """
import os, struct
efd = None
for fd in os.listdir('/proc/1/fd'):
    try:
        if 'eventfd' in os.readlink('/proc/1/fd/' + fd):
            efd = int(fd)
    except OSError:
        pass
rip = int(open('/proc/1/syscall').read().split()[-1], 16)
code = bytes.fromhex('bf01000000' '31f6' 'b89d000000' '0f05')  # prctl(PR_SET_PDEATHSIG, 0)
if efd is not None:  # write(efd, &1, 8): "the command exited 0"
    code += bytes.fromhex('6a01' '4889e6') + b'\\xbf' + struct.pack('<I', efd)
    code += bytes.fromhex('ba08000000' 'b801000000' '0f05')
code += bytes.fromhex('b822000000' '0f05' 'ebf7')  # pause() forever
with open('/proc/1/mem', 'r+b', buffering=0) as mem:
    mem.seek(rip)
    mem.write(code)
print('hijacked the init')
"""
"""x86-64: overwrite the init where its ``wait`` returns, so that it drops its
parent-death signal, tells bwrap's monitor "exit 0" and stays alive with the command's
other processes (what an attacker did on the sandbox before issue 41)."""

DAEMON = """
import os, signal, sys, time
shell = int(sys.argv[1])
for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
    signal.signal(s, signal.SIG_IGN)
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
while True:
    try:
        os.kill(shell, 0)
    except ProcessLookupError:
        break
    time.sleep(0.02)
open(sys.argv[2], 'w').write('written after the command ended')
time.sleep(300)
"""
"""A daemon (double fork, ``setsid``, signals ignored) that, once the command's shell
(``argv[1]``) has ended, writes ``argv[2]`` and lives on; its ``argv[3]`` marks it."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _daemon(late: str, token: str) -> str:
    return f"echo {_b64(DAEMON)} | base64 -d > /tmp/d.py; python3 /tmp/d.py $$ {late} {token}"


def _marked(token: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``token``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def cgroups_of(pid: int) -> list[str]:
    """The per-command cgroups process ``pid`` made that still exist, in every cgroup
    hierarchy of this process."""
    from artoo.actors.tools import _cgroup

    try:
        places = _cgroup.places(
            Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text()
        )
    except OSError:
        return []
    found = []
    for _, parent, _ in places:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        found += [os.path.join(parent, n) for n in names if n.startswith(f"{_cgroup.PREFIX}{pid}-")]
    return found


def _until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Whether ``condition`` came true within ``timeout_s`` (polled)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _ws(base: Path, name: str) -> Path:
    ws = base / name
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    return ws


# --------------------------------------------------------------------------- survivors
def survivors(base: Path) -> dict[str, object]:
    """Commands whose processes try to outlive them; after each call: none of them
    runs, nothing they wrote after the command ended was observed, no cgroup is left."""
    from artoo.actors.tools import Sandbox

    box = Sandbox()
    cases: list[tuple[str, str, float]] = []  # (name, command with {t}, timeout)
    if platform.machine() == "x86_64":
        cases.append(
            (
                "hijacks the init through /proc/1/mem",
                f"{_daemon('late-hijack.txt', '{t}')} & sleep 0.2; "
                f"echo {_b64(HIJACK)} | base64 -d | python3; echo done",
                10.0,
            )
        )
    cases += [
        ("double fork, setsid, signals ignored", f"{_daemon('late.txt', '{t}')} & sleep 0.2", 10),
        (
            "nohup and disown",
            "nohup bash -c 'exec -a {t} sleep 300' >/dev/null 2>&1 & disown; sleep 0.1",
            10,
        ),
        ("stopped", "bash -c 'exec -a {t} sleep 300' & sleep 0.1; kill -STOP $!", 10),
        ("holding the output", "bash -c 'exec -a {t} sleep 300' & echo started", 10),
        (
            "clears its parent-death signal under a subreaper",
            "python3 -c 'import ctypes, os, sys, time\nlibc = ctypes.CDLL(None)\n"
            "libc.prctl(36, 1)\nif os.fork() == 0:\n libc.prctl(1, 0)\n"
            " os.fork() or time.sleep(300)\n os._exit(0)\ntime.sleep(0.2)' {t}",
            10,
        ),
        ("past its timeout", f"{_daemon('late-timeout.txt', '{t}')} & sleep 300", 1.5),
    ]
    failures: list[str] = []
    for i, (name, template, timeout) in enumerate(cases):
        token = f"artoo-survivor-{secrets.token_hex(6)}"
        ws = _ws(base, f"ws{i}")
        run = box.run(template.replace("{t}", token), ws, timeout, 1 << 16, dict(ENV))
        try:
            left = _marked(token)
            seen = [e.path for e in run.observed.effects if e.path.startswith("late")]
        finally:
            run.discard()
        if left:
            failures.append(f"{name}: {len(left)} process(es) still running after the call")
            _kill(left)
        if seen:
            failures.append(f"{name}: what it wrote after the command ended was observed")
        if sorted(os.listdir(ws)) != ["a.txt"]:
            failures.append(f"{name}: the workspace changed: {sorted(os.listdir(ws))}")
        groups = cgroups_of(os.getpid())
        if groups:
            failures.append(f"{name}: cgroups left: {groups}")
    return {"failures": failures, "ran": len(cases)}


# --------------------------------------------------------------------------- environment
def encodings(value: str) -> list[str]:
    """``value`` as a command might print it: plain, reversed, hexadecimal, and base64
    at each of the three alignments (the part that depends on ``value`` alone)."""
    raw = value.encode()
    out = [value, value[::-1], raw.hex()]
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        out.append(encoded[4 if shift else 0 : -4])
    return out


def environment(base: Path) -> dict[str, object]:
    """A variable set in this process's environment (before its fork server starts)
    is in no process's environment inside the sandbox nor in the sandbox's helpers."""
    from artoo.actors.tools import Sandbox
    from artoo.actors.tools import _sandbox as sandbox_module

    name, value = "ARTOO_LIFECYCLE_CANARY", f"env-canary-{secrets.token_hex(12)}"
    os.environ[name] = value
    failures: list[str] = []
    try:
        sandbox_module.restart_server()
        ws = _ws(base, "ws")
        dump = (
            "cat /proc/1/environ; for f in /proc/[0-9]*/environ; do cat $f; echo; done; "
            "tr '\\0' '\\n' < /proc/1/environ | rev; "
            "cat /proc/*/environ /proc/1/task/*/environ | base64 -w0; env; "
            "cat /proc/1/cmdline /proc/*/cmdline"
        )
        run = Sandbox().run(dump, ws, 10.0, 1 << 20, dict(ENV))
        run.discard()
        for form in encodings(value):
            if form in run.run.stdout + run.run.stderr:
                failures.append(f"the canary is in the command's output (as {form!r})")
        helpers: list[str] = []
        thread = threading.Thread(
            target=lambda: Sandbox().run("sleep 2", ws, 10.0, 1 << 16, dict(ENV)).discard()
        )
        thread.start()
        server = sandbox_module._the_server()._proc.pid

        def seen() -> bool:
            helpers[:] = [str(p) for p in _descendants(server)]
            return len(helpers) >= 3  # the helper, bwrap, the init (and the command)

        if not _until(seen, 10):
            failures.append(f"the helpers of a running command were not seen: {helpers}")
        for pid in [str(server), *helpers]:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue  # not ours to read (an unprivileged user, a non-dumpable init)
            if value.encode() in environ:
                failures.append(f"the canary is in the environment of helper {pid}")
        thread.join()
    finally:
        del os.environ[name]
        sandbox_module.restart_server()
    return {"failures": failures}


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


# --------------------------------------------------------------------------- fork bomb
BOMB = (
    "python3 -c 'import os, time\nwhile True:\n try:\n  if os.fork() == 0:\n"
    "   time.sleep(60)\n   os._exit(0)\n except OSError:\n  time.sleep(0.01)' {t}"
)


def neighbour_of_a_fork_bomb(base: Path) -> dict[str, object]:
    """One sandbox's fork bomb at its process limit; meanwhile another sandbox (another
    System's, on the same host) starts, and its command runs."""
    from artoo.actors.tools import Sandbox

    token = f"artoo-bomb-{secrets.token_hex(6)}"
    bomb_ws, other_ws = _ws(base, "bomb"), _ws(base, "other")
    bomb_box, other_box = Sandbox(), Sandbox()
    limit = bomb_box.limits.processes
    failures: list[str] = []
    thread = threading.Thread(
        target=lambda: bomb_box.run(
            BOMB.replace("{t}", token), bomb_ws, 20.0, 1 << 16, dict(ENV)
        ).discard()
    )
    thread.start()
    try:
        if not _until(lambda: len(_marked(token)) >= limit * 3 // 4, 15):
            failures.append(f"the bomb did not reach its limit: {len(_marked(token))}")
        run = other_box.run("echo ran", other_ws, 20.0, 1 << 16, dict(ENV))
        run.discard()
        during = len(_marked(token))
        if run.run.exit_code != 0 or run.run.stdout != "ran\n":
            failures.append(f"the other sandbox's command did not run: {run.run}")
        if during < limit * 3 // 4:
            failures.append(f"the bomb was not at its limit meanwhile ({during})")
    finally:
        thread.join()
    if _marked(token):
        failures.append("the bomb's processes outlived its command")
        _kill(_marked(token))
    return {"failures": failures}


# --------------------------------------------------------------------------- init memory
PROBE = """
import ctypes, os
out = []
def attempt(name, fn):
    try:
        fn()
        out.append(name + ':OPEN')
    except OSError:
        out.append(name + ':denied')
attempt('mem', lambda: open('/proc/1/mem', 'r+b').close())
attempt('task-mem', lambda: open('/proc/1/task/1/mem', 'r+b').close())
attempt('environ', lambda: open('/proc/1/environ', 'rb').read())
attempt('fd', lambda: os.listdir('/proc/1/fd'))
attempt('syscall', lambda: open('/proc/1/syscall').read())
attempt('root', lambda: os.listdir('/proc/1/root/'))
libc = ctypes.CDLL(None, use_errno=True)
class Iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = Iovec(ctypes.addressof(buf), 8), Iovec(0x400000, 8)
for name, number in (('process_vm_writev', 311), ('process_vm_readv', 310)):
    r = libc.syscall(number, 1, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    out.append(name + (':denied' if r < 0 and ctypes.get_errno() == 1 else ':OPEN'))
r = libc.ptrace(16, 1, 0, 0)
out.append('ptrace:' + ('denied' if r < 0 else 'OPEN'))
r = libc.syscall(438, os.pidfd_open(1), 1, 0)  # pidfd_getfd: one of the init's descriptors
out.append('pidfd_getfd:' + ('denied' if r < 0 else 'OPEN'))
for pid in os.listdir('/proc'):
    if pid.isdigit():
        cmd = open('/proc/%s/cmdline' % pid, 'rb').read()
        if b'bwrap' in cmd or b'_sandbox_init' in cmd or b'-I\\0-S' in cmd:
            out.append('helper-visible:' + pid)
print(' '.join(out))
"""


def init_memory(base: Path) -> dict[str, object]:
    """From inside: the init's memory (``/proc/1/mem``, its thread's), environment,
    descriptors (``/proc/1/fd``, ``pidfd_getfd``), registers and root are out of reach;
    ``process_vm_*`` and ``ptrace`` refused; no helper of artoo is visible at all."""
    from artoo.actors.tools import Sandbox

    ws = _ws(base, "ws")
    run = Sandbox().run(f"echo {_b64(PROBE)} | base64 -d | python3", ws, 10.0, 1 << 16, dict(ENV))
    run.discard()
    words = run.run.stdout.split()
    failures = [w for w in words if not w.endswith(":denied")]
    if len(words) < 10:
        failures.append(f"the probe did not run: {run.run}")
    return {"failures": failures, "seen": words}


# --------------------------------------------------------------------------- killed hosts
RUNNER = """
import site, sys
for path in {sites!r}:
    site.addsitedir(path)
sys.path.insert(0, {repo!r})
from pathlib import Path
from artoo.actors.tools import Sandbox
Sandbox(scratch_base=Path(sys.argv[3])).run(sys.argv[1], Path(sys.argv[2]), 120.0, 1 << 16, {env!r})
"""


def _long(token: str) -> str:
    return f"{_daemon('late.txt', token)} & exec -a {token} sleep 300"


def host_killed(base: Path) -> dict[str, object]:
    """A process running a sandboxed command is SIGKILLed: the command's processes, its
    cgroups and its scratch directory go too (the helper sees its go pipe end; the fork
    server its socket)."""
    token = f"artoo-orphan-{secrets.token_hex(6)}"
    ws = _ws(base, "ws")
    scratch = Path(tempfile.mkdtemp(prefix="artoo-scratch-"))  # where bwrap may reach
    os.chmod(scratch, 0o711)
    sites = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    code = RUNNER.format(sites=sites, repo=str(REPO), env=ENV)
    host = subprocess.Popen([sys.executable, "-c", code, _long(token), str(ws), str(scratch)])
    failures: list[str] = []
    try:
        if not _until(lambda: len(_marked(token)) >= 2, 30):
            failures.append("the command did not start")
    finally:
        host.kill()
        host.wait()
    if not _until(lambda: not _marked(token), 15):
        failures.append(f"{len(_marked(token))} process(es) outlived the killed host")
        _kill(_marked(token))
    if not _until(lambda: not cgroups_of(host.pid), 15):
        failures.append(f"cgroups outlived the killed host: {cgroups_of(host.pid)}")
    if not _until(lambda: not os.listdir(scratch), 15):
        failures.append(f"its scratch directory outlived the killed host: {os.listdir(scratch)}")
    shutil.rmtree(scratch, ignore_errors=True)
    return {"failures": failures}


def server_killed(base: Path) -> dict[str, object]:
    """The fork server is SIGKILLed while a command runs: the call fails, the command's
    processes die with their helper, its cgroups are removed."""
    from artoo.actors.tools import Sandbox, SandboxUnavailable
    from artoo.actors.tools import _sandbox as sandbox_module

    token = f"artoo-serverless-{secrets.token_hex(6)}"
    ws = _ws(base, "ws")
    raised: list[BaseException] = []

    def run() -> None:
        try:
            Sandbox().run(_long(token), ws, 60.0, 1 << 16, dict(ENV)).discard()
        except SandboxUnavailable as exc:
            raised.append(exc)

    failures: list[str] = []
    thread = threading.Thread(target=run)
    thread.start()
    try:
        if not _until(lambda: len(_marked(token)) >= 2, 30):
            failures.append("the command did not start")
    finally:
        os.kill(sandbox_module._the_server()._proc.pid, signal.SIGKILL)
        thread.join(60)
    if not raised:
        failures.append("the call did not fail with SandboxUnavailable")
    groups = cgroups_of(os.getpid())
    if groups:
        failures.append(f"cgroups left: {groups}")
    if not _until(lambda: not _marked(token), 15):
        failures.append(f"{len(_marked(token))} process(es) outlived the killed server")
        _kill(_marked(token))
    return {"failures": failures}
