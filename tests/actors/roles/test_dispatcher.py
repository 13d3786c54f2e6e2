"""The Dispatcher: groups in order on free pairs; a failed group skips the later ones."""

from __future__ import annotations

from artoo.actors.roles.dispatcher import Dispatcher
from artoo.schemas import DispatchManifest, SubTask, SubTaskOutcome
from artoo.testing import RoleHarness

MANIFEST = DispatchManifest(
    round=0,
    subtasks=[
        SubTask(subtask_id="a", sequence=1),
        SubTask(subtask_id="b", sequence=1),
        SubTask(subtask_id="c", sequence=2),
    ],
)


def test_a_group_runs_on_free_pairs_and_the_next_waits_for_it() -> None:
    with RoleHarness(Dispatcher, pairs=("pair-0", "pair-1")) as h:
        h.send(MANIFEST)
        first = h.wait_for(SubTask, 2)
        assert sorted((e.body.subtask_id, e.to) for e in first) == [
            ("a", "pair-0"),
            ("b", "pair-1"),
        ]
        h.send(SubTaskOutcome(subtask_id="a", output="A"))
        h.sync()
        assert len(h.published(SubTask)) == 2  # c waits for b
        h.send(SubTaskOutcome(subtask_id="b", output="B"))
        third = h.wait_for(SubTask, 3)[-1]
    assert third.body.subtask_id == "c" and "A" in third.body.context


def test_a_failed_group_skips_the_later_groups() -> None:
    with RoleHarness(Dispatcher, pairs=("pair-0", "pair-1")) as h:
        h.send(MANIFEST)
        h.wait_for(SubTask, 2)
        h.send(SubTaskOutcome(subtask_id="a", status="failed"))
        h.send(SubTaskOutcome(subtask_id="b"))
        (skipped,) = h.wait_for(SubTaskOutcome)
    assert skipped.body.subtask_id == "c" and skipped.body.status == "skipped"
