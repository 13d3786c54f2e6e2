"""Crashes and clean failures: the failure protocol, the Supervisor and its restart budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import artoo
from artoo.actors.roles.supervisor import RestartBudget
from artoo.schemas import (
    Config,
    Envelope,
    FinalResult,
    RoleFailed,
    StepFailed,
    SupervisorConfig,
)
from artoo.testing import write_script

from .helpers import CONFIG, PERCEIVE, all_events


def crash_once(cls: type, method: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch ``cls.method`` to raise on its first call only; returns the call counter."""
    original: Callable[..., Any] = getattr(cls, method)
    calls = [0]

    def wrapper(self: Any, env: Envelope) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError(f"injected crash in {cls.__name__}.{method}")
        original(self, env)

    monkeypatch.setattr(cls, method, wrapper)
    return calls


def _hello_script(tmp_path: Path) -> str:
    return write_script(
        tmp_path / "hello.toml",
        [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}],
    )


# --------------------------------------------------------------------------- pure
def test_restart_budget_counts_within_its_window_and_resets() -> None:
    budget = RestartBudget(limit=2, window_s=10.0)
    assert budget.allow("r", 0.0) and budget.allow("r", 1.0)
    assert not budget.allow("r", 2.0)  # a third within 10 s
    assert budget.allow("other", 2.0)  # per role
    assert budget.allow("r", 10.5)  # the first one left the window


# --------------------------------------------------------------------------- crashes
ROLE_HANDLERS = [
    ("artoo.actors.roles.queen", "Queen", "on_user_request", True),
    ("artoo.actors.roles.perceiver", "Perceiver", "on_task_request", True),
    ("artoo.actors.roles.planner", "Planner", "on_task_spec", True),
    ("artoo.actors.roles.memory", "Memory", "on_memory_query", True),
    ("artoo.actors.roles.dispatcher", "Dispatcher", "on_dispatch_manifest", True),
    ("artoo.actors.roles.executor", "Executor", "on_sub_task", True),
    ("artoo.actors.roles.agent_validator", "AgentValidator", "on_execution_result", True),
    ("artoo.actors.roles.meta_validator", "MetaValidator", "on_sub_task_outcome", True),
    ("artoo.actors.roles.ggs", "GGS", "on_books", True),
    ("artoo.actors.roles.dreamer", "Dreamer", "on_final_result", False),
]


@pytest.mark.parametrize(("module", "name", "method", "ends_task"), ROLE_HANDLERS)
def test_a_crash_of_each_role_is_restarted_and_ends_its_task_once(
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    name: str,
    method: str,
    ends_task: bool,
) -> None:
    import importlib

    cls = getattr(importlib.import_module(module), name)
    crash_once(cls, method, monkeypatch)
    config = Config(durability="none", max_parallel=1, confirmation_timeout_s=2.0)
    store = tmp_path / "store"
    with artoo.System.open(
        store, model=_hello_script(tmp_path), workspace=workspace, config=config
    ) as system:
        first = system.run("say hello", timeout=20)
        system.flush(5)
        second = system.run("say hello again", timeout=20)  # served by the restarted role
    if ends_task:
        assert first.status == "abandon" and first.reason == "crash"
        assert f"injected crash in {name}.{method}" in first.summary
    else:
        assert first.status == "success"
    assert second.status == "success", second.summary
    events = all_events(store)
    crashed = [e.body for e in events if isinstance(e.body, RoleFailed)]
    assert len(crashed) == 1 and crashed[0].role.startswith(cls.name)
    finals = [e.body.task_id for e in events if isinstance(e.body, FinalResult)]
    assert sorted(finals) == sorted([first.task_id, second.task_id])  # one each


def test_a_supervisor_that_gives_up_leaves_the_role_down(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artoo.actors.roles.perceiver import Perceiver

    def always(self: Any, env: Envelope) -> None:
        raise RuntimeError("perceiver always crashes")

    monkeypatch.setattr(Perceiver, "on_task_request", always)
    config = CONFIG.model_copy(update={"supervisor": SupervisorConfig(max_restarts=2)})
    with artoo.System.open(
        tmp_path / "s", model=_hello_script(tmp_path), workspace=workspace, config=config
    ) as system:
        results = [system.run(f"task {i}", timeout=20) for i in range(3)]
        system.flush(5)
        assert system.runner.ref("perceiver").is_alive() is False
        # a fourth task finds no perceiver: it ends at its deadline, not never
        late = system.run("task 4", timeout=1)
    assert [r.reason for r in results] == ["crash", "crash", "crash"]
    assert late.reason == "deadline"


def test_ten_clean_failures_then_a_crash_restart_within_a_second(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artoo.actors.roles.perceiver import Perceiver

    original = Perceiver.on_task_request

    def maybe_crash(self: Any, env: Envelope) -> None:
        if env.body.text == "crash":
            raise RuntimeError("injected crash")
        original(self, env)

    monkeypatch.setattr(Perceiver, "on_task_request", maybe_crash)
    entries = [
        {"role": "perceiver", "times": 20, "content": "not json"},  # 10 tasks × answer+repair
        PERCEIVE,
        {"role": "executor", "times": 0, "content": "hello"},
    ]
    crashed_at: list[float] = []
    seen = threading.Event()

    def watch(env: Envelope) -> None:
        if isinstance(env.body, RoleFailed):
            crashed_at.append(time.monotonic())
            seen.set()

    with artoo.System.open(
        tmp_path / "s",
        model=write_script(tmp_path / "s.toml", entries),
        workspace=workspace,
        config=CONFIG,
    ) as system:
        system.subscribe(watch)
        clean = [system.run(f"task {i}", timeout=20) for i in range(10)]
        old = system.runner.ref("perceiver")
        crash = system.run("crash", timeout=20)
        assert seen.wait(5)
        while system.runner.ref("perceiver") is old:
            time.sleep(0.005)
        restarted_after = time.monotonic() - crashed_at[0]
        after = system.run("hello", timeout=20)
    assert all(r.reason == "step_failed" for r in clean)
    assert crash.reason == "crash" and after.status == "success"
    assert restarted_after < 1.0, f"restart took {restarted_after:.2f} s"
    events = all_events(tmp_path / "s")
    assert sum(isinstance(e.body, StepFailed) for e in events) == 10
    assert sum(isinstance(e.body, RoleFailed) for e in events) == 1
