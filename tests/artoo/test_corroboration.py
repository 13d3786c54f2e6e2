"""Issue 23, end to end: an answer to a question that one tool call backs is derived once
more by a different call before its subtask ends (the Agent-Validator asks, once); the
proof then decides — two different calls agreeing is ``accept``, a repeated call or a
second value is ``success`` at best. ``replay --verify`` recomputes each ask."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.replay import rerun, timeline, verify
from artoo.report import audit_report
from artoo.schemas import (
    Config,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    SubTaskOutcome,
    TaskRequest,
)

from .helpers import CONFIG as _CONFIG
from .helpers import all_events, rewrite_event, run_verified

# the derivations themselves: no check code writes (a count's, a table question's) decides
CONFIG = _CONFIG.model_copy(update={"code_count_check": False, "code_table_check": False})
"""These questions are plain counts: code would write their count check
(``Config.code_count_check``), and the derivations these tests ask for would not be
needed. Off, the answer rests on its derivations."""

LINES = "how many lines are in notes/todo.txt?"
WC = {"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}}
GREP = {"name": "shell", "arguments": {"command": "grep -c '' notes/todo.txt"}}
TODO = {"name": "shell", "arguments": {"command": "grep -c TODO notes/todo.txt"}}
READ = {"name": "read_file", "arguments": {"path": "notes/todo.txt"}}


def _entries(*attempts: tuple[dict[str, Any], str], criteria: Sequence[Any] = ()) -> list[Any]:
    """A how-many question (no check tied to it unless ``criteria``), whose first round is
    the request itself (no plan asked for: Config.direct_kinds), and the Executor's
    attempts: one tool call, then an answer, each. No plan is scripted: a round after the
    first finds none (a clean step failure), as a script of one plan did before."""
    executor: list[dict[str, Any]] = []
    for call, answer in attempts:
        executor += [
            {"role": "executor", "tool_calls": [call]},
            {"role": "executor", "content": answer},
        ]
    return [
        {
            "role": "perceiver",
            "content": {
                "intent": "count the lines of notes/todo.txt",
                "kind": "question",
                "answer": "number",
                "criteria": list(criteria),
            },
        },
        *executor,
    ]


def _run(
    tmp: Path,
    entries: list[dict[str, Any]],
    text: str = LINES,
    config: Config = CONFIG,
    operator: Callable[[Any], bool | None] | None = None,
) -> tuple[FinalResult, list[Envelope]]:
    result, store = run_verified(tmp, entries, text, config, operator)
    return result, all_events(store)


def _signals(events: list[Envelope]) -> list[CorrectionSignal]:
    return [e.body for e in events if isinstance(e.body, CorrectionSignal)]


def test_a_second_different_call_that_agrees_makes_the_answer_accepted(tmp_path: Path) -> None:
    entries = _entries((WC, "7 lines."), (GREP, "7 lines."))
    result, events = _run(tmp_path, entries)
    assert result.status == "accept" and result.established == "code"
    (signal,) = _signals(events)
    assert signal.corroborate == "7" and signal.attempt == 1
    assert all(v.passed for v in signal.verdicts) and signal.failure_class is None
    assert "wc -l notes/todo.txt" in signal.feedback
    # the second derivation is a new conversation: the system prompt and the subtask's
    # prompt, as the first attempt began, nothing of the first answer or of the ask
    calls = [e.body for e in events if isinstance(e.body, LLMCall) and e.body.role == "executor"]
    first, fresh = calls[0].request["messages"], calls[2].request["messages"]
    assert [m["role"] for m in fresh] == ["system", "user"] and fresh == first[:2]
    assert fresh[1]["content"] == f"Subtask: {LINES}"  # the request itself, round 0
    assert "7 lines" not in str(fresh) and "second derivation" not in str(fresh)
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.attempts == 2 and len(outcome.tool_calls) == 2
    # its call is the new conversation's; the first attempt's, the first's
    assert [(c.args["command"], c.conversation) for c in outcome.tool_calls] == [
        ("wc -l notes/todo.txt", 0),
        ("grep -c '' notes/todo.txt", 1),
    ]
    # the replay tells it as a request, not a failure; verify recomputed the ask
    report = verify(tmp_path / "store")
    # the ask, and the choice not to ask again (the fresh conversation agreed on 7)
    assert report.checked["corroborate"] == 2
    (told,) = timeline(tmp_path / "store", result.task_id)
    (entry,) = [e for e in told.entries if e.kind == "CorrectionSignal"]
    assert "attempt 1 passed, asked for a second derivation of 7" in entry.text
    assert "retry" not in entry.text
    (task,) = json.loads(audit_report(tmp_path / "store", fmt="json"))["tasks"]
    steps = {(st["kind"], st["text"]) for st in task["timeline"]}
    assert ("corroboration", "asked for a second derivation of 7") in steps
    assert rerun(tmp_path / "store").ok


@pytest.mark.parametrize(
    ("attempts", "asked"),
    [
        (((WC, "7 lines."), (WC, "7 lines.")), ["7"]),
        # another value: asked about too, and the third conversation runs the same command
        (((WC, "7 lines."), (TODO, "4 lines."), (TODO, "4 lines.")), ["7", "4"]),
    ],
    ids=["the-same-call", "a-call-that-disagrees"],
)
def test_a_repeated_call_or_a_disagreeing_one_is_never_accepted(
    tmp_path: Path, attempts: tuple[tuple[dict[str, Any], str], ...], asked: list[str]
) -> None:
    result, events = _run(tmp_path, _entries(*attempts))
    assert result.status == "success" and result.established == "model"
    assert result.output == attempts[-1][1]
    # asked about each value once: the same value again, one call's too, is not
    assert [s.corroborate for s in _signals(events)] == asked
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "matched" and outcome.attempts == len(attempts)
    assert outcome.asked == asked[-1]


def test_a_count_tied_to_the_question_is_not_asked_about(tmp_path: Path) -> None:
    lines = {"kind": "count_matches", "path": "notes/todo.txt", "value": "lines"}
    counted = [{"text": "states the count", "mode": "verifiable", "check": lines}]
    result, events = _run(tmp_path, _entries((WC, "7 lines."), criteria=counted))
    assert result.status == "accept" and result.established == "code"
    assert _signals(events) == []


def test_a_change_is_never_asked_about(tmp_path: Path) -> None:
    holds = {"kind": "file_contains", "path": "count.txt", "value": "7"}
    write = {"name": "write_file", "arguments": {"path": "count.txt", "content": "7\n"}}
    entries: list[dict[str, Any]] = [
        {
            "role": "perceiver",
            "content": {
                "intent": "write the line count to count.txt",
                "kind": "change",
                "criteria": [{"text": "count.txt holds 7", "mode": "verifiable", "check": holds}],
            },
        },
        {"role": "planner", "content": {"subtasks": [{"instruction": "Write 7 to count.txt"}]}},
        {"role": "executor", "tool_calls": [WC]},
        {"role": "executor", "tool_calls": [write]},
        {"role": "executor", "content": "Wrote 7 to count.txt."},
    ]
    result, events = _run(tmp_path, entries, "Write the line count of notes/todo.txt to count.txt")
    assert result.status == "accept" and _signals(events) == []


def test_switched_off_one_call_ends_success_with_nothing_asked(tmp_path: Path) -> None:
    config = CONFIG.model_copy(update={"corroborate": False})
    result, events = _run(tmp_path, _entries((WC, "7 lines.")), config=config)
    assert result.status == "success" and result.established == "model"
    assert _signals(events) == []
    assert [e.body.attempt for e in events if isinstance(e.body, ExecutionResult)] == [1]


def test_a_log_from_before_the_switch_replays_as_it_ran(tmp_path: Path) -> None:
    """A TaskRequest whose logged Config has no ``corroborate`` ran without it: ``--verify``
    takes it as off, so the one-call answer it gave on is no mismatch."""
    config = CONFIG.model_copy(update={"corroborate": False})
    result, events = _run(tmp_path, _entries((WC, "7 lines.")), config=config)
    assert result.status == "success"
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    older = {k: v for k, v in request.body.config.items() if k != "corroborate"}
    rewrite_event(
        tmp_path / "store",
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=older)),
    )
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 0


# ---- the attempt after the ask fails: the earlier answer that passed holds (fail closed)
def _asked_then(*calls: dict[str, Any], answer: str | None = None) -> list[Any]:
    """A one-call answer of 7 that passed, asked about; then an attempt that makes
    ``calls`` (one a turn) and, with ``answer``, answers."""
    tail = [{"role": "executor", "tool_calls": [call]} for call in calls]
    if answer is not None:
        tail.append({"role": "executor", "content": answer})
    return [*_entries((WC, "7 lines.")), *tail]


def _fallback(events: list[Envelope]) -> SubTaskOutcome:
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "matched" and outcome.attempts == 2
    assert outcome.output == "7 lines." and outcome.failure_class is None
    assert [v.attempt for v in outcome.verdicts] == [1] and all(v.passed for v in outcome.verdicts)
    assert [v.attempt for v in outcome.history] == [1, 2] and not outcome.history[1].passed
    (signal,) = _signals(events)  # the ask; no retry after the attempt that failed
    assert signal.corroborate == "7"
    results = [e.body for e in events if isinstance(e.body, ExecutionResult)]
    assert [r.attempt for r in results] == [1, 2] and not results[1].ok
    assert outcome.tool_calls == [c for r in results for c in r.tool_calls]
    return outcome


@pytest.mark.parametrize(
    ("calls", "config"),
    [
        ((WC, WC, WC), CONFIG),
        ((WC, WC), CONFIG.model_copy(update={"max_turns": 2})),
    ],
    ids=["doom-loop", "turn-cap"],
)
def test_an_ask_whose_next_attempt_fails_gives_on_the_answer_that_passed(
    tmp_path: Path, calls: tuple[dict[str, Any], ...], config: Config
) -> None:
    """The second derivation ends in a doom loop or at the turn cap: the subtask is matched
    on the first answer (one call's word still: success, not accept), never retried into a
    failure and a replan; ``replay --verify`` recognises the fallback."""
    result, events = _run(tmp_path, _asked_then(*calls), config=config)
    assert result.status == "success" and result.established == "model"
    assert result.output == "7 lines." and result.replans == 0
    _fallback(events)
    report = verify(tmp_path / "store")
    assert report.checked["corroborate_fallback"] == 1
    (told,) = timeline(tmp_path / "store", result.task_id)
    (entry,) = [e for e in told.entries if e.kind == "SubTaskOutcome"]
    assert "on attempt 1's answer" in entry.text
    assert rerun(tmp_path / "store").ok


@pytest.mark.parametrize(
    ("again", "status", "established"),
    [(GREP, "accept", "code"), (TODO, "success", "model")],
    ids=["a-different-call-agrees", "a-different-call-disagrees"],
)
def test_an_ask_whose_next_attempt_fails_after_another_call_is_held_to_the_proof(
    tmp_path: Path, again: dict[str, Any], status: str, established: str
) -> None:
    """The second attempt ran a different command, then hit the turn cap: the first
    answer holds, and the proof decides — accept only when that other call backs its 7
    (two different calls agree), success when it printed another number."""
    config = CONFIG.model_copy(update={"max_turns": 2})
    result, events = _run(tmp_path, _asked_then(again, again), config=config)
    assert (result.status, result.established) == (status, established)
    assert result.output == "7 lines."
    assert again in [{"name": c.tool, "arguments": c.args} for c in _fallback(events).tool_calls]


def test_a_law1_denial_after_the_ask_still_fails_the_subtask(tmp_path: Path) -> None:
    """A denial is never given on: the subtask fails as any denial fails it."""
    rm = {"name": "shell", "arguments": {"command": "rm archive/old.log"}}
    result, events = _run(
        tmp_path, _asked_then(rm, answer="7 lines."), operator=lambda request: False
    )
    assert result.status not in ("accept", "success") and result.law1_denied
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "failed" and outcome.attempts == 2
    assert outcome.failure_class == "environmental"
    assert [v.attempt for v in outcome.verdicts] == [2]
    assert verify(tmp_path / "store").checked["corroborate_fallback"] == 1


def test_verify_finds_a_fallback_that_does_not_hold(tmp_path: Path) -> None:
    """A fallback outcome whose answer is not the earlier attempt's is a mismatch."""
    _run(tmp_path, _asked_then(WC, WC, WC))
    events = all_events(tmp_path / "store")
    (env,) = [e for e in events if isinstance(e.body, SubTaskOutcome)]
    rewrite_event(
        tmp_path / "store",
        msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, output="8 lines.")),
    )
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field) for m in report.mismatches] == [("SubTaskOutcome", "output")]


# ---- the right answer comes on the last attempt: the ask needs no retry left
def _right_on_the_last_attempt(*calls: dict[str, Any], answer: str | None = None) -> list[Any]:
    """Attempts 1..``max_retries`` (2) state 12 with no tool call (ungrounded: each retried); the
    last the retries allow counts the lines with one call (7, right); then the fresh
    conversation makes ``calls`` (one a turn) and, with ``answer``, answers."""
    perceiver, *executor = _entries((WC, "7 lines."))
    unbacked = [{"role": "executor", "content": "12 lines."} for _ in range(CONFIG.max_retries)]
    tail: list[Any] = [{"role": "executor", "tool_calls": [call]} for call in calls]
    if answer is not None:
        tail.append({"role": "executor", "content": answer})
    return [perceiver, *unbacked, *executor, *tail]


def test_a_pass_on_the_last_attempt_is_still_asked_about_and_accepted(tmp_path: Path) -> None:
    """The real run's shape: two unbacked answers rejected, the third reads the file and
    is right. The ask for a second derivation is no retry: it follows the last attempt
    too, and a different call that agrees makes the task accept."""
    result, events = _run(tmp_path, _right_on_the_last_attempt(GREP, answer="7 lines."))
    assert result.status == "accept" and result.established == "code"
    assert result.output == "7 lines."
    signals = _signals(events)
    assert [(s.attempt, s.corroborate) for s in signals] == [(1, ""), (2, ""), (3, "7")]
    results = [e.body for e in events if isinstance(e.body, ExecutionResult)]
    assert [r.attempt for r in results] == [1, 2, 3, 4]
    assert [c.conversation for c in results[3].tool_calls] == [1]  # a fresh conversation
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "matched" and outcome.attempts == 4
    report = verify(tmp_path / "store")
    assert report.checked["corroborate"] == 2  # the ask; not asking again (7 agreed)
    assert rerun(tmp_path / "store").ok


@pytest.mark.parametrize(
    ("answer", "output"),
    [("4 lines.", "4 lines."), (None, "7 lines.")],
    ids=["it-answers-4", "it-hits-the-turn-cap"],
)
def test_a_pass_on_the_last_attempt_asked_about_and_disagreed_with_ends_success(
    tmp_path: Path, answer: str | None, output: str
) -> None:
    """The fresh conversation counts another thing (4): answered, its one-call answer is
    asked about in turn (no retry is needed for that either), and a third conversation
    that counts the same way is given on; cut off at the turn cap, the last attempt's 7
    holds (the fallback). Neither is accept, neither is retried (no retry was left, nor
    is one ever after an ask)."""
    if answer is None:  # two turns, both counting TODOs: the turn cap
        config, entries = CONFIG.model_copy(update={"max_turns": 2}), (TODO, TODO)
    else:  # the third conversation counts the TODOs again
        config, entries = CONFIG, (TODO,)
    script = _right_on_the_last_attempt(*entries, answer=answer)
    if answer is not None:
        script += [
            {"role": "executor", "tool_calls": [TODO]},
            {"role": "executor", "content": answer},
        ]
    result, events = _run(tmp_path, script, config=config)
    assert (result.status, result.established) == ("success", "model")
    assert result.output == output and result.replans == 0
    assert [s.corroborate for s in _signals(events)] == ["", "", "7", *(["4"] if answer else [])]
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "matched" and outcome.attempts == (5 if answer else 4)
    assert [v.attempt for v in outcome.verdicts] == [5 if answer else 3]
    if answer is None:
        assert verify(tmp_path / "store").checked["corroborate_fallback"] == 1


def test_switched_to_the_old_rule_a_pass_on_the_last_attempt_is_not_asked_about(
    tmp_path: Path,
) -> None:
    """``corroborate_after_last_retry`` off: the ask is one of the retries, none is left
    after the last attempt, and its one-call answer ends success."""
    config = CONFIG.model_copy(update={"corroborate_after_last_retry": False})
    result, events = _run(tmp_path, _right_on_the_last_attempt(), config=config)
    assert (result.status, result.established) == ("success", "model")
    assert [s.corroborate for s in _signals(events)] == ["", ""]
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    assert outcome.status == "matched" and outcome.attempts == 3


def test_a_log_from_before_the_last_attempt_ask_replays_by_the_old_rule(tmp_path: Path) -> None:
    """A TaskRequest whose logged Config has no ``corroborate_after_last_retry`` ran when
    the ask was one of the retries: ``--verify`` and ``--rerun`` take it as off, so the
    last attempt's one-call answer it gave on is no mismatch."""
    config = CONFIG.model_copy(update={"corroborate_after_last_retry": False})
    _run(tmp_path, _right_on_the_last_attempt(), config=config)
    events = all_events(tmp_path / "store")
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    older = {k: v for k, v in request.body.config.items() if k != "corroborate_after_last_retry"}
    rewrite_event(
        tmp_path / "store",
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=older)),
    )
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 0  # no ask could follow the last attempt then
    reran = rerun(tmp_path / "store")
    assert not reran.unanswered, reran.unanswered  # no ask made: no attempt the log lacks
    # a field added since the log was written shows at its TaskRequest (a known limit)
    assert reran.divergence is not None and reran.divergence.kind == "TaskRequest"
    assert "corroborate_after_last_retry" in str(reran.divergence)
    (row,) = reran.reran
    assert (row["status"], row["path"]) == (row["recorded_status"], row["recorded_path"])


def test_verify_finds_an_ask_the_last_attempt_should_have_made(tmp_path: Path) -> None:
    """Under the new rule, the old rule's outcome (no ask after the last attempt) is a
    mismatch: ``--verify`` recomputes the ask with no retry left."""
    config = CONFIG.model_copy(update={"corroborate_after_last_retry": False})
    _run(tmp_path, _right_on_the_last_attempt(), config=config)
    events = all_events(tmp_path / "store")
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    newer = {**request.body.config, "corroborate_after_last_retry": True}
    rewrite_event(
        tmp_path / "store",
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=newer)),
    )
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field) for m in report.mismatches] == [("SubTaskOutcome", "corroborate")]


# ---- the fresh conversation corrects the first answer: its value is asked about in turn
TOTAL = "what is the total of the amount column in data/sales.csv?"
WC_SALES = {"name": "shell", "arguments": {"command": "wc -l < data/sales.csv"}}
READ_SALES = {"name": "read_file", "arguments": {"path": "data/sales.csv"}}
HEAD_SALES = {"name": "shell", "arguments": {"command": "head -1 data/sales.csv"}}
BYTES_SALES = {"name": "shell", "arguments": {"command": "wc -c < data/sales.csv"}}


def _corrected(*third: dict[str, Any], answer: str | None = None) -> list[Any]:
    """The real run's shape: attempt 1 counts the lines of data/sales.csv (5) and answers
    that as the total, on one command's word; the first fresh conversation reads the file
    (a listing) and answers 4250, right; then a second fresh conversation makes ``third``
    (one a turn) and, with ``answer``, answers."""
    perceiver: dict[str, Any] = {
        "role": "perceiver",
        "content": {
            "intent": "sum the amount column of data/sales.csv",
            "kind": "question",
            "answer": "number",
            "criteria": [],
        },
    }
    tail: list[Any] = [{"role": "executor", "tool_calls": [call]} for call in third]
    if answer is not None:
        tail.append({"role": "executor", "content": answer})
    return [
        perceiver,
        {"role": "executor", "tool_calls": [WC_SALES]},
        {"role": "executor", "content": "The total is 5."},
        {"role": "executor", "tool_calls": [READ_SALES]},
        {"role": "executor", "content": "The total is 4250."},
        *tail,
    ]


def _outcome(events: list[Envelope]) -> SubTaskOutcome:
    (outcome,) = [e.body for e in events if isinstance(e.body, SubTaskOutcome)]
    return outcome


def test_a_corrected_answer_read_again_afresh_is_accepted(tmp_path: Path) -> None:
    """The fresh conversation's 4250 stands on one reading (the value asked about was 5):
    it is asked about in a second fresh conversation, which reads the file and agrees —
    two independent readings of the value asked about, accept."""
    result, events = _run(tmp_path, _corrected(READ_SALES, answer="4250"), TOTAL)
    assert (result.status, result.established) == ("accept", "code")
    assert result.output == "4250"
    signals = _signals(events)
    assert [(s.attempt, s.corroborate) for s in signals] == [(1, "5"), (2, "4250")]
    assert all(v.passed for s in signals for v in s.verdicts)
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 3, "4250")
    assert [c.conversation for c in outcome.tool_calls] == [0, 1, 2]  # each afresh
    # the second ask's conversation sees nothing of either answer
    calls = [e.body for e in events if isinstance(e.body, LLMCall) and e.body.role == "executor"]
    first, third = calls[0].request["messages"], calls[4].request["messages"]
    assert third == first[:2] and "4250" not in str(third)
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 2  # two asks (no third could follow)
    assert report.checked["corroborate_fallback"] == 2
    (told,) = timeline(tmp_path / "store", result.task_id)
    asks = [e.text for e in told.entries if e.kind == "CorrectionSignal"]
    assert "attempt 2 passed, asked for a second derivation of 4250" in asks[1]
    assert rerun(tmp_path / "store").ok


@pytest.mark.parametrize(
    ("third", "answer"),
    [((READ_SALES,), "1300"), ((BYTES_SALES,), "The total is 54.")],
    ids=["it-reads-another-value", "it-computes-another-value"],
)
def test_a_corrected_answer_the_third_conversation_disagrees_with_is_not_accepted(
    tmp_path: Path, third: tuple[dict[str, Any], ...], answer: str
) -> None:
    """The second fresh conversation answers something else: it passed, so it is given on
    (no third ask: two at most), and the value asked about (4250) is not the one it
    states — success at best, never accept."""
    result, events = _run(tmp_path, _corrected(*third, answer=answer), TOTAL)
    assert result.status != "accept" and result.established != "code"
    assert result.output == answer
    assert [s.corroborate for s in _signals(events)] == ["5", "4250"]
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 3, "4250")
    assert [v.attempt for v in outcome.verdicts] == [3]


def test_a_corrected_answer_whose_third_conversation_fails_holds_on_one_reading(
    tmp_path: Path,
) -> None:
    """The second fresh conversation hits the turn cap: the subtask ends on the attempt
    asked of last (the corrected 4250, attempt 2), with every call — one reading of it
    still, success."""
    config = CONFIG.model_copy(update={"max_turns": 2})
    result, events = _run(tmp_path, _corrected(HEAD_SALES, HEAD_SALES), TOTAL, config=config)
    assert (result.status, result.established) == ("success", "model")
    assert result.output == "The total is 4250."
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 3, "4250")
    assert [v.attempt for v in outcome.verdicts] == [2]
    assert [v.attempt for v in outcome.history] == [1, 2, 3]
    assert len(outcome.tool_calls) == 4
    report = verify(tmp_path / "store")
    assert report.checked["corroborate_fallback"] == 2
    (told,) = timeline(tmp_path / "store", result.task_id)
    (entry,) = [e for e in told.entries if e.kind == "SubTaskOutcome"]
    assert "on attempt 2's answer" in entry.text


def test_one_ask_a_subtask_gives_the_corrected_answer_on(tmp_path: Path) -> None:
    """``corroborate_asks`` 1, the rule before: the corrected 4250 is given on as it is,
    on one reading — success, never accept (the real run)."""
    config = CONFIG.model_copy(update={"corroborate_asks": 1})
    result, events = _run(tmp_path, _corrected(), TOTAL, config=config)
    assert (result.status, result.established) == ("success", "model")
    assert result.output == "The total is 4250."
    assert [s.corroborate for s in _signals(events)] == ["5"]
    outcome = _outcome(events)
    assert (outcome.status, outcome.attempts, outcome.asked) == ("matched", 2, "5")


def _relog(store: Path, config: dict[str, Any]) -> None:
    """Rewrite the logged TaskRequest's Config as ``config`` (the old one given)."""
    events = all_events(store)
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=config)),
    )


def test_a_log_from_before_the_second_ask_replays_by_the_old_rule(tmp_path: Path) -> None:
    """A TaskRequest whose logged Config has no ``corroborate_asks`` ran when a subtask was
    asked once at most: ``--verify`` and ``--rerun`` read it as 1, so the corrected value
    it gave on is no mismatch."""
    config = CONFIG.model_copy(update={"corroborate_asks": 1})
    _run(tmp_path, _corrected(), TOTAL, config=config)
    (request,) = [e for e in all_events(tmp_path / "store") if isinstance(e.body, TaskRequest)]
    _relog(
        tmp_path / "store",
        {k: v for k, v in request.body.config.items() if k != "corroborate_asks"},
    )
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["corroborate"] == 1  # the one ask; no choice after it then
    reran = rerun(tmp_path / "store")
    assert not reran.unanswered, reran.unanswered  # no second ask: no attempt the log lacks
    assert reran.divergence is not None and reran.divergence.kind == "TaskRequest"
    assert "corroborate_asks" in str(reran.divergence)
    (row,) = reran.reran
    assert (row["status"], row["path"]) == (row["recorded_status"], row["recorded_path"])


def test_verify_finds_a_second_ask_that_should_have_been_made(tmp_path: Path) -> None:
    """Under the new rule, giving the corrected value on is a mismatch: ``--verify``
    recomputes the second ask."""
    config = CONFIG.model_copy(update={"corroborate_asks": 1})
    _run(tmp_path, _corrected(), TOTAL, config=config)
    (request,) = [e for e in all_events(tmp_path / "store") if isinstance(e.body, TaskRequest)]
    _relog(tmp_path / "store", {**request.body.config, "corroborate_asks": 2})
    report = verify(tmp_path / "store")
    assert [(m.kind, m.field) for m in report.mismatches] == [("SubTaskOutcome", "corroborate")]
    (found,) = report.mismatches
    assert (found.logged, found.recomputed) == ("", "4250")
