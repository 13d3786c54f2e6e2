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
