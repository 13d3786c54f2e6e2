"""The Perceiver: a TaskSpec from a valid answer, a StepFailed (not a crash) otherwise."""

from __future__ import annotations

from pathlib import Path

from artoo.actors.roles.perceiver import Perceiver
from artoo.schemas import StepFailed, TaskRequest, TaskSpec
from artoo.testing import RoleHarness, write_script


def test_a_valid_reading_becomes_a_task_spec(tmp_path: Path) -> None:
    answer = {
        "intent": "Count the Python files",
        "slug": "Count Py Files!",
        "criteria": [{"text": "a number", "mode": "verifiable", "check": {"kind": "exit_code"}}],
    }
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "content": answer}])
    with RoleHarness(Perceiver, model=model) as h:
        h.send(TaskRequest(text="count the python files"))
        (spec,) = h.wait_for(TaskSpec)
    assert spec.body.slug == "count-py-files" and spec.body.intent == "Count the Python files"
    assert [c.id for c in spec.body.criteria] == ["t1"] and spec.body.criteria[0].check


def test_no_valid_reading_is_a_clean_step_failure(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "times": 0, "content": "?"}])
    with RoleHarness(Perceiver, model=model) as h:
        h.send(TaskRequest(text="count"))
        (failed,) = h.wait_for(StepFailed)
        assert h.ref.is_alive()
    assert failed.body.step == "perceive" and failed.body.role == "perceiver"
    assert failed.task_id == "t1"


def test_checks_that_cannot_be_used_are_asked_again_then_dropped(tmp_path: Path) -> None:
    outside = {
        "intent": "Count",
        "criteria": [
            {"text": "x", "mode": "verifiable", "check": {"kind": "file_exists", "path": "/etc"}}
        ],
    }
    model = write_script(
        tmp_path / "s.toml", [{"role": "perceiver", "times": 2, "content": outside}]
    )
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text="count"))
        (spec,) = h.wait_for(TaskSpec)
        calls = [e.body for e in h.recorder.envelopes if type(e.body).__name__ == "LLMCall"]
    (criterion,) = spec.body.criteria
    assert criterion.check is None and criterion.mode == "plausible"  # never a free pass
    assert "outside the workspace" in calls[-1].request["messages"][-1]["content"]
