"""Round 0 of a request read with a kind is the request itself: one subtask whose
instruction is the user's text, no Planner model call — a question not offered
``write_file``, a change (or a question code read as mixed) offered every tool. A
remembered plan of the same request still comes first; a later round, or a spec with no
kind, is planned by the model. A model's plan that names a program as a tool (``wc -l``, ``grep``)
is repaired to ``shell`` instead of being asked again (``repaired_tools``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.planner import Planner, direct_plan, repaired_tools
from artoo.schemas import (
    DispatchManifest,
    EpisodeStep,
    LLMCall,
    Megram,
    MemoryQuery,
    MemoryRecall,
    PlanDirective,
    PlanRejected,
    TagPotential,
    TaskSpec,
)
from artoo.testing import RoleHarness, write_script

TOOLS = ("glob", "read_file", "write_file", "shell", "run_tests", "load_data")
"""The built-in tools (``ToolCatalog(()).names``)."""

QUESTION = "how many entries does inventory/bins.txt list?"
CHANGE = "replace every tab in inventory/bins.txt with two spaces"
CREATION = "create inventory/README.md describing the bins file"


def _ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"st{next(counter)}"


def _spec(text: str, kind: str, shape: str = "") -> TaskSpec:
    return TaskSpec(text=text, intent=text, slug="bins", kind=kind, shape=shape)


def _planned(instruction: str, tools: list[str]) -> dict[str, Any]:
    return {
        "role": "planner",
        "content": {"subtasks": [{"instruction": instruction, "tools": tools}]},
    }


# --------------------------------------------------------------------------- direct_plan (pure)
def test_a_questions_first_plan_is_the_request_without_write_file_or_run_tests() -> None:
    (subtask,) = direct_plan(_spec(QUESTION, "question", "number"), 0, _ids(), TOOLS)
    assert subtask.instruction == QUESTION
    assert (subtask.round, subtask.sequence, subtask.subtask_id) == (0, 1, "st1")
    assert subtask.tools == ["glob", "read_file", "shell", "load_data"]  # no write, no tests
    assert subtask.criteria == []  # the task's criteria are added as for any plan


def test_a_change_or_a_creation_is_offered_every_tool() -> None:
    for text, kind in ((CHANGE, "change"), (CREATION, "creation")):
        (subtask,) = direct_plan(_spec(text, kind), 0, _ids(), TOOLS)
        assert subtask.instruction == text and subtask.tools == [], kind  # [] = every tool


def test_a_question_with_a_target_to_write_writes_nothing() -> None:
    """The model says question but names a file to create: the stricter reading wins —
    a question writes nothing (the model has ``mixed`` for a request that answers and
    changes), so the create target goes and ``write_file`` is not offered."""
    from artoo.actors.roles.perceiver import read_spec
    from artoo.actors.verification.answers import PerceiverAnswer, TargetAnswer

    text = "count the entries in inventory/bins.txt and write the count to inventory/n.txt"
    answer = PerceiverAnswer(
        intent=text,
        kind="question",
        answer="number",
        targets=[TargetAnswer(path="inventory/n.txt", role="create")],
    )
    spec = read_spec(text, answer, {"inventory/bins.txt": True, "inventory/n.txt": False})
    assert spec.kind == "question"
    assert all(t.role == "read" for t in spec.targets)
    (subtask,) = direct_plan(spec, 0, _ids(), TOOLS)
    assert subtask.instruction == text and "write_file" not in subtask.tools


@given(
    text=st.sampled_from([QUESTION, CHANGE, CREATION, "which bin holds the most screws?"]),
    kind=st.sampled_from(["question", "change", "creation"]),
    tools=st.lists(st.sampled_from(TOOLS), unique=True),
    round_=st.integers(0, 5),
)
def test_a_direct_plan_is_always_one_subtask_of_the_request(
    text: str, kind: str, tools: list[str], round_: int
) -> None:
    (subtask,) = direct_plan(_spec(text, kind), round_, _ids(), tools)
    assert subtask.instruction == text and subtask.round == round_
    assert "write_file" not in subtask.tools
    assert set(subtask.tools) <= set(tools)


# --------------------------------------------------------------------------- repaired_tools (pure)
def test_a_program_named_as_a_tool_becomes_shell() -> None:
    assert repaired_tools(["wc -l", "read_file"], TOOLS) == ["read_file", "shell"]
    assert repaired_tools(["grep", "python3", "grep"], TOOLS) == ["shell"]
    assert repaired_tools(["shell", "awk"], TOOLS) == ["shell"]  # shell once
    assert repaired_tools(["glob", "read_file"], TOOLS) == ["glob", "read_file"]  # untouched
    assert repaired_tools([], TOOLS) == []
    # no shell to run the program in: the unknown name is dropped, nothing added
    assert repaired_tools(["wc -l", "read_file"], ("glob", "read_file")) == ["read_file"]


@given(
    st.lists(st.sampled_from([*TOOLS, "wc -l", "grep", "cat", "python3"])),
    st.lists(st.sampled_from(TOOLS), unique=True),
)
def test_repaired_tools_name_only_known_tools(tools: list[str], known: list[str]) -> None:
    got = repaired_tools(tools, known)
    assert set(got) <= set(known) and len(got) == len(set(got))
    assert {t for t in tools if t in known} <= set(got)  # nothing known is lost
    assert set(got) - set(tools) <= {"shell"}  # the one name added
    dropped = any(t not in known for t in tools)
    assert ("shell" in got) == ("shell" in known and ("shell" in tools or dropped))


# --------------------------------------------------------------------------- the Planner role
def _round0(
    tmp_path: Path,
    spec: TaskSpec,
    entries: list[dict[str, Any]],
    recall: MemoryRecall | None = None,
) -> tuple[DispatchManifest, list[LLMCall]]:
    model = write_script(tmp_path / "s.toml", entries)
    recall = recall or MemoryRecall(space="intent:bins", entity="env:local")
    with RoleHarness(Planner, model=model) as h:
        h.send(spec)
        h.wait_for(MemoryQuery)
        h.send(recall)
        (manifest,) = h.wait_for(DispatchManifest)
        calls = [e.body for e in h.published(LLMCall)]
    return manifest.body, calls


def test_the_planner_sends_a_question_itself_with_no_model_call(tmp_path: Path) -> None:
    spec = _spec(QUESTION, "question", "number")
    manifest, calls = _round0(tmp_path, spec, [_planned("never asked", ["glob"])])
    assert calls == []
    (subtask,) = manifest.subtasks
    assert subtask.instruction == QUESTION and subtask.request == QUESTION
    assert "write_file" not in subtask.tools and "shell" in subtask.tools
    assert "the request itself" in manifest.rationale


def test_the_planner_sends_a_change_itself_with_every_tool(tmp_path: Path) -> None:
    manifest, calls = _round0(tmp_path, _spec(CHANGE, "change"), [_planned("never", ["glob"])])
    assert calls == []
    (subtask,) = manifest.subtasks
    assert subtask.instruction == CHANGE and subtask.tools == []


def test_a_spec_with_no_kind_is_planned_by_the_model(tmp_path: Path) -> None:
    """A reading with no kind (a log's from before kinds; the Perceiver's checked reading
    always has one) leaves round 0 to the model."""
    manifest, calls = _round0(tmp_path, _spec(QUESTION, ""), [_planned("List inventory", ["glob"])])
    assert len(calls) == 1 and manifest.subtasks[0].instruction == "List inventory"


def test_a_remembered_plan_of_the_same_request_still_comes_first(tmp_path: Path) -> None:
    """Not new behaviour — the guard that the direct plan did not take its place."""
    steps = [EpisodeStep(instruction="Run wc -l inventory/bins.txt", tools=["shell"])]
    episode = Megram(
        id="m7",
        level="M",
        created_at=0.0,
        space="intent:bins",
        entity="env:local",
        request=QUESTION,
        state="accept",
        f=0.9,
        sigma=1.0,
        k=0.05,
        steps=steps,
    )
    recall = MemoryRecall(space="intent:bins", entity="env:local", episodes=[episode])
    spec = _spec(QUESTION, "question", "number")
    manifest, calls = _round0(tmp_path, spec, [_planned("never", ["glob"])], recall=recall)
    assert calls == []
    (subtask,) = manifest.subtasks
    # its one step of a question asked as the request, its tools the step's
    assert subtask.instruction == QUESTION and subtask.tools == ["shell"]
    assert "episode m7" in manifest.rationale


def test_a_direct_plan_that_breaks_the_must_not_set_is_left_to_the_model(
    tmp_path: Path,
) -> None:
    """Memory avoids ``shell`` on the very file the request names: the request as its own
    instruction would name a blocked target, so the model is asked (and told)."""
    avoid = TagPotential(
        space="tool:shell",
        entity="path:inventory/bins.txt",
        attention=2.0,
        decision=-1.0,
        action="avoid",
    )
    recall = MemoryRecall(space="intent:bins", entity="env:local", avoid=[avoid])
    spec = _spec(QUESTION, "question", "number")
    manifest, calls = _round0(
        tmp_path, spec, [_planned("List the inventory folder", ["glob"])], recall=recall
    )
    assert len(calls) == 1
    assert [s.instruction for s in manifest.subtasks] == ["List the inventory folder"]


def test_a_later_round_of_a_question_is_planned_by_the_model(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.toml", [_planned("Read inventory/bins.txt", ["read_file"])])
    with RoleHarness(Planner, model=model) as h:
        h.send(_spec(QUESTION, "question", "number"))
        h.wait_for(MemoryQuery)
        h.send(MemoryRecall(space="intent:bins", entity="env:local"))
        h.wait_for(DispatchManifest)
        assert h.published(LLMCall) == []
        h.send(PlanDirective(round=1, directive="change_path"))
        h.wait_for(MemoryQuery, 2)
        h.send(MemoryRecall(space="intent:bins", entity="env:local", round=1))
        first, second = h.wait_for(DispatchManifest, 2)
        calls = [e.body for e in h.published(LLMCall)]
    assert first.body.subtasks[0].instruction == QUESTION
    assert len(calls) == 1 and second.body.round == 1
    assert [s.instruction for s in second.body.subtasks] == ["Read inventory/bins.txt"]


def test_a_model_plan_naming_a_program_as_a_tool_is_dispatched_without_a_reask(
    tmp_path: Path,
) -> None:
    """A plan whose tools are ``["grep"]`` was a violation ("asks for the tool 'grep',
    which does not exist") and cost a second model call, often a whole round. (Round 1:
    the model plans every round after the first.)"""
    entries = [
        _planned("grep -c screw inventory/bins.txt", ["grep"]),
        _planned("a second plan, never asked", ["shell"]),
    ]
    spec = _spec("how many bins hold screws?", "question", "number")
    model = write_script(tmp_path / "s.toml", entries)
    with RoleHarness(Planner, model=model) as h:
        h.send(spec)
        h.wait_for(MemoryQuery)
        h.send(MemoryRecall(space="intent:bins", entity="env:local"))
        h.wait_for(DispatchManifest)
        h.send(PlanDirective(round=1, directive="refine"))
        h.wait_for(MemoryQuery, 2)
        h.send(MemoryRecall(space="intent:bins", entity="env:local", round=1))
        _, manifest = h.wait_for(DispatchManifest, 2)
        calls = [e.body for e in h.published(LLMCall)]
        assert h.published(PlanRejected) == []
    assert len(calls) == 1
    (subtask,) = manifest.body.subtasks
    assert subtask.instruction == "grep -c screw inventory/bins.txt"
    assert subtask.tools == ["shell"]
