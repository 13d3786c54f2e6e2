"""Budgets enforced end to end: exactly N model calls, then FinalResult(abandon, budget)."""

from __future__ import annotations

from pathlib import Path

import pytest

import artoo
from artoo.schemas import Config, FinalResult, LLMCall
from artoo.testing import write_script

from .helpers import PERCEIVE, task_events

READ = {"name": "read_file", "arguments": {"path": "README.md"}}


def model(tmp_path: Path) -> str:
    """Each task: the Perceiver's reading (round 0 is the request itself: no Planner
    call), the Executor reads README.md, then answers from what it read — 3 calls."""
    return write_script(
        tmp_path / "s.toml",
        [
            PERCEIVE,
            {"role": "executor", "times": 0, "match": "tiny project", "content": "hello"},
            {"role": "executor", "times": 0, "tool_calls": [READ]},
        ],
    )


def calls_of(store: Path, task_id: str) -> tuple[list[LLMCall], list[LLMCall]]:
    calls = [e.body for e in task_events(store, task_id) if isinstance(e.body, LLMCall)]
    return [c for c in calls if c.refused is None], [c for c in calls if c.refused is not None]


@pytest.mark.parametrize("n", [1, 2])
def test_a_budget_of_n_model_calls_makes_exactly_n(tmp_path: Path, workspace: Path, n: int) -> None:
    store = tmp_path / "store"
    with artoo.System.open(store, model=model(tmp_path), workspace=workspace) as system:
        handle = system.submit("say hello", max_model_calls=n)
        result = handle.result(30)
        unlimited = system.run("say hello")
    made, refused = calls_of(store, handle.task_id)
    assert len(made) == n == result.cost.model_calls
    assert [c.refused for c in refused] == ["max_model_calls"]
    assert (result.status, result.reason, result.budget) == ("abandon", "budget", "max_model_calls")
    assert f"max_model_calls = {n}; {n} model calls made" in result.summary
    assert unlimited.status == "success" and unlimited.cost.model_calls == 3
    finals = [e for e in task_events(store, handle.task_id) if isinstance(e.body, FinalResult)]
    assert len(finals) == 1


def test_a_token_budget_stops_the_next_call(tmp_path: Path, workspace: Path) -> None:
    store = tmp_path / "store"
    config = Config(durability="none", max_tokens=1)  # the Config default applies
    with artoo.System.open(
        store, model=model(tmp_path), workspace=workspace, config=config
    ) as system:
        handle = system.submit("say hello")
        result = handle.result(30)
    made, refused = calls_of(store, handle.task_id)
    assert len(made) == 1  # the first call is made; its tokens reach the budget
    assert [c.refused for c in refused] == ["max_tokens"]
    assert (result.reason, result.budget) == ("budget", "max_tokens")
    tokens = result.cost.tokens_in + result.cost.tokens_out
    assert tokens > 1 and f"1 model calls made, {tokens} tokens" in result.summary


def test_a_bad_budget_is_refused_at_submit(tmp_path: Path, workspace: Path) -> None:
    with artoo.System.open(
        tmp_path / "store", model=model(tmp_path), workspace=workspace
    ) as system:
        with pytest.raises(ValueError, match="max_model_calls"):
            system.submit("x", max_model_calls=0)


def test_artoo_run_max_calls(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from artoo.cli import main

    args = ["run", "say hello", "--store", str(tmp_path / "store"), "--model", model(tmp_path)]
    args += ["--workspace", str(workspace), "--max-calls", "1", "--json"]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert (out["reason"], out["budget"], out["cost"]["model_calls"]) == (
        "budget",
        "max_model_calls",
        1,
    )
    with pytest.raises(SystemExit):
        main([*args[:-3], "--max-calls", "0"])
