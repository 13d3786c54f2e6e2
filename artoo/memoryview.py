"""Reading memory for people (``artoo memory``) and rebuilding it from the event log."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from artoo.eventstore import EventLog
from artoo.eventstore.megrams import MegramStore
from artoo.schemas import (
    Megram,
    MegramDemoted,
    MegramForgotten,
    MegramRecalled,
    MegramRecorded,
    Message,
    SOPPromoted,
)

__all__ = ["MEMORY_EVENTS", "PairRow", "catch_up_memory", "memory_rows", "rebuild_memory"]

MEMORY_EVENTS = (MegramRecorded, MegramRecalled, MegramForgotten, MegramDemoted, SOPPromoted)


@dataclass(frozen=True)
class PairRow:
    """One tag pair's live potentials."""

    space: str
    entity: str
    count: int
    attention: float
    decision: float
    action: str


def memory_rows(store: Path, now: float) -> tuple[list[PairRow], list[Megram]]:
    """Every tag pair's potentials (strongest attention first) and every C-level SOP."""
    with MegramStore.open(store / "memory") as megrams:
        counts: dict[tuple[str, str], int] = {}
        sops = []
        for m in megrams.megrams():
            counts[(m.space, m.entity)] = counts.get((m.space, m.entity), 0) + 1
            if m.level == "C":
                sops.append(m)
        rows = []
        for space, entity in megrams.pairs():
            p = megrams.potential(space, entity, now)
            rows.append(
                PairRow(
                    space, entity, counts.get((space, entity), 0), p.attention, p.decision, p.action
                )
            )
    rows.sort(key=lambda r: (-r.attention, r.space, r.entity))
    return rows, sops


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
    """Recompute ``<store>/memory`` from the event log alone; returns the events applied."""
    memory = store / "memory"
    if memory.exists():
        shutil.rmtree(memory)
    with EventLog.open(store / "events", durability="none") as log, MegramStore.open(memory) as m:
        return catch_up_memory(log, m)
