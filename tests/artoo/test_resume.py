"""A task the stopped process left open is resumed from the log at the next open
(``Config.recovery = "resume"``): a process SIGKILLed mid-task at several points, the
store reopened, and each task ends with the FinalResult an uninterrupted run ends with —
no model call made twice (counted from the log), no tool effect applied twice."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import artoo
from artoo.replay import rerun, verify
from artoo.schemas import (
    Config,
    ConfirmationRequest,
    FinalResult,
    LLMCall,
    TaskResumed,
    ToolCallEnded,
    UserRequest,
)
from artoo.testing import write_script

from .helpers import all_events

WRITE = "write the files"
SPEC = {
    "role": "perceiver",
    "content": {
        "intent": "write files",
        "kind": "creation",
        "targets": [{"path": "made.txt", "role": "create"}],
    },
}


def _write(path: str, content: str) -> dict[str, Any]:
    return {
        "role": "executor",
        "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}],
    }


def _victim(
    tmp: Path,
    store: Path,
    workspace: Path,
    model: str,
    *,
    until: str,
    submit: bool = True,
    text: str = WRITE,
) -> None:
    """Run one task (``text``) in a child process and SIGKILL it once it printed
    ``until`` (the kind of an envelope it saw, or a tool's own line). ``submit=False``:
    the child only opens the store (resuming what it holds)."""
    script = tmp / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import threading, artoo
            from artoo.schemas import Config

            def never(request):
                threading.Event().wait()

            s = artoo.System.open({str(store)!r}, model={model!r},
                workspace={str(workspace)!r}, operator=never,
                config=Config(durability="batch", max_parallel=1, max_retries=0))
            def show(env):
                kind = type(env.body).__name__
                print(kind, flush=True)
                if kind == "LLMCall":
                    print("LLMCall:" + env.body.role, flush=True)
            s.subscribe(show)
            if {submit!r}:
                s.submit({text!r})
            threading.Event().wait()
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        for line in victim.stdout:
            if line.strip() == until:
                time.sleep(0.5)  # into the step that follows
                break
        else:
            raise AssertionError(f"the victim ended before {until}")
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)


def _rest(entries: list[dict[str, Any]], store: Path) -> list[dict[str, Any]]:
    """The script's entries the killed run did not use (its answered calls per role)."""
    used = Counter(
        e.body.role for e in all_events(store) if isinstance(e.body, LLMCall) and not e.body.error
    )
    rest = []
    for entry in entries:
        if used[entry["role"]] > 0:
            used[entry["role"]] -= 1
            continue
        rest.append(entry)
    return rest


def _approve(request: ConfirmationRequest) -> bool:
    return True


def _calls(store: Path) -> list[tuple[str, str]]:
    calls = [e.body for e in all_events(store) if isinstance(e.body, LLMCall)]
    return [(call.role, str(call.response)) for call in calls]


def _final(store: Path) -> FinalResult:
    [final] = [e.body for e in all_events(store) if isinstance(e.body, FinalResult)]
    return final


def _same(a: FinalResult, b: FinalResult) -> None:
    assert (a.status, a.summary, a.output, a.reason, a.replans, a.law1_denied) == (
        b.status,
        b.summary,
        b.output,
        b.reason,
        b.replans,
        b.law1_denied,
    )
    assert a.cost.model_calls == b.cost.model_calls


CASES: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    # the Executor's first model call is under way (a slow answer) when the process dies:
    # round 0 is the request itself, planned with no model call
    "model call": (
        [
            SPEC,
            {**_write("made.txt", "x"), "delay_ms": 60_000},
            {"role": "executor", "content": "done"},
        ],
        "DispatchManifest",
        WRITE,
    ),
    # write_file's ToolCall is logged; the Executor's next model call is under way
    "tool call logged": (
        [
            SPEC,
            _write("made.txt", "x"),
            {"role": "executor", "content": "done", "delay_ms": 60_000},
        ],
        "ToolCallEnded",
        WRITE,
    ),
    # a shell command runs (in the sandbox, where the machine has one): its effects are
    # applied when it ends, so a kill inside it applied none — it runs again
    "inside a command": (
        [
            SPEC,
            {
                "role": "executor",
                "tool_calls": [
                    {"name": "shell", "arguments": {"command": "sleep 3; echo x >> made.txt"}}
                ],
            },
            {"role": "executor", "content": "done"},
        ],
        "LLMCall:executor",
        WRITE,
    ),
    # between rounds: round 0 answered a count no tool result shows (its check failed),
    # the GGS decided a replan, and the Planner's round-1 call is under way
    "between rounds": (
        [
            {
                "role": "perceiver",
                "content": {
                    "intent": "count the lines of old.log",
                    "kind": "question",
                    "answer": "number",
                    "count": "lines",
                    "targets": [{"path": "old.log", "role": "read"}],
                },
            },
            {"role": "executor", "content": "old.log has 2 lines."},
            {
                "role": "planner",
                "content": {
                    "subtasks": [{"instruction": "Count the lines of old.log", "tools": ["shell"]}]
                },
                "delay_ms": 60_000,
            },
            {
                "role": "executor",
                "tool_calls": [{"name": "shell", "arguments": {"command": "wc -l old.log"}}],
            },
            {"role": "executor", "content": "old.log has 1 line."},
        ],
        "PlanDirective",
        "how many lines are in old.log?",
    ),
    # waiting for the operator's answer to a Law 1 confirmation (rm of a file the reading
    # names as no target to delete)
    "confirmation": (
        [
            {"role": "perceiver", "content": {"intent": "clean up", "kind": "change"}},
            {
                "role": "executor",
                "tool_calls": [{"name": "shell", "arguments": {"command": "rm old.log"}}],
            },
            {"role": "executor", "content": "done"},
        ],
        "ConfirmationRequest",
        "clean up the workspace",
    ),
}


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "old.log").write_text("old\n")
    return ws


@pytest.mark.slow
@pytest.mark.parametrize("point", list(CASES))
def test_a_task_killed_mid_way_is_resumed_and_ends_as_an_uninterrupted_run(
    tmp_path: Path, point: str
) -> None:
    entries, until, text = CASES[point]
    config = Config(durability="batch", max_parallel=1, max_retries=0)  # a failure replans
    # the uninterrupted run, answered at once
    quick = [{k: v for k, v in e.items() if k != "delay_ms"} for e in entries]
    (tmp_path / "a").mkdir()
    with artoo.System.open(
        tmp_path / "a" / "store",
        model=write_script(tmp_path / "a" / "s.toml", quick),
        workspace=_workspace(tmp_path / "a"),
        operator=_approve,
        config=config,
    ) as system:
        system.run(text, timeout=60)
    expected = _final(tmp_path / "a" / "store")
    # the killed run, then the resume
    (tmp_path / "b").mkdir()
    store, workspace = tmp_path / "b" / "store", _workspace(tmp_path / "b")
    model = write_script(tmp_path / "b" / "s.toml", entries)
    _victim(tmp_path / "b", store, workspace, model, until=until, text=text)
    before = _calls(store)
    # the same model, with the answers the killed run did not use
    rest = write_script(tmp_path / "b" / "s.toml", _rest(quick, store))
    with artoo.System.open(
        store, model=rest, workspace=workspace, operator=_approve, config=config
    ) as system:
        [handle] = system.resumed
        got = handle.result(60)
    events = all_events(store)
    resumed = [e for e in events if isinstance(e.body, TaskResumed)]
    assert len(resumed) == 1 and got.resumed_from == resumed[0].body.from_seq
    assert sum(isinstance(e.body, UserRequest) for e in events) == 1
    _same(got, expected)
    after = _calls(store)
    assert after[: len(before)] == before  # the logged calls were served, not made again
    assert len(after) == len(_calls(tmp_path / "a" / "store"))
    ended = [e.body for e in events if isinstance(e.body, ToolCallEnded)]
    writes = [c for c in ended if c.call.tool == "write_file"]
    assert len(writes) <= 1  # write_file ran once
    if (workspace / "made.txt").exists():  # each effect applied once
        assert (workspace / "made.txt").read_text() == "x" + "\n" * (point == "inside a command")
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
    assert verify(store).ok
    assert rerun(store).ok


@pytest.mark.slow
def test_replay_shows_the_resume_in_the_timeline(tmp_path: Path) -> None:
    from artoo.replay import timeline

    entries, until, _ = CASES["tool call logged"]
    store, workspace = tmp_path / "store", _workspace(tmp_path)
    model = write_script(tmp_path / "s.toml", entries)
    _victim(tmp_path, store, workspace, model, until=until)
    quick = [{k: v for k, v in e.items() if k != "delay_ms"} for e in entries]
    write_script(tmp_path / "s.toml", _rest(quick, store))
    config = Config(durability="none", max_parallel=1)
    with artoo.System.open(store, model=model, workspace=workspace, config=config) as system:
        [handle] = system.resumed
        final = handle.result(60)
    [task] = timeline(store)
    lines = [entry.text for entry in task.entries]
    assert any(line.startswith("RESUMED after the process stopped") for line in lines)
    assert any(f"[resumed from seq {final.resumed_from}]" in line for line in lines)


def _victim_holding(tmp: Path, store: Path, workspace: Path, model: str) -> None:
    """A child whose Executor is inside ``hold`` (a host tool: not known safe) when it is
    killed."""
    script = tmp / "holding.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import threading, artoo
            from artoo.schemas import Config

            def hold() -> str:
                \"\"\"Hold.\"\"\"
                print("holding", flush=True)
                threading.Event().wait()
                return ""

            s = artoo.System.open({str(store)!r}, model={model!r},
                workspace={str(workspace)!r}, tools=[hold],
                config=Config(durability="batch", max_parallel=1))
            s.submit("hold on")
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


@pytest.mark.slow
@pytest.mark.parametrize("approve", [True, False])
def test_a_call_under_way_that_is_not_known_safe_runs_again_only_if_the_operator_says(
    tmp_path: Path, approve: bool
) -> None:
    entries = [
        SPEC,
        {"role": "executor", "tool_calls": [{"name": "hold", "arguments": {}}]},
        {"role": "executor", "content": "done"},
    ]
    store, workspace = tmp_path / "store", _workspace(tmp_path)
    model = write_script(tmp_path / "s.toml", entries)
    _victim_holding(tmp_path, store, workspace, model)
    write_script(tmp_path / "s.toml", _rest(entries, store))
    ran: list[str] = []
    asked: list[ConfirmationRequest] = []

    def hold() -> str:
        """Hold."""
        ran.append("hold")
        return ""

    def operator(request: ConfirmationRequest) -> bool:
        asked.append(request)
        return approve

    config = Config(durability="none", max_parallel=1, max_retries=0)
    with artoo.System.open(
        store, model=model, workspace=workspace, tools=[hold], operator=operator, config=config
    ) as system:
        [handle] = system.resumed
        handle.result(60)
    assert [r.action for r in asked] == ["run hold again after a restart"]
    assert ran == (["hold"] if approve else [])
    ended = [e.body.call for e in all_events(store) if isinstance(e.body, ToolCallEnded)]
    assert [(c.tool, c.ok) for c in ended] == [("hold", approve)]
    assert verify(store).ok


@pytest.mark.slow
def test_a_resumed_task_killed_again_is_resumed_again(tmp_path: Path) -> None:
    entries = [
        SPEC,
        {**_write("made.txt", "x"), "delay_ms": 60_000},
        {"role": "executor", "content": "done", "delay_ms": 60_000},
    ]
    quick = [{k: v for k, v in e.items() if k != "delay_ms"} for e in entries]
    store, workspace = tmp_path / "store", _workspace(tmp_path)
    model = write_script(tmp_path / "s.toml", entries)
    # in the Executor's first call (round 0 is the request itself: no Planner call)
    _victim(tmp_path, store, workspace, model, until="DispatchManifest")
    slow = [entries[0], quick[1], entries[2]]
    write_script(tmp_path / "s.toml", _rest(slow, store))
    # the resume runs in a child too, killed in the Executor's last call
    _victim(tmp_path, store, workspace, model, until="ToolCallEnded", submit=False)
    write_script(tmp_path / "s.toml", _rest(quick, store))
    config = Config(durability="none", max_parallel=1)
    with artoo.System.open(store, model=model, workspace=workspace, config=config) as system:
        [handle] = system.resumed
        got = handle.result(60)
    events = all_events(store)
    resumes = [e.body for e in events if isinstance(e.body, TaskResumed)]
    assert len(resumes) == 2 and got.resumed_from == resumes[1].from_seq
    # made.txt was created, but no value of the request's reads back: success
    assert (got.status, got.established) == ("success", "model")
    assert [c for c, _ in _calls(store)] == ["perceiver", "executor", "executor"]
    assert (workspace / "made.txt").read_text() == "x"
    # each resume reads the task as it was read: made.txt, which the task itself created
    # before the second kill, is still the file to create (the logged reading's ``seen``)
    prompts = [
        str(e.body.request["messages"][1]["content"])
        for e in events
        if isinstance(e.body, LLMCall) and e.body.role == "executor"
    ]
    assert len(prompts) == 2 and all("create made.txt" in p for p in prompts), prompts
    assert sum(isinstance(e.body, ToolCallEnded) for e in events) == 1
    assert verify(store).ok
    assert rerun(store).ok


@pytest.mark.slow
def test_an_open_with_no_model_leaves_a_stopped_task_for_an_open_that_can_resume_it(
    tmp_path: Path,
) -> None:
    entries, until, _ = CASES["tool call logged"]
    store, workspace = tmp_path / "store", _workspace(tmp_path)
    model = write_script(tmp_path / "s.toml", entries)
    _victim(tmp_path, store, workspace, model, until=until)
    with artoo.System.open(store, workspace=workspace, env={}) as reader:  # no model
        assert reader.resumed == [] and reader.interrupted == []
    assert not any(isinstance(e.body, FinalResult) for e in all_events(store))
    quick = [{k: v for k, v in e.items() if k != "delay_ms"} for e in entries]
    write_script(tmp_path / "s.toml", _rest(quick, store))
    with artoo.System.open(store, model=model, workspace=workspace) as system:
        [handle] = system.resumed
        assert handle.result(60).status == "success"
