"""The shell runner: a command in its own process group, a timeout that kills the group,
output capped."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import threading
import time
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path


# --------------------------------------------------------------------------- shell
@dataclass(frozen=True, slots=True)
class _Run:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    dropped: int


class _Budget:
    """The output cap shared by stdout and stderr of one run."""

    def __init__(self, cap: int) -> None:
        self._lock = threading.Lock()
        self.remaining = cap
        self.dropped = 0

    def take(self, n: int) -> int:
        with self._lock:
            keep = min(n, self.remaining)
            self.remaining -= keep
            self.dropped += n - keep
            return keep


def _drain(stream: typing.IO[bytes], budget: _Budget, chunks: list[bytes]) -> None:
    try:
        fd = stream.fileno()
        while data := os.read(fd, 65536):
            keep = budget.take(len(data))
            if keep:
                chunks.append(data[:keep])
    except OSError:
        pass
    finally:
        stream.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run_shell(
    command: str,
    cwd: Path,
    timeout_s: float,
    cap: int,
    env: dict[str, str] | None = None,
    *,
    argv: list[str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> _Run:
    """Run ``command`` in its own process group with ``env``; kill the group at the
    timeout, and when the command ends: a process it left in the background (``sleep 100
    &``) does not outlive the call. (One that starts a session of its own escapes the
    group; only a PID namespace — the sandbox — ends those too.) ``argv`` replaces
    ``bash -c command`` (the sandbox's first process), ``pass_fds`` stay open in it."""
    proc = subprocess.Popen(
        argv or [*shell_argv(_SHELL), command],
        cwd=cwd,
        env=env,
        pass_fds=pass_fds,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    budget = _Budget(cap)
    out: list[bytes] = []
    err: list[bytes] = []
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, budget, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, budget, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        _wait(proc, timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    for reader in readers:  # what the command printed before it ended, to the pipes' end
        reader.join(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
    _kill_group(proc)  # the call ends with its processes, background ones included
    for reader in readers:
        reader.join(timeout=1.0)
    return _Run(
        exit_code=None if timed_out else proc.returncode,
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
        timed_out=timed_out,
        dropped=budget.dropped,
    )


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """``proc.wait(timeout_s)`` without its polling (sleeps doubling up to 50 ms, which
    added up to 30 ms to every short command): block on a pidfd where there is one."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        proc.wait(timeout=timeout_s)
        return
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout_s)
    proc.wait()


def _format_run(run: _Run, timeout_s: float, cap: int) -> str:
    if run.timed_out:
        lines = [f"timed out after {timeout_s:g} s; process killed"]
    elif run.exit_code is not None and run.exit_code < 0:
        lines = [f"killed by signal {-run.exit_code}"]
    else:
        lines = [f"exit code: {run.exit_code}"]
    if run.stdout:
        lines.append("--- stdout ---\n" + run.stdout.rstrip("\n"))
    if run.stderr:
        lines.append("--- stderr ---\n" + run.stderr.rstrip("\n"))
    if run.dropped:
        lines.append(f"[output capped at {cap:,} bytes; {run.dropped:,} bytes dropped]")
    return "\n".join(lines)


NOT_FOUND = 127
"""The exit code of a shell whose command was not found."""

SIBLING_SUFFIX = "3"
"""A missing program's installed sibling is its name with this suffix (python → python3,
pip → pip3): the one rule of :func:`sibling_notes`."""


def sibling_notes(names: Iterable[str], installed: Callable[[str], bool]) -> list[str]:
    """What the model is told of a command line that exited :data:`NOT_FOUND`: one note
    for each of its program ``names`` (:func:`~artoo.actors.law1.program_names`) that is
    not ``installed`` while its sibling, the name and :data:`SIBLING_SUFFIX`, is —
    ``[python is not installed here; python3 is: use python3]``. A name holding ``/`` (a
    path: the shell looks it up nowhere) and "" (none, or known only at run time) are
    skipped; a name with no installed sibling gets no note; each name at most one. A
    small model without ``python`` ran ``python src/app.py``, ``python -c …``, ``which
    python`` and ``python --version`` again and again, each failing."""
    notes: list[str] = []
    for name in dict.fromkeys(names):
        if not name or "/" in name or installed(name):
            continue
        sibling = name + SIBLING_SUFFIX
        if installed(sibling):
            notes.append(f"[{name} is not installed here; {sibling} is: use {sibling}]")
    return notes


_SHELL = shutil.which("bash") or "/bin/sh"


def shell_argv(shell: str) -> list[str]:
    """The argv that runs a command line with ``shell`` (pure): bash gets ``globstar``, so
    ``src/**/*.py`` spans directories as a model (and the glob tool, and ``count_matches``)
    means it; any other shell just ``-c``."""
    if os.path.basename(shell) == "bash":
        return [shell, "-O", "globstar", "-c"]
    return [shell, "-c"]
