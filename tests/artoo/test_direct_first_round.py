"""End to end: round 0 of a question or a change is the user's request itself — no
Planner model call, one subtask whose instruction is the request; a question's Executor is
not offered ``write_file``, a change's is offered every tool. ``direct_kinds=[]`` plans
round 0 with the model again. Run on a workspace of the test's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from artoo.replay import rerun
from artoo.schemas import Config, DispatchManifest, FinalResult, LLMCall, SubTask, TaskRequest

from .helpers import CONFIG, all_events, rewrite_event, run_verified

BINS = "bolts\nnuts\nwashers\nhinges\nscrews\nrivets\n"
QUESTION = "how many entries does inventory/bins.txt list?"
CHANGE = "add the line 'pins' to the end of inventory/bins.txt"
NO_ASK = CONFIG


def _workspace(tmp: Path) -> None:
    (tmp / "workspace" / "inventory").mkdir(parents=True)
    (tmp / "workspace" / "inventory" / "bins.txt").write_text(BINS)


def _perceive(kind: str, answer: str = "", criteria: list[Any] | None = None) -> dict[str, Any]:
    return {
        "role": "perceiver",
        "content": {
            "intent": "about the bins",
            "kind": kind,
            "answer": answer,
            "criteria": criteria or [],
        },
    }


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
        _perceive("question", "number"),
        {"role": "executor", "tool_calls": [WC]},
        {"role": "executor", "content": "6 entries."},
    ]  # no planner entry: a planner call would fail the round (script exhausted)
    result, bodies = _run(tmp_path, entries, QUESTION)
    assert (result.status, result.output) == ("success", "6 entries.")  # one call: success
    assert _calls(bodies, "planner") == []
    (manifest,) = [b for b in bodies if isinstance(b, DispatchManifest)]
    assert manifest.round == 0 and "the request itself" in manifest.rationale
    (subtask,) = [b for b in bodies if isinstance(b, SubTask)]
    assert subtask.instruction == QUESTION and "write_file" not in subtask.tools
    first = _calls(bodies, "executor")[0]
    assert "write_file" not in _offered(first) and "shell" in _offered(first)
    assert first.request["messages"][1]["content"].startswith(f"Subtask: {QUESTION}")


def test_a_changes_first_round_is_the_request_with_every_tool(tmp_path: Path) -> None:
    holds = {"kind": "file_contains", "path": "inventory/bins.txt", "value": "pins"}
    write = {
        "name": "write_file",
        "arguments": {"path": "inventory/bins.txt", "content": BINS + "pins\n"},
    }
    entries = [
        _perceive(
            "change", criteria=[{"text": "pins added", "mode": "verifiable", "check": holds}]
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


def _planned() -> list[dict[str, Any]]:
    """A question whose round 0 the (scripted) Planner plans, then counts 6."""
    return [
        _perceive("question", "number"),
        {
            "role": "planner",
            "content": {"subtasks": [{"instruction": "Count the lines of inventory/bins.txt"}]},
        },
        {"role": "executor", "tool_calls": [WC]},
        {"role": "executor", "content": "6 entries."},
    ]


def test_with_no_direct_kinds_round_0_is_planned_by_the_model(tmp_path: Path) -> None:
    config = NO_ASK.model_copy(update={"direct_kinds": []})
    entries = _planned()
    result, bodies = _run(tmp_path, entries, QUESTION, config)
    assert result.status == "success"
    assert len(_calls(bodies, "planner")) == 1
    (subtask,) = [b for b in bodies if isinstance(b, SubTask)]
    assert subtask.instruction.startswith("Count the lines of inventory/bins.txt")


def test_a_log_from_before_direct_kinds_reruns_with_its_planned_first_round(
    tmp_path: Path,
) -> None:
    """A TaskRequest whose logged Config has no ``direct_kinds`` planned round 0 with the
    model: ``--rerun`` takes it as none, so the logged Planner call is served again rather
    than replaced by today's direct first plan (which asks for no such call and stops)."""
    config = NO_ASK.model_copy(update={"direct_kinds": []})
    entries = _planned()
    _workspace(tmp_path)
    _, store = run_verified(tmp_path, entries, QUESTION, config, operator=lambda request: True)
    (request,) = [e for e in all_events(store) if isinstance(e.body, TaskRequest)]
    older = {k: v for k, v in request.body.config.items() if k != "direct_kinds"}
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=older)),
    )
    report = rerun(store)
    assert not report.unanswered, report.unanswered  # the logged planner call was served
    # a field added since the log was written shows at its TaskRequest (a known limit)
    assert report.divergence is not None and report.divergence.kind == "TaskRequest"
    assert "direct_kinds" in str(report.divergence)
    (row,) = report.reran
    assert (row["status"], row["path"]) == (row["recorded_status"], row["recorded_path"])
