"""Reading memory for people (``artoo memory``) and rebuilding it from the event log."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from artoo.eventstore import MEMORY_EVENTS, MegramStore, catch_up_memory, rebuild_memory
from artoo.schemas import (
    Megram,
)

__all__ = ["MEMORY_EVENTS", "TagRow", "catch_up_memory", "memory_rows", "rebuild_memory"]


@dataclass(frozen=True)
class TagRow:
    """One tag's live potentials."""

    space: str
    entity: str
    count: int
    attention: float
    decision: float
    action: str


def memory_rows(store: Path, now: float) -> tuple[list[TagRow], list[Megram]]:
    """Every tag's potentials (strongest attention first) and every C-level SOP."""
    with MegramStore.open(store / "memory") as megrams:
        counts: dict[tuple[str, str], int] = {}
        sops = []
        for m in megrams.megrams():
            counts[(m.space, m.entity)] = counts.get((m.space, m.entity), 0) + 1
            if m.level == "C":
                sops.append(m)
        rows = []
        for space, entity in megrams.tags():
            p = megrams.potential(space, entity, now)
            rows.append(
                TagRow(
                    space, entity, counts.get((space, entity), 0), p.attention, p.decision, p.action
                )
            )
    rows.sort(key=lambda r: (-r.attention, r.space, r.entity))
    return rows, sops
