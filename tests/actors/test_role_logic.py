"""Pure logic kept above the thin actor classes: dispatcher grouping, doom loops, prompts."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.dispatcher import group_subtasks, inject_outputs
from artoo.actors.roles.executor import DOOM_REPEATS, is_doom_loop, subtask_prompt
from artoo.actors.roles.meta_validator import merge_outputs
from artoo.actors.verification.answers import slugify
from artoo.schemas import Criterion, SubTask, SubTaskOutcome


def sub(i: int, seq: int) -> SubTask:
    return SubTask(subtask_id=f"s{i}", sequence=seq, instruction=f"step {i}")


@given(st.lists(st.integers(min_value=1, max_value=5), max_size=20))
def test_groups_are_ascending_and_keep_input_order(seqs: list[int]) -> None:
    subtasks = [sub(i, s) for i, s in enumerate(seqs)]
    groups = group_subtasks(subtasks)
    assert [g[0].sequence for g in groups] == sorted(set(seqs))
    assert [s for g in groups for s in g] == sorted(subtasks, key=lambda s: s.sequence)
    for g in groups:
        assert [s.subtask_id for s in g] == [
            s.subtask_id for s in subtasks if s.sequence == g[0].sequence
        ]


def test_inject_outputs_appends_the_previous_group() -> None:
    later = SubTask(subtask_id="b", instruction="use it", context="MUST NOT: x")
    out = inject_outputs(later, [(sub(1, 1), "alpha"), (sub(2, 1), "beta")])
    assert (
        out.context
        == "MUST NOT: x\n\nOutputs of the previous step:\n- step 1: alpha\n- step 2: beta"
    )
    assert inject_outputs(later, []) is later


def test_doom_loop_is_three_identical_calls_in_a_row() -> None:
    a, b = ("shell", '{"command": "ls"}'), ("shell", '{"command": "pwd"}')
    assert not is_doom_loop([a, a])
    assert is_doom_loop([b, a, a, a])
    assert not is_doom_loop([a, a, b])
    assert not is_doom_loop([a, b, a])


_KEYS = st.lists(st.sampled_from("abcdef"), max_size=24)


@given(_KEYS)
def test_a_call_made_the_repeats_th_time_is_a_doom_loop_in_a_row_or_not(calls: list[str]) -> None:
    """A kept real-model run cycled ``echo $decision``, ``echo $action``,
    ``echo $next_meeting`` for 24 calls, never three times in a row: any call made for
    the DOOM_REPEATS-th time is a doom loop at that call, and not before."""
    counts: dict[str, int] = {}
    for i, key in enumerate(calls):
        counts[key] = counts.get(key, 0) + 1
        assert is_doom_loop(calls[: i + 1]) == (counts[key] == DOOM_REPEATS)
        if counts[key] == DOOM_REPEATS:
            break


@given(st.lists(st.text(max_size=4), unique=True, max_size=24))
def test_distinct_calls_are_never_a_doom_loop(calls: list[str]) -> None:
    assert not any(is_doom_loop(calls[: i + 1]) for i in range(len(calls)))


@given(st.lists(st.integers(0, 9), unique=True, max_size=12), st.data())
def test_one_call_interleaved_with_distinct_ones_is_a_doom_loop_at_its_third(
    others: list[int], data: st.DataObject
) -> None:
    calls: list[object] = list(others)
    for _ in range(DOOM_REPEATS):  # the repeated call, anywhere among the others
        calls.insert(data.draw(st.integers(0, len(calls))), "x")
    at = [i for i, c in enumerate(calls) if c == "x"][-1]
    assert [is_doom_loop(calls[: i + 1]) for i in range(len(calls))].index(True) == at


def test_subtask_prompt_states_criteria_context_and_must_not() -> None:
    s = SubTask(
        subtask_id="s",
        instruction="count files",
        context="SHOULD PREFER: glob",
        blocked_tools=["shell"],
        blocked_targets=["secret/"],
        criteria=[Criterion(id="c1", text="a number")],
    )
    text = subtask_prompt(s)
    assert text.startswith("Subtask: count files")
    assert "- a number" in text and "SHOULD PREFER: glob" in text
    assert "MUST NOT use: shell, secret/" in text
    # the user's request travels to the Executor: a plan that strays does not replace it
    asked = msgspec.structs.replace(s, request="how many python files are under src?")
    assert "It serves the user's request: how many python files are under src?" in (
        subtask_prompt(asked)
    )
    assert "user's request" not in subtask_prompt(msgspec.structs.replace(s, request="count files"))


@given(st.text())
def test_slugs_are_tag_safe(text: str) -> None:
    slug = slugify(text)
    assert slug and len(slug) <= 48
    assert set(slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")


def test_merge_outputs_in_plan_order_skipping_missing_and_empty() -> None:
    outcomes = {
        "b": SubTaskOutcome(subtask_id="b", output="second"),
        "a": SubTaskOutcome(subtask_id="a", output="first"),
        "c": SubTaskOutcome(subtask_id="c", status="skipped"),
    }
    assert merge_outputs(["a", "b", "c", "d"], outcomes) == "first\n\nsecond"


def test_the_subtask_prompt_states_the_readings_scope() -> None:
    from artoo.schemas import Target

    question = SubTask(subtask_id="s", instruction="what is x?", kind="question")
    assert "change no file" in subtask_prompt(question)
    change = SubTask(
        subtask_id="s",
        instruction="add a news fragment",
        kind="change",
        targets=[Target(path="changelog.d/", role="create"), Target(path="README.rst")],
    )
    text = subtask_prompt(change)
    assert "Files to change: create changelog.d/ (no other file)." in text
    assert "Files to read: README.rst" in text  # read, not changed
