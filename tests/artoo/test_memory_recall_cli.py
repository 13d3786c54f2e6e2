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


def test_memory_shows_a_tags_sop_text_beside_its_requests(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import artoo
    from artoo.schemas import Megram, SOPPromoted

    from .helpers import CONFIG, DATA

    store = tmp_path / "store"
    model = f"scripted:{DATA / 'scenarios' / '1_success.toml'}"
    with artoo.System.open(store, model=model, workspace=workspace, config=CONFIG) as system:
        assert system.run("count the python files under src", timeout=60).status == "accept"
        rows, _ = memory_rows(store, time.time())
        (intent,) = [r for r in rows if r.requests]
        sop = Megram(
            id="sop1",
            level="C",
            created_at=time.time(),
            space=intent.space,
            entity=intent.entity,
            content="count them with `find src -name '*.py' | wc -l`",
            sigma=1.0,
            f=0.9,
        )
        system.bus.publish(SOPPromoted(megram=sop), sender="dreamer")
        system.flush(10.0)
    (row,) = [r for r in memory_rows(store, time.time())[0] if r.space == intent.space]
    assert row.requests == ("count the python files under src",)
    assert row.sops == ("count them with `find src -name '*.py' | wc -l`",)
    assert main(["memory", str(store)]) == 0
    assert "wc -l" in capsys.readouterr().out


def test_the_timeline_says_what_recall_read(demo_store: Path) -> None:
    from artoo.replay import task_table, timeline

    remembered = task_table(demo_store)[4]  # scenario 5: scenario 2's request again
    (task,) = timeline(demo_store, remembered.task_id)
    details = [d for e in task.entries for d in e.detail]
    read = [d for d in details if d.startswith("recalled read:")]
    assert read and "report the total of this year's sales figures" in read[0]
    assert any(d.startswith("episode ") for d in details)
