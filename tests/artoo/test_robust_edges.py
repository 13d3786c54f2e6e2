"""Robust edges: each ends in one clear line, or a FinalResult — control characters in a
request, a log that lost its tail or was emptied, a truncated table file, a role timeout
too small to mean anything."""

from __future__ import annotations

from pathlib import Path

import plyvel
import pydantic
import pytest

import artoo
from artoo.eventstore.eventlog import CorruptLog, EventLog, StoreError
from artoo.schemas import Config, Envelope, TaskRequest
from artoo.testing import write_script


def _log(path: Path, count: int) -> None:
    with EventLog.open(path) as log:
        log.append(
            [Envelope(0, 1.0, "t1", "queen", None, None, TaskRequest(text="x" * 200))] * count
        )


@pytest.mark.parametrize("text", ["a\udc80b", "bell\x07 nul\x00 esc\x1b[31m rtl\u202e"])
def test_control_characters_in_a_request_end_in_a_final_result(tmp_path: Path, text: str) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [
            {"role": "perceiver", "content": {"intent": "x", "slug": "x"}},
            {"role": "planner", "content": {"subtasks": [{"instruction": "say hi"}]}},
            {"role": "executor", "content": "hi"},
        ],
    )
    with artoo.System.open(tmp_path / "store", model=model, workspace=tmp_path) as s:
        result = s.run(text, 30)
    assert result.status in ("accept", "success", "abandon", "escalate")


@pytest.mark.parametrize("keep", [5, 0])
def test_a_log_that_lost_its_tail_or_was_emptied_does_not_open(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "events"
    _log(path, 10)
    db = plyvel.DB(str(path))
    with db.write_batch() as batch:
        for key in list(db.iterator(prefix=b"e|", include_value=False))[keep:]:
            batch.delete(key)
    db.close()
    with pytest.raises(CorruptLog, match=f"ends at seq {keep} but had reached seq 10"):
        EventLog.open(path)


def test_a_truncated_table_file_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "events"
    with EventLog.open(path) as log:
        log.append(
            [Envelope(0, 1.0, "t1", "queen", None, None, TaskRequest(text="x" * 200))] * 3000
        )
        log._db.compact_range()
    (path / "LAST").unlink()  # a store from before the log noted its last seq
    [table] = path.glob("*.ldb")
    with open(table, "r+b") as f:
        f.truncate(table.stat().st_size // 2)
    with pytest.raises(StoreError) as caught:
        EventLog.open(path)
    message = str(caught.value)
    assert "\n" not in message and "b'" not in message and table.name in message


def test_a_role_timeout_too_small_to_mean_anything_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="role_timeout_s"):
        Config(role_timeout_s=1e-9)
