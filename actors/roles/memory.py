"""R5 Memory — the only writer of the MegramStore.

Responsibilities:
    Answer the Planner's MemoryQuery: recall by meaning first — the past requests that mean
    what the query's text means (BM25 and vector ranks fused by RRF, distractors flagged;
    docs/memory.md) — then, over the query's own tag and every recalled tag (a flagged
    distractor's tag is dropped), the C-level SOPs, the live dual-channel potentials
    (attention, decision, action) summed over their M/K megrams, their accepted episodes
    that name their steps (a plan to adapt) and their abandoned ones (an approach that
    failed), and the strongest Avoid tags of tool space
    (at most 10). The recalled requests, with both ranks, the scores and the flags, ride
    on the MemoryRecall, so the log says what was recalled and why. Apply every memory event it
    sees on the bus to the store, which is therefore a projection of the log
    (``artoo memory --rebuild`` recomputes it). A recall restarts the decay clock of the
    SOPs it returned — as a MegramRecalled event, applied like any other. Memory events
    are applied even after their task's end; on a PostgreSQL store every System's come,
    in log order, from the shared log (the bus's follower).

Input contract:
    TaskRequest (its text embedded ahead of the round-0 recall, nothing published),
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
from artoo.actors.verification.request import same_request
from artoo.eventstore import MEMORY_EVENTS, MegramReader, RecallIndex, make_embedder
from artoo.eventstore import action as potential_action
from artoo.schemas import (
    Envelope,
    Megram,
    MegramRecalled,
    MegramRecorded,
    MemoryQuery,
    MemoryRecall,
    Message,
    RecalledRequest,
    SOPPromoted,
    TaskRequest,
)

__all__ = ["INTENT", "Memory", "Recollection", "recall", "request_text"]

INTENT = "intent:"
"""The space prefix of task-level (intent) tags: the ones recall by meaning indexes."""

ACCEPTED = ("accept", "success")
"""Episode states whose steps are offered as a plan to adapt."""

EPISODES_MAX = 3


def request_text(m: Megram) -> str:
    """What recall indexes for an intent megram: its request, else its slug's words."""
    return m.request or m.space.removeprefix(INTENT).replace("-", " ").replace("_", " ")


class Recollection:
    """Recall by meaning's view of the store: the :class:`RecallIndex` of intent
    megrams' requests, and each intent tag's accepted episodes that name their steps."""

    def __init__(self, index: RecallIndex) -> None:
        self.index = index
        self.episodes: dict[tuple[str, str], list[Megram]] = {}
        self.failed: dict[tuple[str, str], list[Megram]] = {}

    def add(self, m: Megram) -> None:
        """Index an intent megram's request (or slug words) under its tag; keep it as an
        episode when it was accepted and names its steps."""
        if not m.space.startswith(INTENT) or m.level == "C":
            return
        self.index.add(request_text(m), m.space)
        if m.state in ACCEPTED and m.steps:
            self.episodes.setdefault((m.space, m.entity), []).append(m)
        elif m.state == "abandon" and m.steps:
            self.failed.setdefault((m.space, m.entity), []).append(m)

    @classmethod
    def of(cls, store: MegramReader, index: RecallIndex) -> Recollection:
        """A Recollection over every live megram of ``store``."""
        out = cls(index)
        for m in store.megrams():
            out.add(m)
        return out


def _recalled(index: RecallIndex | None, query: MemoryQuery, k: int) -> list[RecalledRequest]:
    if index is None or not query.text or k <= 0:
        return []
    return [
        RecalledRequest(
            text=h.text,
            space=h.tag,
            keyword_rank=h.keyword_rank or 0,
            vector_rank=h.vector_rank or 0,
            keyword=round(h.keyword, 6),
            vector=round(h.vector, 6),
            fused=round(h.fused, 6),
            disagreement=round(h.disagreement, 6),
            distractor=h.distractor,
            recalled=h.recalled,
        )
        for h in index.search(query.text, k)
    ]


def recall(
    store: MegramReader,
    query: MemoryQuery,
    now: float,
    *,
    avoid_limit: int = 10,
    memory: Recollection | None = None,
    recall_k: int = 5,
    floor: float = 0.5,
    band: float = 0.2,
) -> MemoryRecall:
    """The MemoryRecall answering ``query`` from ``store`` at time ``now``, with at most
    ``avoid_limit`` tool-space Avoid tags (``Config.memory.avoid_limit``).

    With a ``memory`` (:class:`Recollection`) and the query's text, the ``recall_k``
    past requests recall by meaning finds ride along; the tags read are the query's own
    and those of the recalled (not flagged) requests — a distractor's tag is never read.
    Potentials are summed over the M/K megrams of the tags read and mapped to an action
    with ``floor``/``band`` (``Config.memory``). Accepted episodes come the query's tag
    first, newest first; those of the very same request as the query lead
    (``request.same_request``), so its accepted plan is among the :data:`EPISODES_MAX`
    recalled however many newer episodes its tag holds.
    """
    found = _recalled(memory.index if memory else None, query, recall_k)
    spaces = list(dict.fromkeys([query.space] + [r.space for r in found if r.recalled]))
    sops: list[Megram] = []
    attention = decision = 0.0
    episodes: list[Megram] = []
    for space in spaces:
        sops += store.query_c(space, query.entity)
        att, dec, _ = store.query_mk(space, query.entity, now)
        attention += att
        decision += dec
    if len(spaces) == 1:
        act = store.query_mk(query.space, query.entity, now)[2]
    else:
        act = potential_action(attention, decision, floor=floor, band=band)
    kept = memory.episodes if memory is not None else {}
    lost = memory.failed if memory is not None else {}
    failed: list[Megram] = []
    for space in spaces:
        live = [m for m in kept.get((space, query.entity), []) if store.get(m.id)]
        episodes += sorted(live, key=lambda m: (-m.created_at, m.id))
        live = [m for m in lost.get((space, query.entity), []) if store.get(m.id)]
        failed += sorted(live, key=lambda m: (-m.created_at, m.id))
    if query.text:  # stable: the same request's first, each newest first
        episodes.sort(key=lambda m: not same_request(m.request, query.text))
    avoid = store.strongest(query.tool_prefix, "avoid", avoid_limit, now)
    caution = store.strongest(query.tool_prefix, "caution", avoid_limit, now)
    return MemoryRecall(
        space=query.space,
        entity=query.entity,
        round=query.round,
        sops=sops,
        attention=attention,
        decision=decision,
        action=act,
        avoid=list(avoid),
        caution=list(caution),
        recalled=found,
        episodes=episodes[:EPISODES_MAX],
        failed=failed[:EPISODES_MAX],
    )


class Memory(Role):
    """The Memory actor."""

    name: ClassVar[str] = "memory"
    publishes: ClassVar[tuple[type[Message], ...]] = (MemoryRecall, MegramRecalled)
    consumes: ClassVar[tuple[type[Message], ...]] = (MemoryQuery, TaskRequest, *MEMORY_EVENTS)
    after_end: ClassVar[tuple[type[Message], ...]] = MEMORY_EVENTS
    """Memory is the log's projection: a memory event is applied even when it reaches
    Memory after its task's FinalResult (on a shared log they come a poll behind)."""

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        if equipment.megrams is None:
            raise ValueError("the Memory role needs Equipment.megrams")
        self.megrams = equipment.megrams
        self.memory_config = equipment.config.memory
        # load the embedder now: a configured one that cannot load fails at start, not
        # in the middle of a task (EmbedderUnavailable names what to install)
        self.embedder = make_embedder(self.memory_config.embedder)
        self.recollection: Recollection | None = None

    def _recollection(self) -> Recollection:
        """Recall by meaning over the store's intent megrams (built on first use)."""
        if self.recollection is None:
            config = self.memory_config
            index = RecallIndex(self.embedder, disagreement=config.disagreement)
            self.recollection = Recollection.of(self.megrams, index)
        return self.recollection

    @handles(TaskRequest)
    def on_task_request(self, env: Envelope) -> None:
        """Runs on this actor's thread while the Perceiver's model reads the request: the
        recall index is built (first use) and the request embedded ahead, so the round-0
        MemoryQuery of the same text only searches. Publishes nothing; what recall
        returns does not change."""
        text = env.body.text
        if text:
            self._recollection().index.prepare(text)

    @handles(MemoryQuery)
    def on_memory_query(self, env: Envelope) -> None:
        now = self.ctx.clock.now()
        config = self.memory_config
        answer = recall(
            self.megrams,
            env.body,
            now,
            avoid_limit=config.avoid_limit,
            memory=self._recollection() if env.body.text else None,
            recall_k=config.recall_k,
            floor=config.attention_floor,
            band=config.decision_band,
        )
        if answer.sops:
            self.reply(env, MegramRecalled(ids=[m.id for m in answer.sops], at=now))
        self.reply(env, answer)

    @handles(*MEMORY_EVENTS)
    def on_memory_event(self, env: Envelope) -> None:
        body = env.body
        self.megrams.apply(body, seq=env.seq)
        if self.recollection is not None and isinstance(body, MegramRecorded | SOPPromoted):
            self.recollection.add(body.megram)
