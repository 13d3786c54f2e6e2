"""End to end: a question about what the request's own code returns, answered off the
source, is asked about the value no tool result shows — and the command that evaluates
the request, which code writes, is run by the Executor itself before the model's next
turn (``CorrectionSignal.run``). The value it prints proves the answer (``accept``,
``established_by`` naming the run). Before, the model was told to compute it and, a small
model, answered "Here is the output of the Python code …" with no call made, or ran
``echo 9.0``: ``success`` at best. ``replay --verify`` recomputes the command; the rerun
serves the run; a log from before ``Config.proof_by_evaluation`` replays as it ran. The
request and its file are the tests' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.replay import rerun
from artoo.schemas import Config, CorrectionSignal, Envelope, FinalResult, ToolCallEnded

from .helpers import CONFIG, all_events, replays_as_before, run_verified, simple_plan

ASK = "what does fmt(7) from lib/price.py return?"
SOURCE = "def fmt(n):\n    return 'EUR ' + str(n * 100)\n"
READ = {"name": "read_file", "arguments": {"path": "lib/price.py"}}
RUN = "cd lib && python3 -c 'from price import *; print(fmt(7))'"


def _entries(*answers: str) -> list[Any]:
    """A value question read with no check; the Executor reads the source and answers,
    then answers once more for each of ``answers`` after the first."""
    perceiver = {
        "role": "perceiver",
        "content": {"intent": "what fmt(7) returns", "kind": "question", "answer": "value"},
    }
    first, *more = answers
    return [
        perceiver,
        {"role": "executor", "tool_calls": [READ]},
        {"role": "executor", "content": first},
        *({"role": "executor", "content": a} for a in more),
    ]


def _run(
    tmp: Path, entries: list[Any], config: Config = CONFIG
) -> tuple[FinalResult, list[Envelope]]:
    result, store = run_verified(tmp, entries, ASK, config, files={"lib/price.py": SOURCE})
    return result, all_events(store)


def test_the_evaluation_is_run_for_the_model_and_proves_the_answer(tmp_path: Path) -> None:
    """A planned subtask (not the request itself: no evaluation before its first turn)
    answers 700, no tool's figure: the retry runs the evaluation first, and the answer
    stating what it printed is proven by it."""
    planned = CONFIG.model_copy(update={"direct_kinds": []})
    entries = [
        *_entries('fmt(7) returns "EUR 700".', "It returns EUR 700."),
        simple_plan("work out what fmt(7) gives"),
    ]
    result, events = _run(tmp_path, entries, planned)
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert signal.run == RUN and not signal.corroborate  # a retry after a failure
    assert signal.feedback.endswith(f"The code the request asks about is run for you next: {RUN}")
    ran = [e.body.call for e in events if isinstance(e.body, ToolCallEnded)]
    assert [c.tool for c in ran] == ["read_file", "shell"]
    assert ran[1].args == {"command": RUN} and (ran[1].stdout or "").strip() == "EUR 700"
    assert (result.status, result.established) == ("accept", "code")
    assert result.established_by == f"evaluated: `{RUN}` printed EUR 700"
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


GREET = 'what does greet("bo") from lib/hello.py return?'
GREET_RUN = "cd lib && python3 -c \"from hello import *; print(greet('bo'))\""


def test_an_unshown_value_is_asked_about_with_the_run_and_the_answer_asked_about_stands(
    tmp_path: Path,
) -> None:
    """ "hi bo" passes grounding (its words are the source's and the request's) but no
    result shows it: the ask runs the evaluation; the model's next answer states nothing,
    so the answer asked about stands, with every call of the subtask — the run among them
    — and it states what the run printed."""
    read = {"name": "read_file", "arguments": {"path": "lib/hello.py"}}
    perceiver = {
        "role": "perceiver",
        "content": {"intent": "what greet returns", "kind": "question", "answer": "value"},
    }
    entries = [
        perceiver,
        {"role": "executor", "tool_calls": [read]},
        {"role": "executor", "content": 'It returns "hi bo".'},
        {"role": "executor", "content": "Done."},
    ]
    planned = CONFIG.model_copy(update={"direct_kinds": []})
    entries.append(simple_plan("work out what greet gives for bo"))
    source = "def greet(name):\n    return 'hi ' + name\n"
    result, store = run_verified(tmp_path, entries, GREET, planned, files={"lib/hello.py": source})
    events = all_events(store)
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert signal.unbacked and signal.corroborate == '"hi bo"' and signal.run == GREET_RUN
    assert (result.status, result.established) == ("accept", "code")
    assert result.output == 'It returns "hi bo".'
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_wrong_answer_is_not_proven_by_the_run(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, _entries('It returns "EUR 70".', 'It returns "EUR 70".'))
    assert result.status != "accept"


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    config = CONFIG.model_copy(update={"proof_by_evaluation": False})
    result, _ = _run(tmp_path, _entries('It returns "EUR 700".', 'It returns "EUR 700".'))
    assert result.status == "accept"
    off, off_events = _run(tmp_path / "off", _entries('It returns "EUR 700".', "x"), config)
    assert off.status != "accept"
    (signal,) = [e.body for e in off_events if isinstance(e.body, CorrectionSignal)]
    assert signal.run == ""  # told to compute it; nothing run for it
    assert replays_as_before(tmp_path / "off" / "store", "proof_by_evaluation") is not None


def test_a_question_whose_call_the_request_writes_is_evaluated_before_the_first_turn(
    tmp_path: Path,
) -> None:
    """The request itself, a question writing the call ``fmt(7)``: the first attempt runs
    the evaluation before the model's first turn; the model answers from its result, and
    the task ends ``accept`` in one attempt — no failed attempt, no retry."""
    perceiver = {
        "role": "perceiver",
        "content": {"intent": "what fmt(7) returns", "kind": "question", "answer": "value"},
    }
    entries = [perceiver, {"role": "executor", "content": "fmt(7) returns EUR 700."}]
    result, events = _run(tmp_path, entries)
    ran = [e.body.call for e in events if isinstance(e.body, ToolCallEnded)]
    assert [c.args for c in ran] == [{"command": RUN}]
    assert not [e for e in events if isinstance(e.body, CorrectionSignal)]
    assert (result.status, result.established) == ("accept", "code")
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)
