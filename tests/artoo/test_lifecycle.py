"""Every task ends: close, a forgotten close, SIGKILL and reopen, a failing log, the
injected clock, cancel reaching an Executor mid-attempt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import artoo
from artoo.actors.runtime.bus import BusError
from artoo.eventstore import EventLog
from artoo.schemas import (
    Config,
    ConfirmationRequest,
    Envelope,
    ExecutionResult,
    FinalResult,
    MegramForgotten,
    UserRequest,
)
from artoo.system import CLOSE_BOUND_S
from artoo.testing import ManualClock, write_script

from .helpers import CONFIG, PERCEIVE, all_events, delete_log_entries, task_events

DAY = 86_400.0


def _blocked_on_confirmation(tmp_path: Path, tasks: int = 1) -> str:
    """``tasks`` tasks whose executor waits for a Law 1 confirmation nobody answers."""
    return write_script(tmp_path / "rm.toml", delete_log_entries(tasks=tasks))


def _never(request: ConfirmationRequest) -> bool:
    threading.Event().wait()  # an operator who never answers
    return False


def _wait_for(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


# --------------------------------------------------------------------------- the clock
def test_a_system_under_a_manual_clock_runs_deadline_and_dreamer_by_hand(
    tmp_path: Path, workspace: Path
) -> None:
    clock = ManualClock()
    config = Config(durability="none", max_parallel=1, confirmation_timeout_s=10_000)
    seen: list[Envelope] = []
    hello = [{**PERCEIVE, "times": 1}, {"role": "executor", "content": "hello"}]
    with artoo.System.open(
        tmp_path / "s",
        model=write_script(tmp_path / "m.toml", hello + delete_log_entries()),
        workspace=workspace,
        config=config,
        clock=clock,
        operator=_never,
    ) as system:
        system.subscribe(seen.append)
        assert system.run("say hello").status == "success"  # records a megram
        handle = system.submit("delete the old log", timeout=100)
        _wait_for(lambda: any(isinstance(e.body, ConfirmationRequest) for e in seen))
        time.sleep(0.2)  # wall time passes; clock time does not: nothing ends
        assert not handle.done()
        clock.advance(101)  # past the deadline: the GGS ends the task on this tick
        result = handle.result(10)
        assert result.status == "abandon" and result.reason == "deadline"
        system.flush(5)
        assert len(system.megrams) >= 1  # the GGS recorded the task's megram
        clock.advance(400 * DAY)  # decayed far below the forget threshold: a pass forgets
        _wait_for(lambda: any(isinstance(e.body, MegramForgotten) for e in seen))
    assert (workspace / "archive" / "old.log").exists()


# --------------------------------------------------------------------------- close
def test_close_ends_running_tasks_and_returns_within_its_bound_with_a_tool_on_a_fifo(
    tmp_path: Path, workspace: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    entered = threading.Event()

    def wait_for_fifo() -> str:
        """Read a FIFO nobody writes (blocks forever)."""
        entered.set()
        return fifo.read_text()

    entries = [
        PERCEIVE,
        {"role": "executor", "tool_calls": [{"name": "wait_for_fifo", "arguments": {}}]},
        {"role": "executor", "times": 0, "content": "done"},
    ]
    system = artoo.System.open(
        tmp_path / "s",
        model=write_script(tmp_path / "f.toml", entries),
        workspace=workspace,
        config=CONFIG,
        tools=[wait_for_fifo],
    )
    handle = system.submit("wait")
    assert entered.wait(10)
    started = time.monotonic()
    system.close()
    took = time.monotonic() - started
    assert took < CLOSE_BOUND_S + 2.0, f"close took {took:.1f} s"
    result = handle.result(0)
    assert result.status == "abandon" and result.reason == "closed"
    finals = [
        e
        for e in task_events(tmp_path / "s", handle.task_id)
        if e.body is result or isinstance(e.body, FinalResult)
    ]
    assert len(finals) == 1


def test_a_host_that_forgets_close_exits(tmp_path: Path, workspace: Path) -> None:
    script = tmp_path / "host.py"
    model = _blocked_on_confirmation(tmp_path)
    script.write_text(
        textwrap.dedent(
            f"""
            import threading, artoo
            from artoo.schemas import Config
            def never(request):
                threading.Event().wait()
            s = artoo.System.open({str(tmp_path / "s")!r}, model={model!r},
                workspace={str(workspace)!r}, operator=never,
                config=Config(durability="none", max_parallel=1))
            h = s.submit("delete the old log")
            print(h.task_id, flush=True)
            """
        )
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert took < 15  # an interpreter start, the System, and the exit
    task_id = done.stdout.strip()
    finals = [
        e.body for e in task_events(tmp_path / "s", task_id) if isinstance(e.body, FinalResult)
    ]
    assert len(finals) == 1 and finals[0].reason in ("closed", "interrupted")


# --------------------------------------------------------------------------- SIGKILL
def test_after_sigkill_mid_task_the_next_open_ends_each_orphan_exactly_once(
    tmp_path: Path, workspace: Path
) -> None:
    store = tmp_path / "s"
    model = _blocked_on_confirmation(tmp_path, tasks=2)
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, threading, artoo
            from artoo.schemas import Config, ConfirmationRequest
            asked = threading.Event()
            def never(request):
                asked.set()
                threading.Event().wait()
            s = artoo.System.open({str(store)!r}, model={model!r}, workspace={str(workspace)!r},
                operator=never, config=Config(durability="batch", max_parallel=2))
            ids = [s.submit("delete the old log").task_id for _ in range(2)]
            asked.wait(20)
            s.flush(5)
            print(" ".join(ids), flush=True)
            threading.Event().wait()
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        ids = victim.stdout.readline().split()
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    assert len(ids) == 2
    for _ in range(2):  # reopen twice: the orphans end once
        abandon = CONFIG.model_copy(update={"recovery": "abandon"})  # not resume
        with artoo.System.open(store, model=model, workspace=workspace, config=abandon):
            pass
    for task_id in ids:
        finals = [e.body for e in task_events(store, task_id) if isinstance(e.body, FinalResult)]
        assert len(finals) == 1
        assert finals[0].reason == "interrupted" and finals[0].status == "abandon"
        assert finals[0].summary.startswith("interrupted: the process stopped after seq ")


# --------------------------------------------------------------------------- a failing log
def test_when_the_log_append_fails_handles_fail_promptly_and_submit_raises(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = threading.Event()
    original = EventLog.append_encoded

    def append(self: EventLog, *args: object, **kwargs: object) -> object:
        if broken.is_set():
            raise OSError(28, "No space left on device")
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(EventLog, "append_encoded", append)
    seen: list[Envelope] = []
    with artoo.System.open(
        tmp_path / "s",
        model=_blocked_on_confirmation(tmp_path),
        workspace=workspace,
        config=CONFIG.model_copy(update={"confirmation_timeout_s": 10_000}),
        operator=_never,
    ) as system:
        system.subscribe(seen.append)
        handle = system.submit("delete the old log")
        _wait_for(lambda: any(isinstance(e.body, ConfirmationRequest) for e in seen))
        broken.set()
        handle.cancel()  # the next append fails
        with pytest.raises(BusError, match="No space left"):
            handle.result(5)
        with pytest.raises(BusError, match="No space left"):
            system.submit("anything")


# --------------------------------------------------------------------------- cancel
def test_cancel_reaches_an_executor_waiting_mid_attempt(tmp_path: Path, workspace: Path) -> None:
    seen: list[Envelope] = []
    store = tmp_path / "s"
    with artoo.System.open(
        store,
        model=_blocked_on_confirmation(tmp_path),
        workspace=workspace,
        config=CONFIG.model_copy(update={"confirmation_timeout_s": 10_000}),
        operator=_never,
    ) as system:
        system.subscribe(seen.append)
        handle = system.submit("delete the old log")
        _wait_for(lambda: any(isinstance(e.body, ConfirmationRequest) for e in seen))
        handle.cancel("changed my mind")
        result = handle.result(10)
        _wait_for(lambda: any(isinstance(e.body, ExecutionResult) for e in seen))
    assert result.reason == "cancelled" and "changed my mind" in result.summary
    executions = [e.body for e in all_events(store) if isinstance(e.body, ExecutionResult)]
    assert [x.stop for x in executions] == ["task_ended"]
    assert (workspace / "archive" / "old.log").exists()
    starts = [e for e in all_events(store) if isinstance(e.body, UserRequest)]
    assert len(starts) == 1
