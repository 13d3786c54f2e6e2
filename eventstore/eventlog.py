"""The EventLog: every bus envelope, in seq order, in one LevelDB directory.

Keys (docs/ARCHITECTURE.md, Storage)::

    e|<seq>            -> the envelope, msgpack (``encode_envelope``)
    t|<task_id>|<seq>  -> the task's further seqs in the same group (per-task index)

``<seq>`` is 8 bytes big-endian, so LevelDB's key order is seq order. Seqs start at 1 and
have no gap. Each ``append`` call is one WriteBatch (group commit); how it reaches the disk
depends on the durability mode:

- ``"none"``: ``sync=False`` — the OS buffers the write (survives a process crash, not a
  power cut);
- ``"batch"``: one fsync per append call (``WriteBatch(sync=True)``);
- ``"always"``: one fsync per message — each message is its own synced batch, durable
  before the next one is written.

The per-task index holds one key per task and group: ``t|<task_id>|<s>`` where ``<s>`` is
the task's first seq in that group; its value is the task's other seqs of the group, in
ascending order, each 8 bytes big-endian (so ``b""`` when the group held one message of
the task — which is also how a log written one index key per message reads). Groups never
interleave, so reading the keys in order and expanding each value yields the task's seqs
in seq order.

Only one process may hold the directory. Opening writes a ``HOLDER`` file (pid and command
line) next to LevelDB's files, so a second opener gets a :class:`StoreLocked` that names the
holder.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import shlex
import struct
import sys
import threading
import uuid
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from types import TracebackType
from typing import Literal, Self, get_args

import msgspec
import plyvel

from artoo.schemas import CorruptRecord, Envelope, decode_envelope, encode_envelope
from artoo.schemas.envelope import _typed_decoder

__all__ = [
    "DURABILITY_MODES",
    "CorruptLog",
    "Durability",
    "EventLog",
    "NotAStore",
    "StoreError",
    "StoreLocked",
    "close_leveldb",
    "envelope_tail",
    "open_leveldb",
]

Durability = Literal["none", "batch", "always"]
DURABILITY_MODES: tuple[str, ...] = get_args(Durability)

HOLDER_FILE = "HOLDER"
LAST_FILE = "LAST"
"""Beside the LevelDB files: the last seq the log held when last closed (a log that opens
with fewer lost its tail, or was emptied: CorruptLog)."""
_EVENT = b"e|"
_EVENT_END = b"e}"  # the first key after every e|<seq> ("}" follows "|")
_LOG_ID = b"s|log_id"  # the log's identity (outside the e| and t| ranges)
_TASK = b"t|"
_SEP = b"|"
_PREFIX_CACHE = 4096  # task prefixes kept encoded
_SEQ = struct.Struct(">Q")
_pack_seq = _SEQ.pack
_unpack_seq = _SEQ.unpack
_pack_event_key = struct.Struct(">2sQ").pack  # (b"e|", seq) -> e|<seq>
_LITTLE_ENDIAN = sys.byteorder == "little"
if array("Q").itemsize != 8:  # pragma: no cover - every CPython platform we run on
    raise ImportError("the task index packs seqs as array('Q'), which is not 8 bytes here")

# The record of an envelope written by append_encoded: [seq, ts, *tail] as msgpack.
_ENVELOPE_FIELDS = ("seq", "ts", "task_id", "sender", "to", "cause", "body")
if Envelope.__struct_fields__ != _ENVELOPE_FIELDS:  # pragma: no cover - schema guard
    raise ImportError(f"EventLog.append_encoded writes Envelope as {_ENVELOPE_FIELDS}")
_HEAD = b"\x97\xcf"  # fixarray of 7, then seq as uint64
_FLOAT64 = 0xCB  # then ts as float64
_pack_head = struct.Struct(">2sQBd").pack  # (_HEAD, seq, _FLOAT64, ts)
_ARRAY5 = b"\x95"  # the header of a tail: fixarray of 5

encode_tail: Callable[[tuple[str | None, str, str | None, int | None, object]], bytes] = (
    msgspec.msgpack.Encoder().encode
)
"""``encode_tail((task_id, sender, to, cause, body))``: the tail :meth:`EventLog.append_encoded`
takes (the same bytes as :func:`envelope_tail`, without the call)."""


# --------------------------------------------------------------------------- errors
class StoreError(RuntimeError):
    """A store directory cannot be opened. ``path`` names the directory."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class StoreLocked(StoreError):
    """Another process (or another open in this one) holds the directory.

    ``holder_pid`` and ``holder_command`` come from the holder's ``HOLDER`` file (None when
    the holder has not written it).
    """

    def __init__(self, path: Path, holder_pid: int | None, holder_command: str | None) -> None:
        if holder_pid is None:
            who = "an unknown process (no HOLDER file)"
        else:
            who = f"pid {holder_pid}" + (f" ({holder_command})" if holder_command else "")
        super().__init__(
            f"store {path} is in use by {who}; stop that process or open another store", path
        )
        self.holder_pid = holder_pid
        self.holder_command = holder_command


class CorruptLog(StoreError):
    """The event log lost or damaged records. ``clean_until`` is the last seq of the clean
    prefix: :func:`salvage` copies seqs 1..clean_until into a new store."""

    def __init__(self, path: Path, what: str, clean_until: int) -> None:
        super().__init__(
            f"the event log {path} is damaged: {what}; the clean prefix is seqs "
            f"1–{clean_until} (artoo.eventstore.salvage copies it into a new store)",
            path,
        )
        self.clean_until = clean_until


class NotAStore(StoreError):
    """A path that is not a LevelDB: a file, or a non-empty directory with no CURRENT file."""

    def __init__(self, path: Path) -> None:
        why = (
            "it is not a directory"
            if path.exists() and not path.is_dir()
            else "the directory is not empty and holds no LevelDB (no CURRENT file)"
        )
        super().__init__(f"{path} is not an artoo store: {why}", path)


# --------------------------------------------------------------------------- keys
def event_key(seq: int) -> bytes:
    """The ``e|<seq>`` key of one envelope."""
    return _pack_event_key(_EVENT, seq)


def task_prefix(task_id: str) -> bytes:
    """The ``t|<task_id>|`` prefix of a task's index keys."""
    return _TASK + task_id.encode() + _SEP


def envelope_tail(
    task_id: str | None, sender: str, to: str | None, cause: int | None, body: object
) -> bytes:
    """An envelope encoded without its seq and ts, for :meth:`EventLog.append_encoded`.

    The msgpack array ``[task_id, sender, to, cause, body]``; the log swaps its 5-array
    header for the 7-array header, the seq (uint64) and the ts (float64): byte for byte a
    msgpack ``Envelope`` that ``decode_envelope`` reads. ``body`` is encoded as is.
    """
    return encode_tail((task_id, sender, to, cause, body))


def index_entries(first_seq: int, task_ids: Sequence[str | None]) -> list[tuple[str, int, bytes]]:
    """The per-task index of one group: ``(task_id, first seq, value)`` per task in it.

    ``task_ids[i]`` is the task of seq ``first_seq + i`` (None: no task, not indexed). The
    value packs the task's other seqs of the group, 8 bytes big-endian each, ascending.
    """
    seqs = range(first_seq, first_seq + len(task_ids))
    if task_ids and task_ids.count(task_ids[0]) == len(task_ids):  # one task: the usual
        by_task: dict[str | None, list[int]] = {task_ids[0]: list(seqs)}
    else:
        by_task = {}
        for seq, task_id in zip(seqs, task_ids, strict=True):
            try:
                by_task[task_id].append(seq)
            except KeyError:
                by_task[task_id] = [seq]
    return [
        (task_id, task_seqs[0], _pack_seqs(task_seqs[1:]))
        for task_id, task_seqs in by_task.items()
        if task_id is not None
    ]


def index_seqs(key: bytes, value: bytes) -> list[int]:
    """The seqs one ``t|<task_id>|<seq>`` index entry names, ascending.

    An empty value (one message, or a log written one index key per message) names the
    key's seq alone. Raises :class:`~artoo.schemas.CorruptRecord` for a value that is not
    whole 8-byte seqs.
    """
    first = _seq_of_key(key)
    if not value:
        return [first]
    count, rest = divmod(len(value), 8)
    if rest:
        raise CorruptRecord(
            f"task index entry at seq {first} has a {len(value)}-byte value, "
            "not a whole number of 8-byte seqs"
        )
    return [first, *struct.unpack(f">{count}Q", value)]


def _pack_seqs(seqs: list[int]) -> bytes:
    packed = array("Q", seqs)  # 8-byte unsigned (asserted at import)
    if _LITTLE_ENDIAN:
        packed.byteswap()
    return packed.tobytes()


def _seq_of_key(key: bytes) -> int:
    return _unpack_seq(key[-8:])[0]


# --------------------------------------------------------------------------- LevelDB access
def open_leveldb(path: str | os.PathLike[str]) -> plyvel.DB:
    """Open (creating if missing or empty) the LevelDB at ``path`` for this process alone.

    Writes a ``HOLDER`` file with this process's pid and command line. Raises
    :class:`StoreLocked` when another holder has it and :class:`NotAStore` when the
    directory holds something other than a LevelDB. Release with :func:`close_leveldb`.
    """
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise NotAStore(directory)
    if directory.is_dir() and not (directory / "CURRENT").exists():
        if any(entry.name not in (HOLDER_FILE, LAST_FILE) for entry in directory.iterdir()):
            raise NotAStore(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key = directory.resolve()
    with _HELD_LOCK:
        if key in _HELD:  # LevelDB allows one open per process too
            raise StoreLocked(directory, os.getpid(), shlex.join([sys.executable, *sys.argv]))
        _probe_lock(directory)
        try:
            db = plyvel.DB(str(directory), create_if_missing=True, paranoid_checks=True)
        except plyvel.IOError as exc:
            raise StoreError(f"cannot open store {directory}: {exc}", directory) from exc
        except plyvel.CorruptionError as exc:
            raise StoreError(f"store {directory} is corrupt: {exc}", directory) from exc
        _HELD.add(key)
    _write_holder(directory)
    return db


_HELD: set[Path] = set()  # LevelDB directories this process has open
_HELD_LOCK = threading.Lock()


def _probe_lock(directory: Path) -> None:
    """Decide, before LevelDB tries, why a store could not be opened: another process holds
    its lock (StoreLocked naming it), or we may not write it (permission denied)."""
    if not os.access(directory, os.W_OK | os.X_OK):
        raise StoreError(f"permission denied: cannot write the store {directory}", directory)
    lock = directory / "LOCK"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except PermissionError:
        raise StoreError(f"permission denied: cannot open {lock}", directory) from None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # LevelDB locks LOCK the same way
    except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: another process holds it
        pid, command = _read_holder(directory)
        raise StoreLocked(directory, pid, command) from None
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def close_leveldb(db: plyvel.DB, path: str | os.PathLike[str]) -> None:
    """Close a LevelDB opened by :func:`open_leveldb` and remove our ``HOLDER`` file."""
    if db.closed:
        return
    db.close()
    with _HELD_LOCK:
        _HELD.discard(Path(path).resolve())
    holder = Path(path) / HOLDER_FILE
    try:
        if holder.read_text().split("\n", 1)[0] == str(os.getpid()):
            holder.unlink()
    except OSError:
        pass


def _write_small(directory: Path, name: str, text: str) -> None:
    tmp = directory / f".{name}.{os.getpid()}"
    tmp.write_text(text)
    tmp.replace(directory / name)


def _write_holder(directory: Path) -> None:
    command = shlex.join([sys.executable, *sys.argv])
    _write_small(directory, HOLDER_FILE, f"{os.getpid()}\n{command}\n")


def _read_last(directory: Path) -> int:
    try:
        return int((directory / LAST_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _read_holder(directory: Path) -> tuple[int | None, str | None]:
    try:
        text = (directory / HOLDER_FILE).read_text()
    except OSError:
        return None, None
    pid_line, _, rest = text.partition("\n")
    try:
        pid = int(pid_line)
    except ValueError:
        return None, None
    return pid, rest.strip() or None


# --------------------------------------------------------------------------- the log
class EventLog:
    """The append-only log of envelopes (see the module docstring for keys and modes).

    ``append`` and ``append_encoded`` are safe to call from several threads (they are
    serialised); reads may run concurrently with appends and see a consistent snapshot.

    Example::

        with EventLog.open(store / "events", durability="batch") as log:
            log.append([Envelope(0, now, "t1", "queen", None, None, TaskRequest(text="hi"))])
            for envelope in log.read_task("t1"):
                ...
    """

    def __init__(
        self, db: plyvel.DB, path: Path, durability: Durability, *, read_only: bool = False
    ) -> None:
        """Wrap an open LevelDB; use :meth:`open` instead."""
        self._db = db
        self._path = path
        self._durability: Durability = durability
        self._read_only = read_only
        self._lock = threading.Lock()
        self._task_prefixes: dict[str, bytes] = {}
        try:
            self._last_seq = _last_key_seq(db, path) if read_only else _check_contiguous(db, path)
            raw_id = db.get(_LOG_ID)
        except (plyvel.CorruptionError, plyvel.IOError) as exc:  # e.g. a truncated .ldb
            what = exc.args[0] if exc.args else exc
            text = what.decode("utf-8", "replace") if isinstance(what, bytes) else str(what)
            raise StoreError(f"the event log {path} is corrupt: {text}", path) from None
        reached = _read_last(path)
        if reached > self._last_seq:
            raise CorruptLog(
                path,
                f"it ends at seq {self._last_seq} but had reached seq {reached} (its tail was "
                "lost, or it was emptied)",
                self._last_seq,
            )
        if raw_id is None:  # a new log, or one written before logs had an identity
            raw_id = uuid.uuid4().hex.encode()
            db.put(_LOG_ID, raw_id, sync=True)
        self._log_id = raw_id.decode()

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        durability: Durability = "batch",
        *,
        read_only: bool = False,
    ) -> EventLog:
        """Open the log at ``path`` (the LevelDB directory itself; created if missing or empty).

        Opening checks that seqs 1…last are all there (a scan of every key) and that the
        last record decodes: a damaged log raises :class:`CorruptLog` naming the seqs.
        ``read_only`` (a reader of the whole log, such as ``artoo replay``) skips the scan
        but for the tail: :meth:`read` checks every seq it passes anyway, raising the same
        CorruptLog at a gap; appending to such a log raises RuntimeError.

        Raises ValueError for an unknown durability mode, :class:`StoreLocked` when another
        holder has the directory, :class:`NotAStore` when it is not a LevelDB.
        """
        if durability not in DURABILITY_MODES:
            raise ValueError(
                f"durability must be one of {', '.join(map(repr, DURABILITY_MODES))}, "
                f"not {durability!r}"
            )
        directory = Path(path)
        db = open_leveldb(directory)
        try:
            return cls(db, directory, durability, read_only=read_only)
        except BaseException:
            close_leveldb(db, directory)
            raise

    def close(self) -> None:
        """Close the log (idempotent) and release the directory, noting its last seq
        (:data:`LAST_FILE`)."""
        with self._lock:
            if not self._db.closed and not self._read_only:
                with contextlib.suppress(OSError):
                    _write_small(self._path, LAST_FILE, f"{self._last_seq}\n")
            close_leveldb(self._db, self._path)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventLog({str(self._path)!r}, durability={self._durability!r})"

    # ------------------------------------------------------------------ properties
    @property
    def path(self) -> Path:
        """The LevelDB directory."""
        return self._path

    @property
    def durability(self) -> Durability:
        """The durability mode this log was opened with."""
        return self._durability

    @property
    def last_seq(self) -> int:
        """The seq of the last appended envelope (0 when the log is empty)."""
        return self._last_seq

    @property
    def log_id(self) -> str:
        """This log's identity, written when it was created: memory (a projection of the
        log) remembers which log it follows, so a new log restarts the projection."""
        return self._log_id

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return bool(self._db.closed)

    # ------------------------------------------------------------------ writing
    def append(self, envelopes: Iterable[Envelope]) -> list[int]:
        """Append envelopes in one group commit; return their seqs.

        An envelope with ``seq == 0`` is given the next seq (its other fields are kept).
        A nonzero seq must be exactly the next one (``last_seq + 1`` for the first,
        contiguous after that); anything else raises ValueError and writes nothing.
        """
        self._writable()
        with self._lock:
            expected = self._last_seq + 1
            seqs: list[int] = []
            task_ids: list[str | None] = []
            records: list[bytes] = []
            for envelope in envelopes:
                if envelope.seq == 0:
                    envelope = msgspec.structs.replace(envelope, seq=expected)
                elif envelope.seq != expected:
                    raise ValueError(
                        f"envelope seq {envelope.seq} does not continue the log: expected "
                        f"{expected} (or 0 to have it assigned)"
                    )
                seqs.append(expected)
                task_ids.append(envelope.task_id)
                records.append(encode_envelope(envelope))
                expected += 1
            self._write(self._last_seq + 1, task_ids, records)
            return seqs

    def append_encoded(
        self, first_seq: int, ts: float, task_ids: Sequence[str | None], tails: Sequence[bytes]
    ) -> None:
        """The bus's fast path: write one group of pre-encoded messages in one group commit.

        ``tails[i] = envelope_tail(task_ids[i], sender, to, cause, body)``; the log completes
        each envelope with its seq (``first_seq``, ``first_seq + 1``, …) and the group's
        ``ts``, without re-encoding the body. ``first_seq`` must be ``last_seq + 1``, else
        ValueError.
        """
        self._writable()
        if len(task_ids) != len(tails):
            raise ValueError(f"{len(task_ids)} task ids for {len(tails)} tails")
        with self._lock:
            if first_seq != self._last_seq + 1:
                raise ValueError(
                    f"first_seq {first_seq} does not continue the log: expected "
                    f"{self._last_seq + 1}"
                )
            self._write(first_seq, task_ids, tails, ts)

    def _write(
        self,
        first_seq: int,
        task_ids: Sequence[str | None],
        datas: Sequence[bytes],
        ts: float | None = None,
    ) -> None:
        # Caller holds self._lock. With a ts the datas are tails, else whole envelopes.
        db = self._db
        prefixes = self._task_prefixes
        if self._durability == "always":  # each message durable before the next is written
            for seq, task_id, data in zip(itertools.count(first_seq), task_ids, datas):
                batch = db.write_batch(sync=True)
                _fill(batch.put, prefixes, seq, (task_id,), (data,), ts)
                batch.write()
                self._last_seq = seq
            return
        batch = db.write_batch(sync=self._durability == "batch")
        _fill(batch.put, prefixes, first_seq, task_ids, datas, ts)
        if datas:
            batch.write()
            self._last_seq = first_seq + len(datas) - 1

    # ------------------------------------------------------------------ reading
    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        """Envelopes with ``from_seq <= seq <= to_seq`` (to the end when None), in seq order.

        An undecodable record raises :class:`~artoo.schemas.CorruptRecord` naming its seq
        when the iteration reaches it; an unknown message tag reads as UnknownMessage; a
        missing seq raises :class:`CorruptLog` naming the gap.
        """
        if to_seq is not None and to_seq < from_seq:
            return iter(())
        first = max(from_seq, 1)
        stop = event_key(to_seq + 1) if to_seq is not None else _EVENT_END
        # values only: the keys are distinct and in seq order, so the n-th value read is
        # seq first+n when nothing is missing — each envelope's own seq says so
        values = self._db.iterator(
            start=event_key(first), stop=stop, include_key=False, fill_cache=False
        )
        return _decode_run(values, first, self._db, self._path)

    def read_records(self, from_seq: int, to_seq: int) -> Iterator[tuple[int, bytes]]:
        """``(seq, record)`` for ``from_seq <= seq <= to_seq``, the records as kept (for the
        live-read socket, :mod:`artoo.eventstore._serve`)."""
        if to_seq < from_seq:
            return
        with self._db.snapshot() as snapshot:
            for key, value in snapshot.iterator(
                start=event_key(max(from_seq, 1)), stop=event_key(to_seq + 1), fill_cache=False
            ):
                yield _seq_of_key(key), value

    def read_task_records(self, task_id: str) -> Iterator[tuple[int, bytes]]:
        """``(seq, record)`` of one task's envelopes, in seq order, the records as kept."""
        prefix = task_prefix(task_id)
        size = len(prefix) + 8
        with self._db.snapshot() as snapshot:
            for key, value in snapshot.iterator(prefix=prefix):
                if len(key) != size:
                    continue
                for seq in index_seqs(key, value):
                    data = snapshot.get(event_key(seq))
                    if data is None:
                        raise CorruptRecord(f"task index names seq {seq}, missing from the log")
                    yield seq, data

    def task_ids(self) -> Iterator[str]:
        """Every task id the per-task index holds, in id order: one seek per task, never
        a read of the log (at open, to find the tasks a stopped process left open)."""
        with self._db.snapshot() as snapshot:
            keys = snapshot.iterator(prefix=_TASK, include_value=False)
            for key in keys:
                task = key[len(_TASK) : -8 - len(_SEP)]
                yield task.decode()
                keys.seek(_TASK + task + _SEP + b"\xff" * 9)

    def read_task_reversed(self, task_id: str) -> Iterator[Envelope]:
        """The envelopes of one task (by the per-task index), newest first."""
        prefix = task_prefix(task_id)
        size = len(prefix) + 8
        with self._db.snapshot() as snapshot:
            for key, value in snapshot.iterator(prefix=prefix, reverse=True):
                if len(key) != size:
                    continue
                for seq in reversed(index_seqs(key, value)):
                    data = snapshot.get(event_key(seq))
                    if data is None:
                        raise CorruptRecord(f"task index names seq {seq}, missing from the log")
                    yield _decode(seq, data)

    def _writable(self) -> None:
        if self._read_only:
            raise RuntimeError(f"the event log {self._path} was opened read_only")

    def read_task(self, task_id: str) -> Iterator[Envelope]:
        """The envelopes of one task (by the per-task index), in seq order."""
        for seq, data in self.read_task_records(task_id):
            yield _decode(seq, data)


def _fill(
    put: Callable[[bytes, bytes], None],
    prefixes: dict[str, bytes],
    first_seq: int,
    task_ids: Sequence[str | None],
    datas: Sequence[bytes],
    ts: float | None,
) -> None:
    """Put each record under its ``e|`` key, then the group's per-task index entries.

    With a ``ts`` each data is a tail and becomes a whole envelope here. The per-message
    work runs in C (``map``), without a bytecode loop: it is the writer's hot path.
    """
    n = len(datas)
    seqs = range(first_seq, first_seq + n)
    records = datas if ts is None else complete_tails(first_seq, ts, datas)
    deque(map(put, map(_pack_event_key, repeat(_EVENT, n), seqs), records), maxlen=0)
    for task_id, seq, value in index_entries(first_seq, task_ids):
        prefix = prefixes.get(task_id)
        if prefix is None:
            if len(prefixes) >= _PREFIX_CACHE:
                prefixes.clear()
            prefix = prefixes[task_id] = task_prefix(task_id)
        put(prefix + _pack_seq(seq), value)


def complete_tails(first_seq: int, ts: float, tails: Sequence[bytes]) -> Iterable[bytes]:
    """Whole envelope records from the bus's tails: each tail's 5-array header swapped for
    the envelope's head (seq from ``first_seq`` on, the group's ``ts``); lazily, in C."""
    n = len(tails)
    seqs = range(first_seq, first_seq + n)
    heads = map(_pack_head, repeat(_HEAD, n), seqs, repeat(_FLOAT64, n), repeat(ts, n))
    return map(bytes.replace, tails, repeat(_ARRAY5, n), heads, repeat(1, n))


def decode_record(seq: int, data: bytes) -> Envelope:
    """The envelope of a record stored at ``seq`` (CorruptRecord when it does not hold it)."""
    return _decode(seq, data)


def _decode_run(
    values: Iterator[bytes], first: int, db: plyvel.DB, path: Path
) -> Iterator[Envelope]:
    """Decode the records of seqs ``first``, ``first + 1``, … from their values alone,
    checking each envelope's seq: a record holding another seq is a gap before it (its key
    is that seq: CorruptLog naming the missing seqs) or a damaged record (CorruptRecord)."""
    typed = _typed_decoder.decode
    seq = first
    for data in values:
        try:  # the common case inline: a known message, decoded in one pass
            envelope = typed(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            envelope = decode_envelope(data, seq=seq)  # an unknown tag, or says what broke
        if envelope.seq != seq:
            if envelope.seq > seq and db.get(event_key(seq)) is None:
                raise CorruptLog(
                    path,
                    f"seqs {seq}–{envelope.seq - 1} are missing (the log continues at "
                    f"{envelope.seq})",
                    seq - 1,
                )
            raise CorruptRecord(f"record at seq {seq} holds an envelope with seq {envelope.seq}")
        seq += 1
        yield envelope


def _last_key_seq(db: plyvel.DB, path: Path) -> int:
    """The seq of the last ``e|`` key, after checking that its record decodes."""
    with db.iterator(prefix=_EVENT, include_value=False, reverse=True) as keys:
        last = next((_seq_of_key(k) for k in keys), 0)
    return _check_tail(db, path, last)


def _decode(seq: int, data: bytes) -> Envelope:
    envelope = decode_envelope(data, seq=seq)
    if envelope.seq != seq:
        raise CorruptRecord(f"record at seq {seq} holds an envelope with seq {envelope.seq}")
    return envelope


def _check_contiguous(db: plyvel.DB, path: Path) -> int:
    """The last seq, after checking that seqs 1..last are all there (keys only, no decode)
    and that the last record decodes; a gap or a broken tail raises :class:`CorruptLog`
    naming the seqs, instead of a log that silently lost messages."""
    # Fast path: the keys are distinct and sorted, so first seq 1, last seq N and N keys
    # mean no gap; only a log that fails this is walked key by key to name its gap.
    count = 0
    for _key in db.iterator(prefix=_EVENT, include_value=False):
        count += 1
    if count:
        with db.iterator(prefix=_EVENT, include_value=False) as keys:
            first = _seq_of_key(next(keys))
        with db.iterator(prefix=_EVENT, include_value=False, reverse=True) as keys:
            last = _seq_of_key(next(keys))
        if first == 1 and last == count:
            return _check_tail(db, path, last)
    expected = 1
    for key in db.iterator(prefix=_EVENT, include_value=False):
        seq = _seq_of_key(key)
        if seq != expected:
            raise CorruptLog(
                path,
                f"seqs {expected}–{seq - 1} are missing (the log continues at {seq})",
                expected - 1,
            )
        expected += 1
    return _check_tail(db, path, expected - 1)


def _check_tail(db: plyvel.DB, path: Path, last: int) -> int:
    """``last``, after checking that its record decodes."""
    if last:
        data = db.get(event_key(last))
        try:
            _decode(last, data)
        except Exception as exc:
            raise CorruptLog(
                path, f"the record at seq {last} does not decode ({exc})", last - 1
            ) from None
    return last
