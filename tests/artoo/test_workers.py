"""Workers on a PostgreSQL store (``artoo worker``): tasks submitted by a host run in
worker processes, every envelope in one shared log, a dead worker's tasks end once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg")

import artoo
from artoo._store import read_log
from artoo.cli import main
from artoo.eventstore._postgres import ELECTION_CLASS, connect
from artoo.schemas import Config, FinalResult, MegramRecorded, UserRequest
from artoo.testing import start_worker, write_script

from .helpers import PERCEIVE, until

CONFIG = Config(durability="none", max_parallel=2)


def _script(tmp_path: Path, delay_ms: float = 0.0) -> str:
    """A question answered in free text: the request itself is its one round (no Planner
    call), the Executor says hello."""
    executor: dict[str, Any] = {"role": "executor", "times": 0, "content": "hello"}
    if delay_ms:
        executor["delay_ms"] = delay_ms
    return write_script(tmp_path / "s.toml", [PERCEIVE, executor])


def _finals(url: str) -> tuple[list[int], Counter[str], dict[str, FinalResult]]:
    """The log's seqs, FinalResults per task, and each task's (last) FinalResult."""
    with read_log(url) as log:
        envelopes = list(log.read())
    counts: Counter[str] = Counter()
    last: dict[str, FinalResult] = {}
    for env in envelopes:
        if isinstance(env.body, FinalResult):
            counts[env.body.task_id] += 1
            last[env.body.task_id] = env.body
    return [e.seq for e in envelopes], counts, last


def test_without_a_worker_submit_runs_here_and_with_one_it_only_enqueues(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    model = _script(tmp_path)
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as host:
        assert host.fleet is not None and host.fleet.workers() == 0
        here = host.run("say hello")
        assert here.status == "success"
        with artoo.System.open(
            pg_url, model=model, workspace=workspace, config=CONFIG, worker=True, concurrency=2
        ) as worker:
            assert host.fleet.workers() == 1
            handles = [host.submit(f"say hello {i}") for i in range(4)]
            results = [h.result(30) for h in handles]
            assert [r.status for r in results] == ["success"] * 4
            # the worker ran them: its bus logged their UserRequests, the host's did not
            with read_log(pg_url) as log:
                starts = [e for e in log.read() if isinstance(e.body, UserRequest)]
            assert worker.fleet is not None and host.fleet is not None
            assert len(starts) == 5
            for env in starts[1:]:
                assert worker.bus.appended(env.seq) and not host.bus.appended(env.seq)
            fleet = host.fleet
            until(lambda: fleet.queue.counts() == {"done": 5})  # each worker marks its own
    seqs, counts, _ = _finals(pg_url)
    assert seqs == list(range(1, len(seqs) + 1))
    assert sorted(counts.values()) == [1] * 5


def test_memory_is_shared_a_worker_applies_the_others_memory_events(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    model = _script(tmp_path)
    with (
        artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as a,
        artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as b,
    ):
        assert a.run("say hello").status == "success"
        with read_log(pg_url) as log:
            recorded = [e for e in log.read() if isinstance(e.body, MegramRecorded)]
        assert recorded, "a task records megrams"
        assert a.flush(10) and b.flush(10)
        assert a.bus.appended(recorded[0].seq) and not b.bus.appended(recorded[0].seq)
        assert b.megrams.applied_seq >= recorded[-1].seq  # b applied a's events
        theirs = sorted(m.id for m in b.megrams.megrams())
        assert theirs == sorted(m.id for m in a.megrams.megrams())
        assert {e.body.megram.id for e in recorded} <= set(theirs)


def test_one_auditor_and_one_judge_elected_and_taken_over_when_their_system_goes(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    from artoo.actors.roles.auditor import Auditor
    from artoo.actors.roles.judge import Judge

    model = _script(tmp_path)
    first = artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG)
    until(lambda: first.fleet is not None and first.fleet.is_elected)
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as second:
        time.sleep(0.3)  # several campaigns of the second
        assert second.fleet is not None and not second.fleet.is_elected
        roles = {r.role for r in second.runner.running()}
        assert Auditor not in roles and Judge not in roles
        assert {Auditor, Judge} <= {r.role for r in first.runner.running()}
        with pytest.raises(RuntimeError, match="another System"):
            second.audit()
        first.close()
        until(lambda: second.fleet is not None and second.fleet.is_elected)
        assert {Auditor, Judge} <= {r.role for r in second.runner.running()}
        assert second.run("say hello").status == "success"
        report = second.audit()
        assert report.tasks_started >= 1


def test_a_model_call_read_back_by_the_follower_before_its_append_returned_counts_once(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    """A worker's own append commits, then returns: in between, its bus's follower may read
    the group back from the shared log before the writer knows it is its own. A model call
    of a task run here (a routed kind) must still reach the GGS once: FinalResult.cost is
    the log's count of model calls (the race ``replay --verify`` caught under load)."""
    from artoo.schemas import LLMCall

    model = _script(tmp_path)
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as host:
        with artoo.System.open(
            pg_url, model=model, workspace=workspace, config=CONFIG, worker=True
        ) as worker:
            append = worker.bus._append

            def slow(*args: Any) -> Any:  # committed, then late to return
                assigned = append(*args)
                time.sleep(0.15)
                return assigned

            worker.bus._append = slow
            results = [h.result(60) for h in [host.submit(f"say hello {i}") for i in range(2)]]
            assert [r.status for r in results] == ["success"] * 2
    with read_log(pg_url) as log:
        for result in results:
            calls = [e for e in log.read_task(result.task_id) if isinstance(e.body, LLMCall)]
            assert result.cost.model_calls == len(calls) == 2  # perceiver, executor


def test_a_resumed_tasks_history_read_late_from_the_shared_log_is_not_delivered_again(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    """A worker resuming a dead worker's task replays its history (each recorded envelope
    delivered once, by the resume). The bus's follower, reading the shared log behind, may
    come to the dead worker's model calls only after the resume began: those are history,
    not delivered again, or the GGS counts a model call twice (FinalResult.cost)."""
    from artoo.replay._read import TaskLog
    from artoo.schemas import Envelope, LLMCall

    model = _script(tmp_path)
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as system:
        assert system.fleet is not None
        system.fleet.runs = lambda task_id: task_id == "T"  # type: ignore[method-assign]
        call = LLMCall(call_id="c1", role="executor", tier="tool", model="m")
        old = Envelope(7, 1.0, "T", "executor", None, None, call)
        later = Envelope(12, 2.0, "T", "executor", None, None, call)
        assert system._runs_here(old)  # another's call about a task run here: delivered
        request = Envelope(5, 0.5, "T", "system", None, None, UserRequest(text="hi"))
        system.resumer.add(TaskLog("T", [request, old]), now=3.0)
        assert not system._runs_here(old)  # history the resume replays
        assert system._runs_here(later)  # logged after the resume began
        assert not system._runs_here(Envelope(13, 2.0, "U", "executor", None, None, call))
        system.resumer.tasks.pop("T")


WORKERS = 3
TASKS = 60


@pytest.mark.slow
@pytest.mark.parametrize("recovery", ["resume", "abandon"])
def test_three_workers_sixty_tasks_one_killed_every_task_ends_once(
    recovery: str,
    pg_url: str,
    tmp_path: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The killed worker's tasks in flight are taken over by another System, each once:
    resumed from the log (``recovery = "resume"``, the default) or ended ``worker_lost``."""
    model = _script(tmp_path, delay_ms=150)
    settings = ("durability=none", "tools.sandbox=off", f"recovery={recovery}")
    workers = [
        start_worker(pg_url, workspace, model, concurrency=2, lease_s=2.0, settings=settings)
        for _ in range(WORKERS)
    ]
    victim, victim_id = workers[0]
    try:
        config = CONFIG.model_copy(update={"recovery": recovery})
        with artoo.System.open(pg_url, model=model, workspace=workspace, config=config) as host:
            assert host.fleet is not None
            until(lambda: host.fleet is not None and host.fleet.workers() == WORKERS)
            handles = [host.submit(f"say hello {i}") for i in range(TASKS)]
            counts = host.fleet.queue.counts()  # one reading: workers lease between reads
            assert sum(counts.get(k, 0) for k in ("queued", "leased", "done")) == TASKS
            conn = connect(pg_url)

            def freeze_in_flight() -> set[str]:
                """Stop the victim (SIGSTOP: it appends nothing more) once a quarter of the
                tasks ended; its tasks then logged but not ended (else let it go on)."""
                if sum(h.done() for h in handles) < TASKS // 4:
                    return set()
                os.kill(victim.pid, signal.SIGSTOP)
                held = [
                    str(r[0])
                    for r in conn.execute(
                        "SELECT task_id FROM artoo_tasks WHERE worker = %s AND state = 'leased'",
                        (victim_id,),
                    ).fetchall()
                ]
                with read_log(pg_url) as log:
                    ended = {
                        t
                        for t in held
                        if any(isinstance(e.body, FinalResult) for e in log.read_task(t))
                    }
                    started = {t for t in held if any(True for _ in log.read_task(t))}
                flying = started - ended
                if not flying:
                    os.kill(victim.pid, signal.SIGCONT)
                return flying

            in_flight = until(freeze_in_flight, timeout=60)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(10)
            results = {h.task_id: h.result(90) for h in handles}
            # someone holds the election after the kill (taken over if the victim held it)
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s"
                " AND granted",
                (ELECTION_CLASS,),
            ).fetchone()
            assert row is not None and row[0] == 1
            conn.close()
        if recovery == "resume":  # the killed worker's tasks in flight go on elsewhere
            lost = {t for t, r in results.items() if r.resumed_from is not None}
        else:  # ended by another System
            lost = {t for t, r in results.items() if r.reason == "worker_lost"}
        assert lost == in_flight
        assert all(r.status == "success" for t, r in results.items() if t not in lost)
    finally:
        victim.kill()  # whatever happened (it may be stopped)
        for proc, _ in workers[1:]:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in workers:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
    assert [p.returncode for p, _ in workers[1:]] == [0] * (WORKERS - 1)
    seqs, counts, last = _finals(pg_url)
    assert seqs == list(range(1, len(seqs) + 1))  # gapless
    assert set(counts) == set(results) and set(counts.values()) == {1}  # each ends once
    if recovery == "abandon":
        assert all(last[t].reason == "worker_lost" for t in lost)
    capsys.readouterr()
    assert main(["audit", pg_url, "--verify"]) == 0
    assert "the hash chain is intact" in capsys.readouterr().out
    verified = main(["replay", pg_url, "--verify"])
    assert verified == 0, capsys.readouterr().out


def test_a_host_cancels_a_task_a_worker_runs(pg_url: str, tmp_path: Path, workspace: Path) -> None:
    model = _script(tmp_path, delay_ms=3000)
    with (
        artoo.System.open(pg_url, model=model, workspace=workspace, config=CONFIG) as host,
        artoo.System.open(
            pg_url, model=model, workspace=workspace, config=CONFIG, worker=True
        ) as worker,
    ):
        handle = host.submit("say hello")
        assert worker.fleet is not None
        fleet = worker.fleet
        until(lambda: fleet.runs(handle.task_id))
        handle.cancel()
        result = handle.result(20)
        assert (result.status, result.reason) == ("abandon", "cancelled")
        with read_log(pg_url) as log:
            ends = [e for e in log.read() if isinstance(e.body, FinalResult)]
            (end,) = ends
        assert worker.bus.appended(end.seq)  # the worker's GGS ended it, on the host's cancel
    _, counts, _ = _finals(pg_url)
    assert counts == {handle.task_id: 1}


def test_the_elected_judges_ticket_ends_a_task_another_system_runs_there_once(
    pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    """The Judge runs in the elected host; the task runs in a worker. The Judge's
    critical stall ticket reaches the worker's Queen only (auto-cancel: the worker's GGS
    ends the task, once); the host's roles, which do not run it, never act on it."""
    model = _script(tmp_path, delay_ms=8000)
    config = Config.model_validate(
        {
            "durability": "none",
            "max_parallel": 2,
            "judge": {"interval_s": 0.2, "stall_s": 0.3, "stall_critical_s": 0.6},
            "queen": {"auto_cancel": "critical"},
        }
    )
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=config) as host:
        until(lambda: host.fleet is not None and host.fleet.is_elected)
        with artoo.System.open(
            pg_url, model=model, workspace=workspace, config=config, worker=True
        ) as worker:
            handle = host.submit("say hello")
            result = handle.result(30)
            assert (result.status, result.reason) == ("abandon", "cancelled")
            assert result.ticket_id is not None
            with read_log(pg_url) as log:
                envelopes = list(log.read())
            ends = [e for e in envelopes if isinstance(e.body, FinalResult)]
            (end,) = ends
            assert worker.bus.appended(end.seq)  # the worker's GGS ended it
            tickets = [  # raised again when it turns critical: the same ticket
                e
                for e in envelopes
                if type(e.body).__name__ == "EscalationTicket"
                and e.body.ticket_id == result.ticket_id
            ]
            assert tickets and all(host.bus.appended(t.seq) for t in tickets)  # elected Judge


@pytest.mark.slow
def test_a_worker_whose_database_is_gone_stops(
    pg_server: Any, pg_url: str, tmp_path: Path, workspace: Path
) -> None:
    proc, _ = start_worker(pg_url, workspace, _script(tmp_path))
    try:
        name = pg_url.split("?", 1)[0].rsplit("/", 1)[-1]
        admin = connect(pg_url.replace(f"/{name}?", "/postgres?"))
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # its sessions end
        admin.close()
        assert proc.wait(60) == 1
        assert proc.stdout is not None
        assert "cannot be reached" in proc.stdout.read()
    finally:
        proc.kill()
