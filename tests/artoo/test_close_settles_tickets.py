"""End to end: what is published about a task after its end is logged before the roles
stop. The Judge judges a hop behind the bus, so its tickets about a task that just ended
may come after the FinalResult; the Queen acknowledges each one below ``queen.relay_at``
even then. A close that stopped every role at once let those stop-time tickets reach a
Queen already stopped (or not): a log then lacked the Queen's TicketResolved, or a rerun
of it added one (``first divergence at queen TicketResolved: not in the record``). Here
the Judge is made as late as it can be — it judges nothing until it is asked to, and its
stop waits — so the order is forced, not left to chance."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from artoo.actors.roles.judge import Judge
from artoo.replay import rerun
from artoo.schemas import EscalationTicket, TicketResolved

from .helpers import CONFIG, DATA, all_events, run_verified

APPEND = "append the line 'TODO: call Bob' to notes/todo.txt"


@pytest.fixture
def late_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Judge whose tap hands it nothing and whose timer never judges: it judges only
    when asked (``Settle``) or at its stop, and its stop comes after the other roles'."""

    def pump(self: Judge) -> None:
        while self._tap.get() is not None:
            pass

    stop = Judge.on_stop

    def slow_stop(self: Judge) -> None:
        time.sleep(0.3)  # the Queen is stopped by now
        stop(self)

    monkeypatch.setattr(Judge, "_pump", pump)
    monkeypatch.setattr(Judge, "on_tick", lambda self, now: None)
    monkeypatch.setattr(Judge, "on_stop", slow_stop)


def test_the_queen_acknowledges_the_tickets_raised_after_the_task_ended(
    tmp_path: Path, late_judge: Any
) -> None:
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    (ws / "b.txt").write_text("beta\n")
    todo = (ws / "notes" / "todo.txt").read_text()

    def write(path: str, content: str) -> dict[str, Any]:
        return {"name": "write_file", "arguments": {"path": path, "content": content}}

    # one change to the reading's write target (reversible: no one is asked), one outside
    # the reading's targets that the operator denies: the task replans until its planner's
    # model calls run out, and the Judge has tickets to raise
    reading = {
        "intent": "append a line to the notes",
        "kind": "change",
        "targets": [{"path": "notes/todo.txt", "role": "write"}],
        "values": ["TODO: call Bob"],
    }
    entries: list[dict[str, Any]] = [
        {"role": "perceiver", "content": reading},
        {
            "role": "executor",
            "tool_calls": [
                write("notes/todo.txt", todo + "TODO: call Bob"),
                write("b.txt", "beta\nmore\n"),
            ],
        },
        {"role": "executor", "times": 0, "content": "Done."},
    ]

    _, store = run_verified(tmp_path, entries, APPEND, CONFIG, operator=lambda _r: False)
    assert (ws / "notes" / "todo.txt").read_text().endswith("TODO: call Bob")
    assert (ws / "b.txt").read_text() == "beta\n"  # denied
    events = all_events(store)
    tickets = {e.body.ticket_id: e for e in events if isinstance(e.body, EscalationTicket)}
    mild = [t for t, e in tickets.items() if e.body.severity in ("low", "medium")]
    assert mild, "the scenario raises tickets below queen.relay_at"
    acknowledged = [
        e.body.ticket_id
        for e in events
        if isinstance(e.body, TicketResolved) and e.body.resolution == "acknowledged"
    ]
    assert sorted(acknowledged) == sorted(mild)
    report = rerun(store)
    assert report.ok, str(report.divergence)
    assert not report.unanswered, report.unanswered
