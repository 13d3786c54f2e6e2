"""Pause and resume: a paused task makes no model or tool call, its deadline clock stops,
the Judge raises no stall ticket for it, and it stays paused across a restart."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import artoo
from artoo.replay import rerun, verify
from artoo.report import audit_report
from artoo.report._model import AuditDocument
from artoo.schemas import (
    Config,
    Envelope,
    EscalationTicket,
    FinalResult,
    JudgeObservation,
    LLMCall,
    TaskPaused,
    TaskResumed,
    TaskUnpaused,
)
from artoo.testing import ManualClock, write_script

from .helpers import all_events

ENTRIES: list[dict[str, Any]] = [
    {
        "role": "perceiver",
        "content": {
            "intent": "write a file",
            "kind": "creation",
            "targets": [{"path": "made.txt", "role": "create"}],
        },
    },
    {
        "role": "executor",
        "tool_calls": [{"name": "write_file", "arguments": {"path": "made.txt", "content": "x"}}],
    },
    {"role": "executor", "content": "done"},
]
"""The request is its own first plan (no Planner call): the Executor writes made.txt. No
check reads its content back, so the task ends ``success`` (never ``accept``)."""

SLOW_EXECUTOR = [ENTRIES[0], {**ENTRIES[1], "delay_ms": 1000}, *ENTRIES[2:]]
"""The Executor's first turn answers in 1 s (wall time): a pause or a clock move comes
during its call."""


def _open(tmp_path: Path, clock: ManualClock, seen: list[Envelope]) -> artoo.System:
    """A System under ``clock`` whose every envelope lands in ``seen``; stalls looked for
    each clock second; the workspace ``tmp_path/ws``."""
    config = Config(
        durability="none", max_parallel=1, role_timeout_s=10_000, judge={"interval_s": 1.0}
    )
    (tmp_path / "ws").mkdir()
    system = artoo.System.open(
        tmp_path / "s",
        model=write_script(tmp_path / "m.toml", SLOW_EXECUTOR),
        workspace=tmp_path / "ws",
        config=config,
        clock=clock,
    )
    system.subscribe(seen.append)
    return system


def _wait_for(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def _stalls(events: list[Envelope]) -> list[EscalationTicket]:
    return [
        e.body for e in events if isinstance(e.body, EscalationTicket) and e.body.kind == "stall"
    ]


def test_a_paused_task_waits_past_its_deadline_and_stall_time_then_ends(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    ws = tmp_path / "ws"
    seen: list[Envelope] = []
    with _open(tmp_path, clock, seen) as system:
        handle = system.submit("write made.txt", timeout=100)
        _wait_for(lambda: any(isinstance(e.body, LLMCall) for e in seen))  # the Perceiver's
        assert handle.pause("lunch")
        assert not handle.pause()  # paused already
        time.sleep(0.3)
        calls = sum(isinstance(e.body, LLMCall) for e in seen)
        assert calls <= 2  # at most the Executor's call that was under way
        clock.advance(150)  # past the deadline and past stall_s (60 s): neither fires
        time.sleep(0.3)
        clock.advance(1)
        time.sleep(0.2)
        assert not handle.done()
        assert sum(isinstance(e.body, LLMCall) for e in seen) == calls  # no call while paused
        assert not (ws / "made.txt").exists()  # nor any tool call
        assert handle.resume()
        result = handle.result(20)
        system.flush(5)
    assert result.status == "success"
    assert (ws / "made.txt").read_text() == "x"
    events = all_events(tmp_path / "s")
    kinds = [type(e.body) for e in events]
    assert TaskPaused in kinds and TaskUnpaused in kinds
    assert _stalls(events) == []


def test_a_silent_task_that_is_not_paused_gets_a_stall_ticket(tmp_path: Path) -> None:
    """The control of the test above: the same silence, unpaused, is a stall."""
    clock = ManualClock()
    seen: list[Envelope] = []
    with _open(tmp_path, clock, seen) as system:
        handle = system.submit("write made.txt", timeout=1000)
        _wait_for(lambda: any(isinstance(e.body, LLMCall) for e in seen))
        clock.advance(70)
        _wait_for(lambda: bool(_stalls(seen)))
        handle.result(20)


@pytest.mark.slow
def test_a_paused_task_stays_paused_across_a_restart_and_the_operator_resumes_it(
    tmp_path: Path,
) -> None:
    store, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.toml", ENTRIES)
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import threading, time, artoo
            from artoo.schemas import Config, LLMCall
            s = artoo.System.open({str(store)!r}, model={model!r}, workspace={str(ws)!r},
                config=Config(durability="batch", max_parallel=1))
            first = threading.Event()
            s.subscribe(lambda env: isinstance(env.body, LLMCall) and first.set())
            h = s.submit("write made.txt")
            first.wait(20)
            h.pause()
            s.flush(5)
            print("paused", flush=True)
            threading.Event().wait()
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        assert victim.stdout.readline().strip() == "paused"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    answered = sum(isinstance(e.body, LLMCall) for e in all_events(store))
    write_script(tmp_path / "s.toml", ENTRIES[answered:])  # what the killed run did not use
    # the Judge looks for stalls each 0.1 s and calls 1 s of silence one: the pause is longer
    config = Config(durability="none", max_parallel=1, judge={"interval_s": 0.1, "stall_s": 1.0})
    with artoo.System.open(store, model=model, workspace=ws, config=config) as system:
        [handle] = system.resumed
        assert system.pauses.paused(handle.task_id)
        time.sleep(2.5)
        assert not handle.done() and not (ws / "made.txt").exists()
        system.answer(handle.task_id, "resume")
        result = handle.result(30)
        with pytest.raises(ValueError, match="no running task"):
            system.answer(handle.task_id, "pause")
    assert result.status == "success" and result.resumed_from is not None
    events = all_events(store)
    assert sum(isinstance(e.body, LLMCall) for e in events) == len(ENTRIES)
    assert [type(e.body) for e in events if isinstance(e.body, TaskPaused | TaskUnpaused)] == [
        TaskPaused,
        TaskUnpaused,
    ]
    assert sum(isinstance(e.body, TaskResumed) for e in events) == 1
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
    assert _stalls(events) == []
    resumed_at = next(e.seq for e in events if isinstance(e.body, TaskResumed))
    watched = [
        e.body.metrics.get("running", 0.0)
        for e in events
        if isinstance(e.body, JudgeObservation) and e.seq > resumed_at
    ]
    assert watched and max(watched) >= 1.0  # the Judge watched the resumed task
    assert verify(store).ok
    assert rerun(store).ok
    # the audit report's task timeline shows the pause and the resume
    doc = msgspec.json.decode(audit_report(store, fmt="json"), type=AuditDocument)
    [task] = doc.tasks
    kinds = [step.kind for step in task.timeline]
    assert kinds.index("paused") < kinds.index("resumed") < kinds.index("unpaused")


def _env(seq: int, ts: float, body: Any) -> Envelope:
    return Envelope(seq, ts, "t", "host", None, None, body)


def test_restore_counts_the_time_paused_and_not_the_time_stopped() -> None:
    now = [1000.0]
    pauses = _pauses_at(lambda: now[0])
    log = [
        _env(1, 10.0, TaskPaused()),
        _env(2, 14.0, TaskUnpaused()),  # 4 s paused
        _env(3, 20.0, TaskPaused()),  # paused again, then the process stops at 25
        _env(4, 25.0, LLMCall(call_id="c", role="perceiver", tier="brain", model="m")),
    ]
    assert pauses.restore("t", log)  # still paused
    assert pauses.paused("t")
    assert pauses.paused_s("t", 1000.0) == pytest.approx(9.0)  # 4 + 5; not the stop
    assert pauses.paused_s("t", 1003.0) == pytest.approx(12.0)  # and it goes on
    # a pause that spans a stop (resumed after 100 s stopped) counts without the stop
    log = [
        _env(1, 10.0, TaskPaused()),
        _env(2, 112.0, TaskResumed(from_seq=1, stopped_s=100.0)),
        _env(3, 115.0, TaskUnpaused()),
    ]
    assert not pauses.restore("u", log)
    assert pauses.paused_s("u", 2000.0) == pytest.approx(5.0)


def _pauses_at(now: Any) -> Any:
    from artoo._pause import Pauses

    return Pauses(lambda body, task_id: None, now, lambda task_id: False)
