"""Dreamer — the slow loop: forgets, demotes and consolidates memory between tasks.

Responsibilities:
    Between tasks (after a FinalResult, and on its timer), plan one pass over the MKCT
    memory (paper §7) and publish what it decided:

    - physical forgetting: an M/K megram whose own live attention |f|·e^(−kΔt) is under
      0.1 is forgotten;
    - trust bankruptcy (docs/design.md C5): a C-level entry is judged against the M/K evidence
      of its (space, entity) tag recorded after it was promoted. A best practice (σ > 0)
      falls when that evidence's decision potential is negative, a constraint (σ < 0)
      when it is positive; it is demoted to K with k = 0.05;
    - consolidation: a tag whose not yet consolidated M/K megrams reach attention ≥ 5.0
      and decision ≥ +3.0 (best practice) or ≤ −3.0 (constraint) is distilled by the
      brain-tier model into one timeless C-level rule (k = 0); the evidence it is shown
      names each episode's request and steps with their commands, and with no model the
      rule names the approach most of the tag's accepted episodes share — and so does a
      best practice whose model-written rule names none of the recorded commands'
      programs or tools (a rule that says nothing of what worked is not kept). Recall by
      meaning writes a family of paraphrases under one tag (the GGS's family tag), so a
      family reaches these thresholds together. A tag that already has a
      live C-level rule of the same kind is not distilled again.

Input contract:
    FinalResult (a task ended: a pass is due), timer ticks.

Output contract:
    MegramForgotten, MegramDemoted, SOPPromoted (the new C-level Megram and the ids of
    the megrams it consolidates); LLMCall for each distillation.

Constraints:
    Does NOT write the MegramStore: Memory applies the events it publishes (every memory
    change is an event, docs/design.md C10). Does NOT block a task: it runs between tasks.
    Does NOT let a model choose ids or parameters: the model writes only the rule's text,
    code sets level, f, σ, k and state; with no model (or a blank answer) the rule is the
    deterministic :func:`fallback_sop`. Does NOT touch T-level entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import msgspec
import numpy as np

from artoo.actors.llm import LLMError, LLMRequest
from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.eventstore import MegramReader, task_text
from artoo.eventstore.megrams import (
    C_CODE,
    K_CODE,
    SCALE,
    MegramColumns,
    quantized_terms,
    tag_sums,
    to_quanta,
)
from artoo.schemas import (
    DreamerConfig,
    Envelope,
    FinalResult,
    LLMCall,
    Megram,
    MegramDemoted,
    MegramForgotten,
    Message,
    SOPPromoted,
)

__all__ = [
    "CONSOLIDATE_ATTENTION",
    "CONSOLIDATE_DECISION",
    "DEMOTED_K",
    "FORGET_BELOW",
    "MAX_CANDIDATES",
    "MAX_RULE_CHARS",
    "PROMPT_EVIDENCE",
    "ConsolidationCandidate",
    "PassPlan",
    "approach",
    "distillation_prompt",
    "fallback_sop",
    "parse_distillation",
    "plan_columns",
    "plan_pass",
    "recorded_programs",
]

_RULES = DreamerConfig()
"""The paper's thresholds (``Config.dreamer``); every function takes its own ``rules``."""
FORGET_BELOW = _RULES.forget_below
"""An M/K megram whose own live attention is below this is forgotten (paper §7.1)."""
CONSOLIDATE_ATTENTION = _RULES.consolidate_attention
"""A cluster's attention must reach this to be consolidated (paper §7.2)."""
CONSOLIDATE_DECISION = _RULES.consolidate_decision
"""… and its decision ≥ +this (best practice) or ≤ −this (constraint)."""
DEMOTED_K = _RULES.demoted_k
"""The decay rate a bankrupt C-level entry gets back (paper §7.1)."""
MAX_RULE_CHARS = _RULES.max_rule_chars
"""A distilled rule longer than this is cut."""
MAX_CANDIDATES = _RULES.max_candidates
"""At most this many clusters are distilled per pass (each is one model call)."""
PROMPT_EVIDENCE = 20
"""At most this many source megrams are shown to the model."""

Kind = Literal["best_practice", "constraint"]


# --------------------------------------------------------------------------- plans
class ConsolidationCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """A (space, entity) cluster ready to become one C-level rule.

    ``sources`` are the live, not yet consolidated M/K megrams of the tag (by id);
    ``attention`` and ``decision`` their potentials at the pass.
    """

    space: str
    entity: str
    kind: Kind
    attention: float
    decision: float
    sources: tuple[Megram, ...] = ()

    @property
    def source_ids(self) -> list[str]:
        """The ids of the sources (what SOPPromoted marks consolidated)."""
        return [m.id for m in self.sources]


class PassPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What one pass decided, as row indices into the MegramColumns it was planned over.

    ``clusters`` holds (tag index, kind, attention, decision, source rows) per candidate.
    """

    forget: list[int]
    forget_attention: list[float]
    demote: list[tuple[int, float, int]]  # (row, evidence decision, evidence count)
    clusters: list[tuple[int, Kind, float, float, list[int]]]


def plan_columns(cols: MegramColumns, now: float, rules: DreamerConfig = _RULES) -> PassPlan:
    """Plan one Dreamer pass over live-megram columns at ``now`` (pure, vectorised).

    Order of the rules: forgetting first; bankruptcy and consolidation then judge the
    memory as it stands once the forgotten megrams are gone.
    """
    att_q, dec_q = quantized_terms(cols.f, cols.sigma, cols.k, cols.t_ref, now)
    mk = cols.level <= K_CODE
    forget = mk & (att_q < to_quanta(rules.forget_below))
    evidence = mk & ~forget
    forget_rows = np.flatnonzero(forget)
    demote = _bankrupt(cols, evidence, dec_q)
    clusters = _clusters(cols, evidence & ~cols.consolidated, att_q, dec_q, demote, rules)
    return PassPlan(
        forget=forget_rows.tolist(),
        forget_attention=(att_q[forget_rows] / SCALE).tolist(),
        demote=demote,
        clusters=clusters,
    )


def _bankrupt(
    cols: MegramColumns, evidence: np.ndarray, dec_q: np.ndarray
) -> list[tuple[int, float, int]]:
    """C-level rows contradicted by the evidence recorded after their promotion."""
    c_rows = np.flatnonzero((cols.level == C_CODE) & (cols.sigma != 0))
    if len(c_rows) == 0:
        return []
    has_c = np.zeros(len(cols.tags), dtype=bool)
    has_c[cols.tag[c_rows]] = True
    ev = np.flatnonzero(evidence & has_c[cols.tag])
    order = np.lexsort((cols.created[ev], cols.tag[ev]))  # by tag, then creation time
    ev = ev[order]
    ev_tag, ev_created = cols.tag[ev], cols.created[ev]
    cum = np.concatenate(([0], np.cumsum(dec_q[ev])))
    out: list[tuple[int, float, int]] = []
    for row in c_rows.tolist():
        p = cols.tag[row]
        lo = int(np.searchsorted(ev_tag, p, "left"))
        hi = int(np.searchsorted(ev_tag, p, "right"))
        first = lo + int(np.searchsorted(ev_created[lo:hi], cols.created[row], "right"))
        count = hi - first
        if count == 0:
            continue
        dec = int(cum[hi] - cum[first]) / SCALE
        sigma = cols.sigma[row]
        if (sigma > 0 and dec < 0) or (sigma < 0 and dec > 0):
            out.append((row, dec, count))
    return out


def _clusters(
    cols: MegramColumns,
    pool: np.ndarray,
    att_q: np.ndarray,
    dec_q: np.ndarray,
    demote: list[tuple[int, float, int]],
    rules: DreamerConfig,
) -> list[tuple[int, Kind, float, float, list[int]]]:
    """Tags whose unconsolidated evidence crosses the consolidation thresholds."""
    rows = np.flatnonzero(pool)
    n_tags = len(cols.tags)
    att, dec, _ = tag_sums(cols.tag[rows], att_q[rows], dec_q[rows], n_tags)
    strong = att >= rules.consolidate_attention
    best = strong & (dec >= rules.consolidate_decision)
    worst = strong & (dec <= -rules.consolidate_decision)
    # A tag keeps at most one live rule of each kind (after this pass's demotions).
    c_live = cols.level == C_CODE
    c_live[[row for row, _, _ in demote]] = False
    best[cols.tag[c_live & (cols.sigma > 0)]] = False
    worst[cols.tag[c_live & (cols.sigma < 0)]] = False
    chosen = best | worst
    if not chosen.any():
        return []
    members = rows[chosen[cols.tag[rows]]]
    members = members[np.argsort(cols.tag[members], kind="stable")]
    bounds = np.searchsorted(cols.tag[members], np.flatnonzero(chosen), "left")
    ends = np.append(bounds[1:], len(members))
    out: list[tuple[int, Kind, float, float, list[int]]] = []
    for p, lo, hi in zip(np.flatnonzero(chosen).tolist(), bounds, ends, strict=True):
        kind: Kind = "best_practice" if best[p] else "constraint"
        out.append((p, kind, float(att[p]), float(dec[p]), members[lo:hi].tolist()))
    return out


def plan_pass(
    store: MegramReader,
    now: float,
    *,
    max_candidates: int | None = MAX_CANDIDATES,
    rules: DreamerConfig = _RULES,
) -> list[MegramForgotten | MegramDemoted | ConsolidationCandidate]:
    """One Dreamer pass over ``store`` at ``now``: events to publish and clusters to distil.

    Returns the MegramForgotten events (by id), then the MegramDemoted events (by id),
    then the ConsolidationCandidates (by space, entity). Nothing is written: the caller
    publishes the events, distils each candidate into an SOPPromoted, and Memory applies
    them. Each candidate costs one model call, so at most ``max_candidates`` are returned
    (the strongest |decision| first; None = all); the others stay unconsolidated and
    come back at a later pass.
    """
    cols = store.snapshot()
    plan = plan_columns(cols, now, rules)
    forgotten = [
        MegramForgotten(id=cols.ids[row], reason=f"attention {att:.4f} < {rules.forget_below}")
        for row, att in zip(plan.forget, plan.forget_attention, strict=True)
    ]
    forgotten.sort(key=lambda e: e.id)
    demoted = [_demotion(cols, row, dec, count, rules) for row, dec, count in plan.demote]
    demoted.sort(key=lambda e: e.id)
    clusters = sorted(plan.clusters, key=lambda c: (-abs(c[3]), cols.tags[c[0]]))
    clusters = clusters if max_candidates is None else clusters[: max(0, max_candidates)]
    wanted = [cols.ids[row] for *_, rows in clusters for row in rows]
    by_id = {m.id: m for m in store.get_many(wanted)}
    candidates = []
    for p, kind, att, dec, rows in clusters:
        space, entity = cols.tags[p]
        ids = sorted(cols.ids[row] for row in rows)
        candidates.append(
            ConsolidationCandidate(
                space=space,
                entity=entity,
                kind=kind,
                attention=att,
                decision=dec,
                sources=tuple(by_id[mid] for mid in ids if mid in by_id),
            )
        )
    candidates.sort(key=lambda c: (c.space, c.entity))
    return [*forgotten, *demoted, *candidates]


def _demotion(
    cols: MegramColumns, row: int, dec: float, count: int, rules: DreamerConfig
) -> MegramDemoted:
    what = "best practice" if cols.sigma[row] > 0 else "constraint"
    return MegramDemoted(
        id=cols.ids[row],
        level="K",
        k=rules.demoted_k,
        reason=(
            f"trust bankruptcy: {what} contradicted by {count} megram(s) recorded after "
            f"its promotion (decision {dec:+.3f})"
        ),
    )


# --------------------------------------------------------------------------- distillation
_SYSTEM = (
    "You are the Dreamer of artoo. You turn recorded outcomes that share one tag into ONE "
    "short imperative rule for future plans: name the tool, path or approach; state only "
    "what the evidence shows; under 60 words.\n"
    'Answer with one JSON object: {"rule": "<the rule>"}.\n'
    "Example. Evidence: three counts by reading the file failed, wc -l passed twice. "
    'Answer: {"rule": "Count lines with shell wc -l <file>; do not count by reading it."}'
)

_KIND_TEXT = {
    "best_practice": "a BEST PRACTICE: what to keep doing, because it consistently worked",
    "constraint": "an ABSOLUTE CONSTRAINT: what must not be done, because it kept failing",
}


def distillation_prompt(candidate: ConsolidationCandidate) -> list[dict[str, str]]:
    """The chat messages asking a model to distil ``candidate`` into one rule."""
    evidence = sorted(candidate.sources, key=lambda m: (-abs(m.f), m.id))[:PROMPT_EVIDENCE]
    lines = [
        f"- [{m.state or m.level}] f={m.f:.2f} σ={m.sigma:+.2f}: {_one_line(m.content)}"
        + (f" — for {m.request!r} it did: {approach(m)}" if m.steps else "")
        for m in evidence
    ]
    more = len(candidate.sources) - len(evidence)
    if more > 0:
        lines.append(f"- … and {more} more of the same tag")
    user = (
        f"Tag: space={candidate.space!r}, entity={candidate.entity!r}.\n"
        f"Potentials: attention {candidate.attention:.2f}, decision {candidate.decision:+.2f}.\n"
        f"Write {_KIND_TEXT[candidate.kind]}.\n"
        f"Evidence ({len(candidate.sources)} recorded outcomes):\n" + "\n".join(lines)
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def _one_line(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split()) or "(no content)"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_LABEL = re.compile(
    r"^(?:rule|sop|best[ _-]?practice|(?:absolute\s+)?constraint)\s*[:\-–—]\s*", re.IGNORECASE
)
_RULE_KEYS = ("rule", "sop", "content", "best_practice", "constraint", "text", "answer")


def parse_distillation(
    text: str | None,
    candidate: ConsolidationCandidate,
    *,
    new_id: str,
    now: float,
    max_chars: int = MAX_RULE_CHARS,
) -> Megram:
    """The C-level Megram for a model's answer to :func:`distillation_prompt`.

    Accepts a JSON object (``{"rule": …}``; also ``sop``, ``content``, ``text`` …), a
    JSON string, fenced JSON, or plain text (a leading "Rule:" label and quotes are
    dropped). Raises ValueError when no rule text is left, or when a best practice whose
    sources recorded commands names none of their programs or tools
    (:func:`recorded_programs`): "Always use tools that work consistently for the
    specific task" once replaced the recorded `wc -l` and said nothing of what worked —
    the caller then builds the rule by code (:func:`fallback_sop`).
    """
    rule = _rule_text(text or "")
    if not rule:
        raise ValueError("the distillation answer holds no rule")
    programs = recorded_programs(candidate.sources) if candidate.kind == "best_practice" else set()
    if programs and not programs & set(_WORDS.findall(rule.lower())):
        raise ValueError("the rule names none of the recorded commands or tools")
    return _sop(candidate, rule, new_id=new_id, now=now, max_chars=max_chars)


_WORDS = re.compile(r"[a-z_][\w.-]*")


def recorded_programs(sources: Sequence[Megram]) -> set[str]:
    """The programs and tools the sources' recorded commands ran (pure, lowercase): the
    first word of each (``wc`` of ``wc -l notes/a.txt``, ``read_file`` of ``read_file
    notes/a.txt``) — what a best practice must name to say what worked. Empty when no
    source recorded a command."""
    return {
        words[0]
        for m in sources
        for step in m.steps
        for command in step.commands
        if (words := _WORDS.findall(command.lower()))
    }


def approach(m: Megram) -> str:
    """An episode's steps as one line: each instruction with its exact commands."""
    parts = []
    for step in m.steps:
        commands = "; ".join(f"`{c}`" for c in step.commands)
        parts.append(
            f"{_one_line(step.instruction, 160)} with {commands}"
            if commands
            else _one_line(step.instruction, 160)
        )
    return " then ".join(parts)


def _common_approach(sources: Sequence[Megram]) -> tuple[Megram, int] | None:
    """The approach (same commands, paths aside) most sources with steps share, one of them, and how
    many share it; None when no source recorded its steps."""
    counts: dict[tuple[str, ...], list[Megram]] = {}
    for m in sources:
        if m.steps:
            # the same commands on other files are the same approach
            key = tuple(task_text(c) for step in m.steps for c in step.commands) or (
                task_text(approach(m)),
            )
            counts.setdefault(key, []).append(m)
    if not counts:
        return None
    best = max(counts.values(), key=lambda ms: (len(ms), max(x.created_at for x in ms)))
    return max(best, key=lambda m: (m.created_at, m.id)), len(best)


def fallback_sop(
    candidate: ConsolidationCandidate, *, new_id: str, now: float, max_chars: int = MAX_RULE_CHARS
) -> Megram:
    """A deterministic C-level Megram for ``candidate`` when no model is available.

    A best practice whose sources recorded their steps names the approach most of them
    share: ``For requests like "…": <instruction> with `<command>` (k of n episodes).``
    """
    n = len(candidate.sources)
    common = _common_approach(candidate.sources) if candidate.kind == "best_practice" else None
    if common is not None:
        m, k = common
        rule = (
            f'For requests like "{_one_line(m.request, 160)}": {approach(m)} '
            f"({k} of {n} recorded episodes did this; decision {candidate.decision:+.2f})."
        )
        return _sop(candidate, rule, new_id=new_id, now=now, max_chars=max_chars)
    examples = []
    for m in sorted(candidate.sources, key=lambda m: (-abs(m.f), m.id)):
        line = _one_line(m.content, 120)
        if m.content.strip() and line not in examples:
            examples.append(line)
        if len(examples) == 3:
            break
    if candidate.kind == "best_practice":
        head = (
            f"Prefer the approach recorded for {candidate.space} on {candidate.entity}: "
            f"{n} recorded outcome(s) favour it"
        )
    else:
        head = (
            f"Do not repeat the approach recorded for {candidate.space} on "
            f"{candidate.entity}: {n} recorded outcome(s) count against it"
        )
    rule = f"{head} (decision {candidate.decision:+.2f}, attention {candidate.attention:.2f})."
    if examples:
        rule += " Evidence: " + "; ".join(examples)
    return _sop(candidate, rule, new_id=new_id, now=now, max_chars=max_chars)


def _sop(
    candidate: ConsolidationCandidate, rule: str, *, new_id: str, now: float, max_chars: int
) -> Megram:
    fs = [m.f for m in candidate.sources]
    return Megram(
        id=new_id,
        level="C",
        created_at=now,
        space=candidate.space,
        entity=candidate.entity,
        content=rule[:max_chars],
        state=candidate.kind,
        f=sum(fs) / len(fs) if fs else 1.0,
        sigma=1.0 if candidate.kind == "best_practice" else -1.0,
        k=0.0,
    )


def _rule_text(text: str) -> str:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    value = _json_rule(body)
    if value is None:
        found = _OBJECT.search(body)
        value = _json_rule(found.group(0)) if found else None
    if value is None:
        value = body
    value = _LABEL.sub("", value.strip()).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1].strip()
    return value


def _json_rule(body: str) -> str | None:
    """The rule in a JSON answer, "" for JSON without one, None when not JSON."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        return "; ".join(str(x).strip() for x in data if str(x).strip())
    if isinstance(data, dict):
        for key in _RULE_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return ""
    return None


# ---- actor ----
@dataclass(frozen=True)
class DreamNow:
    """Ask the Dreamer for one pass now (from the host, e.g. ``artoo dream``)."""


class Dreamer(Role):
    """The Dreamer actor: a pass on its timer and a debounced pass after each FinalResult."""

    name: ClassVar[str] = "dreamer"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        MegramForgotten,
        MegramDemoted,
        SOPPromoted,
        LLMCall,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = (FinalResult,)
    wants_ticks: ClassVar[bool] = True
    debounce_s: ClassVar[float] = 1.0

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        if equipment.megrams is None:
            raise ValueError("the Dreamer needs Equipment.megrams")
        self.megrams: MegramReader = equipment.megrams  # read only: Memory applies writes
        self.pending_at: float | None = None
        self.next_timer = equipment.clock.now() + equipment.config.dream_interval_s
        # candidates already distilled, until Memory has applied them (a pass can run before
        # the last one's SOPPromoted is applied): by tag, kind and sources, so a cluster of
        # another kind or with new evidence — a constraint after its best practice fell —
        # is promoted in this process too, not only after a reopen
        self.promoted: set[tuple[str, str, str, tuple[str, ...]]] = set()

    def on_receive(self, message: Any) -> Any:
        """A DreamNow asked by the host, or a Delivery; runs in the actor's thread."""
        if isinstance(message, DreamNow):
            return self.dream()
        return super().on_receive(message)

    @handles(FinalResult)
    def on_final_result(self, env: Envelope) -> None:
        self.pending_at = self.ctx.clock.now() + self.debounce_s

    def on_tick(self, now: float) -> None:
        if (self.pending_at is not None and now >= self.pending_at) or now >= self.next_timer:
            self.dream()

    def dream(self) -> int:
        """One pass: publish what ``plan_pass`` finds; returns how many events."""
        now = self.ctx.clock.now()
        self.pending_at = None
        self.next_timer = now + self.ctx.config.dream_interval_s
        rules = self.ctx.config.dreamer
        planned = plan_pass(self.megrams, now, max_candidates=rules.max_candidates, rules=rules)
        count = 0
        for item in planned:
            if isinstance(item, ConsolidationCandidate):
                key = (item.space, item.entity, item.kind, tuple(item.source_ids))
                if key in self.promoted:
                    continue
                self.promoted.add(key)
                megram = self._distil(item, now)
                self.publish(
                    SOPPromoted(
                        megram=megram,
                        source_ids=list(item.source_ids),
                        kind=item.kind,
                    ),
                    task_id=None,
                    cause=None,
                )
            else:
                self.publish(item, task_id=None, cause=None)
            count += 1
        return count

    def _distil(self, candidate: ConsolidationCandidate, now: float) -> Megram:
        gateway = self.ctx.gateway
        if gateway is not None:
            request = LLMRequest(
                role=self.name,
                tier="brain",
                messages=distillation_prompt(candidate),
                max_output_tokens=self.ctx.config.output_caps.dreamer,
            )
            try:
                response = gateway.complete(request)
                return parse_distillation(
                    response.content or "",
                    candidate,
                    new_id=self.ctx.new_id(),
                    now=now,
                    max_chars=self.ctx.config.dreamer.max_rule_chars,
                )
            except (LLMError, ValueError):
                pass
        return fallback_sop(
            candidate,
            new_id=self.ctx.new_id(),
            now=now,
            max_chars=self.ctx.config.dreamer.max_rule_chars,
        )
