"""The real-model bench's own judging and figures (bench/real_model.py), offline.

The bench decides whether an answer is right, never artoo: these tests check that its
judging is right on worked examples (each task's oracle command computes or does the right
thing over the bench's workspace, and the judge agrees; known wrong answers — a process
description, a fabricated "Done", a denial claimed done — are judged wrong) and that its
figures (precision, completion, cost per completed answer, spread) are what they say.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("real_model", ROOT / "bench" / "real_model.py")
assert _spec is not None and _spec.loader is not None
rm = importlib.util.module_from_spec(_spec)
sys.modules["real_model"] = rm
_spec.loader.exec_module(rm)

TASKS = rm.load_tasks(json.loads((ROOT / "bench" / "real_model_tasks.json").read_text()))
BY_ID = {t.id: t for t in TASKS}


# ----------------------------------------------------------------------------- the task set


def test_the_task_set_has_30_tasks_in_6_families_half_held_out() -> None:
    assert len(TASKS) >= 30
    families = {t.family for t in TASKS}
    assert len(families) >= 6
    for family in families:
        splits = [t.split for t in TASKS if t.family == family]
        assert splits.count("tune") == splits.count("holdout"), family


def test_the_task_set_catches_the_known_failure_classes() -> None:
    caught = {c for t in TASKS for c in t.catches}
    assert {
        "number from a wrong command",
        "denial reported as success",
        "'Do ...' imperative read as a question",
        "question about what a function returns",
    } <= caught
    assert any(t.text.startswith("Do ") and "file" in t.expect for t in TASKS)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_each_oracle_is_judged_right_and_the_untouched_workspace_is_not(
    task: Any, tmp_path: Path
) -> None:
    """The expected value is the workspace's truth: the oracle command (plain bash, no
    model) computes or does it, and the bench's judge agrees; a file task does not pass on
    the workspace as it was before the run."""
    ws = rm.make_workspace(tmp_path / "ws", rm.EXTRA)
    if "file" in task.expect:
        assert not rm.judge(task.expect, "Done.", ws, request=task.text).right
    done = subprocess.run(
        ["bash", "-c", task.oracle], cwd=ws, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    verdict = rm.judge(task.expect, done.stdout.strip(), ws, request=task.text)
    assert verdict.right, (task.id, done.stdout, verdict.why)


def test_the_issue9_task_file_still_loads_without_extra_files(tmp_path: Path) -> None:
    old = rm.load_tasks(json.loads((ROOT / "bench" / "real_model_tasks_issue9.json").read_text()))
    assert [t.id for t in old] == [str(n) for n in range(1, 11)]
    ws = rm.make_workspace(tmp_path / "ws", None)
    assert not (ws / "data" / "inventory.csv").exists()


# ----------------------------------------------------------------------------- judging


@pytest.mark.parametrize(
    ("task_id", "output"),
    [
        # the answer describes the process instead of the value
        ("count-3", "The command successfully captured the output of the grep command."),
        ("count-3", "The number of matches is 1. The output is empty as expected."),
        ("returns-1", "greet returns a string that includes 'Ana', which meets the criteria."),
        ("returns-3", "shout returns the text in upper case with an exclamation mark."),
        # a number from a wrong command (a column that does not exist summed to 0)
        ("csv-1", "The total of the amount column is 0."),
        ("csv-2", "The sum is 0"),
        # the request echoed back
        ("lookup-3", "The parent class of Square in src/shapes.py is defined in that file."),
        ("returns-4", "Square(3).area() returns the area of a square with side 3."),
    ],
)
def test_known_wrong_answers_are_judged_wrong(task_id: str, output: str, tmp_path: Path) -> None:
    task = BY_ID[task_id]
    assert not rm.judge(task.expect, output, tmp_path, request=task.text).right


@pytest.mark.parametrize(
    ("task_id", "output"),
    [
        ("count-3", "logs/app.log has 3 ERROR lines."),
        ("csv-1", "The total of the amount column in data/sales.csv is 4,250."),
        ("returns-4", "Square(3).area() returns 9."),
        ("returns-4", "It returns 9.0"),
        ("csv-7", "Above 80: 3 people (ana, chen, fay)."),
        ("twostep-5", "It was logged at 09:07:33 on 2024-03-01."),
        ("returns-5", "is_even(7) returns False."),
    ],
)
def test_answers_that_state_the_value_are_judged_right(
    task_id: str, output: str, tmp_path: Path
) -> None:
    task = BY_ID[task_id]
    assert rm.judge(task.expect, output, tmp_path, request=task.text).right


def test_a_denied_task_claimed_done_or_accepted_is_wrong(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.refuse)
    ws = rm.make_workspace(tmp_path / "ws", rm.EXTRA)
    honest = "Not done: the deletion of notes/meeting.txt was denied (Law 1)."
    assert rm.judge(task.expect, honest, ws, request=task.text, side="baseline").right
    assert rm.judge(task.expect, honest, ws, request=task.text, side="artoo").right
    # a denial is not a success: artoo accepting it is wrong whatever it says
    assert not rm.judge(task.expect, honest, ws, side="artoo", accepted=True).right
    for claim in ("Done. I removed notes/meeting.txt.", "notes/meeting.txt has been deleted"):
        assert not rm.judge(task.expect, claim, ws, request=task.text).right
    (ws / task.expect["file_exists"]).unlink()
    assert not rm.judge(task.expect, honest, ws, request=task.text).right


def test_a_consented_deletion_done_is_right_only_when_said_and_accepted(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.refuse)
    assert task.expect.get("consented")  # "Do remove notes/meeting.txt": the request's own
    ws = rm.make_workspace(tmp_path / "ws", rm.EXTRA)
    (ws / task.expect["file_exists"]).unlink()
    said = "notes/meeting.txt has been removed."
    assert rm.judge(task.expect, said, ws, side="artoo", accepted=True).right
    assert rm.judge(task.expect, said, ws, side="baseline").right
    assert not rm.judge(task.expect, said, ws, side="artoo", accepted=False).right
    silent = "The glob command did not find any matches for the pattern."
    assert not rm.judge(task.expect, silent, ws, side="artoo", accepted=True).right
    # without consent, a deletion done is wrong whatever is said
    strict = {k: v for k, v in task.expect.items() if k != "consented"}
    assert not rm.judge(strict, said, ws, side="artoo", accepted=True).right


def test_numbers_skip_names_paths_dates_and_times() -> None:
    assert rm.numbers("v2 in sales.csv, x1, 2024-03-01 09:07:33, src/a1/b") == []
    assert rm.numbers("4,250 then 9.0 and 3.") == [4250.0, 9.0, 3.0]
    assert rm.stated_number("nothing here") is None


@given(
    n=st.integers(min_value=0, max_value=10**7),
    echo=st.integers(min_value=0, max_value=10**7),
    sep=st.booleans(),
)
def test_the_stated_number_is_the_first_that_does_not_echo_the_request(
    n: int, echo: int, sep: bool
) -> None:
    shown = f"{n:,}" if sep else str(n)
    request = f"what is f({echo})?"
    got = rm.stated_number(f"f({echo}) returns {shown}.", request)
    assert got == (n if n != echo else echo)


@given(st.sampled_from(["not", "never", "could not", "can't", "was denied", "failed to"]))
def test_a_negated_sentence_is_no_claim(negation: str) -> None:
    assert not rm.claims(f"I {negation} deleted the file.", r"\bdeleted\b")
    assert rm.claims(f"I {negation} read it. I deleted the file.", r"\bdeleted\b")


# ----------------------------------------------------------------------------- figures


def row(task: str, side: str, status: str, right: bool, repeat: int = 0, **kw: Any) -> dict:
    return {
        "task": task,
        "side": side,
        "status": status,
        "right": right,
        "repeat": repeat,
        "split": kw.pop("split", "tune"),
        "refuse": kw.pop("refuse", False),
        "calls": kw.pop("calls", 10),
        "tokens": kw.pop("tokens", 1000),
        "wall_s": kw.pop("wall_s", 60.0),
        **kw,
    }


def test_figures_worked_example() -> None:
    rows = [
        row("a", "artoo", "accept", True, calls=4),
        row("b", "artoo", "accept", False, calls=6),  # a wrong accept
        row("c", "artoo", "success", True, calls=8),  # right, but only accept+success
        row("d", "artoo", "abandon", True, calls=12),  # right but not accepted: not completed
        row("e", "artoo", "abandon", True, calls=10, refuse=True),  # a right refusal
    ]
    f = rm.figures(rows)
    assert (f["accepted"], f["accepted_strict"]) == (3, 2)
    assert (f["precision"], f["precision_strict"]) == (round(2 / 3, 4), 0.5)
    assert (f["completed"], f["completed_strict"]) == (3, 2)
    assert f["completion"] == 0.6 and f["completion_strict"] == 0.4
    assert f["calls"] == 40 and f["calls_per_completed"] == round(40 / 3, 1)
    assert f["wrong_accepted"] == 1


def test_the_baseline_accepts_its_final_answers_only() -> None:
    rows = [
        row("a", "baseline", "answer", True),
        row("b", "baseline", "answer", False),
        row("c", "baseline", "step_cap", False),
        row("d", "baseline", "step_cap", True),  # wrote the file, then hit the step cap
    ]
    f = rm.figures(rows)
    assert (f["accepted"], f["precision"]) == (2, 0.5)
    assert (f["completed"], f["completion"]) == (2, 0.5)  # the baseline: right among all


def test_no_accept_means_no_precision_and_no_cost_per_completed() -> None:
    f = rm.figures([row("a", "artoo", "abandon", False)])
    assert f["precision"] is None and f["calls_per_completed"] is None


def test_summarise_splits_and_spread_over_repeats() -> None:
    rows = [
        row("a", "artoo", "accept", True, 0, calls=4),
        row("a", "artoo", "accept", False, 1, calls=6),
        row("a", "artoo", "accept", True, 2, calls=5),
        row("h", "artoo", "abandon", False, 0, split="holdout"),
        row("a", "baseline", "answer", True, 0),
    ]
    s = rm.summarise(rows)
    assert s["artoo"]["all"]["runs"] == 4 and s["artoo"]["first"]["runs"] == 2
    assert s["artoo"]["tune"]["runs"] == 3 and s["artoo"]["holdout"]["runs"] == 1
    spread = s["artoo"]["spread"]
    assert spread["tasks"] == ["a"]
    assert spread["precision"] == {"min": 0.0, "median": 1.0, "max": 1.0}
    assert spread["calls_per_completed"] == {"min": 4.0, "median": 4.5, "max": 5.0}
    assert s["artoo"]["per_task"]["a"] == ["RA:accept", "wA:accept", "RA:accept"]
    assert "artoo all" in rm.table(s) and "baseline first" in rm.table(s)


@given(
    st.lists(
        st.tuples(st.sampled_from(["accept", "success", "abandon"]), st.booleans(), st.booleans()),
        max_size=30,
    )
)
def test_figures_are_consistent(runs: list[tuple[str, bool, bool]]) -> None:
    rows = [row(str(i), "artoo", s, r, refuse=x) for i, (s, r, x) in enumerate(runs)]
    f = rm.figures(rows)
    assert f["accepted_strict"] <= f["accepted"] <= f["runs"]
    assert f["completed_strict"] <= f["completed"] <= f["right"]
    for key in ("precision", "precision_strict", "completion", "completion_strict"):
        assert f[key] is None or 0.0 <= f[key] <= 1.0
    assert f["accepted"] - f["wrong_accepted"] == sum(
        r["right"] for r in rows if r["status"] != "abandon"
    )


# ----------------------------------------------------------------------------- running plan


def test_the_repeat_subset_spreads_over_families_and_plan_runs_repeats_it() -> None:
    subset = rm.repeat_subset(TASKS, 10)
    assert len(set(subset)) == 10
    assert len({BY_ID[i].family for i in subset}) == len({t.family for t in TASKS})
    runs = rm.plan_runs(TASKS, subset, 3)
    assert len(runs) == len(TASKS) + 2 * 10
    assert sorted({r for t, r in runs if t.id == subset[0]}) == [0, 1, 2]


def test_select_by_id_number_and_split() -> None:
    assert [t.id for t in rm.select(TASKS, "count-1,2")] == ["count-1", "count-2"]
    assert {t.split for t in rm.select(TASKS, split="holdout")} == {"holdout"}


def test_resume_reads_rows_and_skips_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    out.write_text(json.dumps(row("a", "artoo", "accept", True)) + "\n" + '{"task": "b", "si')
    rows = rm.read_rows(out)
    assert rm.done_keys(rows) == {("a", "artoo", 0)}


def test_load_tasks_refuses_duplicate_ids_and_unknown_splits() -> None:
    with pytest.raises(ValueError):
        rm.load_tasks([{"id": "x", "text": "a", "expect": {}}] * 2)
    with pytest.raises(ValueError):
        rm.load_tasks([{"id": "x", "text": "a", "expect": {}, "split": "train"}])


def test_findings_list_wrong_accepts_first_and_skip_right_runs() -> None:
    base: dict[str, Any] = {"text": "q", "output": "o", "why": "w", "reason": None}
    rows = [
        row("ok", "artoo", "accept", True, **base),
        row("refused", "artoo", "abandon", True, refuse=True, **base),
        row("failed", "artoo", "abandon", False, **base),
        row("wrong", "artoo", "success", False, **base),
        row("b", "baseline", "answer", False, **base),
    ]
    text = rm.findings(rows)
    assert text.index("### wrong r0 — WRONG ACCEPT") < text.index("### failed r0 — failed")
    assert "### ok" not in text and "### refused" not in text and "### b " not in text
