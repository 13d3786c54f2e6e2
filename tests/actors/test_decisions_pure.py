"""The pure decisions the runtime and ``replay --verify`` share: Law 1 by effect and the
Dispatcher's steps through a plan's groups."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.law1 import decide_effects, describe_effects
from artoo.actors.roles.dispatcher import after_group, first_group, group_subtasks
from artoo.schemas import FileEffect, SubTask, SubTaskOutcome

_CHANGES = ("created", "deleted", "modified", "replaced", "metadata")

effects = st.lists(
    st.builds(
        FileEffect,
        path=st.text("abc/.", min_size=1, max_size=6),
        change=st.sampled_from(_CHANGES),
        size_before=st.one_of(st.none(), st.integers(0, 10_000)),
    ),
    max_size=12,
)


@given(effects)
def test_law1_asks_exactly_when_an_effect_touches_existing_data(found: list[FileEffect]) -> None:
    decision = decide_effects(found)
    harmful = [e for e in found if e.change != "created"]
    assert decision.basis == "effects"
    assert decision.ask == bool(harmful)
    if harmful:
        assert decision.target == harmful[0].path
        assert decision.reason == describe_effects(tuple(harmful))
    else:
        assert (decision.target, decision.reason) == (None, "")


@given(effects, effects, st.randoms(use_true_random=False))
def test_creations_never_change_law1s_decision(
    found: list[FileEffect], extra: list[FileEffect], rnd: object
) -> None:
    created = [FileEffect(path=e.path, change="created") for e in extra]
    mixed = list(found)
    for effect in created:  # interleaved anywhere, the order of the others kept
        mixed.insert(rnd.randint(0, len(mixed)), effect)  # type: ignore[attr-defined]
    assert decide_effects(mixed) == decide_effects(found)


plans = st.lists(st.integers(1, 4), max_size=9).map(
    lambda seqs: [
        SubTask(subtask_id=f"s{i}", sequence=q, instruction=f"do {i}") for i, q in enumerate(seqs)
    ]
)


@given(plans)
def test_groups_are_the_plan_stably_sorted_by_sequence(plan: list[SubTask]) -> None:
    groups = group_subtasks(plan)
    assert [s for g in groups for s in g] == sorted(plan, key=lambda s: s.sequence)
    assert all(len({s.sequence for s in g}) == 1 for g in groups)
    assert [g[0].sequence for g in groups] == sorted({s.sequence for s in plan})


@given(plans, st.data())
def test_a_plan_runs_group_by_group_until_a_group_fails(
    plan: list[SubTask], data: st.DataObject
) -> None:
    groups = group_subtasks(plan)
    statuses = {s.subtask_id: data.draw(st.sampled_from(["matched", "failed"])) for s in plan}
    sent: list[list[SubTask]] = []
    skipped: list[SubTask] = []
    step = first_group(groups)
    while step.send:
        sent.append(list(step.send))
        outcomes = {
            s.subtask_id: SubTaskOutcome(
                subtask_id=s.subtask_id, status=statuses[s.subtask_id], output=f"out {s.subtask_id}"
            )
            for s in step.send
        }
        step = after_group(groups, step.index, outcomes)
        skipped.extend(step.skip)
    failed = next(
        (k for k, g in enumerate(groups) if any(statuses[s.subtask_id] != "matched" for s in g)),
        len(groups) - 1,
    )
    # the groups up to the first failed one are sent, in order; every later one is skipped
    assert [[s.subtask_id for s in g] for g in sent] == [
        [s.subtask_id for s in g] for g in groups[: failed + 1]
    ]
    assert [s.subtask_id for s in skipped] == [
        s.subtask_id for g in groups[failed + 1 :] for s in g
    ]
    assert step.index == len(groups)
    for before, group in itertools.pairwise(sent):  # each sees the previous outputs
        for s in group:
            assert all(f"- {p.instruction}: out {p.subtask_id}" in s.context for p in before)
