"""End to end: round 0 of a question or a change is the user's request itself — no
Planner model call, one subtask whose instruction is the request; a question's Executor is
not offered ``write_file``, a change's is offered every tool. Run on a workspace of the
test's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.schemas import Config, DispatchManifest, FinalResult, LLMCall, SubTask

from .helpers import CONFIG, all_events, run_verified

BINS = "bolts\nnuts\nwashers\nhinges\nscrews\nrivets\n"
QUESTION = "how many entries does inventory/bins.txt list?"
CHANGE = "add the line 'pins' to the end of inventory/bins.txt"
NO_ASK = CONFIG


def _workspace(tmp: Path) -> None:
    (tmp / "workspace" / "inventory").mkdir(parents=True)
    (tmp / "workspace" / "inventory" / "bins.txt").write_text(BINS)


def _perceive(kind: str, **reading: Any) -> dict[str, Any]:
    """The Perceiver's reading of the request: its ``kind`` and any other field."""
    return {"role": "perceiver", "content": {"intent": "about the bins", "kind": kind, **reading}}


def _run(
    tmp: Path, entries: list[dict[str, Any]], text: str, config: Config = NO_ASK
) -> tuple[FinalResult, list[Any]]:
    _workspace(tmp)
    result, store = run_verified(tmp, entries, text, config, operator=lambda request: True)
    return result, [e.body for e in all_events(store)]


def _calls(bodies: list[Any], role: str) -> list[LLMCall]:
    return [b for b in bodies if isinstance(b, LLMCall) and b.role == role]


def _offered(call: LLMCall) -> set[str]:
    return {t["name"] for t in call.request.get("tools", [])}


WC = {"name": "shell", "arguments": {"command": "wc -l inventory/bins.txt"}}


def test_a_questions_first_round_is_the_request_with_no_planner_call(tmp_path: Path) -> None:
    entries = [
        _perceive("question", answer="number", count="lines"),
        {"role": "executor", "tool_calls": [WC]},
        {"role": "executor", "content": "6 entries."},
    ]  # no planner entry: a planner call would fail the round (script exhausted)
    result, bodies = _run(tmp_path, entries, QUESTION)
    # code counts the lines of the file the request names: 6, the answer's
    assert (result.status, result.output) == ("accept", "6 entries.")
    assert result.established == "code"
    assert _calls(bodies, "planner") == []
    (manifest,) = [b for b in bodies if isinstance(b, DispatchManifest)]
    assert manifest.round == 0 and "the request itself" in manifest.rationale
    (subtask,) = [b for b in bodies if isinstance(b, SubTask)]
    assert subtask.instruction == QUESTION and "write_file" not in subtask.tools
    first = _calls(bodies, "executor")[0]
    assert "write_file" not in _offered(first) and "shell" in _offered(first)
    assert first.request["messages"][1]["content"].startswith(f"Subtask: {QUESTION}")


def test_a_changes_first_round_is_the_request_with_every_tool(tmp_path: Path) -> None:
    write = {
        "name": "write_file",
        "arguments": {"path": "inventory/bins.txt", "content": BINS + "pins\n"},
    }
    entries = [
        _perceive(
            "change", targets=[{"path": "inventory/bins.txt", "role": "write"}], values=["pins"]
        ),
        {"role": "executor", "tool_calls": [write]},
        {"role": "executor", "content": "Added pins."},
    ]
    result, bodies = _run(tmp_path, entries, CHANGE)
    assert result.status == "accept" and result.established == "code"
    assert _calls(bodies, "planner") == []
    (subtask,) = [b for b in bodies if isinstance(b, SubTask)]
    assert subtask.instruction == CHANGE and subtask.tools == []
    assert {"write_file", "shell", "read_file"} <= _offered(_calls(bodies, "executor")[0])
    assert (tmp_path / "workspace" / "inventory" / "bins.txt").read_text().endswith("pins\n")
