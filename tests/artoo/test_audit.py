"""The Auditor in a running System: reports, non-participation, catch-up, recomputation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import msgspec
import pytest

import artoo
from artoo.actors.roles.auditor import compare_reports
from artoo.actors.roles.roster import CONTRACTS
from artoo.actors.runtime.role import Role
from artoo.demo import SCENARIOS, run_scenario
from artoo.eventstore import AuditLogReader
from artoo.schemas import AuditConfig, AuditReport, Config, JudgeObservation, Message
from artoo.testing import ManualClock, write_script

from .helpers import PERCEIVE, all_events

T = TypeVar("T")


def eventually(probe: Callable[[], T | None], timeout: float = 10.0) -> T:
    """Poll ``probe`` (an actor's work on other threads) until it returns a value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"not within {timeout} s")


def hello_model(tmp_path: Path) -> str:
    """Each task: the Perceiver reads a free-text question, its first round (the request
    itself) answers "hello" — ``success``."""
    return write_script(
        tmp_path / "s.toml", [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    )


def test_the_auditor_never_publishes_and_the_demo_reports_recompute_equal(
    tmp_path: Path, workspace: Path
) -> None:
    store = tmp_path / "store"
    for scenario in SCENARIOS:
        assert run_scenario(scenario, store, workspace).ok, scenario.title
    events = all_events(store)
    assert not [e for e in events if e.sender.split("/")[0] == "auditor"]
    reader = AuditLogReader(store / "audit")
    assert reader.verify().ok
    reports = reader.reports()
    assert len(reports) >= len(SCENARIOS)  # each System wrote its open window at close
    assert compare_reports(reports, events, CONTRACTS) == []
    latest = reports[-1]
    assert latest.last_seq == events[-1].seq
    assert latest.tasks_started == len(SCENARIOS)
    assert not latest.boundary_violations  # every real sender keeps to its contract
    # scenario 4 spends its replan budget; its loss never improves
    rules = {c.rule for c in latest.convergence_failures}
    assert rules == {"replan_budget", "loss_not_improving"}


def test_a_recomputation_notices_a_changed_report(tmp_path: Path, workspace: Path) -> None:
    store = tmp_path / "store"
    run_scenario(SCENARIOS[0], store, workspace)
    reports = AuditLogReader(store / "audit").reports()  # type: ignore[attr-defined]
    forged = [msgspec.structs.replace(reports[-1], corrections=reports[-1].corrections + 1)]
    assert compare_reports(forged, all_events(store), CONTRACTS) != []


class Rogue(Role):
    """A test role that publishes outside the Perceiver's Output contract."""

    name: ClassVar[str] = "perceiver"
    publishes: ClassVar[tuple[type[Message], ...]] = (JudgeObservation,)

    def on_start(self) -> None:
        self.publish(JudgeObservation(summary="not mine to say"), task_id=None, cause=None)


def test_a_role_publishing_outside_its_contract_appears_in_the_next_report(
    tmp_path: Path, workspace: Path
) -> None:
    clock = ManualClock(start=3000.0)
    config = Config(durability="none", audit=AuditConfig(window_s=60.0))
    with artoo.System.open(
        tmp_path / "store",
        model=hello_model(tmp_path),
        workspace=workspace,
        config=config,
        clock=clock,
    ) as system:
        system.runner.start(Rogue, "rogue")
        system.bus.publish(JudgeObservation(summary="who am I"), sender="mallory")
        assert system.bus.flush(5)
        assert system.audit_log.reports() == []
        clock.advance(60.0)  # the window [3000, 3060) is over: the tick closes it
        reports = eventually(lambda: system.audit_log.reports())
    (report,) = [r for r in reports if r.complete]
    assert (report.window_start, report.window_end) == (3000.0, 3060.0)
    found = {(v.sender, v.kind, v.rule) for v in report.boundary_violations}
    assert found == {
        ("perceiver/rogue", "JudgeObservation", "outside_contract"),
        ("mallory", "JudgeObservation", "unknown_sender"),
    }


def test_audit_answers_within_three_seconds_during_a_sixteen_subtask_task(
    tmp_path: Path, workspace: Path
) -> None:
    """Round 0 (the request itself) answers nothing; round 1 is the model's plan of
    sixteen parallel subtasks, each answering after 0.4 s."""
    n = 16
    reading = {"intent": "sixteen parts", "kind": "question", "answer": "text"}
    entries: list[dict[str, Any]] = [
        {"role": "perceiver", "content": reading},
        {"role": "executor", "match": "Subtask: sixteen parts", "times": 0, "content": ""},
        {
            "role": "planner",
            "content": {
                "subtasks": [
                    {"instruction": f"Write part {i:02d}", "sequence": 1} for i in range(n)
                ]
            },
        },
    ] + [
        {
            "role": "executor",
            "match": f"Subtask: Write part {i:02d}",
            "content": f"this is part {i:02d}",
            "delay_ms": 400,
        }
        for i in range(n)
    ]
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(durability="none", max_parallel=4)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=config
    ) as system:
        handle = system.submit("sixteen parts")
        during: list[AuditReport] = []
        slowest = 0.0
        while not handle.done():
            start = time.monotonic()
            report = system.audit()
            slowest = max(slowest, time.monotonic() - start)
            if not handle.done():
                during.append(report)
            time.sleep(0.1)
        assert handle.result(60).status == "success"
        final = system.audit()
    assert len(during) >= 5 and slowest < 3.0
    assert all(not r.complete for r in during)
    assert [r.envelopes for r in during] == sorted(r.envelopes for r in during)
    assert final.tasks_ended == {"success": 1} and final.envelopes >= during[-1].envelopes


def test_a_tap_that_drops_is_caught_up_from_the_log(tmp_path: Path, workspace: Path) -> None:
    clock = ManualClock(start=3000.0)
    config = Config(durability="none", audit=AuditConfig(tap_size=1))
    with artoo.System.open(
        tmp_path / "store",
        model=hello_model(tmp_path),
        workspace=workspace,
        config=config,
        clock=clock,
    ) as system:
        assert system.audit().envelopes == 0  # the Auditor has started: its tap is open
        for i in range(500):
            system.bus.publish(JudgeObservation(summary=f"{i}"), sender="host")
        assert system.bus.flush(10)
        report = system.audit()
        assert report.envelopes == system.bus.last_seq == 500
        assert report.live.tap_drops > 0 and report.live.caught_up > 0
        assert len(report.boundary_violations) == 500  # host may not publish these


def test_only_the_auditor_is_given_the_audit_log(tmp_path: Path, workspace: Path) -> None:
    with artoo.System.open(
        tmp_path / "store", model=hello_model(tmp_path), workspace=workspace
    ) as system:
        seats = {
            r.ref.proxy().sender.get(): r.ref.proxy().ctx.get().audit
            for r in system.runner.running()
        }
    assert seats.pop("auditor") is not None
    assert len(seats) > 5 and all(seat is None for seat in seats.values())


def test_a_window_open_at_close_is_completed_by_the_next_session(
    tmp_path: Path, workspace: Path
) -> None:
    clock = ManualClock(start=3000.0)
    config = Config(durability="none", audit=AuditConfig(window_s=60.0))
    store = tmp_path / "store"
    model = hello_model(tmp_path)
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock
    ) as system:
        assert system.run("say hello").status == "success"
    first = AuditLogReader(store / "audit").reports()  # type: ignore[attr-defined]
    assert [r.complete for r in first] == [False]
    clock.advance(10.0)
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock
    ) as system:
        assert system.run("say hello").status == "success"
        clock.advance(60.0)
        eventually(lambda: [r for r in system.audit_log.reports() if r.complete])
    reader = AuditLogReader(store / "audit")
    reports = reader.reports()
    assert reader.verify().ok
    assert [(r.window_start, r.complete) for r in reports] == [(3000.0, False), (3000.0, True)]
    assert reports[1].tasks_started == 2 and reports[1].first_seq == 1
    assert compare_reports(reports, all_events(store), CONTRACTS, config.audit) == []
    # the window length is part of the recomputation: another length, other reports
    assert compare_reports(reports, all_events(store), CONTRACTS) != []


def test_audit_on_a_closed_system_says_so(tmp_path: Path, workspace: Path) -> None:
    system = artoo.System.open(tmp_path / "store", model=hello_model(tmp_path), workspace=workspace)
    system.close()
    with pytest.raises(RuntimeError, match="closed"):
        system.audit()


def test_a_reopened_store_is_audited_from_the_watermark_not_from_seq_1(
    tmp_path: Path, workspace: Path
) -> None:
    from artoo.actors.roles._audit_mark import WATERMARK, load_mark

    clock = ManualClock(start=3000.0)
    config = Config(durability="none", audit=AuditConfig(window_s=60.0))
    store = tmp_path / "store"
    model = hello_model(tmp_path)
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock
    ) as system:
        assert system.audit().live.resumed_from == 1  # a new store: from the start
        for n in range(1, 4):  # three tasks, each in a window of its own, closed
            assert system.run("say hello").status == "success"
            clock.advance(60.0)
            eventually(lambda n=n: len([r for r in system.audit_log.reports() if r.complete]) == n)
        first_last = system.bus.last_seq
    mark = load_mark(store / "audit")
    assert mark is not None and 1 < mark.next_seq <= first_last + 1
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock
    ) as system:
        live = system.audit().live
        assert live.resumed_from == mark.next_seq
        # only what came after the watermark was read again at start (the tail of the
        # first session), not the whole log
        assert live.replayed == first_last - mark.next_seq + 1 < first_last // 2
        assert system.run("say hello").status == "success"
        clock.advance(60.0)
        eventually(lambda: len([r for r in system.audit_log.reports() if r.complete]) == 4)
    reader = AuditLogReader(store / "audit")
    assert reader.verify().ok
    assert compare_reports(reader.reports(), all_events(store), CONTRACTS, config.audit) == []
    assert [r.tasks_started for r in reader.reports() if r.complete] == [1, 1, 1, 1]
    # an unreadable watermark is not trusted: the whole log is replayed, same reports
    (store / "audit" / WATERMARK).write_text("{not json")
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config, clock=clock
    ) as system:
        assert system.audit().live.resumed_from == 1
    assert (
        compare_reports(
            AuditLogReader(store / "audit").reports(), all_events(store), CONTRACTS, config.audit
        )
        == []
    )
