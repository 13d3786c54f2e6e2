"""The scripted model's traps: what ``match`` searches, and a script that runs out."""

from __future__ import annotations

from pathlib import Path

import artoo
from artoo.actors.llm import LLMRequest, ScriptedBackend
from artoo.testing import write_script

from .helpers import CONFIG, PERCEIVE, simple_plan


def test_match_searches_the_request_not_the_system_prompt() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {"role": "planner", "match": "count", "content": "matched the prompt"},
            {"role": "planner", "content": "the user's request"},
        ]
    )
    request = LLMRequest(
        role="planner",
        tier="brain",
        messages=[
            {"role": "system", "content": "You plan. For a count, use count_matches."},
            {"role": "user", "content": "Task: say hello"},
        ],
    )
    assert backend.complete(request).content == "the user's request"
    counting = LLMRequest(
        role="planner",
        tier="brain",
        messages=[{"role": "system", "content": "x"}, {"role": "user", "content": "count it"}],
    )
    assert backend.complete(counting).content == "matched the prompt"


def test_the_plans_memory_lines_are_in_the_visible_request() -> None:
    from artoo.actors.roles.planner import Calibration, plan_messages
    from artoo.schemas import TaskSpec

    spec = TaskSpec(text="t", intent="i", slug="s")
    calibration = Calibration(should_prefer=["the approach recorded for intent:s"])
    system, user = plan_messages(spec, calibration, None, ["read_file"])
    assert "SHOULD PREFER" in user["content"] and "SHOULD PREFER" not in system["content"]


def test_a_script_that_runs_out_says_so_in_the_final_result(
    tmp_path: Path, workspace: Path
) -> None:
    model = write_script(tmp_path / "s.toml", [PERCEIVE, simple_plan(times=1)])
    with artoo.System.open(tmp_path / "st", model=model, config=CONFIG, workspace=workspace) as s:
        result = s.run("say hello", timeout=60)
    assert result.status == "abandon"
    assert "— the model script ran out: no entry left for executor" in result.summary
