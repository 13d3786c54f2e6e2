"""The injected Clock and id source; the :class:`ManualClock` that tests and replay use
(re-exported by :mod:`artoo.testing`)."""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "IdSource", "ManualClock", "SystemClock", "Timer", "new_id"]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


@runtime_checkable
class Clock(Protocol):
    """Where roles and the bus read the time. ``now()`` is UTC epoch seconds."""

    def now(self) -> float: ...

    def monotonic(self) -> float: ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class IdSource:
    """Unique, time-ordered ids (ULID-like: 48-bit ms time, 80-bit counter/random).

    Ids made by one source sort in the order they were made, even within one
    millisecond; never an LLM-chosen slug.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._last_ms = -1
        self._rand = 0

    def __call__(self) -> str:
        ms = int(self._clock.now() * 1000)
        with self._lock:
            if ms <= self._last_ms:
                ms = self._last_ms
                self._rand += 1
            else:
                self._last_ms = ms
                self._rand = int.from_bytes(os.urandom(10), "big") >> 1
            value = (ms << 80) | (self._rand & ((1 << 80) - 1))
        out = []
        for _ in range(26):
            out.append(_CROCKFORD[value & 31])
            value >>= 5
        return "".join(reversed(out))


_default_ids = IdSource()


def new_id() -> str:
    """A new unique, time-ordered id from the process-wide real-clock source."""
    return _default_ids()


class Timer:
    """A callback scheduled on a :class:`ManualClock`; ``cancel()`` it before it fires."""

    __slots__ = ("cancelled", "fn", "when")

    def __init__(self, when: float, fn: Callable[[], object]) -> None:
        """Made by :meth:`ManualClock.call_at`."""
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        """Do not fire (no effect once fired)."""
        self.cancelled = True


class ManualClock:
    """A clock that moves only when told; thread-safe. Implements the ``Clock`` protocol.

    ``now()`` starts at ``start`` (UTC epoch seconds), ``monotonic()`` at 0. ``advance``
    moves both forward and fires due timers (in time order, outside the lock, so a timer
    may schedule another). ``set(t)`` jumps the wall clock: forward like ``advance``,
    backward without touching ``monotonic`` or firing anything.

    Example::

        clock = ManualClock()
        fired = []
        clock.call_later(5, lambda: fired.append(clock.now()))
        clock.advance(4.9)   # nothing yet
        clock.advance(0.1)   # fires; fired == [clock.now()]
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        """Start the wall clock at ``start``."""
        self._lock = threading.Lock()
        self._now = float(start)
        self._monotonic = 0.0
        self._timers: list[tuple[float, int, Timer]] = []
        self._order = itertools.count()
        self._listeners: list[Callable[[float], object]] = []

    def now(self) -> float:
        """The current wall time (UTC epoch seconds)."""
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        """Seconds since the clock was made (never goes back)."""
        with self._lock:
            return self._monotonic

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (≥ 0) and fire the timers that came due."""
        if seconds < 0:
            raise ValueError(f"cannot advance by a negative amount ({seconds})")
        with self._lock:
            self._now += seconds
            self._monotonic += seconds
        self._fire_due()
        self._notify()

    def set(self, t: float) -> None:
        """Set the wall time to ``t`` (forward: as ``advance``; backward: a clock jump)."""
        with self._lock:
            delta = t - self._now
            self._now = float(t)
            if delta > 0:
                self._monotonic += delta
        if delta > 0:
            self._fire_due()
            self._notify()

    def on_advance(self, fn: Callable[[float], object]) -> None:
        """Call ``fn(now)`` after every forward move of the clock (a System under this clock
        ticks its timed roles so, instead of on a wall-clock thread)."""
        with self._lock:
            self._listeners.append(fn)

    def _notify(self) -> None:
        with self._lock:
            listeners, now = list(self._listeners), self._now
        for fn in listeners:
            fn(now)

    def call_at(self, when: float, fn: Callable[[], object]) -> Timer:
        """Call ``fn()`` once ``now()`` reaches ``when`` (fired by ``advance``/``set``)."""
        timer = Timer(when, fn)
        with self._lock:
            heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    def call_later(self, delay: float, fn: Callable[[], object]) -> Timer:
        """Call ``fn()`` ``delay`` seconds from now."""
        return self.call_at(self.now() + delay, fn)

    def pending(self) -> int:
        """How many timers wait to fire (cancelled ones excluded)."""
        with self._lock:
            return sum(1 for _, _, timer in self._timers if not timer.cancelled)

    def _fire_due(self) -> None:
        while True:
            with self._lock:
                if not self._timers or self._timers[0][0] > self._now:
                    return
                _, _, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                timer.cancelled = True
                timer.fn()

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now!r}, monotonic={self._monotonic!r})"
