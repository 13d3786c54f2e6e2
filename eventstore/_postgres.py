"""The PostgreSQL event log: an :class:`~artoo.eventstore.EventLogBackend` in one database,
with psycopg 3 (``pip install 'artoo[postgres]'``).

Tables (schema version :data:`SCHEMA_VERSION`, created or upgraded by :func:`migrate`)::

    artoo_schema (version)                          -- one row: the schema's version
    artoo_log    (id = 1, log_id, last_seq)         -- one row: the log's identity and counter
    artoo_events (seq PRIMARY KEY, task_id, record) -- the envelopes, msgpack as in LevelDB
    artoo_events_task ON artoo_events (task_id, seq) WHERE task_id IS NOT NULL
    artoo_audit  (pos PRIMARY KEY, line)            -- the audit log's records (version 2)
    artoo_audit_head (id = 1, head)                 -- its HEAD
    artoo_tasks  (task_id, text, state, worker, lease_until, …) -- the queue (version 3)
    artoo_blobs  (sha PRIMARY KEY, data)            -- before-images for undo (version 5)

**Seqs.** Each append is one transaction (group commit): it moves the single-row counter
``artoo_log.last_seq`` forward by the group's size (``UPDATE … RETURNING``), inserts the
group's rows, and commits. The counter's row lock is held until the commit, so writers in
any number of processes (or machines) take turns, each group's seqs follow the previous
group's, and a transaction that fails rolls the counter back with its rows: no gap, ever.
A sequence (``nextval``) would not do — its values are not rolled back, so a failed append
would leave a gap — and an advisory lock would serialise the same way but also needs every
writer to remember to take it; the row lock comes with the ``UPDATE``.

Records are byte for byte the LevelDB log's (``encode_envelope``), so every reader decodes
them alike; a reader sees only committed groups (PostgreSQL's read committed), which is the
bus's write-ahead promise seen from outside: an envelope is delivered after its commit.
Many processes may read the log while a System writes it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

import msgspec

from artoo.schemas import CorruptRecord, Envelope, encode_envelope

from .eventlog import StoreError, complete_tails, decode_record

if TYPE_CHECKING:
    import psycopg

__all__ = ["SCHEMA_VERSION", "PostgresEventLog", "connect", "migrate", "schema_version"]

SCHEMA_VERSION = 5
"""The schema this code writes. Version 0 is a database with no artoo tables; 1 holds the
log; 2 adds the audit log (:mod:`artoo.eventstore._pgaudit`); 3 the task queue
(:mod:`artoo.eventstore._pgtasks`); 4 the queued task's request (its UserRequest); 5 the
blob store (:mod:`artoo.eventstore._blobs`)."""

_READ_CHUNK = 2000  # rows fetched per query while reading
WRITER_CLASS = 0x61727431
"""Advisory-lock class of a writing System's session: ``(WRITER_CLASS, hashtext(writer))``,
held by the connection that appends, so "its lock is free" means it can append no more."""
WORKERS_CLASS = 0x61727432
"""Advisory-lock class ``(WORKERS_CLASS, 0)``, held shared by every running worker."""
ELECTION_CLASS = 0x61727433
"""Advisory-lock class of the store's elected observers ``(ELECTION_CLASS, 0)``."""

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 0 -> 1: the log
    1: (
        "CREATE TABLE IF NOT EXISTS artoo_schema (version integer NOT NULL)",
        "CREATE TABLE IF NOT EXISTS artoo_log ("
        " id integer PRIMARY KEY CHECK (id = 1),"
        " log_id text NOT NULL,"
        " last_seq bigint NOT NULL)",
        "CREATE TABLE IF NOT EXISTS artoo_events ("
        " seq bigint PRIMARY KEY,"
        " task_id text,"
        " record bytea NOT NULL)",
        "CREATE INDEX IF NOT EXISTS artoo_events_task ON artoo_events (task_id, seq)"
        " WHERE task_id IS NOT NULL",
    ),
    # 1 -> 2: the audit log, hash-chained records and HEAD
    2: (
        "CREATE TABLE IF NOT EXISTS artoo_audit (pos bigint PRIMARY KEY, line bytea NOT NULL)",
        "CREATE TABLE IF NOT EXISTS artoo_audit_head ("
        " id integer PRIMARY KEY CHECK (id = 1),"
        " head bytea NOT NULL)",
    ),
    # 2 -> 3: the task queue workers lease from
    3: (
        "CREATE TABLE IF NOT EXISTS artoo_tasks ("
        " task_id text PRIMARY KEY,"
        " text text NOT NULL,"
        " state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done')),"
        " worker text,"
        " lease_until double precision,"
        " attempts integer NOT NULL DEFAULT 0,"
        " submitted double precision NOT NULL)",
        "CREATE INDEX IF NOT EXISTS artoo_tasks_state ON artoo_tasks (state, submitted)",
    ),
    # 3 -> 4: the queued task's UserRequest (msgpack), which the worker that leases it logs
    4: ("ALTER TABLE artoo_tasks ADD COLUMN IF NOT EXISTS request bytea",),
    # 4 -> 5: the blob store (content-addressed before-images, artoo undo)
    5: ("CREATE TABLE IF NOT EXISTS artoo_blobs (sha text PRIMARY KEY, data bytea NOT NULL)",),
}


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A psycopg connection to ``url``; a server that cannot be reached is a
    :class:`~artoo.eventstore.StoreError` in one line."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the postgres extra is not installed
        raise StoreError(
            "a PostgreSQL store needs psycopg: pip install 'artoo[postgres]'", _Where(url)
        ) from None
    try:
        return psycopg.connect(url, autocommit=autocommit)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot open the PostgreSQL store: {first}", _Where(url)) from None


def _Where(url: str) -> Path:
    """The ``path`` a StoreError names for a PostgreSQL store: its URL (as given)."""
    return cast(Path, url)


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The database's artoo schema version (0: no artoo tables yet)."""
    exists = conn.execute("SELECT to_regclass('artoo_schema') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT max(version) FROM artoo_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: psycopg.Connection[Any], target: int = SCHEMA_VERSION) -> int:
    """Create or upgrade the artoo tables to ``target`` (:data:`SCHEMA_VERSION`: this
    code's); return the version the database then has.

    Runs in one transaction under an advisory lock, so processes that open the same new
    database at once migrate it once. A database newer than this code raises StoreError.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('artoo_migrate'))")
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store's schema is version {version}, newer than this artoo's "
                f"({SCHEMA_VERSION}): upgrade artoo",
                _Where(str(conn.info.dbname)),
            )
        for step in range(version + 1, target + 1):
            for statement in _MIGRATIONS[step]:
                conn.execute(statement)
            if step == 1:
                conn.execute(
                    "INSERT INTO artoo_log (id, log_id, last_seq) VALUES (1, %s, 0)"
                    " ON CONFLICT (id) DO NOTHING",
                    (uuid.uuid4().hex,),
                )
            conn.execute("DELETE FROM artoo_schema")
            conn.execute("INSERT INTO artoo_schema (version) VALUES (%s)", (step,))
    return max(version, target)


class PostgresEventLog:
    """The append-only log of envelopes in a PostgreSQL database (see the module docstring).

    Example::

        with PostgresEventLog.open("postgresql://artoo@db/artoo") as log:
            log.append([Envelope(0, now, "t1", "host", None, None, UserRequest(text="hi"))])
    """

    durability = "batch"  # each group is one committed transaction

    def __init__(self, conn: psycopg.Connection[Any], url: str, *, shared: bool = False) -> None:
        """Wrap an open, migrated connection; use :meth:`open` instead."""
        self._conn = conn
        self._url = url
        self._shared = shared
        self._lock = threading.Lock()
        row = conn.execute("SELECT log_id, last_seq FROM artoo_log WHERE id = 1").fetchone()
        if row is None:
            raise StoreError("the PostgreSQL store has no artoo_log row", _Where(url))
        self._log_id = str(row[0])
        self._last_seq = int(row[1])

    @classmethod
    def open(cls, url: str, *, create: bool = True, shared: bool = False) -> PostgresEventLog:
        """Connect to ``url``, create or upgrade the schema (:func:`migrate`), open the log.

        ``create=False`` (a reader): a database without artoo's tables is a ValueError
        instead, and the schema must be this code's (StoreError otherwise). ``shared``:
        other processes append too, so :meth:`append_encoded` numbers each group itself
        (from the counter) and returns its first seq, whatever ``first_seq`` said."""
        conn = connect(url)
        try:
            if create:
                migrate(conn)
            else:
                version = schema_version(conn)
                if version == 0:
                    raise ValueError(f"{url} is not an artoo store (no artoo tables)")
                if version != SCHEMA_VERSION:
                    raise StoreError(
                        f"the store's schema is version {version}, this artoo reads "
                        f"{SCHEMA_VERSION}: open it once with a System to migrate it",
                        _Where(url),
                    )
            return cls(conn, url, shared=shared)
        except BaseException:
            conn.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresEventLog(last_seq={self._last_seq})"

    @property
    def url(self) -> str:
        """The database URL."""
        return self._url

    @property
    def last_seq(self) -> int:
        """The seq of the last envelope this process appended or saw (0 when empty);
        :meth:`refresh` reads the database's (other writers may have appended)."""
        return self._last_seq

    @property
    def shared(self) -> bool:
        """True when other processes append too (opened with ``shared=True``)."""
        return self._shared

    def join(self, writer: str, *, worker: bool = False) -> None:
        """Register this process as writer ``writer`` of a shared log: take the session
        advisory lock ``(WRITER_CLASS, hashtext(writer))`` on the connection that appends
        (and with ``worker``, the shared ``(WORKERS_CLASS, 0)``). Both are released when
        the log closes or the process dies; then its leased tasks may be claimed, and
        nothing more can be appended by it (the connection is gone)."""
        with self._lock:
            self._check_open()
            self._conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (WRITER_CLASS, writer))
            if worker:
                self._conn.execute("SELECT pg_advisory_lock_shared(%s, 0)", (WORKERS_CLASS,))

    def refresh(self) -> int:
        """Read the committed last seq from the database (other processes append too)."""
        with self._lock:
            self._check_open()
            row = self._conn.execute("SELECT last_seq FROM artoo_log WHERE id = 1").fetchone()
            self._last_seq = int(row[0]) if row else 0
            return self._last_seq

    @property
    def closed(self) -> bool:
        """True once closed."""
        return bool(self._conn.closed)

    @property
    def log_id(self) -> str:
        """The log's identity, written when the schema was created."""
        return self._log_id

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._conn.closed:
            raise ValueError("the event log is closed")

    # ------------------------------------------------------------------ writing
    def append(self, envelopes: Iterable[Envelope]) -> list[int]:
        """Append envelopes in one transaction; return their seqs (seq 0 is assigned; a
        nonzero seq must continue the log, else ValueError and nothing is written)."""
        group = list(envelopes)
        if not group:
            return []
        with self._lock:
            self._check_open()
            with self._conn.transaction():
                first = self._reserve(len(group), [e.seq for e in group if e.seq][:1])
                records: list[bytes] = []
                for expected, envelope in enumerate(group, first):
                    if envelope.seq == 0:
                        envelope = msgspec.structs.replace(envelope, seq=expected)
                    elif envelope.seq != expected:
                        raise ValueError(
                            f"envelope seq {envelope.seq} does not continue the log: expected "
                            f"{expected} (or 0 to have it assigned)"
                        )
                    records.append(encode_envelope(envelope))
                self._insert(first, [e.task_id for e in group], records)
            self._last_seq = first + len(group) - 1
            return list(range(first, first + len(group)))

    def append_encoded(
        self, first_seq: int, ts: float, task_ids: Sequence[str | None], tails: Sequence[bytes]
    ) -> int | None:
        """The bus's fast path: one group of pre-encoded tails in one transaction;
        ``first_seq`` must continue the log (ValueError otherwise, nothing written). A
        ``shared`` log numbers the group itself and returns its first seq."""
        if len(task_ids) != len(tails):
            raise ValueError(f"{len(task_ids)} task ids for {len(tails)} tails")
        if not tails:
            return None
        with self._lock:
            self._check_open()
            with self._conn.transaction():
                first = self._reserve(len(tails), [] if self._shared else [first_seq])
                self._insert(first, task_ids, list(complete_tails(first, ts, tails)))
            self._last_seq = first + len(tails) - 1
        return first if self._shared else None

    def _reserve(self, n: int, wanted: list[int]) -> int:
        """Move the counter ``n`` forward (its row lock is held to the commit); the group's
        first seq. ``wanted``: the first seq the caller asked for, if any."""
        row = self._conn.execute(
            "UPDATE artoo_log SET last_seq = last_seq + %s WHERE id = 1 RETURNING last_seq",
            (n,),
        ).fetchone()
        assert row is not None
        first = int(row[0]) - n + 1
        if wanted and wanted[0] != first:
            raise ValueError(f"first_seq {wanted[0]} does not continue the log: expected {first}")
        return first

    def _insert(self, first: int, task_ids: Sequence[str | None], records: Sequence[bytes]) -> None:
        with self._conn.cursor() as cur:
            with cur.copy("COPY artoo_events (seq, task_id, record) FROM STDIN") as copy:
                for seq, task_id, record in zip(
                    range(first, first + len(records)), task_ids, records, strict=True
                ):
                    copy.write_row((seq, task_id, record))

    # ------------------------------------------------------------------ reading
    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        """Committed envelopes with ``from_seq <= seq <= to_seq`` (to the end when None), in
        order; a missing seq raises CorruptRecord naming it."""
        self._check_open()
        seq = max(from_seq, 1)
        while to_seq is None or seq <= to_seq:
            high = seq + _READ_CHUNK - 1 if to_seq is None else min(to_seq, seq + _READ_CHUNK - 1)
            with self._lock:
                self._check_open()
                rows = self._conn.execute(
                    "SELECT seq, record FROM artoo_events WHERE seq BETWEEN %s AND %s ORDER BY seq",
                    (seq, high),
                ).fetchall()
            for got, record in rows:
                if got != seq:
                    raise CorruptRecord(f"seq {seq} is missing from the log (next is {got})")
                yield decode_record(seq, bytes(record))
                seq += 1
            if seq <= high:  # the end of the committed log
                return

    def read_task(self, task_id: str) -> Iterator[Envelope]:
        """The committed envelopes of one task, in seq order."""
        self._check_open()
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, record FROM artoo_events WHERE task_id = %s ORDER BY seq",
                (task_id,),
            ).fetchall()
        for seq, record in rows:
            yield decode_record(int(seq), bytes(record))
