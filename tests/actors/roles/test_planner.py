"""The Planner: calibration, a plan that keeps the MUST NOT set, PlanRejected otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.roles.planner import Planner
from artoo.schemas import (
    Check,
    Criterion,
    DispatchManifest,
    LLMCall,
    MemoryQuery,
    MemoryRecall,
    PlanDirective,
    PlanRejected,
    StepFailed,
    TaskSpec,
)
from artoo.testing import RoleHarness, write_script

SPEC = TaskSpec(text="delete the log", intent="delete the log", slug="delete-log")


def _plan(instruction: str, tools: list[str]) -> dict[str, Any]:
    return {
        "role": "planner",
        "content": {"subtasks": [{"instruction": instruction, "tools": tools}]},
    }


def _recall(round: int = 0) -> MemoryRecall:
    return MemoryRecall(space="intent:delete-log", entity="env:local", round=round)


def test_a_spec_queries_memory_and_the_recall_yields_a_manifest(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.toml", [_plan("List the logs", ["glob"])])
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        (query,) = h.wait_for(MemoryQuery)
        h.send(_recall())
        (manifest,) = h.wait_for(DispatchManifest)
    assert (query.body.space, query.body.entity) == ("intent:delete-log", "env:local")
    assert [s.instruction for s in manifest.body.subtasks] == ["List the logs"]


def test_plans_that_keep_breaking_the_must_not_set_are_rejected_structurally(
    tmp_path: Path,
) -> None:
    entries = [_plan("rm archive/old.log", ["shell"])] * 2 + [_plan("ok", ["glob"])]
    model = write_script(tmp_path / "s.toml", entries)
    directive = PlanDirective(
        round=1,
        directive="change_path",
        blocked_tools=["shell"],
        blocked_targets=["archive/old.log"],
    )
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        h.wait_for(MemoryQuery)
        h.send(directive)
        h.wait_for(MemoryQuery, 2)
        h.send(_recall(round=1))
        (rejected,) = h.wait_for(PlanRejected)
        assert h.published(DispatchManifest) == [] and h.ref.is_alive()
    body = rejected.body
    assert body.round == 1 and body.tools == ["shell"] and body.targets == ["archive/old.log"]
    assert len(body.violations) == 2 and "shell" in body.must_not


def test_no_valid_plan_is_a_clean_step_failure(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.toml", [{"role": "planner", "times": 0, "content": "?"}])
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        h.send(_recall())
        (failed,) = h.wait_for(StepFailed)
    assert failed.body.step == "plan" and failed.body.round == 0


def test_a_plans_own_checks_are_dropped_and_a_tool_name_repaired_without_a_reask(
    tmp_path: Path,
) -> None:
    """No model writes a criterion: checks a plan adds (here unusable ones) are dropped,
    never a reason to ask again; a tool name that is no tool ('teleport', 'wc -l') is
    dropped for ``shell`` (``repaired_tools``). One model call, the plan dispatched."""
    bad = {
        "role": "planner",
        "content": {
            "subtasks": [
                {
                    "instruction": "Count the files",
                    "tools": ["teleport", "glob", "wc -l"],
                    "criteria": [
                        {
                            "text": "the file is there",
                            "mode": "verifiable",
                            "check": {"kind": "file_exists", "path": "/etc/passwd"},
                        },
                        {
                            "text": "a number",
                            "mode": "verifiable",
                            "check": {"kind": "count_equals", "value": "many"},
                        },
                    ],
                }
            ]
        },
    }
    model = write_script(tmp_path / "s.toml", [bad, _plan("never asked", ["glob"])])
    with RoleHarness(Planner, model=model, workspace=tmp_path) as h:
        h.send(SPEC)
        h.send(_recall())
        (manifest,) = h.wait_for(DispatchManifest)
        assert len(h.published(LLMCall)) == 1 and h.published(PlanRejected) == []
    (subtask,) = manifest.body.subtasks
    assert subtask.instruction == "Count the files" and subtask.tools == ["glob", "shell"]
    assert subtask.criteria == []  # the task (SPEC) has none of code's either


def test_a_plans_own_criteria_never_reach_a_subtask_the_tasks_do(tmp_path: Path) -> None:
    """Real-model bench, tasks 3 and 5: a small model repeated a broken count_matches on its
    retry (once copying the reason into the criterion) and three rounds were rejected until
    the deadline. A plan's criteria are the model's: none reaches the subtask, and the
    task's criteria, which code wrote from the reading, judge it instead."""
    broken = {
        "role": "planner",
        "content": {
            "subtasks": [
                {
                    "instruction": "Run find archive -type f | wc -l",
                    "tools": ["shell"],
                    "criteria": [
                        {
                            "text": "count_matches archive files",
                            "mode": "verifiable",
                            "check": {"kind": "count_matches", "path": "archive", "value": 0},
                        },
                        {"text": "answers with a number", "mode": "plausible"},
                    ],
                }
            ]
        },
    }
    model = write_script(tmp_path / "s.toml", [broken, broken])
    counted = Check(kind="count_matches", path="archive/", value="files")
    spec = TaskSpec(
        text="how many files are in the archive directory?",
        intent="count files",
        slug="count-files",
        criteria=[Criterion(id="t1", text="states the count", mode="verifiable", check=counted)],
    )  # no kind (as a log's reading from before kinds): round 0 is the model's plan
    with RoleHarness(Planner, model=model, workspace=tmp_path) as h:
        h.send(spec)
        h.send(MemoryRecall(space="intent:count-files", entity="env:local", round=0))
        (manifest,) = h.wait_for(DispatchManifest)
        assert h.published(PlanRejected) == [] and len(h.published(LLMCall)) == 1
    (subtask,) = manifest.body.subtasks
    assert [c.id for c in subtask.criteria] == ["t1"] and subtask.criteria[0].check == counted
    assert manifest.body.task_criteria == spec.criteria


def _caution(round: int = 0) -> MemoryRecall:
    return MemoryRecall(
        space="intent:delete-log",
        entity="env:local",
        round=round,
        attention=1.85,
        decision=-0.05,
        action="caution",
    )


def test_an_intent_level_caution_asks_the_operator_once_per_task(tmp_path: Path) -> None:
    """Paper §6.4: Memory's action on the task's intent tag is caution (mixed outcomes):
    before any plan the operator is asked, once; an approval plans, and the next round's
    caution does not ask again."""
    from artoo.schemas import ConfirmationDecision, ConfirmationRequest

    model = write_script(tmp_path / "s.toml", [{**_plan("List the logs", ["glob"]), "times": 0}])
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        h.send(_caution())
        (ask,) = h.wait_for(ConfirmationRequest)
        h.sync()
        assert h.published(DispatchManifest) == [] and h.published(LLMCall) == []
        assert ask.body.gate == "caution" and ask.body.target == "intent:delete-log"
        h.send(ConfirmationDecision(request_id=ask.body.request_id, approved=True))
        h.wait_for(DispatchManifest)
        h.send(PlanDirective(round=1, directive="refine"))
        h.send(_caution(round=1))
        h.wait_for(DispatchManifest, count=2)
        assert len(h.published(ConfirmationRequest)) == 1  # once per task


def test_a_denied_intent_caution_fails_the_round_without_a_model_call(tmp_path: Path) -> None:
    from artoo.schemas import ConfirmationDecision, ConfirmationRequest

    model = write_script(tmp_path / "s.toml", [{**_plan("List the logs", ["glob"]), "times": 0}])
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        h.send(_caution())
        (ask,) = h.wait_for(ConfirmationRequest)
        h.send(ConfirmationDecision(request_id=ask.body.request_id, approved=False))
        (failed,) = h.wait_for(StepFailed)
        h.send(PlanDirective(round=1, directive="refine"))
        h.send(_caution(round=1))
        h.wait_for(StepFailed, count=2)
        assert len(h.published(ConfirmationRequest)) == 1  # not asked again
        assert h.published(LLMCall) == [] and h.published(DispatchManifest) == []
    assert failed.body.step == "caution" and "denied" in failed.body.error
