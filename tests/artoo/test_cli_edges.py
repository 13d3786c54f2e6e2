"""The command line's edges: each bad input is one clear line, never a silent no-op."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import artoo
from artoo._ids import match_task, short_ids
from artoo.cli import main
from artoo.replay import task_table

from .helpers import CONFIG


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("flag", [["--set", "ggs.delta=0.0"], ["--model", "scripted:x.toml"]])
def test_what_if_flags_without_rerun_are_an_error(
    demo_store: Path, flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(demo_store), *flag]) == 2
    assert "go with --rerun" in _one_line_error(capsys)


@pytest.mark.parametrize("command", ["export", "audit", "replay"])
def test_an_unknown_task_is_an_error(
    demo_store: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, str(demo_store), "--task", "NOPE"]) == 2
    assert "no task 'NOPE'" in _one_line_error(capsys)


def test_a_unique_prefix_names_a_task_everywhere(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [r.task_id for r in task_table(demo_store)]
    short = short_ids(ids)
    first = short[ids[0]]
    assert len(first) < len(ids[0]) and match_task(first.lower(), ids) == ids[0]
    for command in (["export"], ["audit"], ["replay"]):
        assert main([*command, str(demo_store), "--task", first]) == 0
        assert ids[0] in capsys.readouterr().out
    assert main(["diff", f"{demo_store}:{first}", f"{demo_store}:{short[ids[1]]}"]) == 0
    assert ids[0] in capsys.readouterr().out
    common = ids[0][:4]
    assert main(["export", str(demo_store), "--task", common]) == 2
    assert "ambiguous" in _one_line_error(capsys)


def test_export_into_a_closed_pipe_is_quiet(demo_store: Path) -> None:
    out = subprocess.run(
        f"{sys.executable} -m artoo export {demo_store} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.stdout.count("\n") == 1 and '"seq"' in out.stdout
    assert "Broken pipe" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_store_that_is_a_file_or_a_foreign_directory_is_refused(
    tmp_path: Path, workspace: Path
) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        artoo.System.open(tmp_path / "file", model="scripted:x", config=CONFIG)
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"...")
    with pytest.raises(ValueError, match=r"not an artoo store .* not empty \(holiday\.jpg\)"):
        artoo.System.open(foreign, env={}, config=CONFIG, workspace=workspace)
    assert sorted(p.name for p in foreign.iterdir()) == ["holiday.jpg"]  # untouched
    empty = tmp_path / "empty"
    empty.mkdir()
    with artoo.System.open(empty, env={}, config=CONFIG, workspace=workspace):
        pass
    assert (empty / "events").is_dir()


def test_store_on_a_file_from_the_cli_is_one_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    script = tmp_path / "s.toml"
    script.write_text('[[response]]\nrole = "perceiver"\ncontent = "x"\n')
    args = ["run", "hi", "--store", str(tmp_path / "file"), "--model", f"scripted:{script}"]
    assert main([*args, "--workspace", str(workspace)]) == 2
    assert "is a file" in _one_line_error(capsys)


def test_a_killed_tasks_row_says_what_happened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from artoo.eventstore import EventLog
    from artoo.schemas import Envelope, UserRequest

    store = tmp_path / "store"
    store.mkdir()
    with EventLog.open(store / "events", durability="none") as log:
        body = UserRequest(text="hi")
        log.append([Envelope(0, 1.0, "01TASK", "host", None, None, body)])
    assert main(["replay", str(store)]) == 0
    out = capsys.readouterr().out
    assert "(running)" not in out and "(no end)" in out and "interrupted" in out
