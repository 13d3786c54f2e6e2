"""``load_data`` is offered to the Executor's model only once a call of its conversation
gave a result too large for the context (``ToolCall.spill_ref``).

The class, seen on a real small model: with nothing spilled, it called
``load_data({"filename": "data/sales.csv"})`` about 30 times a run, and names from the
tool's own docstring ("shell_3.txt"), every call failing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.roles.executor import Executor
from artoo.schemas import Config, CorrectionSignal, ExecutionResult, LLMCall, SubTask, ToolsConfig
from artoo.testing import RoleHarness, write_script

SMALL = ToolsConfig(context_limit=256, spill_limit=1024)  # ``seq 1 2000`` spills
BIG = "seq 1 2000"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "executor", "tool_calls": [{"name": name, "arguments": arguments}]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "executor", "content": text}


def _offered(
    tmp_path: Path,
    entries: list[dict[str, Any]],
    config: Config,
    signals: list[CorrectionSignal] = [],  # noqa: B006 - never mutated
) -> tuple[list[list[str]], list[ExecutionResult]]:
    """The tools each executor model call was offered, and the attempts' results."""
    (tmp_path / "ws").mkdir()
    model = write_script(tmp_path / "s.toml", entries)
    with RoleHarness(
        Executor, instance="pair-0", model=model, config=config, workspace=tmp_path / "ws"
    ) as h:
        h.send(SubTask(subtask_id="s1", instruction="count the numbers"), to="pair-0")
        h.wait_for(ExecutionResult)
        for n, signal in enumerate(signals, start=2):
            h.send(signal, to="pair-0")
            h.wait_for(ExecutionResult, n)
        asked = [e.body.request for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
        results = [e.body for e in h.published(ExecutionResult)]
    return [[t["name"] for t in r["tools"]] for r in asked], results


BASE = ("glob", "read_file", "write_file", "shell", "run_tests")
"""The built-in tools but load_data, in the order offered."""


def test_load_data_is_offered_only_after_a_spilled_result(tmp_path: Path) -> None:
    entries = [_call("glob", pattern="*"), _call("shell", command=BIG), _answer("2000")]
    offered, (result,) = _offered(tmp_path, entries, Config(max_turns=4, tools=SMALL))
    spilled = result.tool_calls[1]
    assert result.tool_calls[0].spill_ref is None and spilled.spill_ref is not None
    assert offered == [
        [*BASE],  # nothing saved: nothing to load
        [*BASE],  # a glob's short result
        [*BASE, "load_data"],  # the same attempt
    ]


def test_a_retry_keeps_it_and_a_second_derivation_starts_without(tmp_path: Path) -> None:
    """A retry continues the conversation, which names the saved file; a second
    derivation is a new conversation, which has seen none."""
    entries = [
        _call("shell", command=BIG),
        _answer("2000"),
        _call("glob", pattern="*"),
        _answer("2000"),
        _call("glob", pattern="*"),
        _answer("2000"),
    ]
    signals = [
        CorrectionSignal(subtask_id="s1", feedback="show the count"),
        CorrectionSignal(subtask_id="s1", feedback="again", corroborate="2000"),
    ]
    offered, results = _offered(tmp_path, entries, Config(max_turns=4, tools=SMALL), signals)
    assert [len(r.tool_calls) for r in results] == [1, 1, 1]
    assert ["load_data" in tools for tools in offered] == [False, True, True, True, False, False]
