"""The Dreamer's rules (paper §7, design C5): forgetting, trust bankruptcy, consolidation."""

from __future__ import annotations

import json
import math
import random
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.actors.roles.dreamer import (
    ConsolidationCandidate,
    distillation_prompt,
    fallback_sop,
    parse_distillation,
    plan_pass,
    recorded_programs,
)
from artoo.eventstore.megrams import MegramStore, potentials
from artoo.schemas import (
    DreamerConfig,
    EpisodeStep,
    Megram,
    MegramDemoted,
    MegramForgotten,
    MegramRecorded,
    Message,
    SOPPromoted,
)

T0 = 1_700_000_000.0
DAY = 86_400.0
PASS = 300.0  # the Dreamer's default interval: "the next pass"
PAIR = ("intent:count-files", "env:local")
MATRIX = {
    "abandon": (0.95, -1.0, 0.05),
    "accept": (0.90, 1.0, 0.05),
    "change_approach": (0.85, -1.0, 0.05),
    "success": (0.80, 1.0, 0.05),
    "break_symmetry": (0.75, 1.0, 0.05),
    "change_path": (0.30, 0.0, 0.2),
    "refine": (0.10, 0.5, 0.5),
}


def mg(
    mid: str,
    state: str = "accept",
    *,
    at: float = T0,
    tag: tuple[str, str] = PAIR,
    level: str = "M",
) -> Megram:
    f, sigma, k = MATRIX[state]
    return Megram(
        id=mid,
        level=level,  # type: ignore[arg-type]
        created_at=at,
        space=tag[0],
        entity=tag[1],
        content=f"{state} via approach {mid}",
        state=state,
        f=f,
        sigma=sigma,
        k=k,
    )


def sop(mid: str, kind: str, *, at: float, tag: tuple[str, str] = PAIR) -> Megram:
    return Megram(
        id=mid,
        level="C",
        created_at=at,
        space=tag[0],
        entity=tag[1],
        content=f"{kind} rule",
        state=kind,
        f=0.9,
        sigma=1.0 if kind == "best_practice" else -1.0,
        k=0.0,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterable[MegramStore]:
    with MegramStore.open(tmp_path / "memory") as s:
        yield s


def record(store: MegramStore, *ms: Megram) -> None:
    store.apply_many(MegramRecorded(megram=m) for m in ms)


def of_type(out: list[object], cls: type) -> list:
    return [x for x in out if isinstance(x, cls)]


# --------------------------------------------------------------------------- forgetting
def test_a_refine_megram_is_forgotten_at_the_next_pass(store: MegramStore) -> None:
    record(store, mg("r", "refine"), mg("a", "accept"))
    assert plan_pass(store, T0) == []  # at creation its attention is exactly 0.1
    out = plan_pass(store, T0 + PASS)
    assert [e.id for e in of_type(out, MegramForgotten)] == ["r"]
    assert "0.0998" in out[0].reason


def test_forgetting_follows_each_megrams_own_decay(store: MegramStore) -> None:
    # accept: 0.9·e^(−0.05·t) < 0.1 after ln 9 / 0.05 ≈ 43.9 days.
    record(store, mg("old", "accept", at=T0 - 44 * DAY), mg("young", "accept", at=T0 - 43 * DAY))
    record(store, sop("c", "best_practice", at=T0 - 400 * DAY))
    assert [e.id for e in of_type(plan_pass(store, T0), MegramForgotten)] == ["old"]


def test_a_recall_keeps_a_megram_from_being_forgotten(store: MegramStore) -> None:
    from artoo.schemas import MegramRecalled

    record(store, mg("a", "accept", at=T0 - 50 * DAY), mg("b", "accept", at=T0 - 50 * DAY))
    store.apply(MegramRecalled(ids=["a"], at=T0 - DAY))
    assert [e.id for e in of_type(plan_pass(store, T0), MegramForgotten)] == ["b"]


# --------------------------------------------------------------------------- bankruptcy
def test_a_best_practice_falls_to_later_failures(store: MegramStore) -> None:
    record(store, sop("bp", "best_practice", at=T0))
    record(store, mg("f1", "abandon", at=T0 + DAY), mg("s1", "success", at=T0 + DAY))
    out = plan_pass(store, T0 + 2 * DAY)
    assert of_type(out, MegramDemoted) == [
        MegramDemoted(id="bp", level="K", k=0.05, reason=of_type(out, MegramDemoted)[0].reason)
    ]
    assert "best practice" in out[0].reason and "2 megram(s)" in out[0].reason


def test_a_constraint_falls_to_later_successes(store: MegramStore) -> None:
    record(store, sop("ct", "constraint", at=T0))
    record(store, mg("s1", "success", at=T0 + DAY))
    demoted = of_type(plan_pass(store, T0 + 2 * DAY), MegramDemoted)
    assert [(e.id, e.level, e.k) for e in demoted] == [("ct", "K", 0.05)]
    assert "constraint" in demoted[0].reason


def test_a_constraint_is_not_demoted_by_agreeing_evidence(store: MegramStore) -> None:
    # The literal "M_dec < 0" rule would demote every constraint; docs/design.md C5 does not.
    record(store, sop("ct", "constraint", at=T0), sop("bp", "best_practice", at=T0, tag=("a", "b")))
    record(store, mg("f1", "abandon", at=T0 + DAY), mg("s1", "accept", at=T0 + DAY, tag=("a", "b")))
    assert of_type(plan_pass(store, T0 + 2 * DAY), MegramDemoted) == []


def test_contrary_evidence_from_before_the_promotion_does_not_count(store: MegramStore) -> None:
    record(
        store, mg("f1", "abandon", at=T0 - DAY), mg("s1", "success", at=T0 - DAY, tag=("x", "y"))
    )
    record(store, sop("bp", "best_practice", at=T0), sop("ct", "constraint", at=T0, tag=("x", "y")))
    # Nor does evidence recorded in the same instant as the promotion.
    record(store, mg("f0", "abandon", at=T0), mg("s0", "success", at=T0, tag=("x", "y")))
    assert of_type(plan_pass(store, T0 + DAY), MegramDemoted) == []
    # Evidence of another tag does not count either.
    record(store, mg("f2", "abandon", at=T0 + DAY, tag=("intent:other", "env:local")))
    assert of_type(plan_pass(store, T0 + 2 * DAY), MegramDemoted) == []
    # Evidence recorded after the promotion does.
    record(store, mg("f3", "abandon", at=T0 + DAY))
    assert [e.id for e in of_type(plan_pass(store, T0 + 2 * DAY), MegramDemoted)] == ["bp"]


def test_applying_a_demotion_strips_the_time_immunity(store: MegramStore) -> None:
    record(store, sop("bp", "best_practice", at=T0), mg("f1", "abandon", at=T0 + DAY))
    (event,) = of_type(plan_pass(store, T0 + DAY), MegramDemoted)
    store.apply(event)
    assert store.query_c(*PAIR) == []
    got = store.get("bp")
    assert got is not None and (got.level, got.k) == ("K", 0.05)
    assert of_type(plan_pass(store, T0 + DAY), MegramDemoted) == []


# --------------------------------------------------------------------------- consolidation
def test_six_fresh_accepts_consolidate_and_five_do_not(store: MegramStore) -> None:
    record(store, *(mg(f"a{i}") for i in range(5)))
    assert of_type(plan_pass(store, T0), ConsolidationCandidate) == []
    record(store, mg("a5"))
    (c,) = of_type(plan_pass(store, T0), ConsolidationCandidate)
    assert (c.space, c.entity, c.kind) == (*PAIR, "best_practice")
    assert c.attention == pytest.approx(5.4) and c.decision == pytest.approx(5.4)
    assert c.source_ids == [f"a{i}" for i in range(6)]
    assert all(isinstance(m, Megram) for m in c.sources)


def test_the_thresholds_come_from_the_dreamer_config(store: MegramStore) -> None:
    record(store, *(mg(f"a{i}") for i in range(5)), mg("r", "refine"))
    lenient = DreamerConfig(consolidate_attention=4.0, consolidate_decision=4.0)
    (c,) = of_type(plan_pass(store, T0, rules=lenient), ConsolidationCandidate)
    assert {f"a{i}" for i in range(5)} <= set(c.source_ids)
    assert of_type(plan_pass(store, T0), ConsolidationCandidate) == []  # the paper's 5.0/3.0
    assert of_type(plan_pass(store, T0 + PASS), MegramForgotten)  # the paper's 0.1
    never = DreamerConfig(forget_below=0.0)
    assert of_type(plan_pass(store, T0 + PASS, rules=never), MegramForgotten) == []


def test_six_abandons_make_a_constraint(store: MegramStore) -> None:
    record(store, *(mg(f"f{i}", "abandon") for i in range(6)))
    (c,) = of_type(plan_pass(store, T0), ConsolidationCandidate)
    assert c.kind == "constraint" and c.decision == pytest.approx(-5.7)


def test_mixed_clusters_and_decayed_clusters_do_not_consolidate(store: MegramStore) -> None:
    record(store, *(mg(f"a{i}") for i in range(6)), *(mg(f"f{i}", "abandon") for i in range(6)))
    other = ("intent:old", "env:local")
    record(store, *(mg(f"o{i}", at=T0 - 5 * DAY, tag=other) for i in range(6)))
    assert of_type(plan_pass(store, T0), ConsolidationCandidate) == []


def test_a_promoted_cluster_is_not_promoted_twice(store: MegramStore) -> None:
    record(store, *(mg(f"a{i}") for i in range(6)))
    (c,) = of_type(plan_pass(store, T0), ConsolidationCandidate)
    rule = fallback_sop(c, new_id="sop1", now=T0)
    store.apply(SOPPromoted(megram=rule, source_ids=c.source_ids, kind=c.kind))
    assert store.query_c(*PAIR) == [rule]
    assert plan_pass(store, T0) == []
    # Fresh evidence of the same kind does not duplicate the live rule …
    record(store, *(mg(f"b{i}", at=T0 + 1) for i in range(6)))
    assert plan_pass(store, T0 + 1) == []
    # … but once the rule is bankrupt, new evidence may form the opposite rule.
    record(store, *(mg(f"f{i}", "abandon", at=T0 + 2) for i in range(12)))
    out = plan_pass(store, T0 + 2)
    assert [e.id for e in of_type(out, MegramDemoted)] == ["sop1"]
    (c2,) = of_type(out, ConsolidationCandidate)
    assert c2.kind == "constraint"
    assert set(c2.source_ids) == {f"b{i}" for i in range(6)} | {f"f{i}" for i in range(12)}


def test_a_pass_distils_the_strongest_clusters_first(store: MegramStore) -> None:
    for p, n in enumerate([6, 9, 7, 8]):
        record(store, *(mg(f"p{p}-{i}", tag=(f"intent:t{p}", "env:local")) for i in range(n)))
    record(store, *(mg(f"f{i}", "abandon", tag=("intent:bad", "env:local")) for i in range(6)))
    assert len(of_type(plan_pass(store, T0), ConsolidationCandidate)) == 5
    chosen = of_type(plan_pass(store, T0, max_candidates=2), ConsolidationCandidate)
    assert [c.space for c in chosen] == ["intent:t1", "intent:t3"]  # |decision| 8.1, 7.2
    assert of_type(plan_pass(store, T0, max_candidates=0), ConsolidationCandidate) == []


def test_the_pass_lists_forgotten_then_demoted_then_candidates(store: MegramStore) -> None:
    record(store, sop("bp", "best_practice", at=T0, tag=("p", "q")))
    record(store, mg("z", "abandon", at=T0 + 1, tag=("p", "q")), mg("r", "refine", at=T0))
    record(store, *(mg(f"a{i}", at=T0 + 1) for i in range(6)))
    out = plan_pass(store, T0 + DAY)
    assert [type(x).__name__ for x in out] == [
        "MegramForgotten",
        "MegramDemoted",
        "ConsolidationCandidate",
    ]


# --------------------------------------------------------------------------- distillation
def candidate(n: int = 6, kind: str = "best_practice") -> ConsolidationCandidate:
    state = "accept" if kind == "best_practice" else "abandon"
    sources = tuple(mg(f"a{i:02d}", state) for i in range(n))
    return ConsolidationCandidate(
        space=PAIR[0],
        entity=PAIR[1],
        kind=kind,  # type: ignore[arg-type]
        attention=0.9 * n,
        decision=(0.9 if kind == "best_practice" else -0.9) * n,
        sources=sources,
    )


def test_the_prompt_shows_the_tag_the_kind_and_the_evidence() -> None:
    messages = distillation_prompt(candidate(25))
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "intent:count-files" in user and "env:local" in user and "BEST PRACTICE" in user
    assert user.count("accept via approach") == 20 and "5 more" in user
    assert "CONSTRAINT" in distillation_prompt(candidate(6, "constraint"))[1]["content"]
    assert "json" in messages[0]["content"].lower()


@pytest.mark.parametrize(
    "answer",
    [
        '{"rule": "Use find with -name to count files."}',
        '```json\n{"rule": "Use find with -name to count files."}\n```',
        '"Use find with -name to count files."',
        "Rule: Use find with -name to count files.",
        "  Use find with -name to count files.\n",
        'Sure! {"sop": "Use find with -name to count files."} Hope it helps.',
        '{"content": "Use find with -name to count files.", "confidence": 0.9}',
    ],
)
def test_parsing_accepts_json_and_plain_text(answer: str) -> None:
    m = parse_distillation(answer, candidate(), new_id="S1", now=T0 + 5)
    assert m.content == "Use find with -name to count files."
    assert (m.id, m.level, m.k, m.created_at) == ("S1", "C", 0.0, T0 + 5)
    assert (m.space, m.entity, m.state, m.sigma) == (*PAIR, "best_practice", 1.0)
    assert m.f == pytest.approx(0.9)


@pytest.mark.parametrize("answer", ["", "   \n", None, '{"rule": "  "}', '{"x": 1}', "```\n```"])
def test_a_blank_answer_is_an_error(answer: str | None) -> None:
    with pytest.raises(ValueError, match="no rule"):
        parse_distillation(answer, candidate(), new_id="S1", now=T0)


def test_the_rule_of_a_constraint_and_of_no_sources() -> None:
    m = parse_distillation("Never rm -rf /", candidate(6, "constraint"), new_id="S", now=T0)
    assert (m.sigma, m.state, m.f) == (-1.0, "constraint", pytest.approx(0.95))
    bare = msgspec.structs.replace(candidate(), sources=())
    assert parse_distillation("x", bare, new_id="S", now=T0).f == 1.0
    assert len(parse_distillation("y" * 5000, bare, new_id="S", now=T0).content) == 2000


def test_the_fallback_rule_is_deterministic_and_complete() -> None:
    c = candidate(6, "constraint")
    a = fallback_sop(c, new_id="S", now=T0)
    assert a == fallback_sop(c, new_id="S", now=T0)
    assert (a.level, a.k, a.sigma, a.state) == ("C", 0.0, -1.0, "constraint")
    assert "intent:count-files" in a.content and "abandon via approach a00" in a.content
    assert fallback_sop(candidate(), new_id="S", now=T0).sigma == 1.0


def test_parsing_a_model_answer_written_as_json_dump() -> None:
    answer = json.dumps({"rule": "Prefer  `ls -1 | wc -l`\nfor counts."})
    assert parse_distillation(answer, candidate(), new_id="S", now=T0).content == (
        "Prefer  `ls -1 | wc -l`\nfor counts."
    )


# --------------------------------------------------------------------------- against a reference
def reference_pass(store: MegramStore, now: float) -> tuple[set[str], set[str], dict]:
    """The rules of paper §7 with docs/design.md C5, written as plain loops over Megrams."""
    live = list(store.megrams())
    mk = [m for m in live if m.level in ("M", "K")]
    forget = {m.id for m in mk if potentials([m], now)[0] < 0.1}
    evidence = [m for m in mk if m.id not in forget]
    demote = set()
    for c in live:
        if c.level != "C" or c.sigma == 0:
            continue
        after = [
            m
            for m in evidence
            if (m.space, m.entity) == (c.space, c.entity) and m.created_at > c.created_at
        ]
        dec = potentials(after, now)[1]
        if after and ((c.sigma > 0 and dec < 0) or (c.sigma < 0 and dec > 0)):
            demote.add(c.id)
    rules = {
        (c.space, c.entity, c.sigma > 0)
        for c in live
        if c.level == "C" and c.id not in demote and c.sigma != 0
    }
    clusters: dict[tuple[str, str], list[Megram]] = {}
    for m in evidence:
        if store.consolidated_into(m.id) is None:
            clusters.setdefault((m.space, m.entity), []).append(m)
    candidates = {}
    for (space, entity), ms in clusters.items():
        att, dec = potentials(ms, now)
        if att >= 5.0 and dec >= 3.0 and (space, entity, True) not in rules:
            candidates[(space, entity)] = ("best_practice", sorted(m.id for m in ms))
        elif att >= 5.0 and dec <= -3.0 and (space, entity, False) not in rules:
            candidates[(space, entity)] = ("constraint", sorted(m.id for m in ms))
    return forget, demote, candidates


def as_sets(out: list[object]) -> tuple[set[str], set[str], dict]:
    return (
        {e.id for e in of_type(out, MegramForgotten)},
        {e.id for e in of_type(out, MegramDemoted)},
        {(c.space, c.entity): (c.kind, c.source_ids) for c in of_type(out, ConsolidationCandidate)},
    )


GOOD = ["accept", "success", "break_symmetry", "refine"]
BAD = ["abandon", "change_approach", "change_path"]


def random_memory(rng: random.Random, n: int, n_tags: int, spread: float = 40.0) -> list[Message]:
    """``n`` megrams over ``n_tags`` tags, each tag leaning good, bad or neither; ages
    up to ``spread`` days; now and then a C-level rule that consolidates a few of them."""
    tags = [(f"tool:t{i}", f"path:/{i % 3}") for i in range(n_tags)]
    lean = {p: rng.choice([GOOD * 3 + BAD, BAD * 3 + GOOD, GOOD + BAD]) for p in tags}
    events: list[Message] = []
    for i in range(n):
        tag = rng.choice(tags)
        m = mg(f"m{i:05d}", rng.choice(lean[tag]), at=T0 - rng.uniform(0, spread) * DAY, tag=tag)
        events.append(MegramRecorded(megram=m))
        if rng.random() < 0.03:
            kind = rng.choice(["best_practice", "constraint"])
            at = T0 - rng.uniform(0, spread / 2) * DAY
            rule = sop(f"c{i:05d}", kind, at=at, tag=rng.choice(tags))
            sources = [f"m{j:05d}" for j in rng.sample(range(i + 1), min(5, i + 1))]
            events.append(SOPPromoted(megram=rule, source_ids=sources))
    return events


def test_plan_pass_matches_the_reference_on_a_large_random_memory(store: MegramStore) -> None:
    store.apply_many(random_memory(random.Random(7), 3000, 40))
    out = plan_pass(store, T0, max_candidates=None)
    forget, demote, candidates = as_sets(out)
    assert forget and demote and candidates  # the data exercises every rule
    assert (forget, demote, candidates) == reference_pass(store, T0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 150),
    st.integers(1, 6),
    st.floats(0, 60),
    st.floats(0, 10),
)
def test_plan_pass_matches_the_reference(
    seed: int, n: int, n_tags: int, spread: float, days: float
) -> None:
    with tempfile.TemporaryDirectory() as tmp, MegramStore.open(Path(tmp, "m")) as s:
        s.apply_many(random_memory(random.Random(seed), n, n_tags, spread))
        now = T0 + days * DAY
        assert as_sets(plan_pass(s, now, max_candidates=None)) == reference_pass(s, now)


def test_the_forget_threshold_is_the_papers() -> None:
    # 0.9·e^(−0.05·t) = 0.1 at t = ln 9 / 0.05 days.
    assert math.log(9) / 0.05 == pytest.approx(43.94, abs=0.01)


def _with_steps(m: Megram, *commands: str) -> Megram:
    step = EpisodeStep(instruction="how many lines are in notes/todo.txt?", commands=list(commands))
    return msgspec.structs.replace(m, steps=[step], request="how many lines are in notes/todo.txt?")


def test_a_best_practice_that_names_nothing_recorded_is_built_by_code() -> None:
    """The model's rule must name a program or tool the sources' commands ran: "Always use
    tools that work consistently …" (seen on the local model, replacing a recorded
    `wc -l`) says nothing of what worked, so it is refused and the Dreamer builds the
    rule from the records; a rule that names `wc` is kept; a constraint, or sources
    with no recorded command, keep the model's text as before."""
    base = candidate()
    sources = tuple(_with_steps(m, "wc -l notes/todo.txt") for m in base.sources)
    recorded = msgspec.structs.replace(base, sources=sources)
    assert recorded_programs(sources) == {"wc"}
    vague = "Always use tools that work consistently for the specific task."
    with pytest.raises(ValueError, match="names none"):
        parse_distillation(vague, recorded, new_id="S", now=T0)
    kept = parse_distillation("Count lines with `wc -l FILE`.", recorded, new_id="S", now=T0)
    assert "wc -l FILE" in kept.content
    assert parse_distillation(vague, base, new_id="S", now=T0).content == vague
    built = fallback_sop(recorded, new_id="S", now=T0)
    assert "`wc -l notes/todo.txt`" in built.content
