"""The Planner: calibration, a plan that keeps the MUST NOT set, PlanRejected otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.roles.planner import Planner
from artoo.schemas import (
    Check,
    Config,
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


def test_a_plan_whose_checks_or_tools_cannot_be_used_is_asked_again(tmp_path: Path) -> None:
    """A plan whose checks cannot be used is asked again with the reasons; a tool name that
    is no tool ('teleport', 'wc -l') is no reason to ask again: it is dropped for ``shell``
    (``repaired_tools``), in the retry's plan as in the first."""
    bad = {
        "role": "planner",
        "content": {
            "subtasks": [
                {
                    "instruction": "Count the files",
                    "tools": ["teleport"],
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
    good = _plan("List the files", ["glob", "wc -l"])
    model = write_script(tmp_path / "s.toml", [bad, good])
    with RoleHarness(Planner, model=model, workspace=tmp_path) as h:
        h.send(SPEC)
        h.send(_recall())
        (manifest,) = h.wait_for(DispatchManifest)
        calls = [e.body for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
    assert len(calls) == 2  # asked again once, for the checks
    (subtask,) = manifest.body.subtasks
    assert subtask.instruction == "List the files" and subtask.tools == ["glob", "shell"]
    retry = calls[1].request["messages"][-1]["content"]
    assert "outside the workspace" in retry and "count_equals" in retry
    assert "teleport" not in retry  # repaired, not a reason to ask again

    # a plan whose only fault is a tool name is dispatched at once, the name replaced
    model = write_script(tmp_path / "tools.toml", [_plan("Count the files", ["teleport"])])
    with RoleHarness(Planner, model=model, workspace=tmp_path) as h:
        h.send(SPEC)
        h.send(_recall())
        (manifest,) = h.wait_for(DispatchManifest)
        assert len(h.published(LLMCall)) == 1 and h.published(PlanRejected) == []
    assert [s.tools for s in manifest.body.subtasks] == [["shell"]]


def test_a_subtask_check_still_unusable_after_the_retry_drops_the_criterion_not_the_round(
    tmp_path: Path,
) -> None:
    """Real-model bench, tasks 3 and 5: a small model repeated a broken count_matches on its
    retry (once copying the reason into the criterion) and three rounds were rejected until
    the deadline. The unusable criterion goes; the task's checked criteria judge instead."""
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
    spec = TaskSpec(
        text="how many files are in the archive directory?",
        intent="count files",
        slug="count-files",
        criteria=[
            Criterion(
                id="t1",
                text="states the count",
                mode="verifiable",
                check=Check(kind="count_matches", path="archive", value="files"),
            )
        ],
    )
    with RoleHarness(Planner, model=model, workspace=tmp_path) as h:
        h.send(spec)
        h.send(MemoryRecall(space="intent:count-files", entity="env:local", round=0))
        (manifest,) = h.wait_for(DispatchManifest)
        assert h.published(PlanRejected) == []
    (subtask,) = manifest.body.subtasks
    assert [c.id for c in subtask.criteria] == ["s1c2", "t1"]  # the broken one dropped
    assert subtask.criteria[1].check == Check(kind="count_matches", path="archive", value="files")


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


def test_a_plan_that_measures_another_quantity_is_asked_again_then_rejected(
    tmp_path: Path,
) -> None:
    """Bench class A ("the plan replaces the request"), on a request not the bench's: a plan
    that counts the file's lines for a question asking a name is asked again with the
    reason (read from the TaskSpec's kind and shape); a model that repeats it gets a
    PlanRejected, never a dispatched plan."""
    spec = TaskSpec(
        text="Which supplier in ledger/q3.tsv has the largest fee?",
        intent="find the supplier with the largest fee",
        slug="ledger-q3-tsv-fee-largest-supplier",
        kind="question",
        shape="name",
    )
    recall = MemoryRecall(space=f"intent:{spec.slug}", entity="env:local")
    counting = _plan("Run wc -l ledger/q3.tsv and answer with the number of lines", ["shell"])
    serving = _plan(
        "Run python3 to print the supplier of the largest fee in ledger/q3.tsv", ["shell"]
    )
    model = write_script(tmp_path / "s.toml", [counting, serving])
    planned = Config(direct_kinds=[])  # a question's round 0 is the request itself by default
    with RoleHarness(Planner, model=model, config=planned) as h:
        h.send(spec)
        h.send(recall)
        (manifest,) = h.wait_for(DispatchManifest)
        calls = [e.body for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
    assert [s.instruction for s in manifest.body.subtasks] == [
        serving["content"]["subtasks"][0]["instruction"]
    ]
    retry = calls[1].request["messages"][-1]["content"]
    assert "measures the file's lines" in retry and "asks for a name" in retry

    model = write_script(tmp_path / "again.toml", [counting, counting])
    with RoleHarness(Planner, model=model, config=planned) as h:
        h.send(spec)
        h.send(recall)
        (rejected,) = h.wait_for(PlanRejected)
        assert h.published(DispatchManifest) == []
    assert any("serve the request's own quantity" in v for v in rejected.body.violations)
