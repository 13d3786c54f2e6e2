"""A real stall, end to end: the Judge raises its ticket to critical, and the Queen's
policy — or the operator — ends the task with one FinalResult naming it (issue 10)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import artoo
from artoo.schemas import Config, EscalationTicket, FinalResult, JudgeConfig, QueenConfig
from artoo.testing import ManualClock, write_script

from .helpers import CONFIG, PERCEIVE, simple_plan, task_events

JUDGE = JudgeConfig(interval_s=10.0, stall_s=60.0, stall_critical_s=240.0)


@pytest.fixture
def stuck(tmp_path: Path) -> Iterator[tuple[str, threading.Event, threading.Event, Any]]:
    """A host tool that blocks until released: the task goes silent while in it."""
    entered, release = threading.Event(), threading.Event()

    def wait_for_release() -> str:
        """Wait until the test lets go."""
        entered.set()
        release.wait(60)
        return "released"

    entries = [
        PERCEIVE,
        simple_plan("Wait for the release"),
        {"role": "executor", "tool_calls": [{"name": "wait_for_release", "arguments": {}}]},
        {"role": "executor", "times": 0, "content": "done"},
    ]
    yield write_script(tmp_path / "stuck.toml", entries), entered, release, wait_for_release
    release.set()


def _stall(system: artoo.System, clock: ManualClock, entered: threading.Event) -> Any:
    handle = system.submit("wait")
    assert entered.wait(10)
    for _ in range(25):  # 250 s of silence, one Judge pass per 10 s
        clock.advance(10.0)
        system.flush(5)
    return handle


def test_the_policy_cancels_a_task_whose_stall_turned_critical(
    tmp_path: Path, workspace: Path, stuck: Any
) -> None:
    model, entered, release, tool = stuck
    clock = ManualClock(start=5000.0)
    config = Config(
        durability="none",
        max_parallel=CONFIG.max_parallel,
        judge=JUDGE,
        queen=QueenConfig(auto_cancel="critical"),
    )
    store = tmp_path / "s"
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock, tools=[tool]
    ) as system:
        handle = _stall(system, clock, entered)
        result = handle.result(10)  # ended by the policy while the tool still blocks
        release.set()
        system.flush(5)
    events = task_events(store, handle.task_id)
    tickets = [e.body for e in events if isinstance(e.body, EscalationTicket)]
    assert [(t.kind, t.severity) for t in tickets] == [("stall", "high"), ("stall", "critical")]
    assert tickets[0].ticket_id == tickets[1].ticket_id
    (final,) = [e.body for e in events if isinstance(e.body, FinalResult)]
    assert (final.status, final.reason, final.ticket_id) == (
        "abandon",
        "cancelled",
        tickets[0].ticket_id,
    )
    assert result == final


def test_a_critical_stall_reaches_the_operator_who_cancels_it(
    tmp_path: Path, workspace: Path, stuck: Any
) -> None:
    model, entered, release, tool = stuck
    clock = ManualClock(start=5000.0)
    told: list[EscalationTicket] = []
    critical = threading.Event()

    def on_ticket(ticket: EscalationTicket) -> None:
        told.append(ticket)
        if ticket.severity == "critical":
            critical.set()

    config = Config(durability="none", max_parallel=CONFIG.max_parallel, judge=JUDGE)
    store = tmp_path / "s"
    with artoo.System.open(
        store,
        model=model,
        workspace=workspace,
        config=config,
        clock=clock,
        tools=[tool],
        inbox=True,
        on_ticket=on_ticket,
    ) as system:
        task_id = _stall(system, clock, entered).task_id
        assert critical.wait(10)
        [item] = [i for i in system.inbox() if i.kind == "ticket"]
        assert (item.severity, item.task_id) == ("critical", task_id)
        system.answer(item.item_id, "cancel")
        release.set()
        system.flush(5)
    assert [t.severity for t in told] == ["high", "critical"]
    (final,) = [e.body for e in task_events(store, task_id) if isinstance(e.body, FinalResult)]
    assert (final.reason, final.ticket_id) == ("cancelled", told[0].ticket_id)
