"""The task queue of a PostgreSQL store: what workers lease (issue 19).

``artoo_tasks`` holds each task a System on the store started: ``queued`` until a worker
leases it, ``leased`` (by ``worker`` until ``lease_until``) while it runs, ``done`` after
its FinalResult. Rows are written by :class:`artoo.System` and ``artoo worker``
(:mod:`artoo._worker`); ``request`` holds the task's UserRequest (msgpack), which the
worker that leases it logs.

- **Leases.** A worker leases the oldest queued task with ``FOR UPDATE SKIP LOCKED`` (many
  workers, no two on one row, none waiting on another's lock) and extends its leases by
  heartbeats. A System that runs a task itself (no worker running) enters it already
  leased to itself, so every task on the store is ended by the same path.
- **Lost tasks.** A task is lost when its lease ran out *and* its writer's session is gone:
  each writing System holds the advisory lock ``(WRITER_CLASS, hashtext(writer))`` on the
  connection it appends with (:meth:`PostgresEventLog.join`), so a claimer that can take
  that lock knows the writer can append nothing more — a worker that only stalled keeps
  its tasks. The claim is one ``UPDATE`` whose ``WHERE`` the row lock re-checks, so each
  lost task goes to exactly one claimer; it is then leased to the claimer, who ends (or
  one day resumes) it and finishes it — and if the claimer dies too, the next one claims it.

Times are given by the caller (its clock), never read here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, NamedTuple

from ._postgres import ELECTION_CLASS, WORKERS_CLASS, WRITER_CLASS, connect, migrate

__all__ = ["Leased", "LostLease", "TaskQueue"]


class Leased(NamedTuple):
    """A task leased to a worker: its id, text and UserRequest (msgpack; None when it was
    queued without one)."""

    task_id: str
    text: str
    request: bytes | None = None


class LostLease(NamedTuple):
    """A lost task (see the module docstring), now leased to its claimer: ``worker`` held it."""

    task_id: str
    text: str
    worker: str
    request: bytes | None = None


class TaskQueue:
    """The task rows of one PostgreSQL store (one connection; thread-safe)."""

    def __init__(self, url: str) -> None:
        self._conn: Any = connect(url)
        self._lock = threading.Lock()
        migrate(self._conn)

    def close(self) -> None:
        """Close the connection (idempotent); an election this queue won is given up."""
        with self._lock:
            self._conn.close()

    def enqueue(
        self,
        task_id: str,
        text: str,
        now: float,
        *,
        request: bytes | None = None,
        worker: str | None = None,
        lease_s: float = 0.0,
    ) -> None:
        """Queue a task (a task id already queued is a ValueError); with ``worker``, enter
        it leased to that worker until ``now + lease_s`` (it runs the task itself)."""
        import psycopg

        state = "queued" if worker is None else "leased"
        lease_until = None if worker is None else now + lease_s
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO artoo_tasks (task_id, text, request, state, worker, lease_until,"
                    " attempts, submitted) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        task_id,
                        text,
                        request,
                        state,
                        worker,
                        lease_until,
                        int(worker is not None),
                        now,
                    ),
                )
            except psycopg.errors.UniqueViolation:
                raise ValueError(f"task {task_id} is already queued") from None

    def lease(self, worker: str, now: float, lease_s: float) -> Leased | None:
        """Lease the oldest queued task to ``worker`` until ``now + lease_s``, or None when
        none is queued."""
        with self._lock:
            row = self._conn.execute(
                "UPDATE artoo_tasks SET state = 'leased', worker = %s, lease_until = %s,"
                " attempts = attempts + 1 WHERE task_id = ("
                "  SELECT task_id FROM artoo_tasks WHERE state = 'queued'"
                "  ORDER BY submitted, task_id FOR UPDATE SKIP LOCKED LIMIT 1)"
                " RETURNING task_id, text, request",
                (worker, now + lease_s),
            ).fetchone()
        if row is None:
            return None
        return Leased(str(row[0]), str(row[1]), None if row[2] is None else bytes(row[2]))

    def heartbeat(self, worker: str, now: float, lease_s: float) -> int:
        """Extend every lease ``worker`` still holds to ``now + lease_s``; how many."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE artoo_tasks SET lease_until = %s WHERE worker = %s AND state = 'leased'"
                " AND lease_until >= %s",
                (now + lease_s, worker, now),
            )
            return int(cur.rowcount)

    def claim_expired(self, claimer: str, now: float, lease_s: float = 30.0) -> list[LostLease]:
        """Claim every lost task (lease ran out before ``now``, its writer's session gone):
        each is then leased to ``claimer`` until ``now + lease_s``; each lost task goes to
        exactly one claimer."""
        with self._lock, self._conn.transaction():
            expired = self._conn.execute(
                "SELECT DISTINCT worker FROM artoo_tasks WHERE state = 'leased'"
                " AND lease_until < %s AND worker <> %s",
                (now, claimer),
            ).fetchall()
            gone = []
            for (worker,) in expired:
                free = self._conn.execute(  # a transaction lock: released at the commit
                    "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (WRITER_CLASS, worker)
                ).fetchone()
                if free and free[0]:
                    gone.append(str(worker))
            if not gone:
                return []
            rows = self._conn.execute(
                "UPDATE artoo_tasks AS t SET worker = %s, lease_until = %s,"
                " attempts = t.attempts + 1"
                " FROM (SELECT task_id, worker FROM artoo_tasks WHERE state = 'leased'"
                "       AND lease_until < %s AND worker = ANY(%s) FOR UPDATE SKIP LOCKED) AS old"
                " WHERE t.task_id = old.task_id"
                " RETURNING t.task_id, t.text, old.worker, t.request",
                (claimer, now + lease_s, now, gone),
            ).fetchall()
        return [
            LostLease(str(r[0]), str(r[1]), str(r[2]), None if r[3] is None else bytes(r[3]))
            for r in rows
        ]

    def finish(self, task_id: str, worker: str) -> bool:
        """Mark a task ``worker`` ran as done; False when its lease was lost (another worker
        claimed it: that one ends it, this one must not)."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE artoo_tasks SET state = 'done' WHERE task_id = %s AND worker = %s"
                " AND state = 'leased'",
                (task_id, worker),
            )
            return bool(cur.rowcount)

    def known(self, task_ids: Iterable[str]) -> set[str]:
        """Of ``task_ids``, those with a row (started by a System that uses the queue)."""
        ids = list(task_ids)
        if not ids:
            return set()
        with self._lock:
            rows = self._conn.execute(
                "SELECT task_id FROM artoo_tasks WHERE task_id = ANY(%s)", (ids,)
            ).fetchall()
        return {str(r[0]) for r in rows}

    def workers(self) -> int:
        """How many worker processes run on the store now (each holds ``(WORKERS_CLASS, 0)``
        shared while it runs; a dead one's lock is gone with its session)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s"
                " AND objid = 0 AND objsubid = 2 AND granted AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())",
                (WORKERS_CLASS,),
            ).fetchone()
        return int(row[0]) if row else 0

    def elect(self) -> bool:
        """Try to become the store's elected observer (the one Auditor and Judge): True once
        this queue's session holds ``(ELECTION_CLASS, 0)`` — until it closes or its process
        dies, when another System's next try wins."""
        with self._lock:
            row = self._conn.execute(
                "SELECT pg_try_advisory_lock(%s, 0)", (ELECTION_CLASS,)
            ).fetchone()
        return bool(row and row[0])

    def counts(self) -> dict[str, int]:
        """How many tasks are in each state."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT state, count(*) FROM artoo_tasks GROUP BY state"
            ).fetchall()
        return {str(state): int(n) for state, n in rows}
