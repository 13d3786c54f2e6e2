"""The storage contracts: what the Bus (and every reader) needs of an event log, an
in-memory log that keeps it, and memory read-only (:class:`MegramReader`).

Any backend — LevelDB (:class:`~artoo.eventstore.EventLog`, the default), memory
(:class:`InMemoryEventLog`), a server-backed one later — implements
:class:`EventLogBackend` and passes the one contract test suite
(``tests/eventstore/eventlog_contract.py``: a backend's tests subclass it and write only
``create_log``), in the style of eventsourcing's recorders.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

import msgspec

from artoo.schemas import CorruptRecord, Envelope, Megram, TagPotential, encode_envelope

from ._columns import MegramColumns
from .eventlog import complete_tails, decode_record

__all__ = ["EventLogBackend", "InMemoryEventLog", "MegramReader"]


@runtime_checkable
class EventLogBackend(Protocol):
    """The append-only log of envelopes, as the Bus and the readers use it.

    Seqs start at 1 and have no gaps; a group of envelopes is appended atomically (all or
    none); reads return envelopes in seq order; appends are safe from several threads.
    """

    @property
    def last_seq(self) -> int:
        """The seq of the last appended envelope (0 when empty)."""
        ...

    @property
    def closed(self) -> bool:
        """True once closed."""
        ...

    @property
    def log_id(self) -> str:
        """The log's identity (what memory remembers it follows)."""
        ...

    def append(self, envelopes: Iterable[Envelope]) -> list[int]:
        """Append envelopes as one group; seq 0 is assigned, any other must continue."""
        ...

    def append_encoded(
        self, first_seq: int, ts: float, task_ids: Sequence[str | None], tails: Sequence[bytes]
    ) -> int | None:
        """The bus's fast path: one group of pre-encoded tails (see ``envelope_tail``).

        None: the group took seqs ``first_seq``… (which must continue the log). A log that
        other processes append to too (a shared PostgreSQL log) numbers the group itself
        and returns its first seq; the bus then delivers the envelopes with those seqs."""
        ...

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        """Envelopes with ``from_seq <= seq <= to_seq`` (to the end when None), in order."""
        ...

    def read_task(self, task_id: str) -> Iterator[Envelope]:
        """The envelopes of one task, in seq order."""
        ...

    def close(self) -> None:
        """Close the log (idempotent)."""
        ...


class InMemoryEventLog:
    """An :class:`EventLogBackend` in memory: for tests, the role harness and replays that
    must not touch a disk. Records are kept encoded, exactly as the LevelDB log keeps them,
    so what reads back is what a LevelDB log would give."""

    durability = "none"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[bytes] = []  # seq n at index n - 1
        self._tasks: dict[str, list[int]] = {}
        self._closed = False
        self.log_id = uuid.uuid4().hex

    def __repr__(self) -> str:
        return f"InMemoryEventLog(last_seq={self.last_seq})"

    @property
    def last_seq(self) -> int:
        """The seq of the last appended envelope (0 when empty)."""
        return len(self._records)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._closed

    def close(self) -> None:
        """Close the log (idempotent); reads and appends then raise ValueError."""
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the event log is closed")

    def append(self, envelopes: Iterable[Envelope]) -> list[int]:
        """Append envelopes in one group; return their seqs (seq 0 is assigned)."""
        with self._lock:
            self._check_open()
            expected = len(self._records) + 1
            records: list[bytes] = []
            task_ids: list[str | None] = []
            for envelope in envelopes:
                if envelope.seq == 0:
                    envelope = msgspec.structs.replace(envelope, seq=expected)
                elif envelope.seq != expected:
                    raise ValueError(
                        f"envelope seq {envelope.seq} does not continue the log: expected "
                        f"{expected} (or 0 to have it assigned)"
                    )
                records.append(encode_envelope(envelope))
                task_ids.append(envelope.task_id)
                expected += 1
            return self._add(records, task_ids)

    def append_encoded(
        self, first_seq: int, ts: float, task_ids: Sequence[str | None], tails: Sequence[bytes]
    ) -> None:
        """One group of pre-encoded tails; ``first_seq`` must be ``last_seq + 1``."""
        if len(task_ids) != len(tails):
            raise ValueError(f"{len(task_ids)} task ids for {len(tails)} tails")
        with self._lock:
            self._check_open()
            if first_seq != len(self._records) + 1:
                raise ValueError(
                    f"first_seq {first_seq} does not continue the log: expected "
                    f"{len(self._records) + 1}"
                )
            self._add(list(complete_tails(first_seq, ts, tails)), task_ids)

    def _add(self, records: list[bytes], task_ids: Sequence[str | None]) -> list[int]:
        first = len(self._records) + 1
        seqs = list(range(first, first + len(records)))
        self._records.extend(records)
        for seq, task_id in zip(seqs, task_ids, strict=True):
            if task_id is not None:
                self._tasks.setdefault(task_id, []).append(seq)
        return seqs

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        """Envelopes with ``from_seq <= seq <= to_seq`` (to the end when None), in order."""
        self._check_open()
        last = len(self._records) if to_seq is None else min(to_seq, len(self._records))
        for seq in range(max(from_seq, 1), last + 1):
            yield decode_record(seq, self._records[seq - 1])

    def read_task(self, task_id: str) -> Iterator[Envelope]:
        """The envelopes of one task, in seq order."""
        self._check_open()
        for seq in list(self._tasks.get(task_id, ())):
            if seq > len(self._records):
                raise CorruptRecord(f"task index names seq {seq}, missing from the log")
            yield decode_record(seq, self._records[seq - 1])

    def __enter__(self) -> InMemoryEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@runtime_checkable
class MegramReader(Protocol):
    """Memory read-only: what the Dreamer and the Memory role's queries read. Writes go
    only through memory events applied by the Memory role (``MegramStore.apply``)."""

    def __len__(self) -> int: ...

    def get(self, megram_id: str) -> Megram | None:
        """One megram by id (None when absent or forgotten)."""
        ...

    def get_many(self, ids: Iterable[str]) -> list[Megram]:
        """The megrams of ``ids`` that exist, in the order given."""
        ...

    def megrams(self) -> Iterator[Megram]:
        """Every live megram."""
        ...

    def tags(self) -> list[tuple[str, str]]:
        """Every (space, entity) tag with live megrams."""
        ...

    def query_c(self, space: str, entity: str) -> list[Megram]:
        """The C-level megrams (SOPs) of a tag."""
        ...

    def query_mk(self, space: str, entity: str, now: float) -> tuple[float, float, str]:
        """A tag's live attention, decision and action at ``now``."""
        ...

    def strongest(
        self, space_prefix: str, action: str, limit: int, now: float
    ) -> list[TagPotential]:
        """The strongest tags of a space prefix whose action is ``action``."""
        ...

    def snapshot(self) -> MegramColumns:
        """The live megrams as columns (a consistent copy)."""
        ...
