"""The paper's cost model (§10): one validation call per attempt and per round, so a task
with one subtask is a sequential chain of five model calls, whatever its criteria."""

from __future__ import annotations

from pathlib import Path

import artoo
from artoo.schemas import LLMCall
from artoo.testing import write_script

from .helpers import CONFIG, task_events


def test_a_single_subtask_with_two_plus_two_criteria_is_a_chain_of_five(
    tmp_path: Path, workspace: Path
) -> None:
    crit = [{"text": "is polite"}, {"text": "is short"}]
    entries = [
        {
            "role": "perceiver",
            "content": {"intent": "greet", "slug": "greet", "criteria": crit},
        },
        {
            "role": "planner",
            "content": {"subtasks": [{"instruction": "Say hello", "criteria": crit}]},
        },
        {"role": "executor", "content": "Hello!"},
        {
            "role": "agent_validator",
            "content": {
                "verdicts": [
                    {"criterion": "s1c1", "passed": True, "confidence": 0.9},
                    {"criterion": "s1c2", "passed": True, "confidence": 0.9},
                ]
            },
        },
        {
            "role": "meta_validator",
            "content": {
                "verdicts": [
                    {"criterion": "t1", "passed": True, "confidence": 0.9},
                    {"criterion": "t2", "passed": True, "confidence": 0.95},
                ]
            },
        },
    ]
    store = tmp_path / "s"
    with artoo.System.open(
        store, model=write_script(tmp_path / "s.toml", entries), workspace=workspace, config=CONFIG
    ) as system:
        result = system.run("greet me", timeout=30)
    assert result.status == "success", result.summary  # model-judged: never accept
    assert (result.cost.model_calls, result.cost.sequential_calls) == (5, 5)
    roles = [e.body.role for e in task_events(store, result.task_id) if isinstance(e.body, LLMCall)]
    assert sorted(roles) == [
        "agent_validator",
        "executor",
        "meta_validator",
        "perceiver",
        "planner",
    ]


def test_a_criterion_the_batched_answer_leaves_out_fails_closed(
    tmp_path: Path, workspace: Path
) -> None:
    crit = [{"text": "is polite"}, {"text": "is short"}]
    entries = [
        {"role": "perceiver", "content": {"intent": "greet", "slug": "greet"}},
        {
            "role": "planner",
            "times": 0,
            "content": {"subtasks": [{"instruction": "Say hello", "criteria": crit}]},
        },
        {"role": "executor", "times": 0, "content": "Hello!"},
        {
            "role": "agent_validator",
            "times": 0,
            "content": {"verdicts": [{"criterion": "s1c1", "passed": True, "confidence": 0.9}]},
        },
    ]
    config = CONFIG.model_copy(update={"max_retries": 0})
    with artoo.System.open(
        tmp_path / "s", model=write_script(tmp_path / "s.toml", entries), workspace=workspace,
        config=config,
    ) as system:  # fmt: skip
        result = system.run("greet me", timeout=30)
    assert result.status == "abandon"  # s1c2 never passed: no verdict is not a pass
