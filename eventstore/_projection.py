"""Memory as a projection of the event log: the events that change it, catching the megram
store up with the log, and rebuilding it from the log alone."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from artoo.schemas import (
    MegramDemoted,
    MegramForgotten,
    MegramRecalled,
    MegramRecorded,
    Message,
    SOPPromoted,
)

from ._megramstore import MegramStore
from .eventlog import EventLog

__all__ = ["MEMORY_EVENTS", "catch_up_memory", "rebuild_memory"]

MEMORY_EVENTS: tuple[type[Message], ...] = (
    MegramRecorded,
    MegramRecalled,
    MegramForgotten,
    MegramDemoted,
    SOPPromoted,
)
"""The event types :meth:`MegramStore.apply` folds in (any other message is ignored)."""


def catch_up_memory(log: EventLog, megrams: MegramStore) -> int:
    """Apply the memory events the log has past the store's watermark; returns how many.

    The watermark then moves to the last seq read, memory event or not, so the next
    catch-up (the next ``System.open``) reads only what was appended since.
    """
    last = megrams.applied_seq
    found = 0

    def events() -> Iterator[tuple[int, Message]]:
        nonlocal last, found
        for env in log.read(from_seq=megrams.applied_seq + 1):
            last = env.seq
            if isinstance(env.body, MEMORY_EVENTS):
                found += 1
                yield env.seq, env.body

    megrams.apply_many(events(), with_seq=True)
    megrams.mark_applied(last)
    return found


def rebuild_memory(store: Path) -> int:
    """Recompute ``<store>/memory`` from the event log alone; returns the events applied.

    Safe to interrupt or fail: the log is opened first (a store another process holds
    raises StoreLocked and nothing changes), the new memory is built in
    ``<store>/memory.rebuild`` and swapped in only once complete; on any error the old
    memory stays as it was.
    """
    memory = store / "memory"
    building = store / "memory.rebuild"
    retired = store / "memory.old"
    with EventLog.open(store / "events", durability="none") as log:
        if memory.exists():  # take memory's own lock too: nobody may be using it
            MegramStore.open(memory).close()
        shutil.rmtree(building, ignore_errors=True)
        try:
            with MegramStore.open(building) as megrams:
                applied = catch_up_memory(log, megrams)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        shutil.rmtree(retired, ignore_errors=True)
        if memory.exists():
            memory.rename(retired)
        building.rename(memory)
        shutil.rmtree(retired, ignore_errors=True)
    return applied
