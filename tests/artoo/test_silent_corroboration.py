"""End to end: asked for a second derivation of the 5 ``wc -l`` printed, the fresh
conversation reads the file and answers "There is no subtask to answer." — its verdicts
pass, but it states no number for a how-many question. It derives nothing: the subtask
ends on the answer asked about (``Config.corroborate_keeps_answer``), and the proof sees
``wc -l`` and the listing read afresh as two derivations of 5 — ``accept`` in one round.
Given on instead (the field off, as a log from before it ran), the Meta-Validator's
request check failed the round and the task replanned (the real run: 36 model calls to
``success``). ``replay --verify`` recomputes the choice; a log from before the field
replays as it ran. The request and its file are the real run's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

from artoo.replay import rerun, timeline, verify
from artoo.schemas import (
    Config,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    SubTaskOutcome,
    TaskRequest,
)

from .helpers import CONFIG as _CONFIG
from .helpers import DATA, all_events, rewrite_event, run_verified

CONFIG = _CONFIG.model_copy(update={"code_count_check": False})
"""Its question is a plain count: code would write its count check
(``Config.code_count_check``) and no derivation would be asked for. Off, the answer rests
on its derivations, as these tests need."""

LINES = "how many lines are in notes/meeting.txt?"
MEETING = (
    "attendees: ana, bob, chen\ndecision: ship on friday\naction: ana writes the changelog\n"
    "action: bob fixes the flaky test\nnext meeting: tuesday\n"
)
WC = {"name": "shell", "arguments": {"command": "wc -l notes/meeting.txt"}}
READ = {"name": "read_file", "arguments": {"path": "notes/meeting.txt"}}
ANSWER = "There are 5 lines in notes/meeting.txt."
SILENT = "There is no subtask to answer."
ENTRIES: list[Any] = [
    {
        "role": "perceiver",
        "content": {
            "intent": "count lines in notes/meeting.txt",
            "kind": "question",
            "answer": "number",
            "criteria": [],
        },
    },
    {"role": "executor", "tool_calls": [WC]},
    {"role": "executor", "content": ANSWER},
    {"role": "executor", "tool_calls": [READ]},  # the fresh conversation, asked
    {"role": "executor", "content": SILENT},
]


def _run(tmp: Path, config: Config = CONFIG) -> tuple[FinalResult, list[Envelope]]:
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "notes" / "meeting.txt").write_text(MEETING, encoding="utf-8")
    result, store = run_verified(tmp, ENTRIES, LINES, config)
    return result, all_events(store)


def _outcomes(events: list[Envelope]) -> list[SubTaskOutcome]:
    return [e.body for e in events if isinstance(e.body, SubTaskOutcome)]


def _relog(store: Path, config: dict[str, Any]) -> None:
    """Rewrite the logged TaskRequest's Config as ``config``."""
    (request,) = [e for e in all_events(store) if isinstance(e.body, TaskRequest)]
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=config)),
    )


def test_an_attempt_that_states_no_number_after_the_ask_keeps_the_answer(tmp_path: Path) -> None:
    result, events = _run(tmp_path)
    assert (result.status, result.established) == ("accept", "code")
    assert result.output == ANSWER and result.replans == 0
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert signal.corroborate == "5"
    results = [e.body for e in events if isinstance(e.body, ExecutionResult)]
    assert [(r.attempt, r.output) for r in results] == [(1, ANSWER), (2, SILENT)]
    (outcome,) = _outcomes(events)
    assert (outcome.status, outcome.attempts, outcome.output) == ("matched", 2, ANSWER)
    assert [v.attempt for v in outcome.verdicts] == [1] and outcome.asked == "5"
    assert all(v.passed for v in outcome.history)  # attempt 2 passed: it answered nothing
    assert [(c.tool, c.conversation) for c in outcome.tool_calls] == [
        ("shell", 0),
        ("read_file", 1),
    ]
    report = verify(tmp_path / "store")
    assert report.checked["corroborate_fallback"] == 1
    (told,) = timeline(tmp_path / "store", result.task_id)
    (entry,) = [e for e in told.entries if e.kind == "SubTaskOutcome"]
    assert "matched after 2 attempts, on attempt 1's answer — attempt 2 did not answer" in (
        entry.text
    )
    assert rerun(tmp_path / "store").ok


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    """``corroborate_keeps_answer`` off ran as the real run did: attempt 2's non-answer
    given on, the request check failing the round, a replan (no plan scripted: the task
    ends there, never ``accept``). A logged Config without the field is read so; read with
    it on, ``--verify`` finds the fallback that should have been made."""
    config = CONFIG.model_copy(update={"corroborate_keeps_answer": False})
    result, events = _run(tmp_path, config)
    assert result.status != "accept" and result.replans >= 1
    first = _outcomes(events)[0]
    assert (first.status, first.output, first.reason) == ("matched", SILENT, "")
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    logged = dict(request.body.config)
    _relog(tmp_path / "store", {k: v for k, v in logged.items() if k != "corroborate_keeps_answer"})
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate_fallback"] == 1
    _relog(tmp_path / "store", {**logged, "corroborate_keeps_answer": True})
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field, m.logged, m.recomputed) for m in report.mismatches] == [
        ("SubTaskOutcome", "(fallback)", False, True)
    ]
