"""Reading memory for people (``artoo memory``) and rebuilding it from the event log."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from artoo.actors.roles.memory import INTENT, Recollection, recall, request_text
from artoo.eventstore import (
    MEMORY_EVENTS,
    MegramStore,
    RecallIndex,
    StoreLocked,
    catch_up_memory,
    open_memory,
    rebuild_memory,
)
from artoo.eventstore._potentials import ATTENTION_FLOOR, DECISION_BAND
from artoo.schemas import (
    Megram,
    MemoryQuery,
    MemoryRecall,
)

from ._store import StoreSpec, parse_store, read_log

__all__ = [
    "MEMORY_EVENTS",
    "TagRow",
    "catch_up_memory",
    "memory_recall",
    "memory_rows",
    "rebuild_memory",
]


@dataclass(frozen=True)
class TagRow:
    """One tag's live potentials."""

    space: str
    entity: str
    count: int
    attention: float
    decision: float
    action: str
    requests: tuple[str, ...] = ()
    """The requests recorded under an intent tag: what recall by meaning matches."""
    sops: tuple[str, ...] = ()
    """The tag's SOP texts (C level)."""


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
    """Every tag's potentials (strongest attention first), with an intent tag's requests
    and SOP texts, and every C-level SOP."""
    with read_memory(store) as megrams:
        counts: dict[tuple[str, str], int] = {}
        requests: dict[tuple[str, str], dict[str, None]] = {}
        texts: dict[tuple[str, str], list[str]] = {}
        sops = []
        for m in megrams.megrams():
            tag = (m.space, m.entity)
            counts[tag] = counts.get(tag, 0) + 1
            if m.level == "C":
                sops.append(m)
                texts.setdefault(tag, []).append(m.content)
            elif m.space.startswith(INTENT):
                requests.setdefault(tag, {})[request_text(m)] = None
        rows = []
        for space, entity in megrams.tags():
            p = megrams.potential(space, entity, now)
            tag = (space, entity)
            rows.append(
                TagRow(
                    space,
                    entity,
                    counts.get(tag, 0),
                    p.attention,
                    p.decision,
                    p.action,
                    tuple(requests.get(tag, {})),
                    tuple(texts.get(tag, [])),
                )
            )
    rows.sort(key=lambda r: (-r.attention, r.space, r.entity))
    return rows, sops


def memory_recall(
    store: str | Path | StoreSpec,
    text: str,
    now: float,
    *,
    embedder: str = "hash",
    environment: str = "local",
    k: int = 5,
) -> MemoryRecall:
    """What a request ``text`` would recall from a store's memory (``artoo memory
    --recall``): the same :func:`~artoo.actors.roles.memory.recall` the Memory role runs,
    for a task of no tag of its own yet (``intent:?``) in ``environment``."""
    from artoo.eventstore import make_embedder

    with read_memory(store) as megrams:
        memory = Recollection.of(megrams, RecallIndex(make_embedder(embedder)))
        query = MemoryQuery(space="intent:?", entity=f"env:{environment}", text=text)
        return recall(megrams, query, now, memory=memory, recall_k=k)
