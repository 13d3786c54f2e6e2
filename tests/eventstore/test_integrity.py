"""A damaged event log is refused at open with one line naming what is wrong; its clean
prefix can be salvaged; memory follows the log it was built from."""

from __future__ import annotations

from pathlib import Path

import plyvel
import pytest

import artoo
from artoo.eventstore import CorruptLog, EventLog, StoreError, salvage
from artoo.schemas import Envelope, MegramRecorded, UserRequest

from .test_potentials_boundaries import m


def _write(path: Path, n: int, group: int = 1) -> None:
    with EventLog.open(path, durability="batch") as log:
        for start in range(0, n, group):
            log.append(
                [
                    Envelope(
                        0, 1.0, f"t{i % 7}", "host", None, None, UserRequest(text=f"m{i}" * 20)
                    )
                    for i in range(start, min(n, start + group))
                ]
            )


def _one_line_error(path: Path) -> StoreError:
    with pytest.raises(StoreError) as info:
        EventLog.open(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    return info.value


def test_a_gap_in_the_seqs_is_refused_naming_the_missing_range(tmp_path: Path) -> None:
    _write(tmp_path / "events", 50)
    db = plyvel.DB(str(tmp_path / "events"))
    for seq in range(20, 26):
        db.delete(b"e|" + seq.to_bytes(8, "big"))
    db.close()
    error = _one_line_error(tmp_path / "events")
    assert isinstance(error, CorruptLog) and error.clean_until == 19
    assert "seqs 20–25 are missing" in str(error)


def test_zeroed_bytes_in_the_write_ahead_log_are_a_one_line_error(tmp_path: Path) -> None:
    _write(tmp_path / "events", 400)
    (wal,) = (tmp_path / "events").glob("*.log")
    data = bytearray(wal.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 200] = bytes(200)
    wal.write_bytes(bytes(data))
    error = _one_line_error(tmp_path / "events")
    assert "damaged" in str(error) or "corrupt" in str(error)


def test_flipped_bytes_in_a_table_file_are_a_one_line_error(tmp_path: Path) -> None:
    _write(tmp_path / "events", 2000, group=100)
    db = plyvel.DB(str(tmp_path / "events"))
    db.compact_range()
    db.close()
    table = max((tmp_path / "events").glob("*.ldb"), key=lambda p: p.stat().st_size)
    data = bytearray(table.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    table.write_bytes(bytes(data))
    error = _one_line_error(tmp_path / "events")
    assert "damaged" in str(error) or "corrupt" in str(error)


def test_salvage_copies_the_clean_prefix_into_a_new_store(tmp_path: Path) -> None:
    _write(tmp_path / "old" / "events", 60)
    db = plyvel.DB(str(tmp_path / "old" / "events"))
    db.delete(b"e|" + (41).to_bytes(8, "big"))
    db.close()
    assert salvage(tmp_path / "old", tmp_path / "new") == 40
    with EventLog.open(tmp_path / "new" / "events") as log:
        assert [e.body.text for e in log.read()] == [f"m{i}" * 20 for i in range(40)]


def test_memory_built_from_another_log_is_rebuilt_from_this_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with artoo.System.open_offline(store) as system:
        system.bus.publish(MegramRecorded(megram=m("a", 0.9, 1.0)), sender="ggs")
        system.flush(5)
        assert len(system.megrams) == 1
    # a new event log beside the old memory: the old watermark and megrams mean nothing
    import shutil

    shutil.rmtree(store / "events")
    with artoo.System.open_offline(store) as system:
        assert len(system.megrams) == 0 and system.megrams.applied_seq == 0
        system.bus.publish(MegramRecorded(megram=m("b", 0.9, 1.0)), sender="ggs")
        system.flush(5)
        assert [x.id for x in system.megrams.megrams()] == ["b"]


def test_read_only_skips_the_scan_but_every_read_across_a_gap_names_it(tmp_path: Path) -> None:
    """A reader of the whole log (replay) opens without the key scan; the read itself
    checks each seq, and stops at the gap with the same CorruptLog the open gives."""
    _write(tmp_path / "events", 50)
    with EventLog.open(tmp_path / "events", read_only=True) as log:
        intact = list(log.read())
        with pytest.raises(RuntimeError, match="read_only"):
            log.append([intact[0]])
    assert [e.seq for e in intact] == list(range(1, 51))
    db = plyvel.DB(str(tmp_path / "events"))
    for seq in range(20, 26):
        db.delete(b"e|" + seq.to_bytes(8, "big"))
    db.close()
    with EventLog.open(tmp_path / "events", read_only=True) as log:
        assert list(log.read(to_seq=19)) == intact[:19]  # before the gap: fine
        assert list(log.read(from_seq=26)) == intact[25:]  # after it: fine
        for start in (1, 20, 23):
            with pytest.raises(CorruptLog) as info:
                list(log.read(from_seq=start))
            assert f"seqs {max(start, 20)}–25 are missing" in str(info.value)


def test_a_record_holding_another_seq_is_named_by_a_read(tmp_path: Path) -> None:
    from artoo.schemas import CorruptRecord, encode_envelope

    _write(tmp_path / "events", 10)
    with EventLog.open(tmp_path / "events") as log:
        [sixth] = list(log.read(6, 6))
    db = plyvel.DB(str(tmp_path / "events"))
    moved = Envelope(9, sixth.ts, sixth.task_id, sixth.sender, None, None, sixth.body)
    db.put(b"e|" + (6).to_bytes(8, "big"), encode_envelope(moved))
    db.close()
    with EventLog.open(tmp_path / "events", read_only=True) as log:
        with pytest.raises(CorruptRecord, match="record at seq 6 holds an envelope with seq 9"):
            list(log.read())
