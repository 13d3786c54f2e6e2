"""End to end: a request that names its unit before "count" counts that unit
(``Config.unit_count_phrase``). Real-model bench (kept store keepm13c): "what is the line
count of src/app.py?" had no count check written by code, its plans running ``wc -l
src/app.py`` were rejected as measuring "a count of something else" (the task abandoned),
and, where the model's own ``count_matches`` proved the 3, the Agent-Validator still asked
for a second derivation — three more calls, ending in a doom loop of ``read_file``. The
request and answers are the tests' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.schemas import CorrectionSignal, ExecutionResult

from .helpers import CONFIG, all_events, replays_as_before, run_verified

ASK = "what is the line count of notes/todo.txt?"


def _entries() -> list[dict[str, Any]]:
    wc = {"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}}
    return [
        {"role": "perceiver", "content": {"intent": "count the lines", "kind": "question"}},
        {"role": "executor", "tool_calls": [wc]},
        {"role": "executor", "times": 0, "content": "The line count of notes/todo.txt is 7."},
    ]


def _asks(store: Path) -> list[str]:
    return [
        e.body.corroborate
        for e in all_events(store)
        if isinstance(e.body, CorrectionSignal) and e.body.corroborate
    ]


def test_a_line_count_is_proven_by_the_count_code_writes(tmp_path: Path) -> None:
    result, store = run_verified(tmp_path, _entries(), ASK)
    assert (result.status, result.established) == ("accept", "code")
    assert not _asks(store)  # the count check proves it: no second derivation
    attempts = [e for e in all_events(store) if isinstance(e.body, ExecutionResult)]
    assert len(attempts) == 1


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    off = CONFIG.model_copy(update={"unit_count_phrase": False})
    _result, store = run_verified(tmp_path, _entries(), ASK, off)
    assert _asks(store) == ["7"]  # the old reading: no check tied, a derivation asked
    assert replays_as_before(store, "unit_count_phrase") is not None
