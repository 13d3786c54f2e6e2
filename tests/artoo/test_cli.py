"""The command line, run in-process through ``artoo.cli.main`` and as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from artoo.cli import build_parser, main
from artoo.demo import SCENARIOS, run_scenario
from artoo.eventstore.megrams import MegramStore
from artoo.memoryview import memory_rows, rebuild_memory

from .helpers import DATA


def test_help_lists_every_command() -> None:
    text = build_parser().format_help()
    for command in ("run", "demo", "memory", "dream", "repl", "version"):
        assert command in text


def test_run_prints_json_and_exits_by_status(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = DATA / "scenarios" / "1_success.toml"
    code = main(
        [
            "run",
            "count the python files under src",
            "--store",
            str(tmp_path / "s"),
            "--model",
            f"scripted:{script}",
            "--workspace",
            str(workspace),
            "--json",
        ]
    )
    out = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(out)
    assert code == 0
    assert result["status"] == "accept"
    assert "3 python files" in result["output"]
    # the Perceiver and the Executor's two turns: a question's first round is the request
    # itself (no Planner call); code counts the files, so no second derivation is asked
    assert result["cost"]["model_calls"] == 3


def test_run_exits_1_on_abandon(tmp_path: Path, workspace: Path) -> None:
    script = DATA / "scenarios" / "4_law1_denied.toml"
    code = main(
        [
            "run",
            "delete the old log",
            "--store",
            str(tmp_path / "s"),
            "--model",
            f"scripted:{script}",
            "--workspace",
            str(workspace),
        ]
    )
    assert code == 1
    assert (workspace / "archive" / "old.log").exists()


def test_run_without_a_model_says_how_to_set_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for var in ("ARTOO_MODEL", "ARTOO_BRAIN_MODEL", "ARTOO_TOOL_MODEL"):
        monkeypatch.delenv(var, raising=False)
    code = main(["run", "anything", "--store", str(tmp_path / "s")])
    assert code == 2
    assert "ARTOO_MODEL" in capsys.readouterr().err


def test_memory_shows_potentials_and_rebuild_recomputes_them(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    for scenario in SCENARIOS[:3]:
        run_scenario(scenario, store, workspace)
    now = 1e10  # far future: same answer for both reads, whatever the wall clock does
    before = memory_rows(store, now)
    assert main(["memory", str(store)]) == 0
    shown = capsys.readouterr().out
    assert (
        "intent:figures-of-report-sales-the-this-total-year" in shown and "tool:read_file" in shown
    )
    n = rebuild_memory(store)
    assert n == 4  # three terminal megrams and one for the blocked target of scenario 2
    assert memory_rows(store, now) == before
    assert main(["memory", str(store), "--rebuild"]) == 0


def test_dream_runs_a_pass_that_consolidates_six_accepts(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    success = SCENARIOS[0]
    for _ in range(6):
        run_scenario(success, store, workspace)
    assert main(["dream", str(store)]) == 0
    assert "dream pass:" in capsys.readouterr().out
    with MegramStore.open(store / "memory") as megrams:
        sops = megrams.query_c("intent:count-files-python-src-the-under", "env:local")
    assert len(sops) == 1
    assert sops[0].level == "C" and sops[0].sigma > 0


def test_a_second_process_gets_a_clear_error_for_a_held_store(
    tmp_path: Path, workspace: Path
) -> None:
    """A command that writes (dream) is refused; the readers read live
    (tests/artoo/test_live_inspection.py)."""
    import artoo

    script = DATA / "scenarios" / "1_success.toml"
    store = tmp_path / "store"
    with artoo.System.open(store, model=f"scripted:{script}", workspace=workspace):
        proc = subprocess.run(
            [sys.executable, "-m", "artoo.cli", "dream", str(store)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    assert "in use" in proc.stderr and str(store) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_not_a_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(tmp_path / "nothing-here")]) == 2
    assert "not an artoo store" in capsys.readouterr().err


def test_run_shows_live_progress_and_cost(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = DATA / "scenarios" / "2_change_path.toml"
    code = main(
        [
            "run",
            "report the total of this year's sales figures",  # the scenario's own request
            "--store",
            str(tmp_path / "s"),
            "--model",
            f"scripted:{script}",
            "--workspace",
            str(workspace),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    # round 0 is the request itself; it reads a file that does not exist
    assert "plan (round 0):\n  1. report the total of this year's sales figures" in out
    assert "read_file(path='data/sales_2024.csv')" in out  # each command, as it runs
    assert "GGS round 0: change_path" in out and "GGS round 1: accept" in out
    assert "must not: data/sales_2024.csv" in out  # the round-1 plan
    # round 1's total, one read's word, is derived once more, afresh: two model calls more
    assert "second derivation of 4250 asked" in out
    # the Perceiver, round 0's six Executor turns, the Planner, round 1's two, and two afresh
    assert "accept:" in out and "12 model calls" in out and "1 replans" in out
    assert "established by code: 4250 by `awk" in out


def test_demo_passes_and_clean_removes_its_temp_dir_but_keeps_a_named_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    store = tmp_path / "store"
    assert main(["demo", "--store", str(store), "--clean"]) == 0
    out = capsys.readouterr().out
    assert "all scenarios as expected" in out
    assert list(temp.iterdir()) == []  # the workspace went with its temp dir
    assert (store / "events" / "CURRENT").exists()


def test_demo_keeps_its_temp_dir_by_default_even_when_a_scenario_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import artoo.demo as demo

    def boom(store: Path, workspace: Path, console: object) -> int:
        workspace.mkdir(parents=True)
        raise RuntimeError("scenario failed")

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(demo, "_run_all", boom)
    with pytest.raises(RuntimeError):
        demo.run_demo()
    (kept,) = tmp_path.glob("artoo-demo-*")
    assert (kept / "workspace").is_dir()
    assert f"kept {kept}: inspect the log with `artoo memory {kept / 'store'}`" in (
        capsys.readouterr().out
    )
    with pytest.raises(RuntimeError):
        demo.run_demo(clean=True)
    assert list(tmp_path.glob("artoo-demo-*")) == [kept]  # the second one was removed


@pytest.mark.parametrize(("answer", "kept", "code"), [("y", False, 0), ("", True, 1)])
def test_run_confirm_ask_shows_the_effects_and_follows_the_answer(
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    kept: bool,
    code: int,
) -> None:
    from artoo.testing import write_script

    from .helpers import delete_log_entries

    model = write_script(tmp_path / "s.toml", delete_log_entries(plans=7))
    prompts: list[str] = []

    def typed(prompt: str) -> str:
        prompts.append(prompt)
        return answer

    monkeypatch.setattr("builtins.input", typed)
    args = ["run", "delete the old log", "--store", str(tmp_path / "store"), "--model", model]
    args += ["--workspace", str(workspace), "--confirm", "ask"]
    assert main(args) == code
    out = capsys.readouterr().out
    assert prompts == ["approve? [y/N] "]
    assert "confirmation needed (law1): rm archive/old.log" in out
    assert "deleted   archive/old.log" in out  # what the sandbox saw the command do
    assert (workspace / "archive" / "old.log").exists() is kept
