"""Ctrl-C during ``artoo run`` cancels the task cleanly; nothing starts after a cancel."""

from __future__ import annotations

import re
import signal
import sys
import time
from pathlib import Path

import pexpect
import pytest

from artoo.schemas import FinalResult, LLMCall, TaskCancelled
from artoo.testing import write_script

from .helpers import CONFIG, all_events


@pytest.mark.slow
def test_ctrl_c_ends_the_task_in_one_line_with_exit_130(tmp_path: Path, workspace: Path) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [
            {
                "role": "perceiver",
                "delay_ms": 20_000,  # a long model call, as a hosted model's can be
                "content": {"intent": "say hello", "kind": "question", "answer": "text"},
            }
        ],
    )
    args = ["-m", "artoo", "run", "say hello", "--store", str(tmp_path / "store")]
    args += ["--model", model, "--workspace", str(workspace)]
    child = pexpect.spawn(
        sys.executable,
        args,
        encoding="utf-8",
        timeout=30,
        cwd=tmp_path,
        # as a terminal's foreground job: a test run in the background (`pytest &`) has
        # SIGINT ignored, which the child would inherit (and Python then never interrupts)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    child.expect("reading the task")  # the spinner: the Perceiver's call is under way
    sent = time.monotonic()
    child.sendintr()
    child.expect(pexpect.EOF)
    took = time.monotonic() - sent
    child.close()
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before or "")
    assert child.exitstatus == 130, out
    assert took <= 1.0, f"took {took:.2f} s"
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    assert out.count("interrupted") == 1
    assert "abandon: cancelled" in out and "(Ctrl-C)" in out, out
    ends = [e for e in all_events(tmp_path / "store") if isinstance(e.body, FinalResult)]
    assert [e.body.reason for e in ends] == ["cancelled"]


def test_no_model_call_starts_after_a_cancel(tmp_path: Path, workspace: Path) -> None:
    import threading

    import artoo
    from artoo.schemas import TaskRequest

    model = write_script(
        tmp_path / "s.toml",
        [
            # an answer the Perceiver must repair: a second call would follow
            {"role": "perceiver", "delay_ms": 300, "content": "not json"},
            {
                "role": "perceiver",
                "content": {"intent": "say hello", "kind": "question", "answer": "text"},
            },
        ],
    )
    asked = threading.Event()
    with artoo.System.open(
        tmp_path / "store", model=model, config=CONFIG, workspace=workspace
    ) as system:
        system.subscribe(lambda env: asked.set() if isinstance(env.body, TaskRequest) else None)
        handle = system.submit("say hello")
        assert asked.wait(10)  # the Perceiver is in (or about to start) its first call
        handle.cancel()
        result = handle.result(10)
        assert system.flush(10)
    assert result.reason == "cancelled"
    events = all_events(tmp_path / "store")
    cancel = next(e.seq for e in events if isinstance(e.body, TaskCancelled))
    perceiver_calls = [e for e in events if isinstance(e.body, LLMCall)]
    assert len(perceiver_calls) <= 1  # the repair call was never made
    late = [e for e in perceiver_calls if e.seq > cancel and e.body.latency_ms < 250]
    assert late == []  # nothing logged after the cancel was a call started after it


def test_no_tool_call_starts_after_a_cancel(tmp_path: Path, workspace: Path) -> None:
    import artoo

    handles: list[artoo.TaskHandle] = []
    ran: list[str] = []

    def stop_now() -> str:
        """Cancel the task (as an operator would, mid-attempt)."""
        handles[0].cancel()
        return "cancelling"

    def record() -> str:
        """Record that it ran."""
        ran.append("record")
        return "recorded"

    model = write_script(
        tmp_path / "s.toml",
        [
            {"role": "perceiver", "content": {"intent": "x", "kind": "change"}},
            {"role": "planner", "content": {"subtasks": [{"instruction": "Do it"}]}},
            {"role": "executor", "tool_calls": [{"name": "stop_now"}, {"name": "record"}]},
            {"role": "executor", "times": 0, "content": "done"},
        ],
    )
    with artoo.System.open(
        tmp_path / "store", model=model, config=CONFIG, workspace=workspace,
        tools=[stop_now, record],
    ) as system:  # fmt: skip
        handles.append(system.submit("do it", timeout=60))
        result = handles[0].result(30)
    assert result.reason == "cancelled"
    assert ran == []  # the second call of the same answer never started
