"""The write-ahead Bus: publish never blocks; one writer logs, then delivers.

``publish`` validates and encodes the body in the caller's thread, queues it and returns.
One writer thread drains the queue in groups (at most ``max_group`` messages), assigns the
seqs, stamps ``ts`` from the clock, appends the whole group to the EventLog in one
WriteBatch (group commit, fsynced per the log's durability mode) and only then delivers it,
in seq order. So log order is delivery order, and anything delivered is in the log.

Two kinds of receivers:

- **subscribers** (role actors): each committed group reaches a subscriber as ONE
  ``actor_ref.tell(Delivery(envelopes))`` carrying the envelopes it subscribed to, in seq
  order. Actor mailboxes are unbounded, so a subscriber never loses a message. A dead actor
  (``pykka.ActorDeadError``) is unsubscribed and counted; the bus keeps running.
- **taps** (observers: Auditor, Judge, host listeners, a UI): bounded queues. A full tap
  drops and counts; it never slows the writer. ``Tap.catch_up()`` re-reads exactly the
  dropped envelopes from the log.

Example::

    log = EventLog.open(store / "events", durability="batch")
    bus = Bus(log)
    bus.subscribe([TaskRequest], perceiver_ref)
    bus.publish(TaskRequest(text="count files"), sender="queen", task_id=task_id)
    bus.flush()        # persisted and told
    bus.close()        # flushes, stops the writer; the log stays open

**A log other processes append to** (a PostgreSQL store with workers): give ``follow``, a
second reader of the same log. Subscribers still get this bus's own envelopes at commit,
but taps, ``store=True`` subscriptions and every subscriber's ``store_kinds`` (memory
events) are fed by a follower thread that reads the shared log in seq order — every
writer's envelopes, each once (this bus's own groups from memory, the others' from the
log), a poll (``follow_s``) behind the commit. A replay (``from_seq``) then holds only this
bus's own envelopes (not of ``store_kinds``): a restarted role never sees another
process's tasks. Envelopes of ``routed_kinds`` (what one process may log about a task
another runs: a cancel, the elected Judge's tickets) reach the subscribers of the process
``route(envelope)`` says runs their task — its own at commit, another's from the follower.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self

import msgspec

from artoo.eventstore import EventLogBackend
from artoo.eventstore.eventlog import encode_tail
from artoo.schemas import MESSAGE_TYPES, Envelope, Message

from ._selection import (
    Receiver,
    Subscription,
    _Kinds,
    _pick,
    _pick_addressed,
    kind_set,
    select,
)
from .clock import Clock, SystemClock

__all__ = [
    "MAX_GROUP",
    "Bus",
    "BusClosed",
    "BusError",
    "Delivery",
    "Receiver",
    "Subscription",
    "Tap",
    "kind_set",
    "select",
]

_logger = logging.getLogger(__name__)

MAX_GROUP = 4096  # messages per group commit: bounds the latency of one group
_BODY_TYPES = frozenset(MESSAGE_TYPES)


# --------------------------------------------------------------------------- errors
class BusClosed(RuntimeError):
    """The bus was closed: it takes no more messages."""


class BusError(RuntimeError):
    """The bus writer failed (``__cause__`` is the error); the bus takes no more messages."""


# --------------------------------------------------------------------------- plain data
@dataclass(frozen=True, slots=True)
class Delivery:
    """One committed group as one subscriber sees it: its envelopes, in seq order."""

    envelopes: tuple[Envelope, ...]

    def __iter__(self) -> Iterator[Envelope]:
        return iter(self.envelopes)

    def __len__(self) -> int:
        return len(self.envelopes)


class _Item(msgspec.Struct, gc=False, eq=False):
    """A published message waiting for the writer (gc=False: the collector never scans the
    queue, however deep it gets)."""

    task_id: str | None
    sender: str
    to: str | None
    cause: int | None
    body: Any
    tail: bytes  # encode_tail((task_id, sender, to, cause, body))


@dataclass(frozen=True, slots=True)
class _Join:
    """A control in the writer's queue: replay the log to a subscriber, then add it."""

    subscription: Subscription
    from_seq: int


# --------------------------------------------------------------------------- taps
class Tap:
    """A bounded queue of envelopes for an observer; iterate it, or ``get`` one at a time.

    A full tap drops what does not fit and counts it in ``dropped``; ``catch_up()`` then
    returns exactly those envelopes, re-read from the log. Iteration blocks and ends once
    the tap or the bus is closed and the queue is empty.

    Example::

        with bus.tap(maxsize=1000, kinds=[FinalResult]) as tap:
            for envelope in tap:
                ...
            missed = tap.catch_up()
    """

    def __init__(
        self, bus: Bus, event_log: EventLogBackend, maxsize: int, kinds: frozenset[type] | None
    ) -> None:
        """Made by :meth:`Bus.tap`."""
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, not {maxsize}")
        self._bus = bus
        self._log = event_log
        self._maxsize = maxsize
        self._kinds = kinds
        self._items: deque[Envelope] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._closed = False
        self._dropped = 0
        self._lost: list[list[int]] = []  # [first, last] seq ranges of dropped envelopes
        self._dropping = False  # the last offer ended with a drop

    @property
    def dropped(self) -> int:
        """How many envelopes this tap dropped since it was made (not reset by catch_up)."""
        return self._dropped

    @property
    def closed(self) -> bool:
        """True once the tap (or its bus) was closed."""
        return self._closed

    @property
    def pending(self) -> int:
        """How many envelopes wait to be read."""
        return len(self._items)

    def get(self, timeout: float | None = None) -> Envelope | None:
        """The next envelope; None on timeout, or when closed and empty."""
        with self._cond:
            if not self._items and not self._closed:
                self._cond.wait_for(self._ready, timeout)
            return self._items.popleft() if self._items else None

    def __iter__(self) -> Iterator[Envelope]:
        while (envelope := self.get()) is not None:
            yield envelope

    def catch_up(self) -> list[Envelope]:
        """Re-read from the log exactly the envelopes dropped since the last catch-up."""
        with self._cond:
            lost, self._lost = self._lost, []
        kinds = self._kinds
        out: list[Envelope] = []
        for first, last in lost:
            out.extend(select(tuple(self._log.read(first, last)), kinds, None))
        return out

    def close(self) -> None:
        """Stop receiving; a blocked ``get`` or iteration ends once the queue is empty."""
        self._bus._remove_tap(self)
        self._end()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ the writer's side
    def _ready(self) -> bool:
        return bool(self._items) or self._closed

    def _end(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _offer(self, envelopes: tuple[Envelope, ...], group: _Kinds | None = None) -> None:
        """Queue what fits, record the rest as dropped. Never blocks on the consumer."""
        envelopes = _pick(envelopes, group or _Kinds(envelopes), self._kinds, None)
        if not envelopes:
            return
        with self._cond:
            if self._closed:
                return
            room = self._maxsize - len(self._items)
            if room >= len(envelopes):
                self._items.extend(envelopes)
                self._dropping = False
            else:
                if room > 0:
                    self._items.extend(envelopes[:room])
                first, last = envelopes[max(room, 0)].seq, envelopes[-1].seq
                self._dropped += len(envelopes) - max(room, 0)
                if self._dropping and room <= 0 and self._lost:
                    self._lost[-1][1] = last  # nothing of ours got through in between
                else:
                    self._lost.append([first, last])
                self._dropping = True
            self._cond.notify_all()


# --------------------------------------------------------------------------- the bus
class Replayed(msgspec.Struct, frozen=True):
    """A :class:`ResumeHook`'s answer for a message the log already holds: not logged
    again; ``envelope`` (the recorded one, with the message as published) is delivered to
    the subscribers, or nothing when None."""

    envelope: Envelope | None


class Rewritten(msgspec.Struct, frozen=True):
    """A :class:`ResumeHook`'s answer for a message to log as ``logged`` (the resumed
    task's recorded ids); delivered as ``delivered``, or as published when None."""

    logged: Message
    delivered: Message | None = None


class ResumeHook(Protocol):
    """What the bus asks about each message of a resumed task before committing it."""

    @property
    def tasks(self) -> Mapping[str, Any]:
        """The task ids being resumed."""
        ...

    def route(
        self, task_id: str | None, sender: str, to: str | None, cause: int | None, body: Message
    ) -> Replayed | Rewritten | None:
        """:class:`Replayed` (already logged), :class:`Rewritten`, or None (log it)."""
        ...


class Bus:
    """The write-ahead bus over one event log (any EventLogBackend; see the module docstring).

    ``clock`` stamps each group's ``ts`` (default: the system clock). The bus continues
    the log's seqs; it never closes the log. ``max_group`` bounds a group commit.
    """

    def __init__(
        self,
        log: EventLogBackend,
        clock: Clock | None = None,
        *,
        max_group: int = MAX_GROUP,
        follow: EventLogBackend | None = None,
        store_kinds: Iterable[type] = (),
        routed_kinds: Iterable[type] = (),
        route: Callable[[Envelope], bool] | None = None,
        follow_s: float = 0.02,
    ) -> None:
        """Start the writer thread over ``log`` (and with ``follow``, the follower: see the
        module docstring)."""
        if max_group < 1:
            raise ValueError(f"max_group must be at least 1, not {max_group}")
        self._log = log
        self._now = (clock or SystemClock()).now
        self._max_group = max_group
        self._append = log.append_encoded
        # The queue holds _Items and controls (flush barriers, from_seq joins), in publish
        # order. publish() takes no lock: it pushes, then re-checks _halted (see _settle).
        self._queue: deque[Any] = deque()
        self._push = self._queue.append
        self._lock = threading.Lock()  # receivers, controls, halting, the writer's exit
        self._halted = False  # closed or failed: refuse publishes
        self._exited = False  # the writer loop ended (set under _lock)
        self._controls = 0  # controls queued and not yet handled
        self._subscriptions: tuple[Subscription, ...] = ()
        self._taps: tuple[Tap, ...] = ()
        # writer side
        self._last_seq = log.last_seq
        self._idle = False
        self._stopping = False
        self._wake = threading.Event()
        self._taken = 0
        self._committed = 0
        self._groups = 0
        self._dead = 0
        self._dropped_by_closed_taps = 0
        self._error: BaseException | None = None
        self._failure_callbacks: list[Callable[[BaseException], None]] = []
        self.resume_hook: ResumeHook | None = None
        """Set by a System resuming tasks (:mod:`artoo._resume`): sees each message of a
        resumed task before it is committed (writer thread)."""
        self._thread = threading.Thread(target=self._run, name="artoo-bus-writer", daemon=True)
        self._feed: _StoreFeed | None = None
        if follow is not None:
            self._feed = _StoreFeed(
                self,
                follow,
                kind_set(store_kinds) or frozenset(),
                kind_set(routed_kinds) or frozenset(),
                route,
                follow_s,
            )
        self._thread.start()

    # ------------------------------------------------------------------ publishing
    def publish(
        self,
        body: Message,
        *,
        sender: str,
        task_id: str | None = None,
        to: str | None = None,
        cause: int | None = None,
    ) -> None:
        """Queue one message and return at once (never waits for I/O or a lock).

        The body is encoded here, so a body that cannot be encoded raises TypeError (or
        msgspec.EncodeError) in the caller. Raises :class:`BusClosed` after :meth:`close`
        and :class:`BusError` after the writer failed.
        """
        if type(body) not in _BODY_TYPES and not isinstance(body, Message):
            raise TypeError(f"a bus message must be an artoo.schemas.Message, not {body!r}")
        item = _Item(
            task_id, sender, to, cause, body, encode_tail((task_id, sender, to, cause, body))
        )
        if self._halted:
            self._refuse()
        self._push(item)
        if self._halted:  # close() or a failure raced with us
            self._settle(item)
        if self._idle:
            self._wake.set()

    def _settle(self, item: _Item) -> None:
        """Decide a message pushed while the bus halted: committed, or taken back (raise)."""
        with self._lock:
            if not self._exited:
                return  # the writer checks the queue under this lock before it exits
            if self._error is None:
                # a snapshot: other late publishers may still append (they only append)
                for index, queued in enumerate(list(self._queue)):
                    if queued is item:
                        del self._queue[index]
                        break
                else:
                    return  # the writer committed it before it exited
        self._refuse()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything published before this call is persisted and delivered.

        Returns False if ``timeout`` (seconds) passed first. Raises :class:`BusError` if
        the writer failed.
        """
        if threading.current_thread() is self._thread:
            raise RuntimeError("flush() called from the bus writer (a subscriber's tell?)")
        barrier = threading.Event()
        done = not self._control(barrier) or barrier.wait(timeout)
        if self._error is not None:
            raise BusError(f"the bus writer failed: {self._error!r}") from self._error
        return done

    # ------------------------------------------------------------------ receivers
    def subscribe(
        self,
        kinds: Iterable[type] | None,
        actor_ref: Receiver,
        to: str | None = None,
        *,
        addressed: Iterable[type] | None = None,
        from_seq: int | None = None,
        store: bool = False,
    ) -> Subscription:
        """Tell ``actor_ref`` one :class:`Delivery` per committed group holding its envelopes.

        ``kinds``: message classes (None = all). ``to``: only envelopes addressed to it
        (None = any address). Without ``from_seq`` it takes effect from the next group.
        With ``from_seq`` the subscriber first gets the logged envelopes from that seq on
        (re-read from the log, in deliveries of at most ``max_group``), then the live
        ones — no gap, no duplicate (a restarted role resumes so). With ``addressed``,
        ``kinds`` are taken whatever their address and ``addressed`` kinds only when sent
        ``to`` — one subscription, so each group is one Delivery in seq order. With
        ``store`` on a bus that follows a shared log, the subscriber gets every writer's
        envelopes of ``kinds`` (from the follower, a poll behind); elsewhere it is ignored.
        """
        wanted = kind_set(addressed) if addressed else None
        if wanted:
            subscription = Subscription(kind_set(kinds) or frozenset(), to, actor_ref, wanted)
        else:
            subscription = Subscription(kind_set(kinds), to, actor_ref)
        if store and self._feed is not None:  # fed by the follower, from the shared log
            self._feed.add(subscription)
            return subscription
        if from_seq is None:
            self._add(subscription)
        elif not self._control(_Join(subscription, from_seq)):  # the writer has exited
            self._replay(subscription, from_seq)
        return subscription

    def _add(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)

    def _control(self, control: threading.Event | _Join) -> bool:
        """Queue a control for the writer; False if the writer has exited."""
        with self._lock:
            if self._exited:
                return False
            self._controls += 1
            self._push(control)
        self._wake.set()
        return True

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop a subscription (idempotent)."""
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)
        if self._feed is not None:
            self._feed.remove(subscription)

    def tap(self, maxsize: int = 10_000, kinds: Iterable[type] | None = None) -> Tap:
        """A bounded observer queue receiving every committed envelope of ``kinds``."""
        tap = Tap(self, self._log, maxsize, kind_set(kinds))
        with self._lock:
            if self._halted:
                tap._end()
            else:
                self._taps = (*self._taps, tap)
        return tap

    def _remove_tap(self, tap: Tap) -> None:
        with self._lock:
            if tap in self._taps:
                self._taps = tuple(t for t in self._taps if t is not tap)
                self._dropped_by_closed_taps += tap.dropped

    # ------------------------------------------------------------------ state
    @property
    def halted(self) -> bool:
        """True once the bus was closed or its writer failed (publishes are refused)."""
        return self._halted

    @property
    def error(self) -> BaseException | None:
        """What made the writer fail (an append to the log that raised), else None."""
        return self._error

    def on_failure(self, callback: Callable[[BaseException], None]) -> None:
        """Call ``callback(error)`` once, from the writer thread, if the writer fails
        (e.g. the log's disk is full); at once if it already has."""
        with self._lock:
            if self._error is None:
                self._failure_callbacks.append(callback)
                return
            error = self._error
        callback(error)

    @property
    def last_seq(self) -> int:
        """The seq of the last committed (persisted and delivered) envelope."""
        return self._last_seq

    def read(self, from_seq: int, to_seq: int | None = None) -> Iterator[Envelope]:
        """Committed envelopes ``from_seq``…``to_seq`` (to ``last_seq`` when None), re-read
        from the log — for an observer that must catch up at once, not a tap's hop later."""
        return self._log.read(from_seq, self._last_seq if to_seq is None else to_seq)

    def stats(self) -> dict[str, int | float]:
        """Counters: published, committed, last_seq, groups, average group size, queue
        depth, tap drops, dead subscriptions, subscriptions and taps."""
        groups = self._groups
        depth = max(len(self._queue) - self._controls, 0)
        return {
            "published": self._taken + depth,
            "committed": self._committed,
            "last_seq": self._last_seq,
            "groups": groups,
            "avg_group_size": self._committed / groups if groups else 0.0,
            "queue_depth": depth,
            "tap_drops": self._dropped_by_closed_taps + sum(t.dropped for t in self._taps),
            "dead_subscriptions": self._dead,
            "subscriptions": len(self._subscriptions),
            "taps": len(self._taps),
        }

    def close(self, timeout: float | None = None) -> None:
        """Commit what was published, stop the writer and end the taps (idempotent).

        The log stays open. Raises :class:`BusError` if the writer had failed.
        """
        with self._lock:
            self._halted = True
        self._stopping = True
        self._wake.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        if self._feed is not None:
            self._feed.stop(timeout)
        for tap in self._taps:
            tap._end()
        if self._error is not None:
            raise BusError(f"the bus writer failed: {self._error!r}") from self._error

    def appended(self, seq: int) -> bool:
        """True when this bus appended ``seq`` (on a log no other process writes, every
        committed seq)."""
        return self._feed.is_mine(seq) if self._feed is not None else seq <= self._last_seq

    def caught_up(self, seq: int | None = None, timeout: float | None = None) -> bool:
        """On a bus that follows a shared log: wait until the follower has fed everything up
        to ``seq`` (default: this bus's ``last_seq``) to the taps and store subscribers;
        False if ``timeout`` passed first. Elsewhere True at once (taps are fed at commit)."""
        if self._feed is None:
            return True
        return self._feed.wait(self._last_seq if seq is None else seq, timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _refuse(self) -> None:
        if self._error is not None:
            raise BusError(f"the bus writer failed: {self._error!r}") from self._error
        raise BusClosed("the bus is closed; publish before close()")

    # ------------------------------------------------------------------ the writer
    def _run(self) -> None:
        queue = self._queue
        popleft = queue.popleft
        max_group = self._max_group
        controls: list[Any] = []
        try:
            while True:
                if not queue:
                    if self._stopping and self._exit():
                        return
                    self._sleep()
                    continue
                group = [popleft() for _ in range(min(len(queue), max_group))]
                if self._controls:
                    controls = [item for item in group if type(item) is not _Item]
                    if controls:
                        group = [item for item in group if type(item) is _Item]
                if group:
                    self._taken += len(group)
                    self._commit(group)
                if controls:
                    self._handle(controls)
                    controls = []
        except BaseException as exc:
            self._fail(exc, controls)

    def _exit(self) -> bool:
        with self._lock:
            if self._queue:
                return False
            self._exited = True
            return True

    def _sleep(self) -> None:
        # Publishers push before they read _idle; we set _idle before we re-check the
        # queue, so a message is either seen here or its publisher sets _wake.
        self._idle = True
        self._wake.clear()
        if not self._queue and not self._stopping:
            self._wake.wait()
        self._idle = False

    def _commit(self, group: list[_Item]) -> None:
        hook = self.resume_hook
        if hook is not None and hook.tasks:
            group = self._resumed(hook, group)
            if not group:
                return
        first = self._last_seq + 1
        ts = self._now()
        feed = self._feed
        if feed is not None:  # the follower waits: it cannot yet tell this group is ours
            feed.appending(True)
        try:
            assigned = self._append(first, ts, [i.task_id for i in group], [i.tail for i in group])
            if assigned is not None:  # a log other processes append to numbered the group
                first = assigned
            envelopes = tuple(
                [
                    Envelope(seq, ts, i.task_id, i.sender, i.to, i.cause, i.body)
                    for seq, i in enumerate(group, first)
                ]
            )
            self._last_seq = first + len(group) - 1
            if feed is not None:
                envelopes = feed.own(envelopes)
        finally:
            if feed is not None:
                feed.appending(False)
        self._deliver(envelopes)
        self._committed += len(group)
        self._groups += 1

    def _resumed(self, hook: ResumeHook, group: list[_Item]) -> list[_Item]:
        """The items of ``group`` to log: a message of a resumed task the log already holds
        is not logged again, its recorded envelope is delivered to the subscribers (not to
        taps: they saw it); one the hook rewrites is delivered as published, logged as
        rewritten."""
        out: list[_Item] = []
        replayed: list[Envelope] = []
        for item in group:
            if item.task_id not in hook.tasks:
                out.append(item)
                continue
            routed = hook.route(item.task_id, item.sender, item.to, item.cause, item.body)
            if isinstance(routed, Replayed):
                if routed.envelope is not None:
                    replayed.append(routed.envelope)
            elif isinstance(routed, Rewritten):
                logged = (item.task_id, item.sender, item.to, item.cause, routed.logged)
                delivered = routed.delivered if routed.delivered is not None else item.body
                out.append(
                    _Item(
                        item.task_id,
                        item.sender,
                        item.to,
                        item.cause,
                        delivered,
                        encode_tail(logged),
                    )
                )
            else:
                out.append(item)
        if replayed:
            envelopes = tuple(replayed)
            self._to_subscriptions(envelopes, _Kinds(envelopes))
        return out

    def _handle(self, controls: list[Any]) -> None:
        # After the group they came with is committed: everything before them is logged.
        with self._lock:
            self._controls -= len(controls)
        for control in controls:
            if isinstance(control, _Join):
                if self._replay(control.subscription, control.from_seq):
                    self._add(control.subscription)
            else:
                control.set()

    def _replay(self, subscription: Subscription, from_seq: int) -> bool:
        """Tell a subscriber the logged envelopes from ``from_seq`` to ``last_seq``.

        False if the subscriber turned out dead.
        """
        envelopes = self._log.read(from_seq, self._last_seq)
        if self._feed is not None:  # only this bus's own (the shared log holds others')
            envelopes = self._feed.mine(envelopes)
        while chunk := tuple(itertools.islice(envelopes, self._max_group)):
            selected = select(chunk, subscription.kinds, subscription.to, subscription.addressed)
            if selected and not self._tell(subscription, selected):
                return False
        return True

    def _deliver(self, envelopes: tuple[Envelope, ...]) -> None:
        group = _Kinds(envelopes)
        self._to_subscriptions(envelopes, group)
        if self._feed is not None:
            return  # the follower feeds the taps, from the shared log
        for tap in self._taps:
            tap._offer(envelopes, group)

    def _to_subscriptions(self, envelopes: tuple[Envelope, ...], group: _Kinds) -> None:
        for subscription in self._subscriptions:
            if subscription.addressed:
                selected = _pick_addressed(
                    envelopes,
                    group,
                    subscription.kinds or frozenset(),
                    subscription.addressed,
                    subscription.to,
                )
            else:
                selected = _pick(envelopes, group, subscription.kinds, subscription.to)
            if selected:
                self._tell(subscription, selected)

    def _tell(self, subscription: Subscription, envelopes: tuple[Envelope, ...]) -> bool:
        try:
            subscription.ref.tell(Delivery(envelopes))
        except Exception as exc:  # a dead actor (ActorDeadError) or a broken receiver
            self.unsubscribe(subscription)
            self._dead += 1
            _logger.warning("bus: dropped subscriber %r: %r", subscription.ref, exc)
            return False
        return True

    def _fail(self, exc: BaseException, controls: list[Any]) -> None:
        _logger.error("bus writer failed; the bus takes no more messages", exc_info=exc)
        with self._lock:
            self._error = exc
            self._halted = True
            self._exited = True
            left = list(self._queue)
            self._queue.clear()
        for item in (*controls, *left):
            if isinstance(item, threading.Event):
                item.set()  # wake flushers; they raise BusError
        for tap in self._taps:
            tap._end()
        for callback in self._failure_callbacks:
            try:
                callback(exc)
            except Exception:
                _logger.exception("bus failure callback raised")


# --------------------------------------------------------------------------- the follower
class _StoreFeed:
    """The follower of a shared log (see the module docstring): reads every writer's
    committed envelopes in seq order and feeds the taps, the store subscriptions and the
    ``store_kinds`` of every subscriber. This bus's own groups come from memory."""

    def __init__(
        self,
        bus: Bus,
        reader: EventLogBackend,
        store_kinds: frozenset[type],
        routed_kinds: frozenset[type],
        route: Callable[[Envelope], bool] | None,
        poll_s: float,
    ) -> None:
        self._bus = bus
        self._reader = reader
        self.kinds = store_kinds
        self._routed = routed_kinds if route is not None else frozenset()
        self._route = route or (lambda env: True)
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._cached: dict[int, tuple[Envelope, ...]] = {}  # own groups not yet fed, by first
        self._ranges: list[int] = []  # own groups' [first, last] seqs, flattened, ascending
        self._subscriptions: tuple[Subscription, ...] = ()
        self._cursor = bus._last_seq  # fed up to here
        self._appending = False  # this bus's append is committing, its group not yet own()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="artoo-bus-follower", daemon=True)
        self._thread.start()

    # writer side
    def own(self, envelopes: tuple[Envelope, ...]) -> tuple[Envelope, ...]:
        """Remember a committed group of this bus; what subscribers get at commit (not the
        ``store_kinds``: the follower delivers those, in the store's order)."""
        first, last = envelopes[0].seq, envelopes[-1].seq
        with self._lock:
            self._ranges.extend((first, last))
            if last > self._cursor:
                self._cached[first] = envelopes
        kinds, routed, route = self.kinds, self._routed, self._route
        if not kinds and not routed:
            return envelopes
        return tuple(
            [
                e
                for e in envelopes
                if type(e.body) not in kinds and (type(e.body) not in routed or route(e))
            ]
        )

    def appending(self, busy: bool) -> None:
        """The writer's append starts (True) or is over, its group known by :meth:`own`
        (False). While it runs, the follower feeds nothing: a group committed and read
        back before :meth:`own` would look like another writer's, and a routed kind (a
        model call of a task run here) would reach the subscribers twice."""
        with self._cond:
            self._appending = busy
            if not busy:
                self._cond.notify_all()

    def mine(self, envelopes: Iterable[Envelope]) -> Iterator[Envelope]:
        """Of ``envelopes`` (re-read from the log), this bus's own, not of ``store_kinds``."""
        for env in envelopes:
            if type(env.body) not in self.kinds and self.is_mine(env.seq):
                yield env

    def is_mine(self, seq: int) -> bool:
        """True when ``seq`` was appended by this bus."""
        with self._lock:
            at = bisect.bisect_right(self._ranges, seq)
            return at % 2 == 1 or (at > 0 and self._ranges[at - 1] == seq)

    # subscriptions
    def add(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)

    def remove(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)

    def wait(self, seq: int, timeout: float | None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._cursor >= seq, timeout)

    def stop(self, timeout: float | None) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()  # a follower waiting on an append stops waiting
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    # the follower thread
    def _run(self) -> None:
        refresh = getattr(self._reader, "refresh", None)
        while True:
            stopping = self._stop.is_set()
            try:
                top = refresh() if callable(refresh) else self._reader.last_seq
                if top > self._cursor:
                    self._pass(top)
            except Exception:
                if (
                    self._stop.is_set()
                    or self._bus._halted
                    or getattr(self._reader, "closed", False)
                ):
                    return
                _logger.exception("bus follower: reading the shared log failed; retrying")
            if stopping:
                return
            self._stop.wait(self._poll_s)

    def _pass(self, top: int) -> None:
        seq = self._cursor + 1
        while seq <= top:
            with self._lock:
                cached = self._cached.pop(seq, None)
                later = [s for s in self._cached if s > seq]
            if cached is not None:
                chunk = cached
            else:
                end = min(min(later, default=top + 1) - 1, top, seq + MAX_GROUP - 1)
                chunk = tuple(self._reader.read(seq, end))
                if not chunk:
                    return  # not visible yet to this reader: next poll
            self._feed(chunk)
            seq = chunk[-1].seq + 1
            with self._cond:
                self._cursor = chunk[-1].seq
                for first in [s for s in self._cached if s <= self._cursor]:
                    del self._cached[first]
                self._cond.notify_all()

    def _feed(self, envelopes: tuple[Envelope, ...]) -> None:
        with self._cond:  # every group of ours in ``envelopes`` is known once no append runs
            self._cond.wait_for(lambda: not self._appending or self._stop.is_set())
        bus = self._bus
        group = _Kinds(envelopes)
        for tap in bus._taps:
            tap._offer(envelopes, group)
        kinds, routed, route = self.kinds, self._routed, self._route
        if kinds or routed:  # the store's memory events; another's about a task run here
            stored = tuple(
                [
                    e
                    for e in envelopes
                    if type(e.body) in kinds
                    or (type(e.body) in routed and not self.is_mine(e.seq) and route(e))
                ]
            )
            if stored:
                for subscription in bus._subscriptions:
                    selected = select(
                        stored, subscription.kinds, subscription.to, subscription.addressed
                    )
                    if selected:
                        bus._tell(subscription, selected)
        for subscription in self._subscriptions:
            selected = select(envelopes, subscription.kinds, subscription.to)
            if selected:
                bus._tell(subscription, selected)
