"""What-if: `artoo replay --rerun --set KEY=VALUE` reruns a recorded task under a changed
Config with the recorded answers, and names the first decision the change alters."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from artoo.cli import main
from artoo.eventstore import EventLog
from artoo.replay import ForkOrigin, fork, fork_origin, read_store, rerun
from artoo.replay._rerun import with_settings
from artoo.schemas import (
    Config,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    SubTaskOutcome,
)
from artoo.testing import write_script

DEMO_WORKSPACE = Path(__file__).parents[2] / "artoo" / "demo_data" / "workspace"


def _logged(store: Path) -> list[Envelope]:
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read())


@pytest.fixture(scope="module")
def change_path(demo_store: Path) -> tuple[Path, str, list[int]]:
    """The demo store, scenario 2's task (change_path → accept) and its decisions' seqs."""
    return _scenario(demo_store, "sales")


@pytest.fixture(scope="module")
def denied(demo_store: Path) -> tuple[Path, str, list[int]]:
    """The demo store, scenario 4's task (the denied delete: three replans, then abandon
    when the replan budget is spent) and its decisions' seqs."""
    return _scenario(demo_store, "old log")


def _scenario(store: Path, word: str) -> tuple[Path, str, list[int]]:
    _, tasks = read_store(store)
    task = next(t for t in tasks if word in t.text)
    decisions = [e.seq for e in task.envelopes if isinstance(e.body, GGSDecision)]
    return store, task.task_id, decisions


def test_a_changed_weight_names_the_first_decision_it_changes(
    change_path: tuple[Path, str, list[int]],
) -> None:
    store, task, decisions = change_path
    report = rerun(store, task, settings=["ggs.alpha=0.1"])
    d = report.divergence
    assert d is not None and (d.seq, d.kind) == (decisions[0], "GGSDecision")
    assert [p for p, _, _ in d.diff] == ["body.loss"]
    assert report.reran[0]["recorded_path"] == ["change_path", "accept"]


def test_a_larger_replan_budget_changes_the_budget_decision_and_stops_at_round_4(
    denied: tuple[Path, str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Scenario 4 ends when its replan budget is spent (3 of 3; it would have been
    break_symmetry). Under a budget of 4 a replan weighs less in Ω, so the first decision
    after a replan is the first to change; the last decision replans instead of ending,
    and that replan needs a planner answer nobody recorded: the what-if stops there and
    says so."""
    store, task, decisions = denied
    report = rerun(store, task, settings=["ggs.max_replans=4"])
    d = report.divergence
    assert d is not None and (d.seq, d.role, d.kind) == (decisions[1], "ggs", "GGSDecision")
    assert [p for p, _, _ in d.diff] == ["body.omega", "body.loss", "body.grad"]
    [(_, was, now)] = [x for x in d.diff if x[0] == "body.omega"]
    assert now == pytest.approx(was - 0.6 * (1 / 3 - 1 / 4), abs=1e-3)  # w1 × 1/budget
    [end] = report.reran
    assert end["recorded_path"] == ["change_path", "change_approach", "break_symmetry", "abandon"]
    assert end["path"] == ["change_path", "change_approach", "break_symmetry", "break_symmetry"]
    assert end["stopped"] == "no recorded answer: model call of planner"  # nothing made up
    assert report.unanswered == ["no recorded answer: model call of planner"]
    code = main(["replay", str(store), "--task", task, "--rerun", "--set", "ggs.max_replans=4"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"first divergence at seq {decisions[1]} ggs GGSDecision" in out
    assert "rerun change_path → change_approach → break_symmetry → break_symmetry, then " in out
    assert "no recorded answer: model call of planner" in out


def test_a_threshold_no_decision_comes_near_changes_nothing(
    change_path: tuple[Path, str, list[int]],
) -> None:
    store, task, _ = change_path
    report = rerun(store, task, settings=["ggs.theta=0.9"])  # Ω stays near 0.2
    assert report.ok and report.reran[0]["path"] == report.reran[0]["recorded_path"]


def test_a_what_if_needing_an_answer_the_log_lacks_stops_and_says_so(
    change_path: tuple[Path, str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, task, _ = change_path
    code = main(["replay", str(store), "--task", task, "--rerun", "--set", "max_retries=5"])
    out = capsys.readouterr().out
    assert code == 1
    assert "what-if max_retries=5:" in out
    assert "stopped where the log holds no answer (no model is asked):" in out
    assert "no recorded answer: model call of executor" in out


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("ggs.nope=1", "--set ggs.nope: no such Config field"),
        ("nope.x=1", "--set nope.x: 'nope' is not a Config section"),
        ("ggs.alpha", "--set wants key=value, not 'ggs.alpha'"),
        ('ggs.alpha="0.5"', "--set: ggs.alpha"),
    ],
)
def test_bad_settings_are_one_line_errors(setting: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        with_settings(Config(), [setting])
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# --------------------------------------------------------------------------- fork
LIVE = [
    {  # the second derivation, afresh: python adds the column again
        "role": "executor",
        "match": "another method",
        "tool_calls": [
            {
                "name": "shell",
                "arguments": {
                    "command": "python3 -c \"import csv; print(sum(int(r['amount']) for r in "
                    "csv.DictReader(open('data/sales.csv'))))\""
                },
            }
        ],
    },
    {"role": "executor", "match": "another method", "content": "4250"},
    {  # the fourth attempt: the file that exists, added up (read_file, which failed on
        # the missing file twice, is refused as a repeated failure)
        "role": "executor",
        "tool_calls": [
            {
                "name": "shell",
                "arguments": {
                    "command": "awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv"
                },
            },
        ],
    },
    {
        "role": "executor",
        "content": "The total of the sales figures is 4250 (from data/sales.csv).",
    },
]


def test_a_what_if_goes_on_live_into_a_fork_that_names_its_parent(
    change_path: tuple[Path, str, list[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under max_retries=5 the recorded run has no fourth attempt of round 0: with --model
    the live model makes it, its tools run for real in the workspace, the second
    derivation is asked of it afresh, and the fork's log starts as the parent's."""
    store, task, _ = change_path
    recorded = [e for e in _logged(store) if e.task_id == task]
    first_outcome = next(e.seq for e in recorded if isinstance(e.body, SubTaskOutcome))
    workspace = Path(shutil.copytree(DEMO_WORKSPACE, tmp_path / "ws"))
    model = write_script(tmp_path / "live.toml", LIVE)
    into = tmp_path / "fork"
    report = fork(
        store, task, model=model, into=into, workspace=workspace, settings=["max_retries=5"]
    )
    d = report.divergence  # round 0's third attempt: retried now, not given on as failed
    assert d is not None and (d.seq, d.kind) == (first_outcome, "SubTaskOutcome")
    [end] = report.reran
    assert end["path"] == ["accept"] and end["recorded_path"] == ["change_path", "accept"]
    assert end["status"] == "accept" and end["recorded_status"] == "accept"
    assert end["live_from"].startswith("no recorded answer: model call of executor")
    origin = fork_origin(into)
    parent = _logged(store)
    first = next(e.seq for e in parent if e.task_id == task)
    assert origin == ForkOrigin(
        parent=str(store.resolve()), seq=first - 1, task_id=task,
        settings=["max_retries=5"], model=model,
    )  # fmt: skip
    forked = _logged(into)
    assert forked[: first - 1] == parent[: first - 1]  # the parent's log up to the task
    live = [e.body for e in forked if isinstance(e.body, LLMCall) and e.body.model == model]
    assert [c.role for c in live] == ["executor"] * 4
    calls = [c for e in forked if isinstance(e.body, ExecutionResult) for c in e.body.tool_calls]
    awk, python = calls[-2:]  # each ran for real in the workspace
    assert (awk.stdout or "").strip() == (python.stdout or "").strip() == "4250"
    assert (awk.conversation, python.conversation) == (0, 1)  # the second one afresh
    final = [e.body for e in forked if isinstance(e.body, FinalResult)][-1]  # the fork's task
    assert (final.status, final.established) == ("accept", "code")
    assert fork_origin(store) is None
    assert main(["replay", str(into)]) == 0
    assert f"forked from {store.resolve()} at seq {first - 1}" in capsys.readouterr().out


def test_fork_refuses_a_store_that_exists_and_bad_flags(
    change_path: tuple[Path, str, list[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, task, _ = change_path
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    with pytest.raises(ValueError, match="already exists and is not empty"):
        fork(store, task, model="scripted:x", into=tmp_path / "taken", workspace=tmp_path)
    assert main(["replay", str(store), "--rerun", "--model", "scripted:x"]) == 2
    assert "--model goes on live from one task" in capsys.readouterr().err
    assert main(["replay", str(store), "--rerun", "--fork", str(tmp_path / "f")]) == 2
    assert "--fork needs --model" in capsys.readouterr().err
