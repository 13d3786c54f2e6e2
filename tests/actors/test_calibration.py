"""The Planner's calibration protocol (paper §6.5) and the MUST NOT enforcement in code."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.planner import (
    MEMORY_CAP,
    Calibration,
    apply_calibration,
    calibrate,
    validate_plan,
)
from artoo.schemas import Megram, MemoryRecall, PlanDirective, SubTask, TagPotential


# --------------------------------------------------------------------------- builders
def recall(
    action: str = "ignore",
    sops: Sequence[Megram] = (),
    avoid: Sequence[TagPotential] = (),
    attention: float = 0.0,
    decision: float = 0.0,
) -> MemoryRecall:
    return MemoryRecall(
        space="intent:count-files",
        entity="env:local",
        action=action,
        attention=attention,
        decision=decision,
        sops=list(sops),
        avoid=list(avoid),
    )


def sop(mid: str, sigma: float, content: str = "", f: float = 0.9) -> Megram:
    return Megram(
        id=mid,
        level="C",
        created_at=0.0,
        space="intent:count-files",
        entity="env:local",
        content=content,
        f=f,
        sigma=sigma,
        k=0.0,
    )


def pair(tool: str, target: str, decision: float = -1.0, action: str = "avoid") -> TagPotential:
    return TagPotential(
        space=f"tool:{tool}",
        entity=f"path:{target}",
        attention=abs(decision) + 0.5,
        decision=decision,
        action=action,
    )


def directive(tools: Sequence[str] = (), targets: Sequence[str] = ()) -> PlanDirective:
    return PlanDirective(
        round=1, directive="change_path", blocked_tools=list(tools), blocked_targets=list(targets)
    )


def subtask(
    sid: str, instruction: str = "", tools: Sequence[str] = (), context: str = ""
) -> SubTask:
    return SubTask(subtask_id=sid, instruction=instruction, tools=list(tools), context=context)


# --------------------------------------------------------------------------- the action map
@pytest.mark.parametrize(
    ("action", "group"),
    [("exploit", "should_prefer"), ("avoid", "must_not"), ("caution", "caution")],
)
def test_own_potentials_map_by_action(action: str, group: str) -> None:
    cal = calibrate(recall(action, attention=1.25, decision=-0.5))
    [entry] = getattr(cal, group)
    assert "intent:count-files" in entry and "env:local" in entry
    assert "attention 1.25" in entry and "decision -0.50" in entry
    others = {"should_prefer", "must_not", "caution"} - {group}
    assert all(getattr(cal, g) == [] for g in others)
    assert cal.blocked_tools == [] and cal.blocked_targets == []


@pytest.mark.parametrize("action", ["ignore", "", "unknown"])
def test_ignore_adds_nothing(action: str) -> None:
    cal = calibrate(recall(action))
    assert cal == Calibration() and cal.lines() == [] and cal.text == ""


def test_sops_map_by_valence_strongest_first() -> None:
    cal = calibrate(
        recall(
            sops=[
                sop("m1", 1.0, "use glob before shell", f=0.5),
                sop("m2", -1.0, "never walk node_modules"),
                sop("m3", 0.0, "do not trust the cache"),
                sop("m4", 0.8, "count with wc -l", f=1.0),
            ]
        )
    )
    assert cal.should_prefer == ["count with wc -l", "use glob before shell"]
    assert cal.must_not == ["never walk node_modules", "do not trust the cache"]
    assert cal.blocked_targets == [] and cal.blocked_tools == []


def test_sop_without_content_names_its_tags() -> None:
    cal = calibrate(recall(sops=[sop("m", 1.0)]))
    assert cal.should_prefer == ["intent:count-files on env:local"]


def test_avoid_pairs_become_blocked_targets() -> None:
    cal = calibrate(
        recall(
            avoid=[
                pair("shell", "/srv/slow", -0.4),
                pair("read_file", "/etc/shadow", -2.0),
                pair("glob", "/tmp/ok", 0.9, action="exploit"),  # not an Avoid pair
                TagPotential(
                    space="intent:x", entity="env:y", attention=9, decision=-9, action="avoid"
                ),
            ]
        )
    )
    assert cal.blocked_targets == ["/etc/shadow", "/srv/slow"]
    assert cal.must_not == ["/etc/shadow", "/srv/slow"]
    assert cal.blocked_tools == []


def test_directive_merges_into_must_not_without_duplicates() -> None:
    cal = calibrate(
        recall(
            "avoid", sops=[sop("m", -1.0, "no recursion into .git")], avoid=[pair("shell", "/a")]
        ),
        directive(tools=["shell", "glob", "shell"], targets=["/b", "/a"]),
    )
    assert cal.blocked_tools == ["shell", "glob"]
    assert cal.blocked_targets == ["/a", "/b"]
    # memory entries first (own pair, SOP, Avoid target), then GGS tools, then new targets
    assert cal.must_not[1:] == ["no recursion into .git", "/a", "shell", "glob", "/b"]
    assert cal.must_not[0].startswith("the approach recorded for intent:count-files")


def test_lines_and_text() -> None:
    cal = calibrate(
        recall("caution", sops=[sop("m", 1.0, "use glob")], avoid=[pair("shell", "/a")]),
        directive(tools=["shell"], targets=["/b"]),
    )
    assert cal.lines() == [
        "SHOULD PREFER: use glob",
        "MUST NOT: touch /a (the approach that failed: shell on it)",
        "MUST NOT: use the tool shell",
        "MUST NOT: touch /b",
        f"CAUTION: {cal.caution[0]}",
    ]
    assert cal.text == "\n".join(cal.lines())


def test_memory_entries_capped_at_ten() -> None:
    sops = [sop(f"m{i}", 1.0 if i % 2 else -1.0, f"rule {i}", f=0.1 * (i + 1)) for i in range(8)]
    avoid = [pair("shell", f"/p{i}", -1.0 - i) for i in range(5)]
    cal = calibrate(recall("exploit", sops=sops, avoid=avoid), directive(["glob"], ["/q", "/r"]))
    memory = len(cal.should_prefer) + len(cal.caution) + len(cal.must_not) - 3  # 3 from GGS
    assert memory == MEMORY_CAP
    # own pair (1) + eight SOPs (8) leave room for the single strongest Avoid pair
    assert cal.blocked_targets == ["/p4", "/q", "/r"]
    assert "rule 7" in cal.should_prefer and "rule 0" in cal.must_not


# --------------------------------------------------------------------------- enforcement
def test_validate_plan_rejects_blocked_tools_and_targets() -> None:
    cal = calibrate(recall(avoid=[pair("shell", "/srv/data")]), directive(["shell"], ["/tmp/a"]))
    plan = [
        subtask("s1", "count files under /srv/data", ["glob"]),
        subtask("s2", "list the directory", ["shell", "glob"]),
        subtask("s3", "read /tmp/a.", ["read_file"]),
        subtask("s4", "read /tmp/a/b.txt", ["read_file"]),
        subtask("ok", "read /tmp/ab and /var/tmp/a", ["read_file"], context=cal.text),
    ]
    assert validate_plan(plan, cal) == [
        "s1: names blocked target /srv/data",
        "s2: uses blocked tool shell",
        "s3: names blocked target /tmp/a",
        "s4: names blocked target /tmp/a",
    ]
    assert validate_plan(plan[-1:], cal) == []


def test_validate_plan_with_nothing_blocked() -> None:
    assert validate_plan([subtask("s", "rm -rf /", ["shell"])], Calibration()) == []


def test_apply_calibration_carries_sets_and_text() -> None:
    cal = calibrate(recall(avoid=[pair("shell", "/a")]), directive(["glob"]))
    before = SubTask(subtask_id="s", context="previous output", blocked_targets=["/z", "/a"])
    [after] = apply_calibration([before], cal)
    assert after.blocked_targets == ["/z", "/a"] and after.blocked_tools == ["glob"]
    assert after.context == cal.text + "\n\nprevious output"
    assert apply_calibration([before], Calibration())[0].context == "previous output"


# --------------------------------------------------------------------------- properties
sop_st = st.builds(
    sop,
    mid=st.text("abcdef", min_size=1, max_size=4),
    sigma=st.floats(-1.0, 1.0, allow_nan=False),
    content=st.sampled_from(["", "a", "b", "c", "d"]),
    f=st.floats(0.0, 1.0, allow_nan=False),
)
pair_st = st.builds(
    pair,
    tool=st.sampled_from(["shell", "glob", "read_file"]),
    target=st.sampled_from(["/a", "/b", "/c", "/d/e", "/f"]),
    decision=st.floats(-5.0, 5.0, allow_nan=False),
    action=st.sampled_from(["avoid", "avoid", "caution", "ignore"]),
)
recall_st = st.builds(
    recall,
    action=st.sampled_from(["exploit", "avoid", "caution", "ignore"]),
    sops=st.lists(sop_st, max_size=14, unique_by=lambda m: m.id),
    avoid=st.lists(pair_st, max_size=14),
    attention=st.floats(0.0, 10.0),
    decision=st.floats(-5.0, 5.0),
)
directive_st = st.one_of(
    st.none(),
    st.builds(
        directive,
        tools=st.lists(st.sampled_from(["shell", "glob", "ls"]), max_size=4),
        targets=st.lists(st.sampled_from(["/a", "/b", "/x"]), max_size=4),
    ),
)


@given(rc=recall_st, dr=directive_st, data=st.data())
def test_calibration_is_deterministic(
    rc: MemoryRecall, dr: PlanDirective | None, data: st.DataObject
) -> None:
    cal = calibrate(rc, dr)
    assert calibrate(rc, dr) == cal
    shuffled = MemoryRecall(
        space=rc.space,
        entity=rc.entity,
        action=rc.action,
        attention=rc.attention,
        decision=rc.decision,
        sops=data.draw(st.permutations(rc.sops)),
        avoid=data.draw(st.permutations(rc.avoid)),
    )
    assert calibrate(shuffled, dr) == cal


@given(rc=recall_st, dr=directive_st)
def test_calibration_caps_memory_and_keeps_the_directive(
    rc: MemoryRecall, dr: PlanDirective | None
) -> None:
    bare = calibrate(rc)
    assert len(bare.should_prefer) + len(bare.must_not) + len(bare.caution) <= MEMORY_CAP
    cal = calibrate(rc, dr)
    assert len(set(cal.must_not)) == len(cal.must_not)
    assert set(cal.blocked_targets) <= set(cal.must_not)
    assert set(cal.blocked_tools) <= set(cal.must_not)
    if dr is not None:
        assert set(dr.blocked_tools) <= set(cal.blocked_tools)
        assert set(dr.blocked_targets) <= set(cal.blocked_targets)
    assert len(cal.lines()) == len(cal.should_prefer) + len(cal.must_not) + len(cal.caution)
    # every blocked tool is enforced: a subtask using it is rejected
    for tool in cal.blocked_tools:
        assert validate_plan([subtask("s", "", [tool])], cal)
    for target in cal.blocked_targets:
        assert validate_plan([subtask("s", f"look at {target} please")], cal)


def test_tool_space_caution_pairs_become_caution_targets() -> None:
    recall = MemoryRecall(
        space="intent:x",
        entity="env:local",
        caution=[
            TagPotential(
                space="tool:shell", entity="path:data/x.csv", attention=0.9, decision=0.1,
                action="caution",
            )
        ],
    )  # fmt: skip
    cal = calibrate(recall)
    assert cal.caution_targets == ["data/x.csv"] and cal.blocked_targets == []
    assert any("shell on data/x.csv" in line for line in cal.caution)
