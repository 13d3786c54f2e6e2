"""The Dreamer actor: a pass on demand publishes memory events; after trust bankruptcy the
contradicting cluster is promoted in the same process (paper §7), not only after a reopen."""

from __future__ import annotations

from artoo.actors.roles.dreamer import Dreamer, DreamNow
from artoo.schemas import Megram, MegramDemoted, MegramRecorded, SOPPromoted
from artoo.testing import ManualClock, RoleHarness

DAY = 86_400.0


def mg(mid: str, state: str, at: float) -> Megram:
    f, sigma = {"accept": (0.9, 1.0), "abandon": (0.95, -1.0)}[state]
    return Megram(
        id=mid,
        level="M",
        created_at=at,
        space="intent:x",
        entity="env:local",
        f=f,
        sigma=sigma,
        k=0.05,
    )


def test_a_constraint_follows_a_demoted_best_practice_without_a_restart() -> None:
    clock = ManualClock()
    with RoleHarness(Dreamer, megrams=True, clock=clock) as h:
        store = h.megrams
        assert store is not None

        def dream() -> list:
            before = len(h.published())
            h.ref.ask(DreamNow(), timeout=10)
            new = h.published()[before:]
            for env in new:  # what the Memory role would apply
                store.apply(env.body, seq=env.seq)
            return [e.body for e in new]

        t0 = clock.now()
        for i in range(6):
            store.apply(MegramRecorded(megram=mg(f"a{i}", "accept", t0)))
        (best,) = [b for b in dream() if isinstance(b, SOPPromoted)]
        assert best.kind == "best_practice"
        clock.advance(DAY)
        for i in range(6):
            store.apply(MegramRecorded(megram=mg(f"f{i}", "abandon", clock.now())))
        events = dream()  # the best practice falls, and the failures consolidate
        clock.advance(60)
        events += dream()
        assert [type(b) for b in events if isinstance(b, MegramDemoted)] == [MegramDemoted]
        (constraint,) = [b for b in events if isinstance(b, SOPPromoted)]
    assert constraint.kind == "constraint"
    assert sorted(constraint.source_ids) == [f"f{i}" for i in range(6)]
