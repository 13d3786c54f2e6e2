"""``artoo memory``: per tag, the requests recall matches; ``--recall TEXT``: what a request
would recall, with ranks, scores and flags (issue 21)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from artoo.cli import main
from artoo.memoryview import memory_recall, memory_rows


def test_memory_shows_each_intent_tags_requests(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows, _ = memory_rows(demo_store, time.time())
    by_space = {r.space: r for r in rows}
    sales = [r for r in rows if "report the total of this year's sales figures" in r.requests]
    assert len(sales) == 1 and sales[0].space.startswith("intent:")
    assert all(not r.requests for s, r in by_space.items() if s.startswith("tool:"))
    assert main(["memory", str(demo_store)]) == 0
    assert "report the total of this year's sales figures" in capsys.readouterr().out


def test_recall_shows_what_a_paraphrase_would_read(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = memory_recall(demo_store, "report the total of the sales figures", time.time())
    top = answer.recalled[0]
    assert top.recalled and top.text == "report the total of this year's sales figures"
    assert answer.action == "exploit" and answer.episodes  # scenario 2's accepted plan
    assert answer.episodes[0].steps[0].commands  # it names what it ran
    assert main(["memory", str(demo_store), "--recall", "report the total of the sales"]) == 0
    out = capsys.readouterr().out
    assert "recalled" in out and f"tags read: {top.space}" in out


def test_recall_flags_a_keyword_trap(demo_store: Path) -> None:
    # shares "delete" and "log" with scenario 4's request, asks something else
    answer = memory_recall(demo_store, "delete the log lines that mention errors", time.time())
    flagged = [r for r in answer.recalled if r.distractor]
    assert [r.text for r in flagged] == ["delete the old log archive/old.log"]
    assert not any(r.recalled for r in answer.recalled)
