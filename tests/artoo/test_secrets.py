"""Secrets never reach the model, the bus, the event log or spill/."""

from __future__ import annotations

from pathlib import Path

import pytest

import artoo
from artoo.schemas import ExecutionResult
from artoo.testing import write_script

from .helpers import CONFIG, PERCEIVE

HOST_KEY = "sk-host-0123456789abcdef"
OPTION_KEY = "sk-option-fedcba9876543210"


def test_no_key_in_the_log_or_spill_after_a_task_that_runs_env(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", HOST_KEY)
    (workspace / "leak.txt").write_text(f"the option key is {OPTION_KEY}\n")
    entries = [
        PERCEIVE,
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "env; echo $OPENAI_API_KEY"}},
                {"name": "read_file", "arguments": {"path": "leak.txt"}},
                {"name": "shell", "arguments": {"command": "cat leak.txt; printenv | wc -l"}},
            ],
        },
        {"role": "executor", "times": 0, "content": "done"},
    ]
    store = tmp_path / "store"
    with artoo.System.open(
        store,
        model=write_script(tmp_path / "s.toml", entries),
        workspace=workspace,
        config=CONFIG,
        model_options={"api_key": OPTION_KEY, "api_base": "http://127.0.0.1:1"},
    ) as system:
        result = system.run("show the environment", timeout=30)
        seen = [e for e in system.log.read()]
    assert result.status == "success", result.summary  # a free-text answer: never accept
    outputs = [
        c.output_preview
        for e in seen
        if isinstance(e.body, ExecutionResult)
        for c in e.body.tool_calls
    ]
    assert any("[REDACTED]" in o for o in outputs)  # the tools did see them, and said so
    raw = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert raw, "the store holds files"
    for secret in (HOST_KEY, OPTION_KEY):
        assert secret.encode() not in raw
