"""The MegramStore and the dual-channel potentials (paper §6, docs/design.md C5, §4.6, §4.10)."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec
import plyvel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.eventstore.megrams import (
    ACTIONS,
    QUANTUM,
    MegramStore,
    StoreClosed,
    StoreLocked,
    action,
    age_days,
    potentials,
)
from artoo.schemas import (
    Megram,
    MegramDemoted,
    MegramForgotten,
    MegramRecalled,
    MegramRecorded,
    Message,
    SOPPromoted,
    TaskCancelled,
)

T0 = 1_700_000_000.0
DAY = 86_400.0
# The paper's quantization matrix (§6.3): state -> (f, sigma, k).
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
    space: str = "intent:count-files",
    entity: str = "env:local",
    level: str = "M",
    recalled: float | None = None,
) -> Megram:
    f, sigma, k = MATRIX[state]
    return Megram(
        id=mid,
        level=level,  # type: ignore[arg-type]
        created_at=at,
        last_recalled_at=recalled,
        space=space,
        entity=entity,
        content=f"{state} {mid}",
        state=state,
        f=f,
        sigma=sigma,
        k=k,
    )


def rec(m: Megram) -> MegramRecorded:
    return MegramRecorded(megram=m)


@pytest.fixture
def store(tmp_path: Path) -> Iterable[MegramStore]:
    with MegramStore.open(tmp_path / "memory") as s:
        yield s


# --------------------------------------------------------------------------- worked numbers
@pytest.mark.parametrize(("k", "half_life"), [(0.05, 14.0), (0.2, 3.5), (0.5, 1.4)])
def test_half_lives_of_the_three_decay_rates(k: float, half_life: float) -> None:
    exact = math.log(2) / k
    assert exact == pytest.approx(half_life, abs=0.15)
    m = Megram(id="a", level="M", created_at=T0, space="s", entity="e", f=1.0, sigma=1.0, k=k)
    att, dec = potentials([m], T0 + exact * DAY)
    assert att == pytest.approx(0.5, abs=1e-9)
    assert dec == pytest.approx(0.5, abs=1e-9)
    assert potentials([m], T0 + 2 * exact * DAY)[0] == pytest.approx(0.25, abs=1e-9)


def test_fresh_potentials_are_the_sum_of_f_and_of_signed_f() -> None:
    ms = [mg("a", "accept"), mg("b", "success"), mg("c", "change_approach")]
    att, dec = potentials(ms, T0)
    assert att == pytest.approx(0.9 + 0.8 + 0.85, abs=1e-9)
    assert dec == pytest.approx(0.9 + 0.8 - 0.85, abs=1e-9)


def test_mixed_evidence_on_one_tag_gives_caution(store: MegramStore) -> None:
    store.apply(rec(mg("a", "accept")))
    store.apply(rec(mg("b", "abandon")))
    att, dec, act = store.query_mk("intent:count-files", "env:local", T0)
    assert att == pytest.approx(1.85, abs=1e-9)
    assert dec == pytest.approx(-0.05, abs=1e-9)
    assert act == "caution"


def test_change_path_is_attention_without_direction(store: MegramStore) -> None:
    # sigma = 0: the tool is not at fault; two dead ends ask for caution, not avoidance.
    store.apply(rec(mg("a", "change_path", space="tool:shell", entity="path:/x")))
    store.apply(rec(mg("b", "change_path", space="tool:shell", entity="path:/x")))
    assert store.query_mk("tool:shell", "path:/x", T0) == pytest.approx((0.6, 0.0, "caution"))
    # A single one is below the attention floor.
    assert potentials([mg("c", "change_path")], T0) == pytest.approx((0.3, 0.0))
    assert action(0.3, 0.0) == "ignore"


@pytest.mark.parametrize(
    ("att", "dec", "expected"),
    [
        (0.49, 5.0, "ignore"),
        (0.5, 0.21, "exploit"),
        (0.5, 0.2, "caution"),
        (0.5, -0.2, "caution"),
        (0.5, -0.21, "avoid"),
        (9.0, 0.0, "caution"),
        (0.0, 0.0, "ignore"),
    ],
)
def test_action_thresholds(att: float, dec: float, expected: str) -> None:
    assert action(att, dec) == expected


def test_age_counts_from_the_later_of_creation_and_recall() -> None:
    assert age_days(T0, None, T0 + 2 * DAY) == pytest.approx(2.0)
    assert age_days(T0, T0 + DAY, T0 + 3 * DAY) == pytest.approx(2.0)
    assert age_days(T0 + DAY, T0, T0 + 3 * DAY) == pytest.approx(2.0)  # recall before creation
    assert age_days(T0, None, T0 - DAY) == 0.0  # never negative


def test_recall_resets_the_decay_clock(store: MegramStore) -> None:
    store.apply(rec(mg("a", "accept")))
    later = T0 + 10 * DAY
    decayed = store.query_mk("intent:count-files", "env:local", later)[0]
    assert decayed == pytest.approx(0.9 * math.exp(-0.05 * 10), abs=1e-9)
    assert store.apply(MegramRecalled(ids=["a", "unknown"], at=later))
    assert store.query_mk("intent:count-files", "env:local", later)[0] == pytest.approx(0.9)
    after = store.query_mk("intent:count-files", "env:local", later + 4 * DAY)[0]
    assert after == pytest.approx(0.9 * math.exp(-0.05 * 4), abs=1e-9)
    # A recall earlier than the last one changes nothing.
    assert not store.apply(MegramRecalled(ids=["a"], at=T0 + DAY))
    got = store.get("a")
    assert got is not None and got.last_recalled_at == later


def test_a_time_before_creation_counts_as_age_zero(store: MegramStore) -> None:
    store.apply(rec(mg("a", "accept")))
    assert store.query_mk("intent:count-files", "env:local", T0 - 5 * DAY)[0] == pytest.approx(0.9)


# --------------------------------------------------------------------------- applying events
def test_recording_the_same_id_twice_does_not_double_count(store: MegramStore) -> None:
    assert store.apply(rec(mg("a", "accept")))
    assert not store.apply(rec(mg("a", "accept")))
    assert len(store) == 1
    assert store.query_mk("intent:count-files", "env:local", T0)[0] == pytest.approx(0.9)


def test_forgetting_removes_a_megram_from_every_answer(store: MegramStore) -> None:
    store.apply(rec(mg("a", "accept")))
    store.apply(rec(mg("b", "abandon")))
    assert store.apply(MegramForgotten(id="b", reason="gc"))
    assert not store.apply(MegramForgotten(id="b"))
    assert "b" not in store and store.get("b") is None
    assert store.query_mk("intent:count-files", "env:local", T0) == pytest.approx(
        (0.9, 0.9, "exploit")
    )


def test_demotion_moves_a_rule_from_c_to_k_and_restarts_its_decay(store: MegramStore) -> None:
    sop = mg("s", "accept", level="C")
    store.apply(rec(msgspec.structs.replace(sop, k=0.0)))
    assert [m.id for m in store.query_c("intent:count-files", "env:local")] == ["s"]
    assert store.query_mk("intent:count-files", "env:local", T0)[0] == 0.0  # C is not M/K
    assert store.apply(MegramDemoted(id="s", level="K", k=0.05))
    assert not store.apply(MegramDemoted(id="s", level="K", k=0.05))
    assert store.query_c("intent:count-files", "env:local") == []
    got = store.get("s")
    assert got is not None and (got.level, got.k) == ("K", 0.05)
    att = store.query_mk("intent:count-files", "env:local", T0 + 14 * DAY)[0]
    assert att == pytest.approx(0.9 * math.exp(-0.7), abs=1e-9)


def test_sop_promotion_records_the_rule_and_marks_its_sources(store: MegramStore) -> None:
    store.apply_many([rec(mg(f"a{i}")) for i in range(3)])
    sop = msgspec.structs.replace(mg("s", level="C"), k=0.0, state="best_practice")
    assert store.apply(SOPPromoted(megram=sop, source_ids=["a0", "a1", "zz"]))
    assert not store.apply(SOPPromoted(megram=sop, source_ids=["a0", "a1"]))
    assert store.consolidated_into("a0") == "s"
    assert store.consolidated_into("a2") is None
    cols = store.snapshot()
    flags = dict(zip(cols.ids, cols.consolidated.tolist(), strict=True))
    assert flags == {"a0": True, "a1": True, "a2": False, "s": False}
    assert store.query_c("intent:count-files", "env:local") == [sop]


def test_values_outside_the_papers_ranges_are_clamped(store: MegramStore) -> None:
    base = mg("a", "accept")
    wild = [
        msgspec.structs.replace(base, id="a", f=7.0, sigma=-3.0),  # as f 1, σ −1
        msgspec.structs.replace(base, id="b", f=math.nan, k=-2.0),  # counts 0
        msgspec.structs.replace(base, id="c", k=math.inf, last_recalled_at=math.nan),  # k 0
    ]
    store.apply_many(rec(m) for m in wild)
    later = T0 + 10 * DAY
    a = math.exp(-0.05 * 10)  # f 1 decayed 10 days; c does not decay
    assert potentials(wild, later) == pytest.approx((a + 0.9, -a + 0.9), abs=1e-9)
    att, dec, _ = store.query_mk("intent:count-files", "env:local", later)
    assert (att, dec) == potentials(wild, later)
    with pytest.raises(ValueError, match="finite"):
        potentials(wild, math.nan)


def test_get_many_keeps_the_order_asked_and_skips_unknown_ids(store: MegramStore) -> None:
    store.apply_many(rec(mg(f"m{i}")) for i in range(5))
    store.apply(MegramRecalled(ids=["m3"], at=T0 + 9))
    got = store.get_many(["m3", "zz", "m0", "m4"])
    assert [m.id for m in got] == ["m3", "m0", "m4"]
    assert got[0].last_recalled_at == T0 + 9 and got[0] == store.get("m3")


def test_megrams_reads_a_snapshot(store: MegramStore) -> None:
    store.apply_many(rec(mg(f"m{i}")) for i in (2, 0, 1))
    listing = store.megrams()
    store.apply(MegramForgotten(id="m1"))
    store.apply(rec(mg("m3")))
    assert [m.id for m in listing] == ["m0", "m1", "m2"]
    assert [m.id for m in store.megrams()] == ["m0", "m2", "m3"]


def test_other_messages_are_ignored(store: MegramStore) -> None:
    assert not store.apply(TaskCancelled(reason="x"))
    assert len(store) == 0


def test_events_at_or_below_the_applied_seq_are_skipped(tmp_path: Path) -> None:
    with MegramStore.open(tmp_path / "m") as s:
        assert s.applied_seq == 0
        assert s.apply(rec(mg("a")), seq=5)
        assert not s.apply(rec(mg("b")), seq=5)
        assert s.apply_many([(4, rec(mg("c"))), (6, rec(mg("d")))], with_seq=True) == 1
    with MegramStore.open(tmp_path / "m") as s:
        assert s.applied_seq == 6
        assert sorted(m.id for m in s.megrams()) == ["a", "d"]


def test_mark_applied_only_moves_forward_and_persists(tmp_path: Path) -> None:
    with MegramStore.open(tmp_path / "m") as s:
        s.mark_applied(9)
        s.mark_applied(3)
        assert s.applied_seq == 9
        assert not s.apply(rec(mg("a")), seq=8)  # at or below the mark: already read
    with MegramStore.open(tmp_path / "m") as s:
        assert s.applied_seq == 9 and len(s) == 0


def test_catch_up_reads_the_log_once_even_when_it_holds_no_memory_event(
    tmp_path: Path,
) -> None:
    from artoo.eventstore import EventLog
    from artoo.memoryview import catch_up_memory
    from artoo.schemas import Envelope

    def env(body: object) -> Envelope:
        return Envelope(0, 1.0, "t", "s", None, None, body)  # type: ignore[arg-type]

    with EventLog.open(tmp_path / "events") as log, MegramStore.open(tmp_path / "m") as s:
        log.append([env(TaskCancelled(reason="x")) for _ in range(3)])
        assert catch_up_memory(log, s) == 0
        assert s.applied_seq == 3  # the next open starts after seq 3
        log.append([env(rec(mg("a"))), env(TaskCancelled(reason="y"))])
        assert catch_up_memory(log, s) == 1
        assert s.applied_seq == 5 and [m.id for m in s.megrams()] == ["a"]
        assert catch_up_memory(log, s) == 0 and len(s) == 1


def test_demoting_in_the_same_batch_as_recording(store: MegramStore) -> None:
    sop = msgspec.structs.replace(mg("s", level="C"), k=0.0)
    store.apply_many([rec(sop), MegramDemoted(id="s", level="K", k=0.05)])
    got = store.get("s")
    assert got is not None and (got.level, got.k) == ("K", 0.05)


def test_the_key_schema_of_the_paper(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with MegramStore.open(path) as s:
        s.apply(rec(mg("a", space="tool:sh|x", entity="path:/a%b")))
        s.apply(rec(msgspec.structs.replace(mg("s", level="C"), k=0.0)))
        s.apply(MegramRecalled(ids=["a"], at=T0 + 60))
        s.apply(MegramDemoted(id="s", level="K", k=0.05))
        s.apply(SOPPromoted(megram=mg("t", level="C"), source_ids=["a"]))
    db = plyvel.DB(str(path))
    try:
        keys = {k for k, _ in db.iterator()}
        assert b"x|tool:sh%7Cx|path:/a%25b|a" in keys
        assert {b"l|M|a", b"l|K|s", b"l|C|t"} <= keys and b"l|C|s" not in keys
        assert msgspec.msgpack.decode(db.get(b"r|a")) == T0 + 60
        assert msgspec.msgpack.decode(db.get(b"c|a")) == "t"
        assert msgspec.msgpack.decode(db.get(b"m|a"), type=Megram).space == "tool:sh|x"
    finally:
        db.close()


def test_compaction_keeps_every_answer(store: MegramStore) -> None:
    tags = [(f"tool:t{i % 7}", f"path:/{i % 5}") for i in range(10_000)]
    states = list(MATRIX)
    ms = [
        mg(f"m{i:05d}", states[i % 7], at=T0 + i, space=s, entity=e)
        for i, (s, e) in enumerate(tags)
    ]
    store.apply_many(rec(m) for m in ms)
    gone = {m.id for m in ms[::3]} | {m.id for m in ms[1::3]}
    store.apply_many(MegramForgotten(id=mid) for mid in sorted(gone))
    kept = [m for m in ms if m.id not in gone]
    assert len(store) == len(kept)
    assert len(store.snapshot().ids) == len(kept)
    now = T0 + 3 * DAY
    for space, entity in sorted(set(tags)):
        expected = potentials([m for m in kept if (m.space, m.entity) == (space, entity)], now)
        att, dec, _ = store.query_mk(space, entity, now)
        assert (att, dec) == pytest.approx(expected, abs=1e-9)
    store.apply(rec(mg("new", space="tool:t0", entity="path:/0")))
    assert store.get("new") is not None and store.get(ms[0].id) is None


# --------------------------------------------------------------------------- reads
def test_strongest_lists_the_tags_of_one_action_under_a_prefix(store: MegramStore) -> None:
    events = [
        rec(mg("a1", "abandon", space="tool:rm", entity="path:/etc")),
        rec(mg("a2", "abandon", space="tool:rm", entity="path:/etc")),
        rec(mg("b1", "change_approach", space="tool:curl", entity="path:http")),
        rec(mg("c1", "accept", space="tool:ls", entity="path:/src")),
        rec(mg("d1", "abandon", space="intent:x", entity="env:local")),
        rec(mg("e1", "abandon", space="tool:cp", entity="path:/a")),
        rec(mg("e2", "abandon", space="tool:cp", entity="path:/b")),
    ]
    store.apply_many(events)
    avoid = store.strongest("tool:", "avoid", 10, T0)
    assert [(t.space, t.entity) for t in avoid] == [
        ("tool:rm", "path:/etc"),
        ("tool:cp", "path:/a"),
        ("tool:cp", "path:/b"),
        ("tool:curl", "path:http"),
    ]
    assert avoid[0].attention == pytest.approx(1.9) and avoid[0].decision == pytest.approx(-1.9)
    assert {t.action for t in avoid} == {"avoid"}
    assert [t.entity for t in store.strongest("tool:", "avoid", 2, T0)] == ["path:/etc", "path:/a"]
    assert [t.space for t in store.strongest("tool:", "exploit", 10, T0)] == ["tool:ls"]
    assert [t.space for t in store.strongest("", "avoid", 1, T0)] == ["tool:rm"]
    assert store.strongest("tool:", "avoid", 0, T0) == []
    # Far in the future everything has decayed under the attention floor.
    assert store.strongest("tool:", "avoid", 10, T0 + 200 * DAY) == []
    assert len(store.strongest("tool:", "ignore", 10, T0 + 200 * DAY)) == 5
    with pytest.raises(ValueError, match="unknown action"):
        store.strongest("tool:", "flee", 3, T0)


def test_query_c_returns_only_live_c_rules_of_the_tag(store: MegramStore) -> None:
    c1 = msgspec.structs.replace(mg("c1", level="C", at=T0 + 5), k=0.0)
    c2 = msgspec.structs.replace(mg("c2", "abandon", level="C", at=T0), k=0.0)
    other = msgspec.structs.replace(mg("c3", level="C", space="intent:other"), k=0.0)
    store.apply_many([rec(c1), rec(c2), rec(other), rec(mg("m1"))])
    assert store.query_c("intent:count-files", "env:local") == [c2, c1]
    store.apply(MegramRecalled(ids=["c1"], at=T0 + 99))
    assert store.query_c("intent:count-files", "env:local")[1].last_recalled_at == T0 + 99
    assert store.query_c("intent:none", "env:local") == []
    assert store.query_mk("intent:none", "env:local", T0) == (0.0, 0.0, "ignore")


# --------------------------------------------------------------------------- lifecycle
def test_the_store_survives_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    events: list[Message] = [
        rec(mg("a", "accept", space="tool:x", entity="path:/1")),
        rec(mg("b", "abandon", space="tool:x", entity="path:/1", at=T0 + 50)),
        rec(mg("c", "change_path", space="tool:y", entity="path:/2")),
        rec(msgspec.structs.replace(mg("s", level="C"), k=0.0)),
        MegramRecalled(ids=["a", "c"], at=T0 + DAY),
        MegramDemoted(id="s", level="K", k=0.05),
        SOPPromoted(megram=mg("t", level="C", space="tool:x", entity="path:/1"), source_ids=["a"]),
        MegramForgotten(id="b"),
    ]
    with MegramStore.open(path) as s:
        s.apply_many(events)
        before = answers(s)
    with MegramStore.open(path) as s:
        assert answers(s) == before


def test_a_second_open_is_refused_with_the_path(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    with MegramStore.open(path):
        with pytest.raises(StoreLocked, match=str(path)):
            MegramStore.open(path)
    with MegramStore.open(path) as s:  # released on close
        assert len(s) == 0


def test_use_after_close_is_an_error(tmp_path: Path) -> None:
    s = MegramStore.open(tmp_path / "m")
    s.close()
    s.close()
    assert s.closed
    with pytest.raises(StoreClosed):
        s.query_mk("a", "b", T0)
    with pytest.raises(StoreClosed):
        s.apply(rec(mg("a")))


# --------------------------------------------------------------------------- properties
finite = {"allow_nan": False, "allow_infinity": False}
megrams_st = st.builds(
    Megram,
    id=st.text("abc", min_size=1, max_size=3),
    level=st.sampled_from(["M", "K"]),
    created_at=st.floats(T0 - 60 * DAY, T0, **finite),
    last_recalled_at=st.none() | st.floats(T0 - 60 * DAY, T0, **finite),
    space=st.just("s"),
    entity=st.just("e"),
    f=st.floats(0.0, 1.0, **finite),
    sigma=st.floats(-1.0, 1.0, **finite),
    k=st.floats(0.0, 2.0, **finite),
)


@given(st.lists(megrams_st, max_size=30), st.floats(0, 400 * DAY, **finite))
def test_attention_bounds_the_decision(ms: list[Megram], later: float) -> None:
    att, dec = potentials(ms, T0 + later)
    assert att >= abs(dec)
    assert att >= 0.0


@given(
    st.lists(megrams_st, max_size=30),
    st.floats(0, 400 * DAY, **finite),
    st.floats(0, 400 * DAY, **finite),
)
def test_attention_never_grows_with_time(ms: list[Megram], a: float, b: float) -> None:
    early, late = sorted((a, b))
    assert potentials(ms, T0 + late)[0] <= potentials(ms, T0 + early)[0]


@given(st.lists(megrams_st, max_size=30), st.floats(0, 400 * DAY, **finite))
def test_potentials_are_the_papers_sums(ms: list[Megram], later: float) -> None:
    now = T0 + later
    att, dec = potentials(ms, now)
    naive_att = naive_dec = 0.0
    for m in ms:
        g = math.exp(-m.k * age_days(m.created_at, m.last_recalled_at, now))
        naive_att += abs(m.f) * g
        naive_dec += m.sigma * m.f * g
    tolerance = (len(ms) + 1) * QUANTUM
    assert att == pytest.approx(naive_att, abs=tolerance)
    assert dec == pytest.approx(naive_dec, abs=tolerance)
    # The sums do not depend on the order of the megrams.
    assert potentials(list(reversed(ms)), now) == (att, dec)


@given(
    st.floats(allow_nan=True) | st.floats(-1, 10),
    st.floats(allow_nan=True) | st.floats(-1, 1),
)
def test_action_is_total_over_four_values(att: float, dec: float) -> None:
    assert action(att, dec) in ACTIONS
    assert len(ACTIONS) == 4


# --------------------------------------------------------------------------- rebuild
SPACES = ["tool:a", "tool:b|c", "intent:x%"]
ENTITIES = ["path:/1", "env:local"]
IDS = [f"m{i}" for i in range(12)]
times = st.floats(T0 - 30 * DAY, T0 + 30 * DAY, **finite)
event_megram = st.builds(
    Megram,
    id=st.sampled_from(IDS),
    level=st.sampled_from(["M", "M", "K", "C"]),
    created_at=times,
    last_recalled_at=st.none() | times,
    space=st.sampled_from(SPACES),
    entity=st.sampled_from(ENTITIES),
    content=st.text(max_size=5),
    state=st.sampled_from(list(MATRIX)),
    f=st.sampled_from([0.1, 0.3, 0.75, 0.8, 0.85, 0.9, 0.95]) | st.floats(0, 1, **finite),
    sigma=st.sampled_from([-1.0, 0.0, 0.5, 1.0]) | st.floats(-1, 1, **finite),
    k=st.sampled_from([0.0, 0.05, 0.2, 0.5]),
)
events_st = st.lists(
    st.one_of(
        st.builds(MegramRecorded, megram=event_megram),
        st.builds(MegramRecalled, ids=st.lists(st.sampled_from(IDS), max_size=3), at=times),
        st.builds(MegramForgotten, id=st.sampled_from(IDS)),
        st.builds(
            MegramDemoted,
            id=st.sampled_from(IDS),
            level=st.sampled_from(["K", "M"]),
            k=st.sampled_from([0.05, 0.2]),
        ),
        st.builds(
            SOPPromoted,
            megram=event_megram,
            source_ids=st.lists(st.sampled_from(IDS), max_size=4),
        ),
    ),
    max_size=40,
)


class Model:
    """The reference semantics of apply(), over plain dicts."""

    def __init__(self) -> None:
        self.live: dict[str, Megram] = {}
        self.consolidated: set[str] = set()

    def apply(self, event: Message) -> None:
        if isinstance(event, MegramRecorded | SOPPromoted):
            self.live.setdefault(event.megram.id, event.megram)
        if isinstance(event, SOPPromoted):
            self.consolidated |= {i for i in event.source_ids if i in self.live}
        elif isinstance(event, MegramRecalled):
            for i in event.ids:
                m = self.live.get(i)
                if m and (m.last_recalled_at is None or event.at > m.last_recalled_at):
                    self.live[i] = msgspec.structs.replace(m, last_recalled_at=event.at)
        elif isinstance(event, MegramForgotten):
            self.live.pop(event.id, None)
            self.consolidated.discard(event.id)
        elif isinstance(event, MegramDemoted) and event.id in self.live:
            m = self.live[event.id]
            self.live[event.id] = msgspec.structs.replace(m, level=event.level, k=event.k)


def answers(s: MegramStore) -> dict[str, object]:
    """Every query of the store, at a few times."""
    tags = [(sp, en) for sp in SPACES for en in ENTITIES] + sorted(
        {(m.space, m.entity) for m in s.megrams()}
    )
    out: dict[str, object] = {
        "megrams": list(s.megrams()),
        "tags": s.tags(),
        "consolidated": {m.id: s.consolidated_into(m.id) for m in s.megrams()},
    }
    for now in (T0 - 40 * DAY, T0, T0 + 3 * DAY, T0 + 90 * DAY):
        for sp, en in tags:
            out[f"mk {sp} {en} {now}"] = s.query_mk(sp, en, now)
            out[f"c {sp} {en}"] = s.query_c(sp, en)
        for prefix in ("", "tool:", "intent:"):
            for act in ACTIONS:
                out[f"strongest {prefix} {act} {now}"] = s.strongest(prefix, act, 3, now)
    cols = s.snapshot()
    order = sorted(range(len(cols.ids)), key=cols.ids.__getitem__)
    out["columns"] = [
        (
            cols.ids[i],
            cols.tags[cols.tag[i]],
            float(cols.t_ref[i]),
            int(cols.level[i]),
            bool(cols.consolidated[i]),
        )
        for i in order
    ]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events_st, st.integers(0, 40))
def test_a_rebuilt_store_answers_every_query_identically(events: list[Message], cut: int) -> None:
    model = Model()
    for event in events:
        model.apply(event)
    with tempfile.TemporaryDirectory() as tmp:
        live_path, rebuilt_path = Path(tmp, "live"), Path(tmp, "rebuilt")
        # One event at a time, closing and reopening part-way.
        with MegramStore.open(live_path) as s:
            for event in events[:cut]:
                s.apply(event)
        with MegramStore.open(live_path) as s:
            for event in events[cut:]:
                s.apply(event)
            live = answers(s)
            assert {m.id: m for m in s.megrams()} == model.live
            assert {i for i in model.live if s.consolidated_into(i)} == model.consolidated
            for sp in SPACES:
                for en in ENTITIES:
                    mk = [
                        m
                        for m in model.live.values()
                        if (m.space, m.entity) == (sp, en) and m.level in "MK"
                    ]
                    att, dec, act = s.query_mk(sp, en, T0 + DAY)
                    assert (att, dec) == pytest.approx(potentials(mk, T0 + DAY), abs=1e-9)
                    assert act == action(att, dec)
            for act in ACTIONS:  # strongest and query_mk agree bit for bit
                for t in s.strongest("", act, 100, T0 + DAY):
                    assert s.query_mk(t.space, t.entity, T0 + DAY) == (
                        t.attention,
                        t.decision,
                        t.action,
                    )
        # The same event list applied in one go to an empty store.
        with MegramStore.open(rebuilt_path) as s:
            s.apply_many(events)
            assert answers(s) == live
        with MegramStore.open(live_path) as s:
            assert answers(s) == live
