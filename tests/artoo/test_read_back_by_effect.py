"""End to end: a change whose only check is that its file exists — no check read it
back — is proven by code from what Law 1 observed it change (``Config.read_back_by_effect``):
``accept``, and ``artoo run``, the replay timeline and the audit report say how. Off, it
ends ``success`` on the model's word, as before; a log from before the field replays as
it ran, the diff it needs in its logged ToolCallEnded. The request and its file are the
tests' own; the request is read with settings.ini its write target, so the change is
reversible by construction and goes ahead unasked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.replay import timeline, verify
from artoo.report import audit_report
from artoo.schemas import Config, Envelope, FinalResult, Target, TaskRequest, ToolCallEnded
from artoo.testing import write_script

from .helpers import (
    CONFIG,
    DATA,
    all_events,
    change_entries,
    read_with_targets,
    rewrite_event,
    run_verified,
)

REQUEST = "add the line 'port = 8080' to settings.ini"
NOTE = "read back by effect: settings.ini +1 line, every changed word in the request"


@pytest.fixture(autouse=True)
def _reading(monkeypatch: pytest.MonkeyPatch) -> None:
    read_with_targets(monkeypatch, [Target(path="settings.ini", role="write")])


def _entries(command: str) -> list[dict[str, Any]]:
    shell = {"name": "shell", "arguments": {"command": command}}
    return change_entries(
        "add the port to settings.ini", "settings.ini", [shell], "Added the line to settings.ini."
    )


def _run(
    tmp: Path, command: str = "echo 'port = 8080' >> settings.ini", config: Config = CONFIG
) -> tuple[FinalResult, list[Envelope]]:
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "settings.ini").write_text("host = example.org\n", encoding="utf-8")
    result, store = run_verified(tmp, _entries(command), REQUEST, config)
    return result, all_events(store)


def _relog(store: Path, config: dict[str, Any]) -> None:
    """Rewrite the logged TaskRequest's Config as ``config``."""
    (request,) = [e for e in all_events(store) if isinstance(e.body, TaskRequest)]
    rewrite_event(
        store,
        msgspec.structs.replace(request, body=msgspec.structs.replace(request.body, config=config)),
    )


def test_a_change_read_back_by_effect_is_accepted_and_says_so(tmp_path: Path) -> None:
    result, events = _run(tmp_path)
    assert (tmp_path / "workspace" / "settings.ini").read_text() == (
        "host = example.org\nport = 8080\n"
    )
    assert (result.status, result.established) == ("accept", "code")
    assert result.established_by == NOTE
    # the proof is the log's: the diff is in the logged call
    (ended,) = [e.body for e in events if isinstance(e.body, ToolCallEnded)]
    assert [(e.path, e.diff) for e in ended.call.effects] == [("settings.ini", "+port = 8080")]
    (told,) = timeline(tmp_path / "store", result.task_id)
    assert any(NOTE in line for e in told.entries for line in (e.text, *e.detail))
    assert NOTE in audit_report(tmp_path / "store", fmt="md")
    (task,) = json.loads(audit_report(tmp_path / "store", fmt="json"))["tasks"]
    assert (task["established"], task["established_by"]) == ("code", NOTE)


def test_artoo_run_says_how_the_change_was_established(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from artoo.cli import main

    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "settings.ini").write_text("host = example.org\n", encoding="utf-8")
    model = write_script(tmp_path / "s.toml", _entries("echo 'port = 8080' >> settings.ini"))
    store = tmp_path / "store"
    args = ["run", REQUEST, "--store", str(store), "--model", model]
    assert main([*args, "--workspace", str(workspace)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # a terminal may wrap the line
    assert f"established by code (every criterion proven by code) — {NOTE}" in out


def test_a_collateral_change_is_not_read_back(tmp_path: Path) -> None:
    """The same line, but the file overwritten: its old line is gone — the model's word
    (the loss let through: by default it is refused before it runs, ``refuse_lost_lines``)."""
    lets_through = CONFIG.model_copy(
        update={"refuse_lost_lines": False, "consent_reads_back": False}
    )
    result, _ = _run(tmp_path, "echo 'port = 8080' > settings.ini", lets_through)
    assert (result.status, result.established, result.established_by) == ("success", "model", "")
    # the overwrite of the reading's target is reversible: it goes ahead unasked, and
    # is still not read back (``artoo undo`` restores the lost line)
    held = CONFIG.model_copy(update={"refuse_lost_lines": False})
    result, _ = _run(tmp_path / "held", "echo 'port = 8080' > settings.ini", held)
    assert result.status != "accept" and not result.law1_denied


def test_off_a_change_no_check_read_back_is_the_models_word(tmp_path: Path) -> None:
    off = CONFIG.model_copy(update={"read_back_by_effect": False})
    result, _ = _run(tmp_path, config=off)
    assert (result.status, result.established, result.established_by) == ("success", "model", "")


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    """Run with the field off (as before it), then its logged Config without it: read as
    off, giving ``success`` is no mismatch; read with it on, ``--verify`` finds the
    ``accept`` that should have been."""
    off = CONFIG.model_copy(update={"read_back_by_effect": False})
    result, events = _run(tmp_path, config=off)
    assert result.status == "success"
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    logged = dict(request.body.config)
    _relog(tmp_path / "store", {k: v for k, v in logged.items() if k != "read_back_by_effect"})
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    _relog(tmp_path / "store", {**logged, "read_back_by_effect": True})
    found = {(m.kind, m.field) for m in verify(tmp_path / "store").mismatches}
    assert {
        ("GGSDecision", "directive"),
        ("FinalResult", "status"),
        ("FinalResult", "established"),
        ("FinalResult", "established_by"),
    } <= found
