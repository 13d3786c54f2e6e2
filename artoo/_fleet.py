"""A System's place among the writers of a PostgreSQL store: leases, heartbeats, lost
tasks, the election of the store's observers, and (for ``artoo worker``) taking tasks.

Every System on a PostgreSQL store is a *writer*: it appends to the one shared log
(``PostgresEventLog.open(url, shared=True)``: seqs gapless across writers) under an id of
its own, holding ``(WRITER_CLASS, hashtext(id))`` on the connection it appends with
(:meth:`PostgresEventLog.join`). Every task it runs has a row in ``artoo_tasks`` leased to
it (:mod:`artoo.eventstore._pgtasks`), extended by heartbeats every ``lease_s / 4``.

One thread per System, every ``poll_s``:

- **heartbeat** its leases;
- **claim lost tasks** (lease expired and the writer's session gone — it can append no
  more): each goes to exactly one claimer, which takes it over (:func:`take_over`: resumes
  it from the log, or ends it ``worker_lost`` when it cannot, or runs it when the log
  holds nothing of it);
- **campaign**: the first System to take ``(ELECTION_CLASS, 0)`` starts the store's one
  Auditor and one Judge; when its process dies the lock goes with its session and the next
  System's campaign wins (the Auditor resumes from the audit log);
- a **worker** (``artoo worker``) leases queued tasks, up to its ``concurrency``.

A host knows workers run by the shared lock ``(WORKERS_CLASS, 0)`` each worker holds while
it runs (:meth:`TaskQueue.workers`): :meth:`System.submit` then only enqueues.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import msgspec

from artoo.eventstore._pgtasks import TaskQueue
from artoo.schemas import UserRequest

from ._recovery import take_over

__all__ = ["LEASE_S", "POLL_S", "Fleet", "decode_request", "encode_request", "writer_id"]

logger = logging.getLogger("artoo")

LEASE_S = 10.0
"""How long a task's lease lasts without a heartbeat (the default)."""
POLL_S = 0.05
"""How often a System's fleet thread looks (heartbeats are every ``lease_s / 4``)."""
FAILING_S = 10.0
"""A fleet whose steps have all failed this long (the database is gone) says so
(:attr:`Fleet.failing`): ``artoo worker`` then exits."""


def writer_id() -> str:
    """A new writer id: host, pid and a random part (never reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def encode_request(request: UserRequest) -> bytes:
    """A UserRequest as the queue keeps it (msgpack)."""
    return msgspec.msgpack.encode(request)


def decode_request(data: bytes | None, text: str) -> UserRequest:
    """The queued UserRequest (``text`` alone for a row queued without one)."""
    if data is None:
        return UserRequest(text=text)
    return msgspec.msgpack.decode(data, type=UserRequest)


class Fleet:
    """The fleet thread of one System on a PostgreSQL store (see the module docstring).

    ``begin(task_id, request)`` starts a task in the System; ``elected()`` starts its
    observers; ``now()`` is the System's clock; ``log``/``bus`` its shared log and bus.
    """

    def __init__(
        self,
        url: str,
        *,
        writer: str,
        log: Any,
        bus: Any,
        now: Callable[[], float],
        begin: Callable[[str, UserRequest], object],
        elected: Callable[[], None],
        sender: str,
        worker: bool = False,
        concurrency: int = 1,
        lease_s: float = LEASE_S,
        poll_s: float = POLL_S,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        if lease_s <= 0:
            raise ValueError(f"lease_s must be positive, not {lease_s}")
        self.writer = writer
        self.worker = worker
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.queue = TaskQueue(url)
        self.is_elected = False
        self.taken_over: list[str] = []
        """Task ids this System claimed from a dead writer (in claim order)."""
        self.resume: Callable[[str], object] | None = None
        """Resumes a claimed task from the log (:func:`artoo._resume.resume_task`; set by a
        System that can: ``Config.recovery = "resume"`` and a model); None: ended."""
        self._log = log
        self._bus = bus
        self._now = now
        self._begin = begin
        self._elected = elected
        self._sender = sender
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._mine: set[str] = set()  # leased to this System, no FinalResult yet
        self._stop = threading.Event()
        self._wake = threading.Event()  # a task ended: a worker leases the next at once
        self._last_beat = -float("inf")
        self._failing_since: float | None = None
        self._thread = threading.Thread(target=self._run, name="artoo-fleet", daemon=True)

    # ------------------------------------------------------------------ the System's side
    def start(self) -> None:
        """Start the fleet thread (after the System's roles run)."""
        self._thread.start()

    def workers(self) -> int:
        """How many workers run on the store now."""
        return self.queue.workers()

    def run_here(self, task_id: str, request: UserRequest) -> None:
        """Enter a task this System runs itself, leased to it."""
        with self._lock:
            self._mine.add(task_id)
        self.queue.enqueue(
            task_id,
            request.text,
            self._now(),
            request=encode_request(request),
            worker=self.writer,
            lease_s=self.lease_s,
        )

    def adopt(self, task_id: str) -> None:
        """Enter a task this System resumes at open (left open by a System of a schema
        without the queue), leased to it."""
        with self._lock:
            self._mine.add(task_id)
        self.queue.enqueue(task_id, "", self._now(), worker=self.writer, lease_s=self.lease_s)

    def enqueue(self, task_id: str, request: UserRequest) -> None:
        """Queue a task for the workers."""
        self.queue.enqueue(task_id, request.text, self._now(), request=encode_request(request))

    def ended(self, task_id: str) -> None:
        """A FinalResult of ``task_id`` is in the log: a task of this System's is done."""
        with self._lock:
            if task_id not in self._mine:
                return
            self._mine.discard(task_id)
        self.queue.finish(task_id, self.writer)
        self._wake.set()

    def runs(self, task_id: str) -> bool:
        """True while ``task_id`` is leased to this System and not ended."""
        with self._lock:
            return task_id in self._mine

    def running(self) -> int:
        """How many leased tasks this System runs now."""
        with self._lock:
            return len(self._mine)

    def stop(self) -> None:
        """Stop the thread: no more leases, claims or heartbeats (:meth:`ended` still
        marks rows done)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5.0)

    def close(self) -> None:
        """Stop; close the queue (an election won is given up with its session)."""
        self.stop()
        self.queue.close()

    # ------------------------------------------------------------------ the thread
    @property
    def failing(self) -> bool:
        """True once every step for :data:`FAILING_S` seconds failed (monotonic time)."""
        since = self._failing_since
        return since is not None and time.monotonic() - since >= FAILING_S

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
                self._failing_since = None
            except Exception:
                if self._stop.is_set():
                    return
                if self._failing_since is None:
                    self._failing_since = time.monotonic()
                    logger.exception("fleet: a step failed (retrying)")
            self._wake.wait(self._poll_s)
            self._wake.clear()

    def _step(self) -> None:
        now = self._now()
        if now - self._last_beat >= self.lease_s / 4:
            self.queue.heartbeat(self.writer, now, self.lease_s)
            self._last_beat = now
        if not self.is_elected and self.queue.elect():
            self._elected()  # its observers run before it says so
            self.is_elected = True
        for lost in self.queue.claim_expired(self.writer, now, self.lease_s):
            with self._lock:
                self._mine.add(lost.task_id)
            self.taken_over.append(lost.task_id)
            try:
                outcome = take_over(
                    self._log,
                    self._bus,
                    lost.task_id,
                    lost.worker,
                    sender=self._sender,
                    resume=self.resume,
                )
            except Exception:  # it is ours now: it must still end, once
                logger.exception("resuming task %s failed: ending it", lost.task_id)
                outcome = take_over(
                    self._log, self._bus, lost.task_id, lost.worker, sender=self._sender
                )
            logger.warning("took over task %s of %s: %s", lost.task_id, lost.worker, outcome)
            if outcome == "had_ended":
                self.ended(lost.task_id)
            elif outcome == "not_started":
                self._begin(lost.task_id, decode_request(lost.request, lost.text))
        while self.worker and not self._stop.is_set() and self.running() < self.concurrency:
            leased = self.queue.lease(self.writer, now, self.lease_s)
            if leased is None:
                break
            with self._lock:
                self._mine.add(leased.task_id)
            self._begin(leased.task_id, decode_request(leased.request, leased.text))
