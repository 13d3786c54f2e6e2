"""End to end: a tool's own note is no second derivation (``ToolCall.content``).

The class, seen on a real model: an ``awk`` summing a column that does not exist printed
0; asked for a second derivation, the fresh conversation read the file at ``offset=1024``,
past its end, and got only artoo's note "… Use read_file(path=…, offset=0) to read it." —
whose ``0`` counted as a second call agreeing on 0, and the wrong total ended ``accept``.
(Here the wrong total is the file's size, 41, which ``wc -c`` prints and the note states
as its character count; the reading names no key or unit, so code derives nothing and
only derivations could prove it.) Run on a workspace of the test's own; ``replay
--verify`` of each log is clean. A note the shell tool adds (a missing program's
installed sibling) is likewise shown, never output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.actors.tools import ToolOutcome, ToolRegistry
from artoo.replay import verify
from artoo.schemas import CorrectionSignal, FinalResult, ToolCallEnded

from .helpers import CONFIG, all_events, run_verified

CRATES = "crate,weight\nA,12\nB,31\nC,7\nD,44\nE,5\nF,19\n"
TOTAL = "what is the total of the weight column in yard/crates.csv?"
AWK = {"name": "shell", "arguments": {"command": "wc -c yard/crates.csv"}}
PAST = {"name": "read_file", "arguments": {"path": "yard/crates.csv", "offset": 1024}}
WRONG = "The total of the weight column in yard/crates.csv is 41."


def _entries() -> list[dict[str, Any]]:
    """A total asked (no code derivation ties to it), round 0 the request itself, the
    wrong awk and its answer, then the fresh conversation's read past the end and the
    same answer."""
    perceive = {"intent": "sum the weights", "kind": "question", "answer": "number"}
    return [
        {"role": "perceiver", "content": perceive},
        {"role": "executor", "tool_calls": [AWK]},
        {"role": "executor", "content": WRONG},
        {"role": "executor", "tool_calls": [PAST]},
        {"role": "executor", "content": WRONG},
    ]


def _run(tmp: Path) -> tuple[FinalResult, list[Any]]:
    (tmp / "workspace" / "yard").mkdir(parents=True)
    (tmp / "workspace" / "yard" / "crates.csv").write_text(CRATES)
    result, store = run_verified(tmp, _entries(), TOTAL, CONFIG)
    return result, [e.body for e in all_events(store)]


def test_a_read_past_the_end_is_no_second_derivation_of_a_wrong_total(tmp_path: Path) -> None:
    result, bodies = _run(tmp_path)
    (signal,) = [b for b in bodies if isinstance(b, CorrectionSignal)]
    assert signal.corroborate == "41"  # one call backed it: a second derivation was asked
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert [(c.tool, c.conversation) for c in ended] == [("shell", 0), ("read_file", 1)]
    past = ended[1]
    assert "past the end" in past.output_preview and past.content == ""
    assert result.output == WRONG
    # one derivation of 41 (wc's), none agreeing: the model's word, not accepted
    assert (result.status, result.established) == ("success", "model")
    assert verify(tmp_path / "store").ok  # run_verified checked it too


def test_a_log_written_before_the_field_still_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run by a registry that records no ``content`` (a log from before the
    field): it decides as artoo did then — the note's 41 backs wc's — and ``replay
    --verify`` of that log, with today's rules, is clean."""
    live = ToolRegistry._outcome

    def old(self: ToolRegistry, *args: Any, **kwargs: Any) -> ToolOutcome:
        outcome = live(self, *args, **kwargs)
        return msgspec.structs.replace(
            outcome, call=msgspec.structs.replace(outcome.call, content=None)
        )

    monkeypatch.setattr(ToolRegistry, "_outcome", old)
    result, bodies = _run(tmp_path)
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert all(c.content is None for c in ended)
    assert (result.status, result.established) == ("accept", "code")  # the old false accept
    assert verify(tmp_path / "store").ok


def test_a_missing_commands_note_is_shown_and_served_not_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fakecmd`` is not installed, ``fakecmd3`` is: the model is shown the note after
    the command's result, the log keeps it only as what was shown, and a rerun serves it
    as it was shown (the model's next request agrees)."""
    from artoo.replay import rerun

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fakecmd3").write_text("#!/bin/sh\necho 3\n")
    (bin_dir / "fakecmd3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    config = CONFIG.model_copy(update={"tools": CONFIG.tools.model_copy(update={"sandbox": "off"})})
    ask = "what does fakecmd print?"
    perceive = {"intent": "run fakecmd", "kind": "question"}
    shell = {"name": "shell", "arguments": {"command": "fakecmd"}}
    entries = [
        {"role": "perceiver", "content": perceive},
        {"role": "executor", "tool_calls": [shell]},
        {"role": "executor", "content": "fakecmd is not installed."},
    ]
    _result, store = run_verified(tmp_path, entries, ask, config)
    (ended,) = [e.body for e in all_events(store) if isinstance(e.body, ToolCallEnded)]
    note = "[fakecmd is not installed here; fakecmd3 is: use fakecmd3]"
    assert ended.call.exit_code == 127 and ended.shown.endswith("\n" + note)
    assert note not in ended.call.output_preview and note not in (ended.call.stderr or "")
    reran = rerun(store)
    assert reran.ok and not reran.unanswered, (reran.unanswered, reran.divergence)
