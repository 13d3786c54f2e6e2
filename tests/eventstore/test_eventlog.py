"""The EventLog: seqs, keys, reading, reopening, durability modes, and the store errors."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import plyvel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.eventstore import (
    DURABILITY_MODES,
    EventLog,
    NotAStore,
    StoreLocked,
    envelope_tail,
)
from artoo.eventstore.eventlog import (
    HOLDER_FILE,
    encode_tail,
    event_key,
    index_entries,
    index_seqs,
    task_prefix,
)
from artoo.schemas import (
    CorruptRecord,
    Envelope,
    TaskCancelled,
    TaskRequest,
    UnknownMessage,
)


def env(text: str = "x", task_id: str | None = "t1", seq: int = 0, ts: float = 1.0) -> Envelope:
    """A small envelope (TaskRequest) for the log."""
    return Envelope(seq, ts, task_id, "queen", None, None, TaskRequest(text=text))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "events"


# --------------------------------------------------------------------------- appending
def test_append_assigns_seqs_from_one_without_gap(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        assert log.last_seq == 0
        assert log.append([env("a"), env("b")]) == [1, 2]
        assert log.append([env("c")]) == [3]
        assert log.append([]) == []
        read = list(log.read())
    assert [e.seq for e in read] == [1, 2, 3]
    assert [e.body.text for e in read] == ["a", "b", "c"]


def test_append_accepts_explicit_seqs_that_continue(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        assert log.append([env("a", seq=1), env("b"), env("c", seq=3)]) == [1, 2, 3]
        assert log.last_seq == 3


@pytest.mark.parametrize("bad", [[2], [1, 3], [1, 1], [5]])
def test_append_rejects_a_gap_or_repeat_and_writes_nothing(path: Path, bad: list[int]) -> None:
    with EventLog.open(path, durability="none") as log:
        with pytest.raises(ValueError, match="does not continue the log"):
            log.append([env(str(s), seq=s) for s in bad])
        assert log.last_seq == 0
        assert list(log.read()) == []


def test_append_encoded_must_continue(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        log.append([env()])
        tail = envelope_tail("t1", "bus", None, None, TaskCancelled())
        with pytest.raises(ValueError, match="expected 2"):
            log.append_encoded(3, 1.0, ["t1"], [tail])
        with pytest.raises(ValueError, match="1 task ids for 2 tails"):
            log.append_encoded(2, 1.0, ["t1"], [tail, tail])
        log.append_encoded(2, 9.5, ["t1", None], [tail, tail])
        second, third = list(log.read(2))
    assert (second.seq, second.ts, second.sender, second.body) == (2, 9.5, "bus", TaskCancelled())
    assert third.seq == 3


def test_keys_are_seq_ordered_big_endian(path: Path) -> None:
    """LevelDB order is seq order across byte boundaries (255 → 256, 65535 → 65536)."""
    assert event_key(255) < event_key(256) < event_key(65_536)
    with EventLog.open(path, durability="none") as log:
        log.append([env(str(i), task_id=None) for i in range(300)])
        assert [e.seq for e in log.read(250, 260)] == list(range(250, 261))


# --------------------------------------------------------------------------- reading
def test_read_ranges(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        log.append([env(str(i)) for i in range(1, 11)])
        assert [e.seq for e in log.read(4)] == list(range(4, 11))
        assert [e.seq for e in log.read(4, 6)] == [4, 5, 6]
        assert [e.seq for e in log.read(0, 2)] == [1, 2]
        assert list(log.read(7, 6)) == []
        assert list(log.read(11)) == []


def test_read_task_uses_the_index_and_keeps_tasks_apart(path: Path) -> None:
    """Task ids sharing a prefix ("a", "a|b", "a|") never leak into each other."""
    with EventLog.open(path, durability="none") as log:
        ids = ["a", "a|b", None, "a|", "b", "a"]
        log.append([env(str(i), task_id=t) for i, t in enumerate(ids)])
        assert [e.seq for e in log.read_task("a")] == [1, 6]
        assert [e.seq for e in log.read_task("a|b")] == [2]
        assert [e.seq for e in log.read_task("a|")] == [4]
        assert list(log.read_task("zzz")) == []


@settings(max_examples=25, deadline=None)
@given(
    groups=st.lists(
        st.lists(st.sampled_from(["t1", "t2", "t|3", None]), min_size=0, max_size=6),
        max_size=6,
    )
)
def test_any_appends_read_back_in_order_and_by_task(groups: list[list[str | None]]) -> None:
    """Property: read() is every append in order; read_task is read() filtered; reopen agrees."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events"
        expected: list[tuple[int, str | None]] = []
        with EventLog.open(path, durability="none") as log:
            for group in groups:
                seqs = log.append(
                    [env(f"{len(expected)}+{i}", task_id=t) for i, t in enumerate(group)]
                )
                expected += zip(seqs, group, strict=True)
        with EventLog.open(path, durability="none") as log:
            assert log.last_seq == len(expected)
            read = list(log.read())
            assert [(e.seq, e.task_id) for e in read] == expected
            assert [e.seq for e in read] == list(range(1, len(expected) + 1))
            for task in ("t1", "t2", "t|3"):
                assert list(log.read_task(task)) == [e for e in read if e.task_id == task]


# --------------------------------------------------------------------------- the task index
def _index_rows(path: Path) -> list[tuple[bytes, bytes]]:
    db = plyvel.DB(str(path))
    try:
        return list(db.iterator(prefix=b"t|"))
    finally:
        db.close()


def _be(*seqs: int) -> bytes:
    return b"".join(s.to_bytes(8, "big") for s in seqs)


def test_one_index_key_per_task_and_group_holding_its_other_seqs(path: Path) -> None:
    """Worked example: groups [a b a None a] and [b]: a's key at 1 names 3 and 5."""
    with EventLog.open(path, durability="none") as log:
        log.append([env(task_id=t) for t in ["a", "b", "a", None, "a"]])
        tail = envelope_tail("b", "s", None, None, TaskCancelled())
        log.append_encoded(6, 2.0, ["b"], [tail])
    assert _index_rows(path) == [
        (task_prefix("a") + _be(1), _be(3, 5)),
        (task_prefix("b") + _be(2), b""),
        (task_prefix("b") + _be(6), b""),
    ]
    with EventLog.open(path, durability="none") as log:
        assert [e.seq for e in log.read_task("a")] == [1, 3, 5]
        assert [e.seq for e in log.read_task("b")] == [2, 6]


def test_an_index_written_one_empty_key_per_message_still_reads(path: Path) -> None:
    """A log written by the first EventLog (``t|<task>|<seq> -> b""`` per message) reads the
    same, also mixed with keys in the grouped form."""
    with EventLog.open(path, durability="none") as log:
        log.append([env(str(i), task_id=None) for i in range(1, 6)])
    db = plyvel.DB(str(path))
    for seq in (1, 2, 4):  # the old form
        db.put(task_prefix("old") + _be(seq), b"")
    db.close()
    with EventLog.open(path, durability="none") as log:
        log.append([env("6", task_id="old"), env("7", task_id="old")])  # the grouped form
        assert [e.seq for e in log.read_task("old")] == [1, 2, 4, 6, 7]
    assert (task_prefix("old") + _be(6), _be(7)) in _index_rows(path)


def test_a_torn_index_value_is_corrupt(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        log.append([env(), env()])
    db = plyvel.DB(str(path))
    db.put(task_prefix("t1") + _be(1), _be(2)[:5])
    db.close()
    with EventLog.open(path, durability="none") as log:
        with pytest.raises(CorruptRecord, match=r"seq 1 has a 5-byte value"):
            list(log.read_task("t1"))


@settings(max_examples=60, deadline=None)
@given(
    first=st.integers(min_value=1, max_value=2**63),
    ids=st.lists(st.sampled_from(["a", "b", "a|b", "", None]), max_size=40),
)
def test_index_entries_name_each_tasks_seqs_exactly(first: int, ids: list[str | None]) -> None:
    """Property: expanding a group's entries gives each task its seqs, ascending, once."""
    entries = index_entries(first, ids)
    assert len({task for task, _, _ in entries}) == len(entries)
    for task, seq, value in entries:
        assert task is not None
        wanted = [first + i for i, t in enumerate(ids) if t == task]
        assert index_seqs(task_prefix(task) + seq.to_bytes(8, "big"), value) == wanted
    assert {task for task, _, _ in entries} == {t for t in ids if t is not None}


def test_encode_tail_is_envelope_tail() -> None:
    fields = ("t1", "s", "pair-1", 7, TaskCancelled(reason="r"))
    assert encode_tail(fields) == envelope_tail(*fields)


def test_reopen_recovers_last_seq_and_continues(path: Path) -> None:
    with EventLog.open(path, durability="batch") as log:
        log.append([env("a"), env("b"), env("c")])
    with EventLog.open(path, durability="batch") as log:
        assert log.last_seq == 3
        assert log.append([env("d")]) == [4]
    with EventLog.open(path) as log:
        assert [e.body.text for e in log.read()] == ["a", "b", "c", "d"]


def test_unknown_tag_reads_as_unknown_message_and_the_rest_still_reads(path: Path) -> None:
    """A record written by a newer artoo (unknown tag) keeps its bytes; later records read."""
    future_body = {"type": "FutureThing", "x": [1, 2], "y": "z"}
    with EventLog.open(path, durability="none") as log:
        log.append([env("before")])
        log.append_encoded(2, 5.0, ["t1"], [envelope_tail("t1", "future", None, 1, future_body)])
        log.append([env("after")])
    with EventLog.open(path, durability="none") as log:
        first, unknown, last = list(log.read())
        assert [e.seq for e in log.read_task("t1")] == [1, 2, 3]
    assert isinstance(unknown.body, UnknownMessage)
    assert unknown.kind == "FutureThing"
    assert msgspec.msgpack.decode(unknown.body.raw) == future_body
    assert (unknown.seq, unknown.ts, unknown.sender, unknown.cause) == (2, 5.0, "future", 1)
    assert first.body.text == "before"
    assert last.body.text == "after"


def test_unknown_message_is_stored_again_with_its_bytes(path: Path) -> None:
    """An UnknownMessage copied into another log (export, repair) keeps the raw bytes."""
    raw = msgspec.msgpack.encode({"type": "FutureThing", "n": 3})
    with EventLog.open(path, durability="none") as log:
        log.append([Envelope(0, 1.0, None, "x", None, None, UnknownMessage("FutureThing", raw))])
        (back,) = list(log.read())
    assert back.body == UnknownMessage("FutureThing", raw)


@pytest.mark.parametrize(
    "damage",
    [b"\x93garbage", b"", b"\x97\x01"],
    ids=["garbage", "empty", "truncated"],
)
def test_corrupt_record_raises_corrupt_record_naming_the_seq(path: Path, damage: bytes) -> None:
    with EventLog.open(path, durability="none") as log:
        log.append([env("a"), env("b"), env("c")])
    db = plyvel.DB(str(path))
    db.put(event_key(2), damage)
    db.close()
    with EventLog.open(path, durability="none") as log:
        records = log.read()
        assert next(records).seq == 1
        with pytest.raises(CorruptRecord, match=r"\bseq 2\b"):
            next(records)
        assert [e.seq for e in log.read(3)] == [3]
        with pytest.raises(CorruptRecord, match=r"\bseq 2\b"):
            list(log.read_task("t1"))


def test_a_record_under_the_wrong_key_is_corrupt(path: Path) -> None:
    with EventLog.open(path, durability="none") as log:
        log.append([env("a"), env("b")])
        data = next(log._db.iterator(start=event_key(2), include_key=False))
    db = plyvel.DB(str(path))
    db.put(event_key(1), data)  # seq 2's envelope stored as seq 1
    db.close()
    with EventLog.open(path, durability="none") as log:
        with pytest.raises(CorruptRecord, match="seq 1 holds an envelope with seq 2"):
            list(log.read())


# --------------------------------------------------------------------------- durability
@pytest.mark.parametrize("mode", DURABILITY_MODES)
def test_every_durability_mode_writes_and_reads(path: Path, mode: str) -> None:
    with EventLog.open(path, durability=mode) as log:  # type: ignore[arg-type]
        assert log.durability == mode
        log.append([env("a"), env("b")])
        log.append_encoded(3, 2.0, ["t1"], [envelope_tail("t1", "s", None, None, TaskCancelled())])
    with EventLog.open(path, durability=mode) as log:  # type: ignore[arg-type]
        assert [e.seq for e in log.read()] == [1, 2, 3]
        assert [e.seq for e in log.read_task("t1")] == [1, 2, 3]


@pytest.mark.parametrize("mode", ["", "sync", "ALWAYS", "fsync"])
def test_an_unknown_durability_mode_is_a_clear_value_error(path: Path, mode: str) -> None:
    with pytest.raises(ValueError, match=r"durability must be one of 'none', 'batch', 'always'"):
        EventLog.open(path, durability=mode)  # type: ignore[arg-type]
    assert not path.exists()


# --------------------------------------------------------------------------- store errors
def test_open_creates_a_missing_or_empty_directory(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "events"
    with EventLog.open(nested) as log:
        assert log.last_seq == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    with EventLog.open(empty) as log:
        log.append([env()])
    assert (empty / "CURRENT").exists()


def test_a_directory_that_is_not_a_leveldb_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(NotAStore) as info:
        EventLog.open(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert "not an artoo store" in str(info.value)
    assert info.value.path == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_file_is_not_a_store(tmp_path: Path) -> None:
    file = tmp_path / "events"
    file.write_text("x")
    with pytest.raises(NotAStore, match="not a directory") as info:
        EventLog.open(file)
    assert str(file) in str(info.value)


def test_holder_file_names_this_process_and_goes_on_close(path: Path) -> None:
    with EventLog.open(path):
        pid, command = (path / HOLDER_FILE).read_text().split("\n")[:2]
        assert int(pid) == os.getpid()
        assert sys.executable in command
    assert not (path / HOLDER_FILE).exists()


def test_opening_twice_in_one_process_is_store_locked(path: Path) -> None:
    with EventLog.open(path):
        with pytest.raises(StoreLocked) as info:
            EventLog.open(path)
    assert info.value.holder_pid == os.getpid()
    assert str(path) in str(info.value)
    with EventLog.open(path) as log:  # released on close
        assert log.last_seq == 0


_OPEN_IN_CHILD = """
import sys
from artoo.eventstore import EventLog, StoreLocked
try:
    EventLog.open(sys.argv[1])
except StoreLocked as exc:
    print(exc.holder_pid)
    print(exc)
    sys.exit(3)
sys.exit(0)
"""


def test_a_second_process_gets_store_locked_naming_path_and_holder(path: Path) -> None:
    with EventLog.open(path, durability="batch") as log:
        log.append([env()])
        child = subprocess.run(
            [sys.executable, "-c", _OPEN_IN_CHILD, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert child.returncode == 3, child.stderr
    pid_line, message = child.stdout.split("\n", 1)
    assert int(pid_line) == os.getpid()
    assert str(path) in message
    assert "in use" in message
    assert f"pid {os.getpid()}" in message
    assert sys.executable in message  # the holder's command line


def test_closed_log_reports_closed(path: Path) -> None:
    log = EventLog.open(path)
    assert not log.closed
    log.close()
    log.close()  # idempotent
    assert log.closed
    assert repr(log).startswith("EventLog(")
