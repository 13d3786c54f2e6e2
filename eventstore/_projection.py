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

from ._contract import EventLogBackend
from ._megramstore import MegramStore
from .eventlog import EventLog

__all__ = ["MEMORY_EVENTS", "catch_up_memory", "open_memory", "rebuild_memory", "salvage"]

MEMORY_EVENTS: tuple[type[Message], ...] = (
    MegramRecorded,
    MegramRecalled,
    MegramForgotten,
    MegramDemoted,
    SOPPromoted,
)
"""The event types :meth:`MegramStore.apply` folds in (any other message is ignored)."""


def catch_up_memory(log: EventLogBackend, megrams: MegramStore) -> int:
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


def open_memory(
    path: Path, log: EventLogBackend, *, attention_floor: float, decision_band: float
) -> MegramStore:
    """Open the megram store at ``path`` as the projection of ``log`` and catch it up.

    A memory that follows another log (the log was replaced, say after a salvage) is
    discarded and rebuilt from this one — its watermark means nothing here; a memory that
    predates log identities adopts this log.
    """
    megrams = MegramStore.open(path, attention_floor=attention_floor, decision_band=decision_band)
    try:
        if megrams.log_id not in (None, log.log_id):
            megrams.close()
            shutil.rmtree(path)
            megrams = MegramStore.open(
                path, attention_floor=attention_floor, decision_band=decision_band
            )
        megrams.follow(log.log_id)
        catch_up_memory(log, megrams)
    except BaseException:
        megrams.close()
        raise
    return megrams


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
                megrams.follow(log.log_id)
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


def salvage(source: Path, target: Path) -> int:
    """Copy the clean prefix of a damaged store's event log into a new store; returns the
    last seq copied.

    ``source`` and ``target`` are store directories. Reads ``source``'s records in seq
    order up to the first gap or undecodable record (what :class:`CorruptLog` names) and
    appends them to a new log at ``target/events``; open ``target`` with a System to get
    its memory rebuilt from them. The damaged store is only read.
    """
    import plyvel

    from .eventlog import _EVENT, _seq_of_key, decode_record

    if (target / "events").exists():
        raise ValueError(f"{target}/events exists: salvage writes into a new store")
    db = plyvel.DB(str(source / "events"), paranoid_checks=False)
    try:
        envelopes = []
        expected = 1
        try:
            for key, data in db.iterator(prefix=_EVENT):
                if _seq_of_key(key) != expected:
                    break
                envelopes.append(decode_record(expected, data))
                expected += 1
        except Exception:  # a damaged block or record: the clean prefix ends here
            pass
    finally:
        db.close()
    with EventLog.open(target / "events", durability="batch") as log:
        for start in range(0, len(envelopes), 4096):
            log.append(envelopes[start : start + 4096])
    return len(envelopes)
