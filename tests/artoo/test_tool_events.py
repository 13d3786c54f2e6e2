"""Tool calls are events: each ToolCall is logged the moment the call ends (ToolCallEnded),
with its place in the attempt, what the model was shown and a command's streams — so a
process killed after a call changed the workspace, before the attempt ended, still has it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import artoo
from artoo.eventstore import EventLog
from artoo.schemas import Config, ExecutionResult, ToolCallEnded
from artoo.testing import write_script

COUNT = {
    "role": "perceiver",
    "content": {
        "intent": "count the lines of a.txt",
        "kind": "question",
        "answer": "number",
        "count": "lines",
        "targets": [{"path": "a.txt", "role": "read"}],
    },
}
CREATE = {
    "role": "perceiver",
    "content": {
        "intent": "write a file",
        "kind": "creation",
        "targets": [{"path": "made.txt", "role": "create"}],
    },
}


def _events(store: Path) -> list[object]:
    with EventLog.open(store / "events", read_only=True) as log:
        return [env.body for env in log.read(1)]


def test_each_call_is_logged_when_it_ends_with_what_the_model_was_shown(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\ntwo\n")
    model = write_script(
        tmp_path / "s.toml",
        [
            COUNT,  # round 0 is the request itself: no Planner call
            {
                "role": "executor",
                "tool_calls": [{"name": "shell", "arguments": {"command": "wc -l < a.txt"}}],
            },
            {
                "role": "executor",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
            },
            {"role": "executor", "content": "2"},
        ],
    )
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=Config(durability="none")
    ) as system:
        system.run("how many lines are in a.txt?", timeout=30)
    bodies = _events(tmp_path / "store")
    ended = [b for b in bodies if isinstance(b, ToolCallEnded)]
    result = next(b for b in bodies if isinstance(b, ExecutionResult))
    assert [e.call.tool for e in ended] == ["shell", "read_file"]
    assert [e.index for e in ended] == [0, 1]
    assert [e.call for e in ended] == result.tool_calls  # the same records, logged twice
    shell = ended[0]
    assert shell.call.exit_code == 0 and shell.call.stdout is not None
    assert shell.call.stdout.strip() == "2" and shell.call.stderr == ""
    assert "2" in shell.shown and shell.tool_call_id
    assert ended[1].call.stdout is None  # a tool with no streams
    assert bodies.index(ended[1]) < bodies.index(result)


@pytest.mark.slow
def test_a_call_that_changed_the_workspace_is_in_the_log_after_a_sigkill(
    tmp_path: Path,
) -> None:
    """The process dies during the attempt's next call, after write_file created a file
    and before the ExecutionResult: the ToolCallEnded of write_file is in the log."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = tmp_path / "store"
    model = write_script(
        tmp_path / "s.toml",
        [
            CREATE,  # round 0 is the request itself: no Planner call
            {
                "role": "executor",
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "made.txt", "content": "x"}}
                ],
            },
            {"role": "executor", "tool_calls": [{"name": "hold", "arguments": {}}]},
            {"role": "executor", "content": "done"},
        ],
    )
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, threading, artoo
            from artoo.schemas import Config

            def hold() -> str:
                \"\"\"Wait.\"\"\"
                print("holding", flush=True)
                threading.Event().wait()
                return ""

            s = artoo.System.open({str(store)!r}, model={model!r},
                workspace={str(workspace)!r}, tools=[hold],
                config=Config(durability="batch", max_parallel=1))
            s.submit("write made.txt")
            threading.Event().wait()
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        assert victim.stdout.readline().strip() == "holding"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
    assert (workspace / "made.txt").read_text() == "x"  # applied before the kill
    bodies = _events(store)
    assert not any(isinstance(b, ExecutionResult) for b in bodies)  # the attempt never ended
    ended = [b for b in bodies if isinstance(b, ToolCallEnded)]
    assert [e.call.tool for e in ended] == ["write_file"]
    assert [(f.path, f.change) for f in ended[0].call.effects] == [("made.txt", "created")]
