"""What-if: `artoo replay --rerun --set KEY=VALUE` reruns a recorded task under a changed
Config with the recorded answers, and names the first decision the change alters."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from artoo.cli import main
from artoo.demo import run_demo
from artoo.replay import read_store, rerun
from artoo.replay._rerun import with_settings
from artoo.schemas import Config, GGSDecision


@pytest.fixture(scope="module")
def change_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The demo store, scenario 2's task (change_path → accept) and its first decision."""
    store = tmp_path_factory.mktemp("whatif") / "store"
    assert run_demo(store, Console(file=io.StringIO())) == 0
    _, tasks = read_store(store)
    task = next(t for t in tasks if "sales" in t.text)
    first = next(e.seq for e in task.envelopes if isinstance(e.body, GGSDecision))
    return store, task.task_id, first


def test_a_changed_weight_names_the_first_decision_it_changes(
    change_path: tuple[Path, str, int],
) -> None:
    store, task, first = change_path
    report = rerun(store, task, settings=["ggs.alpha=0.1"])
    d = report.divergence
    assert d is not None and (d.seq, d.kind) == (first, "GGSDecision")
    assert [p for p, _, _ in d.diff] == ["body.loss"]
    assert report.reran[0]["recorded_path"] == ["change_path", "accept"]


def test_a_setting_no_decision_depends_on_here_changes_nothing(
    change_path: tuple[Path, str, int],
) -> None:
    store, task, _ = change_path
    report = rerun(store, task, settings=["ggs.delta=0.0"])  # D is 1 or 0 in this task
    assert report.ok and report.reran[0]["path"] == report.reran[0]["recorded_path"]


def test_a_what_if_needing_an_answer_the_log_lacks_stops_and_says_so(
    change_path: tuple[Path, str, int], capsys: pytest.CaptureFixture[str]
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
