"""``artoo export --format jsonl``: one envelope per line, decodable back exactly."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from artoo.cli import main
from artoo.eventstore import EventLog
from artoo.export import export_jsonl, read_jsonl
from artoo.schemas import Envelope, TaskCancelled, UnknownMessage

GOLDEN = Path(__file__).parent.parent / "data" / "golden_demo_0_1"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    shutil.copytree(GOLDEN, tmp_path / "store")
    return tmp_path / "store"


def _logged(store: Path) -> list[Envelope]:
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read())


def test_the_export_of_a_demo_store_reads_back_as_the_same_envelopes(store: Path) -> None:
    out = io.BytesIO()
    assert export_jsonl(store, out) == len(_logged(store))
    lines = out.getvalue().splitlines()
    assert all(json.loads(line)["body"]["type"] for line in lines)  # plain JSON, typed
    assert list(read_jsonl(lines)) == _logged(store)


def test_an_unknown_message_keeps_its_bytes(tmp_path: Path) -> None:
    odd = Envelope(0, 1.0, "t", "x", None, None, UnknownMessage("FromTheFuture", b"\x81\xa1a\x01"))
    known = Envelope(0, 2.0, "t", "x", None, 1, TaskCancelled(reason="r"))
    with EventLog.open(tmp_path / "s" / "events", durability="none") as log:
        log.append([known])
    out = io.BytesIO()
    export_jsonl(tmp_path / "s", out)
    from artoo.export import _line

    line = _line(Envelope(2, 1.0, "t", "x", None, None, odd.body))
    (back,) = read_jsonl([line])
    assert back.body == odd.body
    (again,) = read_jsonl(out.getvalue().splitlines())
    assert again.body == known.body


def test_the_cli_writes_one_task_to_a_file(store: Path, tmp_path: Path) -> None:
    task = next(e.task_id for e in _logged(store) if e.task_id)
    target = tmp_path / "one.jsonl"
    assert main(["export", str(store), "--task", task, "-o", str(target)]) == 0
    envelopes = list(read_jsonl(target.read_bytes().splitlines()))
    assert envelopes and {e.task_id for e in envelopes} == {task}
