"""Questions to the user: a role asks one bounded question, the task waits (its deadline
stopped) for the answer — through the inbox, the ``on_question`` callback, or at the
timeout the question's default (or, configured so, the task is abandoned) — and the
answer is an event replay serves like any other."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import artoo
from artoo.actors.roles.queen import question_problem
from artoo.actors.verification.answers import (
    OPTIONS_MAX,
    QuestionAnswer,
    bounded_question,
)
from artoo.replay import rerun, timeline, verify
from artoo.report import audit_report
from artoo.report._model import AuditDocument
from artoo.schemas import (
    Config,
    EscalationTicket,
    FinalResult,
    LLMCall,
    QuestionAnswered,
    TaskSpec,
    UserQuestion,
)
from artoo.testing import ManualClock, write_script

from .helpers import all_events

QUESTION = {"text": "Which file?", "options": ["a.txt", "b.txt"], "default": "a.txt"}


def _creates(path: str) -> list[dict[str, str]]:
    return [{"path": path, "role": "create"}]


def _entries(written: str = "b.txt") -> list[dict[str, Any]]:
    """The Perceiver asks which file, its first reading naming the default (a.txt); read
    again with an operator's answer, it names ``written``. Round 0 is the request itself:
    the Executor writes ``written`` (a target of the reading that stands) and is done. No
    check reads the file back, so the task ends ``success``."""
    first = {"intent": "write a file", "kind": "creation", "targets": _creates("a.txt")}
    write = {"name": "write_file", "arguments": {"path": written, "content": "x"}}
    return [
        {"role": "perceiver", "content": {**first, "question": QUESTION}},
        {
            "role": "perceiver",
            "content": {
                "intent": f"write {written}",
                "kind": "creation",
                "targets": _creates(written),
            },
        },
        {"role": "executor", "tool_calls": [write]},
        {"role": "executor", "content": "done"},
    ]


ENTRIES = _entries()


def _open(
    tmp: Path,
    clock: ManualClock | None = None,
    entries: list[dict[str, Any]] = ENTRIES,
    **options: Any,
) -> artoo.System:
    settings: dict[str, Any] = {
        "durability": "none",
        "max_parallel": 1,
        "role_timeout_s": 10_000.0,
        "question_timeout_s": 5.0,
        "judge": {"interval_s": 1.0},
        **options.pop("config", {}),
    }
    config = Config.model_validate(settings)
    (tmp / "ws").mkdir(exist_ok=True)
    options.setdefault("inbox", True)  # the host reads its inbox (System.answer)
    return artoo.System.open(
        tmp / "store",
        model=write_script(tmp / "s.toml", entries),
        workspace=tmp / "ws",
        config=config,
        clock=clock,
        **options,
    )


def _wait_for(predicate: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := predicate()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)
    return got


def _answered(store: Path) -> list[QuestionAnswered]:
    return [e.body for e in all_events(store) if isinstance(e.body, QuestionAnswered)]


def _replays(store: Path) -> None:
    assert verify(store).ok
    report = rerun(store)
    assert report.ok, str(report.divergence)


def test_a_question_answered_through_the_inbox(tmp_path: Path) -> None:
    with _open(tmp_path) as system:
        handle = system.submit("write the file")
        [item] = _wait_for(lambda: [i for i in system.inbox() if i.kind == "question"])
        assert item.answers == ("a.txt", "b.txt") and "Which file?" in item.summary
        with pytest.raises(ValueError, match=r"answer one of: a\.txt, b\.txt"):
            system.answer(item.item_id, "c.txt")
        system.answer(item.item_id, "b.txt")
        result = handle.result(30)
    assert result.status == "success"
    assert (tmp_path / "ws" / "b.txt").read_text() == "x"  # as read with the answer
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [("b.txt", "operator")]
    calls = [e.body for e in all_events(tmp_path / "store") if isinstance(e.body, LLMCall)]
    second = [c for c in calls if c.role == "perceiver"][1]
    assert "the user answered: b.txt" in second.request["messages"][-1]["content"]
    _replays(tmp_path / "store")
    [task] = timeline(tmp_path / "store")
    lines = [e.text for e in task.entries]
    assert any(line.startswith("QUESTION (perceiver): Which file?") for line in lines)
    assert "ANSWER by operator: b.txt" in lines
    doc = msgspec.json.decode(audit_report(tmp_path / "store", fmt="json"), type=AuditDocument)
    [row] = doc.tasks
    steps = [(s.kind, s.text) for s in row.timeline if s.kind in ("question?", "answered")]
    assert steps == [
        ("question?", "perceiver: Which file? [a.txt / b.txt]"),
        ("answered", "operator: b.txt"),
    ]


def test_a_question_answered_by_the_on_question_callback(tmp_path: Path) -> None:
    asked: list[UserQuestion] = []

    def on_question(question: UserQuestion) -> str:
        asked.append(question)
        return "a.txt"

    with _open(tmp_path, entries=_entries("a.txt"), on_question=on_question) as system:
        assert system.run("write the file", timeout=30).status == "success"
    assert [q.options for q in asked] == [["a.txt", "b.txt"]]
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [("a.txt", "operator")]


def test_an_unanswered_question_takes_its_default_at_the_timeout(tmp_path: Path) -> None:
    clock = ManualClock()
    with _open(tmp_path, clock, entries=_entries("a.txt")) as system:
        handle = system.submit("write the file", timeout=100)
        _wait_for(lambda: system.inbox())
        clock.advance(4)
        time.sleep(0.2)
        assert not handle.done()  # not yet its timeout (5 s)
        clock.advance(2)
        result = handle.result(30)
        system.flush(5)
    assert result.status == "success"
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [("a.txt", "timeout")]
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"  # the first reading's file
    _replays(tmp_path / "store")


def test_with_no_one_to_ask_a_question_takes_its_default_at_once(tmp_path: Path) -> None:
    """No inbox and no on_question (``artoo run``, a host that reads no inbox): nobody can
    answer, so the task does not wait out the timeout — the default at once, as a Law 1
    request with no operator is decided at once. The clock never moves."""
    clock = ManualClock()
    with _open(tmp_path, clock, entries=_entries("a.txt"), inbox=False) as system:
        result = system.run("write the file", timeout=100)
    assert result.status == "success"
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [("a.txt", "no_operator")]
    _replays(tmp_path / "store")


def test_an_unanswered_question_abandons_the_task_when_so_configured(tmp_path: Path) -> None:
    clock = ManualClock()
    with _open(tmp_path, clock, config={"question_on_timeout": "abandon"}) as system:
        handle = system.submit("write the file", timeout=100)
        _wait_for(lambda: system.inbox())
        clock.advance(6)
        result = handle.result(30)
        system.flush(5)
    assert (result.status, result.reason) == ("abandon", "cancelled")
    assert "no answer to a question within 5 s" in result.summary
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [(None, "timeout")]
    finals = [e for e in all_events(tmp_path / "store") if isinstance(e.body, FinalResult)]
    assert len(finals) == 1
    _replays(tmp_path / "store")


def test_the_deadline_and_the_judge_stand_while_the_task_waits_for_an_answer(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    with _open(tmp_path, clock, config={"question_timeout_s": 1000.0}) as system:
        handle = system.submit("write the file", timeout=100)
        [item] = _wait_for(lambda: system.inbox())
        clock.advance(150)  # past the deadline (100 s) and the Judge's stall_s (60 s)
        time.sleep(0.3)
        clock.advance(1)
        time.sleep(0.2)
        assert not handle.done()
        system.answer(item.item_id, "b.txt")
        result = handle.result(30)
        system.flush(5)
    assert result.status == "success"
    tickets = [
        e.body for e in all_events(tmp_path / "store") if isinstance(e.body, EscalationTicket)
    ]
    assert [t for t in tickets if t.kind == "stall"] == []


@given(
    text=st.text(max_size=700),
    options=st.lists(st.text(max_size=10), max_size=12),
    default=st.none() | st.text(max_size=10),
)
def test_a_question_is_bounded(text: str, options: list[str], default: str | None) -> None:
    q = bounded_question(QuestionAnswer(text=text, options=options, default=default))
    if not text.strip():
        assert q is None
        return
    assert q is not None
    assert 0 < len(q.text) <= 500 and len(q.options) <= OPTIONS_MAX
    assert len(set(q.options)) == len(q.options) and all(o.strip() == o and o for o in q.options)
    assert q.default is None or not q.options or q.default in q.options


def test_an_answer_is_one_of_the_options_or_bounded_text() -> None:
    choice = UserQuestion(question_id="q", role="planner", text="?", options=["x", "y"])
    free = UserQuestion(question_id="q", role="planner", text="?")
    assert question_problem(choice, "x") is None
    assert question_problem(choice, "z") == "answer one of: x, y"
    assert question_problem(free, "anything") is None
    assert question_problem(free, "  ") == "an answer is some text"
    assert question_problem(free, "x" * 2001) == "an answer is at most 2000 characters"


def test_the_planner_asks_once_and_plans_with_the_answer(tmp_path: Path) -> None:
    """Round 0 is the request itself, no Planner call: its Executor writes nothing, so the
    change fails and round 1 is the model's plan — where the Planner asks its question."""
    choose = {"text": "Markdown or text?", "options": ["md", "txt"], "default": "txt"}
    write = {"name": "write_file", "arguments": {"path": "notes/notes.md", "content": "# notes"}}
    reading = {"intent": "write notes", "kind": "creation", "targets": _creates("notes/")}
    entries: list[dict[str, Any]] = [
        {"role": "perceiver", "content": reading},
        {"role": "planner", "content": {"subtasks": [], "question": choose}},
        {
            "role": "planner",
            # a second question is not asked: the plan is taken
            "content": {"subtasks": [{"instruction": "write notes/notes.md"}], "question": choose},
        },
        {"role": "executor", "match": "Subtask: write my notes", "content": "Which format?"},
        {"role": "executor", "match": "Subtask: write notes/notes.md", "tool_calls": [write]},
        {"role": "executor", "match": "Subtask: write notes/notes.md", "content": "done"},
    ]
    (tmp_path / "ws").mkdir()
    with artoo.System.open(
        tmp_path / "store",
        model=write_script(tmp_path / "s.toml", entries),
        workspace=tmp_path / "ws",
        config=Config(durability="none", max_parallel=1, max_retries=0),
        on_question=lambda q: "md",
    ) as system:
        result = system.run("write my notes", timeout=30)
    assert result.status == "success"
    assert (tmp_path / "ws" / "notes" / "notes.md").read_text() == "# notes"
    events = all_events(tmp_path / "store")
    asked = [e.body for e in events if isinstance(e.body, UserQuestion)]
    assert [(q.role, q.text, q.round) for q in asked] == [("planner", "Markdown or text?", 1)]
    calls = [e.body for e in events if isinstance(e.body, LLMCall) and e.body.role == "planner"]
    assert len(calls) == 2
    assert "the user answered: md" in calls[1].request["messages"][-1]["content"]
    _replays(tmp_path / "store")


@pytest.mark.slow
def test_a_question_waiting_when_the_process_stopped_is_asked_again_once_after_resume(
    tmp_path: Path,
) -> None:
    store, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.toml", ENTRIES)
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import threading, artoo
            from artoo.schemas import Config, UserQuestion
            asked = threading.Event()
            s = artoo.System.open({str(store)!r}, model={model!r}, workspace={str(ws)!r},
                config=Config(durability="batch", max_parallel=1), inbox=True)
            s.subscribe(lambda env: isinstance(env.body, UserQuestion) and asked.set())
            s.submit("write the file")
            asked.wait(20)
            s.flush(5)
            print("asked", flush=True)
            threading.Event().wait()
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        assert victim.stdout.readline().strip() == "asked"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    with _open(tmp_path, entries=ENTRIES[1:]) as system:  # the killed run used the first
        [handle] = system.resumed
        [item] = _wait_for(lambda: system.inbox())
        assert item.kind == "question" and item.answers == ("a.txt", "b.txt")
        system.answer(item.item_id, "b.txt")
        result = handle.result(30)
    assert result.status == "success" and result.resumed_from is not None
    events = all_events(tmp_path / "store")
    assert sum(isinstance(e.body, UserQuestion) for e in events) == 1  # not logged twice
    assert [(a.answer, a.by) for a in _answered(tmp_path / "store")] == [("b.txt", "operator")]
    assert sum(isinstance(e.body, LLMCall) for e in events) == len(ENTRIES)
    _replays(tmp_path / "store")


def test_a_perceiver_question_no_one_answered_keeps_the_first_reading(tmp_path: Path) -> None:
    """The default no one chose is not put into the reading as the user's word: the
    Perceiver is not asked again with it; its first reading (the default's file) stands."""
    clock = ManualClock()
    with _open(tmp_path, clock, entries=_entries("a.txt"), inbox=False) as system:
        result = system.run("write the file", timeout=100)
    assert result.status == "success"
    events = all_events(tmp_path / "store")
    perceived = [
        e.body for e in events if isinstance(e.body, LLMCall) and e.body.role == "perceiver"
    ]
    assert len(perceived) == 1  # the first reading stands: no second call with "a.txt"
    (spec,) = [e.body for e in events if isinstance(e.body, TaskSpec)]
    assert spec.intent == "write a file"
    assert [(t.path, t.role) for t in spec.targets] == [("a.txt", "create")]
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"
    _replays(tmp_path / "store")
