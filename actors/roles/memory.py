"""R5 Memory — the only writer of the MegramStore.

Responsibilities:
    Answer the Planner's MemoryQuery with the C-level SOPs of the task's tag, the
    live dual-channel potentials (attention, decision, action) of its M/K megrams, and
    the strongest Avoid tags of tool space (at most 10). Apply every memory event it
    sees on the bus to the store, which is therefore a projection of the log
    (``artoo memory --rebuild`` recomputes it). A recall restarts the decay clock of the
    SOPs it returned — as a MegramRecalled event, applied like any other. Memory events
    are applied even after their task's end; on a PostgreSQL store every System's come,
    in log order, from the shared log (the bus's follower).

Input contract:
    MemoryQuery, MegramRecorded, MegramRecalled, MegramForgotten, MegramDemoted,
    SOPPromoted.

Output contract:
    MemoryRecall, MegramRecalled.

Constraints:
    Does NOT decide what a memory means for a plan (the Planner calibrates); does NOT
    create megrams (the GGS and the Dreamer do, as events); never changes the store
    except by applying a bus event.
"""

from __future__ import annotations

from typing import ClassVar

from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.eventstore import MEMORY_EVENTS, MegramReader
from artoo.schemas import (
    Envelope,
    MegramRecalled,
    MemoryQuery,
    MemoryRecall,
    Message,
)

__all__ = ["Memory", "recall"]


def recall(
    store: MegramReader, query: MemoryQuery, now: float, *, avoid_limit: int = 10
) -> MemoryRecall:
    """The MemoryRecall answering ``query`` from ``store`` at time ``now``, with at most
    ``avoid_limit`` tool-space Avoid tags (``Config.memory.avoid_limit``)."""
    sops = store.query_c(query.space, query.entity)
    attention, decision, action = store.query_mk(query.space, query.entity, now)
    avoid = store.strongest(query.tool_prefix, "avoid", avoid_limit, now)
    caution = store.strongest(query.tool_prefix, "caution", avoid_limit, now)
    return MemoryRecall(
        space=query.space,
        entity=query.entity,
        round=query.round,
        sops=list(sops),
        attention=attention,
        decision=decision,
        action=action,
        avoid=list(avoid),
        caution=list(caution),
    )


class Memory(Role):
    """The Memory actor."""

    name: ClassVar[str] = "memory"
    publishes: ClassVar[tuple[type[Message], ...]] = (MemoryRecall, MegramRecalled)
    consumes: ClassVar[tuple[type[Message], ...]] = (MemoryQuery, *MEMORY_EVENTS)
    after_end: ClassVar[tuple[type[Message], ...]] = MEMORY_EVENTS
    """Memory is the log's projection: a memory event is applied even when it reaches
    Memory after its task's FinalResult (on a shared log they come a poll behind)."""

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        if equipment.megrams is None:
            raise ValueError("the Memory role needs Equipment.megrams")
        self.megrams = equipment.megrams
        self.memory_config = equipment.config.memory

    @handles(MemoryQuery)
    def on_memory_query(self, env: Envelope) -> None:
        now = self.ctx.clock.now()
        answer = recall(self.megrams, env.body, now, avoid_limit=self.memory_config.avoid_limit)
        if answer.sops:
            self.reply(env, MegramRecalled(ids=[m.id for m in answer.sops], at=now))
        self.reply(env, answer)

    @handles(*MEMORY_EVENTS)
    def on_memory_event(self, env: Envelope) -> None:
        self.megrams.apply(env.body, seq=env.seq)
