"""Issue 23, "accept means right", end to end on scripted Systems: a task is accepted only
when the answer is proven right — a Law 1 denial, a fabricated "Done", an answer that
describes the process, a check copied from the request, a number from a failed command
never end ``accept``; ``replay --verify`` recomputes each of these ends."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import artoo
from artoo.replay import verify
from artoo.schemas import Config, FinalResult
from artoo.testing import write_script

from .helpers import CONFIG, DATA


def _run(
    tmp: Path, entries: list[dict[str, Any]], text: str, config: Config = CONFIG
) -> tuple[FinalResult, Path]:
    workspace = tmp / "workspace"
    if not workspace.exists():
        shutil.copytree(DATA / "workspace", workspace)
    model = write_script(tmp / "s.toml", entries)
    with artoo.System.open(tmp / "store", model=model, workspace=workspace, config=config) as s:
        result = s.submit(text).result(30)
        s.flush(5)
    report = verify(tmp / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    return result, tmp / "store"


def _plan(instruction: str, times: int = 0) -> dict[str, Any]:
    return {
        "role": "planner",
        "times": times,
        "content": {"subtasks": [{"instruction": instruction, "sequence": 1}]},
    }


# --------------------------------------------------------------------------- Law 1
def test_a_law1_denial_never_ends_accept_and_the_output_says_what_was_not_done(
    tmp_path: Path,
) -> None:
    said = {"kind": "output_contains", "value": "deleted"}
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "delete notes/todo.txt",
                "kind": "change",
                "criteria": [{"text": "it says deleted", "mode": "verifiable", "check": said}],
            },
        },
        _plan("Delete notes/todo.txt with rm", times=1),
        _plan("Tidy the notes folder"),  # names no blocked target: not rejected
        {
            "role": "executor",
            "tool_calls": [{"name": "shell", "arguments": {"command": "rm notes/todo.txt"}}],
        },
        # the model's false claim: the deletion was denied, the file is there
        {"role": "executor", "times": 0, "content": "I deleted notes/todo.txt."},
    ]
    result, _ = _run(tmp_path, entries, "delete notes/todo.txt")
    assert (tmp_path / "workspace" / "notes" / "todo.txt").exists()
    assert result.law1_denied
    assert result.status not in ("accept", "success")
    assert "I deleted" not in result.output
    assert result.output.startswith("Not done")
    assert "rm notes/todo.txt" in result.output
    assert result.reason == "law1_denied"  # the lie passed its check: the denial ends it


_PASS = {"passed": True, "confidence": 0.95, "evidence": "looks right"}


def _validators_pass(*ids: str) -> list[dict[str, Any]]:
    """Model validators that pass whatever they are shown (the small model's say-so); with
    ``ids``, the Meta-Validator's answer for several task criteria at once."""
    many = {"verdicts": [{"criterion": i, **_PASS} for i in ids]}
    return [
        {"role": "agent_validator", "times": 0, "content": _PASS},
        {"role": "meta_validator", "times": 0, "content": many if ids else _PASS},
    ]


# --------------------------------------------------------------------------- the kind
def test_an_imperative_read_as_a_question_keeps_its_file_check_and_a_fabricated_done_fails(
    tmp_path: Path,
) -> None:
    """The hole: "Do …" was read as a question, its file check dropped, and an invented
    "Done. I created report.txt" accepted with no file. The model's reading (question) and
    code's (no question: no ``?``, no question word) disagree: the stricter duties keep
    the file check, and the file is not there."""
    exists = {"kind": "file_exists", "path": "report.txt"}
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "do the weekly report",
                "kind": "question",
                "criteria": [
                    {"text": "report.txt exists", "mode": "verifiable", "check": exists},
                    {"text": "the report covers the week", "mode": "plausible"},
                ],
            },
        },
        _plan("Write the weekly report"),
        {"role": "executor", "times": 0, "content": "Done. I created report.txt."},
        *_validators_pass("t1", "t2"),
    ]
    result, _ = _run(tmp_path, entries, "Do the weekly report from data/sales.csv in report.txt")
    assert not (tmp_path / "workspace" / "report.txt").exists()
    assert result.status != "accept"


def test_a_change_named_by_the_model_and_seen_by_code_keeps_its_answer_free_of_question_rules(
    tmp_path: Path,
) -> None:
    """The same imperative, read as a change, with the file really written: accepted (the
    stricter duties apply only where the readings disagree)."""
    exists = {"kind": "file_exists", "path": "report.txt"}
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "write the weekly report",
                "kind": "change",
                "criteria": [{"text": "report.txt exists", "mode": "verifiable", "check": exists}],
            },
        },
        _plan("Write the weekly report"),
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo 'week: ok' > report.txt"}}
            ],
        },
        {"role": "executor", "times": 0, "content": "Wrote report.txt."},
    ]
    result, _ = _run(tmp_path, entries, "Do the weekly report in report.txt")
    assert (tmp_path / "workspace" / "report.txt").exists()
    assert result.status == "accept"


# --------------------------------------------------------------------------- the answer
def test_an_answer_that_describes_the_process_does_not_answer_a_question(
    tmp_path: Path,
) -> None:
    """A model validator passes "The command successfully captured the output of the grep
    command…" (the issue's run); the request verdict, by code, does not."""
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "count the TODO lines",
                "kind": "question",
                "answer": "number",
                "criteria": [{"text": "the answer states how many TODO lines there are"}],
            },
        },
        _plan("Count the lines with TODO in notes/todo.txt"),
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "grep -c TODO notes/todo.txt"}}
            ],
        },
        {
            "role": "executor",
            "times": 0,
            "content": "The command successfully captured the output of the grep command.",
        },
        *_validators_pass(),
    ]
    result, _ = _run(tmp_path, entries, "How many lines of notes/todo.txt mention TODO?")
    assert result.status != "accept" and result.status != "success"
