"""The injected Clock and id source. Tests and replay use a manual clock."""

from __future__ import annotations

import os
import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "IdSource", "SystemClock", "new_id"]

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
