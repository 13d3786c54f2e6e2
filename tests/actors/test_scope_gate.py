"""The reading's scope gate (``artoo.actors.law1.in_scope``, ``decide_by_effect``): with
targets, an effect outside the write, create and delete targets is out of scope — refused
unasked during a question ("the request is a question: it writes nothing"), asked about
otherwise ("outside the request's targets"; denied headless). By the pure function, the
real tools, and whole scripted Systems whose logs ``replay --verify`` recomputes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from artoo.actors.law1 import (
    OUTSIDE_TARGETS,
    QUESTION_REFUSAL,
    Scope,
    decide_by_effect,
    in_scope,
)
from artoo.actors.tools import ConfirmationNeeded, Sandbox, ToolRegistry, probe
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    FileEffect,
    FinalResult,
    Target,
    ToolCallEnded,
)
from tests.artoo.helpers import all_events, read_with_targets, run_verified

READ = Target(path="notes/todo.txt", role="read")
QUESTION = Scope("question", (READ,))
CHANGE = Scope(
    "mixed",
    (
        Target(path="notes/todo.txt", role="write"),
        Target(path="report.txt", role="create"),
        Target(path="out/", role="create"),
        Target(path="build", role="delete"),
    ),
)


def _effect(path: str, change: str = "created", kind: str = "file") -> FileEffect:
    return FileEffect(path=path, change=change, kind=kind)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the rule
def test_the_targets_and_what_lies_under_create_and_delete_directories_are_in_scope() -> None:
    inside = [
        _effect("notes/todo.txt", "modified"),
        _effect("report.txt"),
        _effect("out/a/b.txt"),
        _effect("out", kind="dir"),
        _effect("build", "deleted", "dir"),
        _effect("build/x.o", "deleted"),
        _effect("notes", kind="dir"),  # made on the way to a target (mkdir -p)
        FileEffect(path=".", change="created", kind="other", hazard="volume"),
    ]
    for effect in inside:
        assert in_scope(effect, CHANGE), effect
    outside = [
        _effect("notes/other.txt"),
        _effect("report.txt.bak"),
        _effect("outside/a.txt"),
        _effect("src", kind="dir"),  # a directory leading to no target
        _effect("notes", "metadata", "dir"),  # an existing directory's mode
        _effect("…", "deleted", "other"),  # paths past the listing: unknown
        _effect("/etc/passwd", "modified"),
        _effect("../x", "modified"),
    ]
    for effect in outside:
        assert not in_scope(effect, CHANGE), effect


def test_during_a_question_any_change_is_refused_unasked() -> None:
    for effect in (_effect("scratch.txt"), _effect("notes/todo.txt", "modified")):
        check = decide_by_effect([effect], QUESTION)
        assert (check.basis, check.ask, check.reason) == ("scope", False, QUESTION_REFUSAL)
        assert check.target == effect.path
    # nothing changed: nothing to refuse
    assert decide_by_effect([], QUESTION).basis == "effects"


def test_a_change_outside_the_targets_asks_naming_what_it_would_do() -> None:
    found = [_effect("notes/todo.txt", "modified"), _effect("notes/other.txt")]
    check = decide_by_effect(found, CHANGE)
    assert check.basis == "scope" and check.ask and check.target == "notes/other.txt"
    assert check.reason == f"{OUTSIDE_TARGETS}: would create notes/other.txt (file)"


def test_no_targets_no_gate() -> None:
    found = [_effect("anything.txt")]
    assert decide_by_effect(found, Scope("question", ())).basis == "effects"
    assert not decide_by_effect(found, Scope("question", ())).ask


# --------------------------------------------------------------------------- the tools
class _Operator:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.asked.append(request)
        return self.answer


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "notes" / "todo.txt").write_text("one\n")
    return ws


def test_a_write_during_a_question_is_refused_and_nothing_written(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    operator = _Operator(True)
    reg = ToolRegistry(ws, tmp_path / "spill", confirm=operator, scope=QUESTION)
    outcome = reg.call("write_file", {"path": "answer.txt", "content": "4"})
    assert outcome.call.refusal == "out_of_scope" and not outcome.call.ok
    assert not operator.asked and not (ws / "answer.txt").exists()
    assert outcome.content.count("\n") == 0  # the model is told in one line
    assert QUESTION_REFUSAL in outcome.content
    assert [(c.basis, c.ask, c.reason) for c in outcome.call.law1] == [
        ("scope", False, QUESTION_REFUSAL)
    ]


def test_a_write_outside_the_targets_asks_and_a_denial_refuses(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    operator = _Operator(False)
    reg = ToolRegistry(ws, tmp_path / "spill", confirm=operator, scope=CHANGE)
    outcome = reg.call("write_file", {"path": "notes/other.txt", "content": "x"})
    assert outcome.call.refusal == "law1_denied" and not (ws / "notes" / "other.txt").exists()
    (asked,) = operator.asked
    assert asked.reason.startswith(OUTSIDE_TARGETS) and asked.target == "notes/other.txt"
    operator.answer = True  # approved: written
    assert reg.call("write_file", {"path": "notes/other.txt", "content": "x"}).call.ok
    assert (ws / "notes" / "other.txt").read_text() == "x"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    if sys.platform != "linux":
        pytest.skip("the sandbox needs Linux")
    why = probe()
    assert why is None, f"no sandbox on this machine: {why}"
    return Sandbox()


def test_a_command_that_writes_during_a_question_is_refused_and_discarded(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    ws = _workspace(tmp_path)
    operator = _Operator(True)
    reg = ToolRegistry(ws, tmp_path / "spill", confirm=operator, scope=QUESTION, sandbox=sandbox)
    outcome = reg.call("shell", {"command": "wc -l notes/todo.txt > count.txt"})
    assert outcome.call.refusal == "out_of_scope" and not (ws / "count.txt").exists()
    assert not operator.asked and outcome.call.sandboxed
    assert [e.path for e in outcome.call.effects] == ["count.txt"]  # what it would do
    # a command that changes nothing answers as before
    outcome = reg.call("shell", {"command": "wc -l notes/todo.txt"})
    assert outcome.call.ok and outcome.call.stdout == "1 notes/todo.txt\n"


# --------------------------------------------------------------------------- whole Systems
CONFIG = Config(durability="none", max_parallel=1, confirmation_timeout_s=2.0)


def _entries(kind: str, *calls: dict[str, Any], said: str = "Done.") -> list[dict[str, Any]]:
    return [
        {"role": "perceiver", "content": {"intent": "the notes", "kind": kind, "criteria": []}},
        *({"role": "executor", "tool_calls": [call]} for call in calls),
        {"role": "executor", "times": 0, "content": said},
    ]


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def _bodies(store: Path, kind: type) -> list[Any]:
    return [e.body for e in all_events(store) if isinstance(e.body, kind)]


def test_a_questions_write_is_refused_as_out_of_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [READ])
    text = "which train does notes/todo.txt say to book?"
    entries = _entries("question", _write("notes/todo.txt", "rewritten\n"), said="the train")
    result, store = run_verified(tmp_path, entries, text, CONFIG, operator=lambda r: True)
    assert (tmp_path / "workspace" / "notes" / "todo.txt").read_text() != "rewritten\n"
    assert not _bodies(store, ConfirmationRequest)  # refused unasked, the operator aside
    ended = _bodies(store, ToolCallEnded)[0]
    assert ended.call.refusal == "out_of_scope"
    assert ended.shown.startswith("error: refused: the request is a question: it writes nothing")
    assert isinstance(result, FinalResult)


def test_a_write_outside_the_targets_asks_and_is_denied_headless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [Target(path="notes/todo.txt", role="write")])
    text = "append a line to notes/todo.txt"
    entries = _entries("change", _write("notes/elsewhere.txt", "x\n"))
    _, store = run_verified(tmp_path, entries, text, CONFIG, operator=None)
    assert not (tmp_path / "workspace" / "notes" / "elsewhere.txt").exists()
    (request,) = _bodies(store, ConfirmationRequest)
    assert request.reason.startswith("outside the request's targets")
    assert request.target == "notes/elsewhere.txt"
    (decision,) = _bodies(store, ConfirmationDecision)
    assert not decision.approved
    (ended,) = _bodies(store, ToolCallEnded)
    assert ended.call.refusal == "law1_denied"
    assert [(c.basis, c.ask) for c in ended.call.law1] == [("scope", True)]
