"""``artoo repl`` driven through a pseudo-terminal (pexpect), and its commands directly."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pexpect
import pytest

import artoo
from artoo.actors.roles.queen import InboxItem
from artoo.eventstore import MegramStore
from artoo.repl import Repl
from artoo.testing import write_script

from .helpers import CONFIG, rm_script_entries

ENTRY = "import sys; from artoo.cli import main; sys.exit(main())"


def test_repl_in_a_terminal_submits_shows_status_and_inbox_approves_and_quits(
    tmp_path: Path, workspace: Path
) -> None:
    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    store = tmp_path / "store"
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-c", ENTRY, "repl", str(store), "--model", model, "--workspace", str(workspace)],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 250),
    )
    try:
        child.expect("type a task, or /help")
        child.expect("artoo>")
        child.sendline("delete the old log")
        child.expect(r"task (\S+) submitted")
        child.expect(r"needs your approval: .*?/approve (\w+)")
        request_id = child.match.group(1)
        child.sendline("/status")
        child.expect(r"1 running, 1 waiting in the inbox")
        child.sendline("/inbox")
        child.expect(re.escape(request_id) + r" confirmation .*\[approve / deny\]")
        child.sendline(f"/approve {request_id}")
        child.expect(re.escape(request_id) + ": approve")
        child.expect(r"done: success")
        child.sendline("/status")
        child.expect(r"0 running, 0 waiting in the inbox")
        child.sendline("/audit")
        child.expect(
            r"audit window so far: (\d+) envelopes, (\d+) tasks started, ended: (.*?); "
            r"(\d+) boundary violations"
        )
        envelopes, started, ended, violations = child.match.groups()
        child.sendline("/memory")
        child.expect(r"memory: (\d+) megrams over (\d+) tags")
        megrams, tags = (int(g) for g in child.match.groups())
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert not (workspace / "archive" / "old.log").exists()  # the approved rm ran
    # /audit: this session's window — the one task, accepted, no boundary broken
    assert (started, ended, violations) == ("1", "success 1", "0")
    assert int(envelopes) > 10
    # /memory: what the store's memory holds, counted again after the REPL closed it
    with MegramStore.open(store / "memory") as memory:
        assert megrams == sum(1 for _ in memory.megrams()) > 0
        assert tags == sum(1 for _ in memory.tags()) > 0
    assert (store / "repl_history").read_text().count("/status") == 2


def _held(tmp_path: Path, workspace: Path, name: str) -> artoo.System:
    model = write_script(tmp_path / f"{name}.toml", rm_script_entries())
    config = CONFIG.model_copy(update={"confirmation_timeout_s": 120.0})
    return artoo.System.open(
        tmp_path / name, model=model, workspace=workspace, config=config, inbox=True
    )


def test_repl_denies_from_the_inbox_and_refuses_nonsense(tmp_path: Path, workspace: Path) -> None:
    said: list[str] = []
    with _held(tmp_path, workspace, "deny") as system:
        repl = Repl(system, said.append)
        assert repl.handle("delete the old log")
        (task,) = list(repl.handles)
        (item,) = _wait_inbox(system, 1)
        repl.handle("/approve nope")
        assert said[-1].startswith("error: no open inbox item nope")
        repl.handle("/frobnicate")
        assert "unknown command" in said[-1]
        repl.handle("/deny")
        assert said[-1].startswith("error: which one?")
        repl.handle(f"/deny {item.item_id}")
        assert said[-1] == f"{item.item_id}: deny"
        denied = repl.handles[task].result(30)
        repl.handle("/tasks")
        assert repl.handle("/quit") is False
    assert denied.status == "abandon" and denied.law1_denied
    assert any(task in line and "abandon" in line for line in said)  # /tasks
    assert (workspace / "archive" / "old.log").exists()


def test_repl_cancels_a_task_by_its_id_prefix(tmp_path: Path, workspace: Path) -> None:
    said: list[str] = []
    with _held(tmp_path, workspace, "cancel") as system:
        repl = Repl(system, said.append)
        assert repl.handle("delete the old log")
        (task,) = list(repl.handles)
        _wait_inbox(system, 1)
        repl.handle("/cancel zzz")
        assert said[-1].startswith("error: no single task")
        repl.handle(f"/cancel {task[:12]}")
        cancelled = repl.handles[task].result(30)
    assert (cancelled.status, cancelled.reason) == ("abandon", "cancelled")
    assert f"cancelling {task}" in said


def _wait_inbox(system: artoo.System, n: int) -> list[InboxItem]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        items = system.inbox()
        if len(items) >= n:
            return items
        time.sleep(0.02)
    pytest.fail("the inbox did not fill")


def test_repl_pauses_and_resumes_a_task_by_its_id_prefix(tmp_path: Path, workspace: Path) -> None:
    said: list[str] = []
    with _held(tmp_path, workspace, "pause") as system:
        repl = Repl(system, said.append)
        assert repl.handle("delete the old log")
        (task,) = list(repl.handles)
        _wait_inbox(system, 1)
        repl.handle("/pause")
        assert said[-1].startswith("error: which task?")
        repl.handle(f"/pause {task[:12]}")
        assert said[-1] == f"{task}: paused"
        repl.handle("/tasks")
        assert said[-1] == f"  {task} paused"
        repl.handle(f"/pause {task[:12]}")
        assert said[-1] == "error: already paused"
        repl.handle(f"/resume {task[:12]}")
        assert said[-1] == f"{task}: resumed"
        repl.handle("/tasks")
        assert said[-1] == f"  {task} running"
        repl.handle(f"/cancel {task[:12]}")
        repl.handles[task].result(30)


def test_repl_shows_a_question_and_answers_it(tmp_path: Path, workspace: Path) -> None:
    question = {"text": "Which file?", "options": ["a.txt", "b.txt"]}
    reading = {"intent": "write b.txt", "kind": "creation"}
    entries = [
        {"role": "perceiver", "content": {"intent": "w", "kind": "creation", "question": question}},
        {
            "role": "perceiver",
            "content": {**reading, "targets": [{"path": "b.txt", "role": "create"}]},
        },
        {  # round 0 is the request itself: no planner call
            "role": "executor",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}],
        },
        {"role": "executor", "content": "done"},
    ]
    said: list[str] = []
    with artoo.System.open(
        tmp_path / "s",
        model=write_script(tmp_path / "q.toml", entries),
        workspace=workspace,
        config=CONFIG,
        inbox=True,  # as artoo repl opens it
    ) as system:
        repl = Repl(system, said.append)
        system.subscribe(repl.on_envelope)
        assert repl.handle("write the file")
        (task,) = list(repl.handles)
        [item] = _wait_inbox(system, 1)
        deadline = time.monotonic() + 10
        while not any("asks: Which file?" in line for line in said):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        repl.handle(f"/answer {item.item_id}")
        assert said[-1].startswith("error: which question")
        repl.handle(f"/answer {item.item_id} c.txt")
        assert said[-1] == "error: answer one of: a.txt, b.txt"
        repl.handle(f"/answer {item.item_id} b.txt")
        assert said[-1] == f"{item.item_id}: answered"
        result = repl.handles[task].result(30)
    # the file was made, but no value of the request's reads back: success, not accept
    assert (result.status, result.established) == ("success", "model")
    assert (workspace / "b.txt").read_text() == "b"
