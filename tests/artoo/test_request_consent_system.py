"""End to end: the request's own consent (``Config.request_consent``) and its reading.
With no operator attached, a deletion the reading names (a ``delete`` target) and the
request spells is approved by the request (``ConfirmationDecision.by = "request"``) and
applied; a change of a file the reading targets needs no consent (it is reversible by
construction: it never asks); the request's wording alone consents to nothing; an effect
on another file, and the deletion with the setting turned off, are denied; a question's
change is refused unasked (out of its scope). Each store passes ``replay --verify`` and
reruns with zero divergence."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.replay import read_store, rerun, timeline
from artoo.replay._read import task_config
from artoo.report import audit_report
from artoo.report._model import AuditDocument
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    ExecutionResult,
    FinalResult,
    TaskRequest,
    ToolCall,
    ToolCallEnded,
)

from .helpers import CONFIG, DATA, all_events, rewrite_event, run_verified

NO_ASK = CONFIG
SANDBOXED = NO_ASK.model_copy(
    update={"tools": NO_ASK.tools.model_copy(update={"sandbox": "required"})}
)
APPEND = "append the line 'TODO: call Bob' to notes/todo.txt"
TODO = "TODO: call Bob"


def _perceive(kind: str, *targets: tuple[str, str], answer: str = "text") -> dict[str, Any]:
    """The Perceiver's reading: its ``kind`` and its targets, each (path, role)."""
    return {
        "role": "perceiver",
        "content": {
            "intent": "the notes",
            "kind": kind,
            "answer": answer,
            "targets": [{"path": path, "role": role} for path, role in targets],
        },
    }


def _executor(*calls: dict[str, Any], said: str = "Done.") -> list[dict[str, Any]]:
    return [
        {"role": "executor", "tool_calls": list(calls)},
        {"role": "executor", "times": 0, "content": said},
    ]


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def _shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def _run(
    tmp: Path, entries: list[dict[str, Any]], text: str, config: Config = NO_ASK
) -> tuple[FinalResult, list[Any], Path]:
    """Run ``text`` with no operator attached; the result, the logged bodies, the store."""
    result, store = run_verified(tmp, entries, text, config, operator=None)
    return result, [e.body for e in all_events(store)], store


def _decisions(bodies: list[Any]) -> list[ConfirmationDecision]:
    return [b for b in bodies if isinstance(b, ConfirmationDecision)]


def _calls(bodies: list[Any]) -> list[ToolCall]:
    return [c for b in bodies if isinstance(b, ExecutionResult) for c in b.tool_calls]


def _reruns_the_same(store: Path) -> None:
    report = rerun(store)
    assert report.ok, str(report.divergence)
    assert not report.unanswered, report.unanswered


def _append_entries(tmp: Path, *targets: tuple[str, str]) -> list[dict[str, Any]]:
    """The append of :data:`TODO` to notes/todo.txt, read as a change of ``targets``."""
    todo = tmp / "workspace" / "notes" / "todo.txt"
    append = _write("notes/todo.txt", todo.read_text() + TODO)
    return [_perceive("change", *targets), *_executor(append)]


def _workspace(tmp: Path) -> Path:
    """The demo workspace, with a notes/meeting.txt."""
    ws = tmp / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    (ws / "notes" / "meeting.txt").write_text("monday: budget\n")
    return ws


def test_a_change_to_a_file_the_reading_targets_needs_no_consent(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    entries = _append_entries(tmp_path, ("notes/todo.txt", "write"))
    result, bodies, store = _run(tmp_path, entries, APPEND)
    assert (ws / "notes" / "todo.txt").read_text().endswith(TODO)  # applied
    assert not [b for b in bodies if isinstance(b, ConfirmationRequest)]  # never asked
    (ended,) = [b for b in bodies if isinstance(b, ToolCallEnded)]
    assert [c.basis for c in ended.call.law1] == ["reversible"]
    assert not result.law1_denied and result.status in ("success", "accept")
    _reruns_the_same(store)


def test_the_requests_wording_alone_consents_to_no_change(tmp_path: Path) -> None:
    """Read as a change of another file, the file the request names read as one to read,
    the same append asks, and headless it is denied: the request's words are no
    operator's yes — only the reading's targets to write are."""
    ws = _workspace(tmp_path)
    before = (ws / "notes" / "todo.txt").read_text()
    targets = [("notes/todo.txt", "read"), ("notes/meeting.txt", "write")]
    result, bodies, store = _run(tmp_path, _append_entries(tmp_path, *targets), APPEND)
    assert (ws / "notes" / "todo.txt").read_text() == before
    (decision,) = _decisions(bodies)
    assert (decision.approved, decision.by) == (False, "queen")
    assert result.law1_denied
    _reruns_the_same(store)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_removal_the_request_asks_for_runs_in_the_sandbox_and_is_applied(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    text = "Do remove notes/meeting.txt, it is not needed any more"
    entries = [
        _perceive("change", ("notes/meeting.txt", "delete")),
        *_executor(_shell("rm notes/meeting.txt")),
    ]
    config = SANDBOXED
    result, bodies, store = _run(tmp_path, entries, text, config)
    assert not (ws / "notes" / "meeting.txt").exists()
    (request,) = [b for b in bodies if isinstance(b, ConfirmationRequest)]
    assert [(e.path, e.change) for e in request.effects] == [("notes/meeting.txt", "deleted")]
    (decision,) = _decisions(bodies)
    assert (decision.approved, decision.by) == (True, "request")
    assert decision.reason == "the request asks to delete notes/meeting.txt"
    assert not result.law1_denied
    _reruns_the_same(store)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_question_whose_executor_removes_the_file_it_names_is_refused_unasked(
    tmp_path: Path,
) -> None:
    """A question changes nothing: removing the file it asks about is refused outright
    (``out_of_scope``, nothing applied, no one asked — neither the request nor an
    operator), and the Executor answers from what the file shows; code counts its lines."""
    ws = _workspace(tmp_path)
    text = "how many lines are in notes/meeting.txt?"
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "the notes",
                "kind": "question",
                "answer": "number",
                "count": "lines",
            },
        },
        {"role": "executor", "tool_calls": [_shell("rm notes/meeting.txt")]},
        {"role": "executor", "tool_calls": [_shell("wc -l notes/meeting.txt")]},
        {"role": "executor", "content": "notes/meeting.txt has 1 line."},
    ]
    result, bodies, store = _run(tmp_path, entries, text, SANDBOXED)
    assert (ws / "notes" / "meeting.txt").read_text() == "monday: budget\n"
    assert not [b for b in bodies if isinstance(b, ConfirmationRequest)]  # never asked
    assert not _decisions(bodies)
    rm, wc = _calls(bodies)
    assert (rm.refusal, rm.law1[-1].basis) == ("out_of_scope", "scope")
    assert not any(c.ask for c in rm.law1)
    assert wc.ok and wc.refusal is None
    assert (result.status, result.established) == ("accept", "code")
    assert not result.law1_denied
    _reruns_the_same(store)


def test_an_overwrite_of_a_file_the_request_does_not_name_is_denied(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    text = "append the line 'gamma' to a.txt"
    entries = [
        _perceive("change", ("a.txt", "write")),
        *_executor(_write("b.txt", "beta\ngamma\n")),
    ]
    result, bodies, store = _run(tmp_path, entries, text)
    assert (ws / "b.txt").read_text() == "beta\n"
    (decision,) = _decisions(bodies)
    assert (decision.approved, decision.by) == (False, "queen")
    assert _calls(bodies)[0].refusal == "law1_denied"
    assert result.law1_denied
    _reruns_the_same(store)


REMOVE = "Do remove notes/meeting.txt, it is not needed any more"


def _removal(tmp: Path, config: Config) -> tuple[FinalResult, list[Any], Path]:
    """The removal the request asks for (the reading names the file to delete), run in
    the sandbox under ``config`` with no operator attached."""
    _workspace(tmp)
    entries = [
        _perceive("change", ("notes/meeting.txt", "delete")),
        *_executor(_shell("rm notes/meeting.txt")),
    ]
    return _run(tmp, entries, REMOVE, config)


CONSENT_OFF = SANDBOXED.model_copy(update={"request_consent": False})


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_with_request_consent_off_the_named_file_is_denied(tmp_path: Path) -> None:
    result, bodies, store = _removal(tmp_path, CONSENT_OFF)
    assert (tmp_path / "workspace" / "notes" / "meeting.txt").exists()
    (decision,) = _decisions(bodies)
    assert (decision.approved, decision.by, decision.reason) == (
        False,
        "queen",
        "no operator attached",
    )
    assert result.law1_denied
    _reruns_the_same(store)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_the_operator_answers_only_what_the_request_does_not_consent_to(tmp_path: Path) -> None:
    """One call the request consents to, one it does not: the operator is asked only of the
    second; the timeline says who approved; a rerun gives the operator's recorded answer to
    the second (not the request's approval of the first)."""
    ws = _workspace(tmp_path)
    (ws / "b.txt").write_text("beta\n")
    text = "remove notes/meeting.txt"
    entries = [
        _perceive("change", ("notes/meeting.txt", "delete")),
        *_executor(_shell("rm notes/meeting.txt"), _write("b.txt", "beta\nmore\n")),
    ]
    asked: list[str | None] = []

    def operator(request: ConfirmationRequest) -> bool:
        asked.append(request.target)
        return False

    result, store = run_verified(tmp_path, entries, text, SANDBOXED, operator=operator)
    bodies = [e.body for e in all_events(store)]
    assert asked == ["b.txt"]
    assert [(d.approved, d.by) for d in _decisions(bodies)] == [
        (True, "request"),
        (False, "operator"),
    ]
    assert not (ws / "notes" / "meeting.txt").exists()
    assert (ws / "b.txt").read_text() == "beta\n"
    (told,) = timeline(store, result.task_id)
    lines = [e.text for e in told.entries]
    assert any(
        line.startswith("confirmation APPROVED by the request: the request asks to delete")
        for line in lines
    ), lines
    (task,) = msgspec.json.decode(audit_report(store, fmt="json"), type=AuditDocument).tasks
    said = [(s.kind, s.text) for s in task.timeline if s.kind in ("confirmed", "denied")]
    assert said == [
        ("confirmed", "the request: the request asks to delete notes/meeting.txt"),
        ("denied", "operator"),
    ]
    _reruns_the_same(store)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_log_from_before_request_consent_reruns_with_its_operators_rules(
    tmp_path: Path,
) -> None:
    """A TaskRequest whose logged Config has no ``request_consent`` asked the operator of
    every Law 1 action: ``--rerun`` reads it as off, so the logged denial (no operator) of
    the removal the request asks for is decided again rather than replaced by today's
    consent."""
    _, bodies, store = _removal(tmp_path, CONSENT_OFF)
    assert [d.by for d in _decisions(bodies)] == ["queen"]
    (request,) = [e for e in all_events(store) if isinstance(e.body, TaskRequest)]
    older = {k: v for k, v in request.body.config.items() if k != "request_consent"}
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=older)),
    )
    _, (task,) = read_store(store)
    assert task_config(task).request_consent is False
    report = rerun(store)
    assert not report.unanswered, report.unanswered
    # a field added since the log was written shows at its TaskRequest (a known limit)
    assert report.divergence is not None and report.divergence.kind == "TaskRequest"
    assert "request_consent" in str(report.divergence)
    (row,) = report.reran
    assert (row["status"], row["path"]) == (row["recorded_status"], row["recorded_path"])
