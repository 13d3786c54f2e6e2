"""The Meta-Validator: fan-in of a round, task criteria, OutcomeSummary or ReplanRequest."""

from __future__ import annotations

from artoo.actors.roles.meta_validator import MetaValidator
from artoo.schemas import (
    Check,
    Criterion,
    DispatchManifest,
    OutcomeSummary,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
)
from artoo.testing import RoleHarness

TASK = Criterion(
    id="t1",
    text="the answer states the number asked",
    mode="verifiable",
    check=Check(kind="answered", shape="number"),
)
SEVEN = ToolCall(tool="read_file", args={"path": "sum.txt"}, output_preview="7")
MANIFEST = DispatchManifest(
    round=0,
    subtasks=[SubTask(subtask_id="a"), SubTask(subtask_id="b", sequence=2)],
    task_criteria=[TASK],
)


def test_a_round_is_summarised_only_once_every_subtask_reported() -> None:
    with RoleHarness(MetaValidator) as h:
        h.send(MANIFEST)
        h.send(SubTaskOutcome(subtask_id="a", output="3 + 4"))
        h.sync()
        assert h.published() == []
        h.send(SubTaskOutcome(subtask_id="b", output="= 7", tool_calls=[SEVEN]))
        (summary,) = h.wait_for(OutcomeSummary)
    assert [v.passed for v in summary.body.task_verdicts] == [True]
    assert [o.subtask_id for o in summary.body.outcomes] == ["a", "b"]


def test_a_failed_task_criterion_asks_for_a_replan() -> None:
    # numbers no tool result shows: the task's check fails, by code
    with RoleHarness(MetaValidator) as h:
        h.send(MANIFEST)
        h.send(SubTaskOutcome(subtask_id="a", output="3"))
        h.send(SubTaskOutcome(subtask_id="b", output="4"))
        (replan,) = h.wait_for(ReplanRequest)
    assert [v.passed for v in replan.body.task_verdicts] == [False]


def test_a_failed_subtasks_claim_never_reaches_the_merged_output() -> None:
    with RoleHarness(MetaValidator) as h:
        h.send(MANIFEST)
        h.send(SubTaskOutcome(subtask_id="a", output="3 + 4 = 7"))
        h.send(SubTaskOutcome(subtask_id="b", status="failed", output="I created report.txt"))
        (replan,) = h.wait_for(ReplanRequest)
    assert replan.body.merged_output == "3 + 4 = 7"  # Law 0: no false claim passes on


def test_a_task_criterion_fails_on_a_number_no_tool_showed() -> None:
    """The task's ``answered`` check (code's, from the reading) traces the number the
    answer states to a tool result of the task: a made-up figure beside a command that
    printed nothing fails; the same answer backed by a tool result passes."""
    manifest = DispatchManifest(round=0, subtasks=[SubTask(subtask_id="a")], task_criteria=[TASK])
    spec = TaskSpec(text="what is the amount for east?", intent="amount", slug="a", kind="question")
    empty = ToolCall(tool="shell", output_preview="exit code: 0")
    shown = ToolCall(tool="read_file", output_preview="east,1300")
    with RoleHarness(MetaValidator) as h:
        h.send(spec)
        h.send(manifest)
        h.send(SubTaskOutcome(subtask_id="a", output="1500", tool_calls=[empty]))
        (replan,) = h.wait_for(ReplanRequest)
    (verdict,) = replan.body.task_verdicts
    assert not verdict.passed and "1500" in verdict.evidence
    assert verdict.signal == "rule" and verdict.failure_class == "logical"
    with RoleHarness(MetaValidator) as h:
        h.send(spec)
        h.send(manifest)
        h.send(SubTaskOutcome(subtask_id="a", output="1300", tool_calls=[shown]))
        (summary,) = h.wait_for(OutcomeSummary)
    assert [v.passed for v in summary.body.task_verdicts] == [True]
