"""End to end: an answer whose value no tool result shows — a mean the model worked out
from the file it read, which grounding passes — is asked to compute it with a tool that
prints it, in the same conversation (``CorrectionSignal.unbacked``); shown by one command,
it is asked about once more, afresh, and two different commands agreeing make the task
``accept``. A model that keeps stating it unshown ends ``success`` at best. Before, nothing
was asked and a right answer ended ``success``. ``replay --verify`` recomputes each ask;
a log from before ``Config.corroborate_unbacked`` replays as it ran. The request and its
file are the tests' own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from artoo.replay import rerun, timeline, verify
from artoo.report import audit_report
from artoo.schemas import (
    Config,
    CorrectionSignal,
    Envelope,
    FinalResult,
    LLMCall,
    SubTaskOutcome,
    TaskRequest,
)

from .helpers import CONFIG as _CONFIG
from .helpers import all_events, rewrite_event, run_verified

# the derivations themselves: no table check code writes decides (Config.code_table_check:
# tests/artoo/test_table_value_run.py)
CONFIG = _CONFIG.model_copy(update={"code_table_check": False})

MEAN = "what is the average parcel weight in depot/parcels.csv?"
PARCELS = "parcel,kg\np1,12\np2,30\np3,8\np4,17\np5,23\n"  # 90 / 5 = 18
READ = {"name": "read_file", "arguments": {"path": "depot/parcels.csv"}}
AWK = {
    "name": "shell",
    "arguments": {"command": "awk -F, 'NR > 1 { s += $2; n++ } END { print s / n }' "
                  "depot/parcels.csv"},
}  # fmt: skip
AWK_INT = {
    "name": "shell",
    "arguments": {"command": "awk -F, 'NR > 1 { n++; t += $2 } END { printf \"%d\\n\", t / n }' "
                  "depot/parcels.csv"},
}  # fmt: skip


def _entries(*attempts: tuple[dict[str, Any], str]) -> list[Any]:
    """A question about the mean (no check tied to it), whose first round is the request
    itself, and the Executor's attempts: one tool call, then an answer, each."""
    executor: list[dict[str, Any]] = []
    for call, answer in attempts:
        executor += [
            {"role": "executor", "tool_calls": [call]},
            {"role": "executor", "content": answer},
        ]
    perceiver = {
        "role": "perceiver",
        "content": {
            "intent": "average the kg column of depot/parcels.csv",
            "kind": "question",
            "answer": "number",
            "criteria": [],
        },
    }
    return [perceiver, *executor]


def _run(
    tmp: Path, entries: list[dict[str, Any]], config: Config = CONFIG
) -> tuple[FinalResult, list[Envelope]]:
    result, store = run_verified(tmp, entries, MEAN, config, files={"depot/parcels.csv": PARCELS})
    return result, all_events(store)


def _signals(events: list[Envelope]) -> list[CorrectionSignal]:
    return [e.body for e in events if isinstance(e.body, CorrectionSignal)]


def _outcome(events: list[Envelope]) -> SubTaskOutcome:
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    return outcome


def _relog(store: Path, config: dict[str, Any]) -> None:
    """Rewrite the logged TaskRequest's Config as ``config``."""
    (request,) = [e for e in all_events(store) if isinstance(e.body, TaskRequest)]
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=config)),
    )


SHOWN_THEN_AGREED = _entries(
    (READ, "The average is 18 kg."),  # worked out in its head: no result shows 18
    (AWK, "18 kg."),  # the same conversation, asked: one command prints it
    (AWK_INT, "18 kg."),  # a fresh conversation, asked again: another command agrees
)


def test_a_value_no_tool_showed_is_shown_then_derived_again_and_accepted(
    tmp_path: Path,
) -> None:
    result, events = _run(tmp_path, SHOWN_THEN_AGREED)
    assert (result.status, result.established) == ("accept", "code")
    assert result.output == "18 kg."
    shown, again = _signals(events)
    assert (shown.attempt, shown.corroborate, shown.unbacked) == (1, "18", True)
    assert all(v.passed for v in shown.verdicts) and shown.failure_class is None
    assert "18, which no tool result shows" in shown.feedback
    assert (again.attempt, again.corroborate, again.unbacked) == (2, "18", False)
    # the ask to show it continues the conversation, told why; the second derivation
    # starts afresh, nothing of either answer
    calls = [e.body for e in events if isinstance(e.body, LLMCall) and e.body.role == "executor"]
    first, told, fresh = (calls[i].request["messages"] for i in (0, 2, 4))
    assert told[: len(first)] == first and told[-1] == {"role": "user", "content": shown.feedback}
    assert "The average is 18 kg." in str(told)
    assert fresh == first[:2] and "18" not in str(fresh)
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 3, "18")
    assert [(c.tool, c.conversation) for c in outcome.tool_calls] == [
        ("read_file", 0),
        ("shell", 0),
        ("shell", 1),
    ]
    assert [c.stdout for c in outcome.tool_calls[1:]] == ["18\n", "18\n"]
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 2  # two asks (no third could follow)
    (told_log,) = timeline(tmp_path / "store", result.task_id)
    asks = [e.text for e in told_log.entries if e.kind == "CorrectionSignal"]
    assert "attempt 1 passed, asked to compute 18 with a tool" in asks[0]
    assert "attempt 2 passed, asked for a second derivation of 18" in asks[1]
    (task,) = json.loads(audit_report(tmp_path / "store", fmt="json"))["tasks"]
    steps = {(st["kind"], st["text"]) for st in task["timeline"]}
    assert ("corroboration", "asked to compute 18 with a tool") in steps
    assert rerun(tmp_path / "store").ok


def test_a_value_the_model_keeps_stating_unshown_is_not_accepted(tmp_path: Path) -> None:
    """Asked, the model reads the file again and states 18 again, on nothing: the ask is
    not repeated, and the answer ends ``success`` at best, never ``accept``."""
    entries = _entries((READ, "The average is 18 kg."), (READ, "The average is 18 kg."))
    result, events = _run(tmp_path, entries)
    assert result.status != "accept" and result.established == "model"
    (signal,) = _signals(events)
    assert (signal.corroborate, signal.unbacked) == ("18", True)
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 2, "18")
    report = verify(tmp_path / "store")
    assert report.ok and report.checked["corroborate"] == 2


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    """``corroborate_unbacked`` off ran as before — nothing asked, ``success``; a logged
    Config without the field is read so, and giving that answer on is no mismatch; read
    with it on, ``--verify`` finds the ask that should have been made."""
    config = CONFIG.model_copy(update={"corroborate_unbacked": False})
    result, events = _run(tmp_path, _entries((READ, "The average is 18 kg.")), config=config)
    assert (result.status, result.established) == ("success", "model")
    assert _signals(events) == []
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    logged = dict(request.body.config)
    _relog(tmp_path / "store", {k: v for k, v in logged.items() if k != "corroborate_unbacked"})
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 1
    reran = rerun(tmp_path / "store")
    assert not reran.unanswered, reran.unanswered  # no ask made: no attempt the log lacks
    _relog(tmp_path / "store", {**logged, "corroborate_unbacked": True})
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field) for m in report.mismatches] == [("SubTaskOutcome", "corroborate")]
    (found,) = report.mismatches
    assert (found.logged, found.recomputed) == ("", "18")


def test_verify_finds_an_ask_logged_as_the_wrong_kind(tmp_path: Path) -> None:
    """The ask to show 18 logged as a second derivation (``unbacked`` false) is a
    mismatch: the value asked about agrees, the kind of ask does not — and, by that log,
    the second ask asked about the same value twice, which is one too."""
    _run(tmp_path, SHOWN_THEN_AGREED)
    events = all_events(tmp_path / "store")
    env = next(e for e in events if isinstance(e.body, CorrectionSignal))
    rewrite_event(
        tmp_path / "store",
        msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, unbacked=False)),
    )
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field, m.logged, m.recomputed) for m in report.mismatches] == [
        ("CorrectionSignal", "unbacked", False, True),
        ("CorrectionSignal", "corroborate", "18", ""),
    ]


ECHO = {"name": "shell", "arguments": {"command": "echo 18  # depot/parcels.csv"}}
PRINTF = {"name": "shell", "arguments": {"command": "printf '%s\\n' 18  # depot/parcels.csv"}}


def test_a_command_that_prints_the_value_it_was_given_shows_nothing(tmp_path: Path) -> None:
    """Asked to compute 18 with a tool, the model echoes it (naming the file in a comment,
    as the request names it): the echo printed a number it was given, no derivation. Once
    it counted as one call showing 18, a second derivation was asked, a ``printf`` of 18
    agreed and the task ended ``accept``; now 18 is still unbacked, the ask is not
    repeated, and the answer ends ``success`` at best — ``replay --verify`` agrees."""
    entries = _entries(
        (READ, "The average is 18 kg."),
        (ECHO, "18 kg."),
        (PRINTF, "18 kg."),  # what a second ask would have been answered with
    )
    result, events = _run(tmp_path, entries)
    assert result.status != "accept" and result.established == "model"
    (signal,) = _signals(events)
    assert (signal.corroborate, signal.unbacked) == ("18", True)
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 2, "18")
    assert [c.stdout for c in outcome.tool_calls[1:]] == ["18\n"]
    report = verify(tmp_path / "store")
    assert report.ok and report.checked["corroborate"] == 2
