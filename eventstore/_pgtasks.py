"""The task queue of a PostgreSQL store: the first step toward workers (issue 19).

``artoo_tasks`` (schema version 3) holds each submitted task: ``queued`` until a worker
leases it, ``leased`` (by ``worker`` until ``lease_until``) while it runs, ``done`` after.
Workers lease with ``FOR UPDATE SKIP LOCKED`` (many workers, no two on one row, none
waiting on another's lock), extend their leases by heartbeats, and whoever finds a lease
expired claims the task to end it: the claim is one ``UPDATE`` whose ``WHERE`` the row lock
re-checks, so exactly one claimer gets each lost task. Times are given by the caller (its
clock), never read here.

Not yet wired: ``artoo worker`` and ``System.submit`` enqueueing are to come (see
docs/postgres.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from ._postgres import connect, migrate

__all__ = ["LostLease", "TaskQueue"]


@dataclass(frozen=True)
class LostLease:
    """A task whose worker's lease ran out: ``worker`` held it."""

    task_id: str
    text: str
    worker: str


class TaskQueue:
    """The task rows of one PostgreSQL store (one connection; thread-safe)."""

    def __init__(self, url: str) -> None:
        self._conn: Any = connect(url)
        self._lock = threading.Lock()
        migrate(self._conn)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def enqueue(self, task_id: str, text: str, now: float) -> None:
        """Queue a task (a task id already queued is a ValueError)."""
        import psycopg

        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO artoo_tasks (task_id, text, submitted) VALUES (%s, %s, %s)",
                    (task_id, text, now),
                )
            except psycopg.errors.UniqueViolation:
                raise ValueError(f"task {task_id} is already queued") from None

    def lease(self, worker: str, now: float, lease_s: float) -> tuple[str, str] | None:
        """Lease the oldest queued task to ``worker`` until ``now + lease_s``:
        ``(task_id, text)``, or None when none is queued."""
        with self._lock:
            row = self._conn.execute(
                "UPDATE artoo_tasks SET state = 'leased', worker = %s, lease_until = %s,"
                " attempts = attempts + 1 WHERE task_id = ("
                "  SELECT task_id FROM artoo_tasks WHERE state = 'queued'"
                "  ORDER BY submitted, task_id FOR UPDATE SKIP LOCKED LIMIT 1)"
                " RETURNING task_id, text",
                (worker, now + lease_s),
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def heartbeat(self, worker: str, now: float, lease_s: float) -> int:
        """Extend every lease ``worker`` still holds to ``now + lease_s``; how many."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE artoo_tasks SET lease_until = %s WHERE worker = %s AND state = 'leased'"
                " AND lease_until >= %s",
                (now + lease_s, worker, now),
            )
            return int(cur.rowcount)

    def claim_expired(self, claimer: str, now: float) -> list[LostLease]:
        """Claim every task whose lease ran out before ``now`` (it is then ``done``, held
        by ``claimer``, who ends it); each lost task goes to exactly one claimer."""
        with self._lock:
            rows = self._conn.execute(
                "UPDATE artoo_tasks AS t SET state = 'done', worker = %s"
                " FROM (SELECT task_id, worker FROM artoo_tasks WHERE state = 'leased'"
                "       AND lease_until < %s FOR UPDATE SKIP LOCKED) AS old"
                " WHERE t.task_id = old.task_id"
                " RETURNING t.task_id, t.text, old.worker",
                (claimer, now),
            ).fetchall()
        return [LostLease(str(r[0]), str(r[1]), str(r[2])) for r in rows]

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

    def counts(self) -> dict[str, int]:
        """How many tasks are in each state."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT state, count(*) FROM artoo_tasks GROUP BY state"
            ).fetchall()
        return {str(state): int(n) for state, n in rows}
