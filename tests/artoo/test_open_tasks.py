"""Finding the tasks a stopped process left open reads the per-task index, not the log:
it agrees with a whole-log scan on any log (property), and on worked examples."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from artoo._recovery import open_tasks, open_tasks_scanned
from artoo.eventstore import EventLog
from artoo.schemas import Envelope, ExecutionResult, FinalResult, UserRequest
from artoo.testing import temporary_store

TASKS = [f"01TASK{i:020d}" for i in range(5)]
_STEP = st.tuples(st.integers(0, 4), st.sampled_from(["start", "step", "end"]))


def _body(task_id: str, kind: str) -> object:
    if kind == "start":
        return UserRequest(text="hi")
    if kind == "end":
        return FinalResult(task_id=task_id, status="accept")
    return ExecutionResult(subtask_id="s", output="x")


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(st.lists(_STEP, min_size=1, max_size=6), max_size=12))
def test_the_index_finds_what_a_scan_finds(groups: list[list[tuple[int, str]]]) -> None:
    with temporary_store() as store, EventLog.open(store / "events", durability="none") as log:
        for group in groups:
            log.append(
                [
                    Envelope(0, 1.0, TASKS[i], "host", None, None, _body(TASKS[i], kind))  # type: ignore[arg-type]
                    for i, kind in group
                ]
            )
        assert open_tasks(log) == open_tasks_scanned(log)


def test_open_tasks_worked_example(tmp_path: Path) -> None:
    a, b, c = TASKS[:3]
    with EventLog.open(tmp_path / "events", durability="none") as log:
        log.append([Envelope(0, 1.0, b, "host", None, None, UserRequest(text="b"))])
        log.append([Envelope(0, 1.0, a, "host", None, None, UserRequest(text="a"))])
        log.append([Envelope(0, 1.0, c, "host", None, None, UserRequest(text="c"))])
        log.append(
            [Envelope(0, 1.0, c, "ggs", None, None, FinalResult(task_id=c, status="accept"))]
        )
        # something logged for c after its end: still ended
        log.append([Envelope(0, 1.0, c, "judge", None, None, ExecutionResult(subtask_id="s"))])
        assert open_tasks(log) == [b, a]  # in start order, not id order
