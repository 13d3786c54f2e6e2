"""Reading memory for people (``artoo memory``) and rebuilding it from the event log."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from artoo.eventstore import (
    MEMORY_EVENTS,
    MegramStore,
    StoreLocked,
    catch_up_memory,
    open_memory,
    rebuild_memory,
)
from artoo.eventstore._potentials import ATTENTION_FLOOR, DECISION_BAND
from artoo.schemas import (
    Megram,
)

from ._store import StoreSpec, parse_store, read_log

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


@contextlib.contextmanager
def read_memory(store: str | Path | StoreSpec) -> Iterator[MegramStore]:
    """A store's memory, for reading: its own megram store, or — for a PostgreSQL store, or
    a LevelDB store a running System holds — the projection of its log (the memory events
    it holds, read live), built in a scratch directory and thrown away after."""
    spec = parse_store(store)
    if spec.path is not None:
        try:
            megrams = MegramStore.open(spec.path / "memory")
        except StoreLocked:
            pass
        else:
            with megrams:
                yield megrams
            return
    with tempfile.TemporaryDirectory(prefix="artoo-memory-") as scratch, read_log(spec) as log:
        projected = open_memory(
            Path(scratch) / "memory",
            log,
            attention_floor=ATTENTION_FLOOR,
            decision_band=DECISION_BAND,
        )
        with projected:
            yield projected


def memory_rows(store: str | Path | StoreSpec, now: float) -> tuple[list[TagRow], list[Megram]]:
    """Every tag's potentials (strongest attention first) and every C-level SOP."""
    with read_memory(store) as megrams:
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
