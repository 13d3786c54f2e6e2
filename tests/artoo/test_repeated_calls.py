"""End to end: a call the Executor's conversation already made, with the workspace
unchanged since, is not run again (refusal ``repeated_call``), and a call made the third
time in an attempt — in a row or not — ends it as a doom loop. A kept real-model run
cycled ``echo $decision``, ``echo $action``, ``echo $next_meeting`` through three attempts
of 8 turns each, never the same call three times in a row. ``replay --rerun`` re-executes
such a log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from artoo.replay import rerun
from artoo.schemas import (
    Config,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    ToolCallEnded,
)

from .helpers import CONFIG, all_events, run_verified


def _sandbox_missing() -> str | None:
    if sys.platform != "linux":
        return "the sandbox needs Linux"
    from artoo.actors.tools._sandbox import probe

    return probe()


sandboxed = pytest.mark.skipif(
    _sandbox_missing() is not None, reason="a command's effects are known only in the sandbox"
)

LINES = "how many lines are in notes/todo.txt?"
SANDBOXED = CONFIG.model_copy(
    update={"tools": CONFIG.tools.model_copy(update={"sandbox": "required"})}
)


def _shell(command: str) -> dict[str, Any]:
    return {
        "role": "executor",
        "tool_calls": [{"name": "shell", "arguments": {"command": command}}],
    }


ECHOES = [_shell(f"echo ${name}") for name in ("decision", "action", "next_meeting")]
WC = _shell("wc -l notes/todo.txt")
GREP = _shell("grep -c '' notes/todo.txt")


def _entries(*executor: dict[str, Any]) -> list[dict[str, Any]]:
    """The reading names no unit to count: no code derivation, so the answer rests on two
    derivations (the second asked afresh), as these tests need."""
    perceiver = {
        "role": "perceiver",
        "content": {
            "intent": "count the lines of notes/todo.txt",
            "kind": "question",
            "answer": "number",
        },
    }
    return [perceiver, *executor]


def _run(
    tmp: Path, entries: list[dict[str, Any]], config: Config
) -> tuple[FinalResult, list[Envelope]]:
    result, store = run_verified(tmp, entries, LINES, config)
    return result, all_events(store)


def _results(events: list[Envelope]) -> list[ExecutionResult]:
    return [e.body for e in events if isinstance(e.body, ExecutionResult)]


@sandboxed
def test_a_repeat_is_refused_and_the_attempt_goes_on_to_the_answer(tmp_path: Path) -> None:
    """The repeated ``echo`` is refused, not run; the model then counts, and the fresh
    conversation asked for a second derivation agrees: ``accept``. The rerun serves the
    command made after the refusal (the refused call was never the runner's to serve)."""
    answer = {"role": "executor", "content": "7 lines."}
    entries = _entries(ECHOES[0], ECHOES[1], ECHOES[0], WC, answer, GREP, answer)
    result, events = _run(tmp_path, entries, SANDBOXED)
    assert (result.status, result.established) == ("accept", "code")
    first, fresh = _results(events)
    assert [c.refusal for c in first.tool_calls] == [None, None, "repeated_call", None]
    assert all(c.sandboxed for c in first.tool_calls if c.refusal is None)
    assert first.stop == "answer" and fresh.stop == "answer"
    ended = [e.body for e in events if isinstance(e.body, ToolCallEnded)]
    assert "already made this call" in ended[2].shown and ended[2].call.exit_code is None
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


@sandboxed
def test_a_cycle_of_three_commands_ends_as_a_doom_loop_before_the_turn_cap(
    tmp_path: Path,
) -> None:
    config = SANDBOXED.model_copy(
        update={"max_retries": 0, "ggs": CONFIG.ggs.model_copy(update={"max_replans": 0})}
    )
    result, events = _run(tmp_path, _entries(*ECHOES, *ECHOES, *ECHOES), config)
    assert result.status == "abandon"
    (execution,) = _results(events)
    assert execution.stop == "doom_loop"
    assert [c.refusal for c in execution.tool_calls] == [None] * 3 + ["repeated_call"] * 2
    asked = [e for e in events if isinstance(e.body, LLMCall) and e.body.role == "executor"]
    assert len(asked) == 5 < config.max_turns
    assert rerun(tmp_path / "store").ok
