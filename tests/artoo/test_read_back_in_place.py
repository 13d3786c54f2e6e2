"""End to end: a function renamed by ``sed -i``, whose only check is that its file
exists, is proven by code from the line Law 1 observed it change in place
(``Config.read_back_in_place``): the words that changed are the request's, though the
line's others (``def``, ``text``, ``str``) are not — ``accept``, and ``replay --verify``
agrees. Off, the changed line is held to all its words: ``success`` on the model's word,
as before; a log from before the field replays as it ran. The request and its file are
the tests' own; the request is read with src/banner.py its write target, so the change is
reversible by construction and goes ahead unasked."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.replay import verify
from artoo.schemas import Config, Envelope, FinalResult, Target, TaskRequest, ToolCallEnded

from .helpers import (
    CONFIG,
    DATA,
    all_events,
    change_entries,
    read_with_targets,
    rewrite_event,
    run_verified,
)

REQUEST = "rename the function boxed to framed in src/banner.py"
SOURCE = 'def boxed(text: str) -> str:\n    return f"[ {text} ]"\n'
SED = "sed -i 's/def boxed(/def framed(/' src/banner.py"
NOTE = "read back by effect: src/banner.py +1 -1 lines, every changed word in the request"


@pytest.fixture(autouse=True)
def _reading(monkeypatch: pytest.MonkeyPatch) -> None:
    read_with_targets(monkeypatch, [Target(path="src/banner.py", role="write")])


def _run(tmp: Path, config: Config = CONFIG) -> tuple[FinalResult, list[Envelope]]:
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "src" / "banner.py").write_text(SOURCE, encoding="utf-8")
    sed = {"name": "shell", "arguments": {"command": SED}}
    intent = "rename boxed to framed in src/banner.py"
    entries = change_entries(intent, "src/banner.py", [sed], "Renamed boxed to framed.")
    result, store = run_verified(tmp, entries, REQUEST, config)
    return result, all_events(store)


def test_a_rename_read_back_in_place_is_accepted_and_off_is_not(tmp_path: Path) -> None:
    result, events = _run(tmp_path / "on")
    assert (tmp_path / "on" / "workspace" / "src" / "banner.py").read_text() == SOURCE.replace(
        "def boxed(", "def framed("
    )
    assert (result.status, result.established) == ("accept", "code")
    assert result.established_by == NOTE
    (ended,) = [e.body for e in events if isinstance(e.body, ToolCallEnded)]
    assert [(e.path, e.diff) for e in ended.call.effects] == [
        ("src/banner.py", "-def boxed(text: str) -> str:\n+def framed(text: str) -> str:")
    ]
    # off, the changed line is held to all its words: the model's word, as before
    off = CONFIG.model_copy(update={"read_back_in_place": False})
    result, _ = _run(tmp_path / "off", off)
    assert (result.status, result.established, result.established_by) == ("success", "model", "")


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    """Run with the field off (as before it), then its logged Config without it: read as
    off, ``success`` is no mismatch; read with it on, ``--verify`` finds the ``accept``
    that should have been."""
    off = CONFIG.model_copy(update={"read_back_in_place": False})
    result, events = _run(tmp_path, off)
    assert result.status == "success"
    (request,) = [e for e in events if isinstance(e.body, TaskRequest)]
    logged = dict(request.body.config)

    def relog(config: dict[str, Any]) -> None:
        body = msgspec.structs.replace(request.body, config=config)
        rewrite_event(tmp_path / "store", msgspec.structs.replace(request, body=body))

    relog({k: v for k, v in logged.items() if k != "read_back_in_place"})
    report = verify(tmp_path / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    relog({**logged, "read_back_in_place": True})
    found = {(m.kind, m.field) for m in verify(tmp_path / "store").mismatches}
    assert {("FinalResult", "status"), ("FinalResult", "established")} <= found
