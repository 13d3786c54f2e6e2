"""The command line's configuration, up-front model checks, and its small faces."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from artoo._config import load_settings
from artoo.cli import main
from artoo.testing import write_script

from .helpers import CONFIG, PERCEIVE, all_events


def test_a_real_model_without_its_key_is_one_line_before_any_task(
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    args = ["run", "hi", "--store", str(store), "--workspace", str(workspace)]
    assert main([*args, "--model", "openai/gpt-4o-mini"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "OPENAI_API_KEY" in err[0] and "export" in err[0]
    assert not store.exists()  # nothing was logged: checked before the store is opened
    assert main([*args, "--model", "opnai/gpt-4o"]) == 2
    captured = capsys.readouterr()
    assert "unknown model 'opnai/gpt-4o'" in captured.err and len(captured.err.splitlines()) == 1
    assert "Provider List" not in captured.out + captured.err
    assert not store.exists()


def test_files_env_and_flags_merge_in_one_precedence(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.artoo]\nmax_retries = 1\nmax_parallel = 3\n[tool.artoo.ggs]\ndelta = 0.1\n"
    )
    (tmp_path / "artoo.toml").write_text('max_parallel = 5\nstore = "here"\n[ggs]\nrho = 0.4\n')
    env = {"ARTOO_MODEL": "openai/from-env", "ARTOO_STORE": "env-store"}
    s = load_settings(
        cwd=tmp_path, env=env, flags={"store": "flag-store", "model": None}, sets=["ggs.rho=0.2"]
    )
    assert (s.config.max_retries, s.config.max_parallel) == (1, 5)
    assert (s.config.ggs.delta, s.config.ggs.rho, s.config.model) == (0.1, 0.2, "openai/from-env")
    assert s.store == Path("flag-store")
    assert s.sources["max_retries"] == "pyproject.toml [tool.artoo]"
    assert s.sources["max_parallel"] == "artoo.toml"
    assert s.sources["model"] == "$ARTOO_MODEL"
    assert s.sources["store"] == "--store" and s.sources["ggs.rho"] == "--set"
    assert s.sources["ggs.theta"] == "default"
    with pytest.raises(ValueError, match=r"artoo\.toml: no such setting 'max_paralel'"):
        (tmp_path / "artoo.toml").write_text("max_paralel = 5\n")
        load_settings(cwd=tmp_path, env={})


def test_artoo_config_prints_each_value_and_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARTOO_MODEL", raising=False)
    (tmp_path / "artoo.toml").write_text('model = "openai/gpt-4o-mini"\n[ggs]\ndelta = 0.2\n')
    assert main(["config", "--set", "max_retries=4", "--api-base", "http://x/v1"]) == 0
    rows = {
        line.split("│")[1].strip(): line.split("│")[3].strip()
        for line in capsys.readouterr().out.splitlines()
        if line.count("│") >= 4
    }
    assert rows == {
        "api_base": "--api-base",
        "model": "artoo.toml",
        "max_retries": "--set",
        "ggs.delta": "artoo.toml",
    }


def test_run_takes_set_and_api_base(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}],
    )
    args = ["run", "hi", "--store", str(tmp_path / "store"), "--workspace", str(workspace)]
    args += ["--model", model, "--set", "max_retries=0", "--set", "ggs.delta=0.2", "--json"]
    assert main([*args, "--api-base", "http://127.0.0.1:1/v1"]) == 0
    from artoo.schemas import TaskRequest

    (request,) = [e.body for e in all_events(tmp_path / "store") if isinstance(e.body, TaskRequest)]
    assert request.config["max_retries"] == 0 and request.config["ggs"]["delta"] == 0.2


def test_timeout_is_honoured_even_when_a_model_call_runs_on(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [{**PERCEIVE, "delay_ms": 8000}],
    )
    args = ["run", "hi", "--store", str(tmp_path / "store"), "--workspace", str(workspace)]
    started = time.monotonic()
    assert main([*args, "--model", model, "--timeout", "1", "--quiet"]) == 1
    assert time.monotonic() - started < 3.0
    assert "deadline" in capsys.readouterr().out


def test_submit_and_run_take_the_same_deadline_argument(tmp_path: Path, workspace: Path) -> None:
    import artoo

    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}],
    )
    with artoo.System.open(tmp_path / "st", model=model, config=CONFIG, workspace=workspace) as s:
        assert s.submit("say hello", timeout=30).result(30).status == "success"  # free text
        with pytest.warns(DeprecationWarning, match="timeout"):
            handle = s.submit("say hello", deadline_s=30)
        assert handle.result(30).status == "success"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            s.submit("say hello", 30).result(30)


def test_version_and_python_m_artoo(capsys: pytest.CaptureFixture[str]) -> None:
    from artoo import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"artoo {__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "artoo", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"artoo {__version__}"


def test_json_lines_stream_every_envelope_then_the_result(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}],
    )
    args = ["run", "hi", "--store", str(tmp_path / "store"), "--workspace", str(workspace)]
    assert main([*args, "--model", model, "--jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [line["body"]["type"] for line in lines]
    assert kinds[0] == "UserRequest" and kinds[-1] == "FinalResult" and "GGSDecision" in kinds
    assert [line["seq"] for line in lines] == sorted(line["seq"] for line in lines)
