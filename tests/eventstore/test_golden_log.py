"""A log written by artoo 0.1.0's ``artoo demo`` (before the runtime rebuild) still reads.

``tests/data/golden_demo_0_1/events`` is that demo's event log, kept as LevelDB files. New
fields got defaults and no field changed its type (msgspec's schema-evolution rules), so
every envelope decodes to a known message type, and a System opens the store.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import artoo
from artoo.eventstore import EventLog
from artoo.schemas import (
    ExecutionResult,
    FinalResult,
    LLMCall,
    ToolCall,
    UnknownMessage,
    UserRequest,
)

GOLDEN = Path(__file__).parent.parent / "data" / "golden_demo_0_1"


def _copy(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(GOLDEN, store)
    return store


def test_every_envelope_of_the_old_demo_log_decodes(tmp_path: Path) -> None:
    store = _copy(tmp_path)
    with EventLog.open(store / "events", durability="none") as log:
        envelopes = list(log.read())
    kinds = Counter(type(e.body).__name__ for e in envelopes)
    assert not any(isinstance(e.body, UnknownMessage) for e in envelopes)
    assert [e.seq for e in envelopes] == list(range(1, len(envelopes) + 1))
    assert kinds["UserRequest"] == kinds["FinalResult"] == 5
    assert kinds["LLMCall"] > 20
    finals = [e.body for e in envelopes if isinstance(e.body, FinalResult)]
    # fields added since then read as their defaults
    assert all(f.reason is None and f.law1_denied is False for f in finals)
    assert [f.status for f in finals] == ["accept", "accept", "accept", "abandon", "accept"]
    assert "[LAW1]" in finals[3].summary
    results = [e.body for e in envelopes if isinstance(e.body, ExecutionResult)]
    assert results and all(r.stop is None for r in results)
    calls: list[ToolCall] = [c for r in results for c in r.tool_calls]
    assert calls and all(c.refusal is None for c in calls)
    assert all(isinstance(e.body, LLMCall) for e in envelopes if e.sender == "executor")


def test_a_system_opens_the_old_store_and_finds_no_orphan(tmp_path: Path) -> None:
    store = _copy(tmp_path)
    with EventLog.open(store / "events", durability="none") as log:
        before = log.last_seq
        tasks = [e.task_id for e in log.read() if isinstance(e.body, UserRequest)]
    with artoo.System.open_offline(store) as system:
        assert system.interrupted == []
        assert len(system.megrams) > 0  # memory rebuilt from the old log
    with EventLog.open(store / "events", durability="none") as log:
        assert log.last_seq == before  # nothing was added
        for task_id in tasks:
            assert sum(isinstance(e.body, FinalResult) for e in log.read_task(task_id)) == 1
