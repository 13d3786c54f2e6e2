"""End to end: a count check reads the count an answer states as a person would
(``Config.count_reads_answer``). Real-model bench (kept store keepm13c): "count the lines
of notes/todo.txt" answered "… with an exit code of 0 …" was read as stating 0, and "how
many .py files are in src?" answered 'The command "find src/**/*.py -maxdepth 0 -type f
| wc -l" returned 3' as stating the option's 0 — right answers failed, three times each.
The request and answers are the tests' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from artoo.replay import verify
from artoo.schemas import TaskRequest

from .helpers import CONFIG, all_events, replays_as_before, rewrite_event, run_verified

ASK = "how many lines are in notes/todo.txt?"
ANSWER = (
    'The command "wc -l notes/todo.txt" ran with exit code 0 and printed the count: '
    "the file has 7 lines."
)


def _entries(answer: str) -> list[dict[str, Any]]:
    wc = {"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}}
    return [
        {"role": "perceiver", "content": {"intent": "count the lines", "kind": "question"}},
        {"role": "executor", "tool_calls": [wc]},
        {"role": "executor", "times": 0, "content": answer},
    ]


def test_an_exit_code_is_not_the_count(tmp_path: Path) -> None:
    result, _ = run_verified(tmp_path, _entries(ANSWER), ASK)
    assert (result.status, result.established) == ("accept", "code")


def test_an_answer_of_two_counts_fails_closed(tmp_path: Path) -> None:
    two = "wc -l printed 7, but the file really has 6 lines."
    result, _ = run_verified(tmp_path, _entries(two), ASK)
    assert result.status != "accept" and result.established != "code"


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    off = CONFIG.model_copy(update={"count_reads_answer": False})
    result, store = run_verified(tmp_path, _entries(ANSWER), ASK, off)
    assert result.status != "accept"  # the old reading: the exit code's 0
    # a rerun serves a workspace check's logged verdict: nothing diverges there …
    assert replays_as_before(store, "count_reads_answer") is None
    # … but verify recomputes it from what the check observed, under the task's Config
    for request in [e for e in all_events(store) if isinstance(e.body, TaskRequest)]:
        config = {**request.body.config, "count_reads_answer": True}
        body = msgspec.structs.replace(request.body, config=config)
        rewrite_event(store, msgspec.structs.replace(request, body=body))
    mismatches = [str(m) for m in verify(store).mismatches]
    assert mismatches and any("the output states 7" in m for m in mismatches), mismatches
