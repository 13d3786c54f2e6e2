"""Threads a role needs come from the runtime: ``Role.background`` runs work on a named
daemon thread and logs what it raises."""

from __future__ import annotations

import logging
import threading

import pytest

from artoo.actors.roles.supervisor import Supervisor
from artoo.testing import RoleHarness


def test_background_work_runs_on_a_named_daemon_thread() -> None:
    with RoleHarness(Supervisor) as harness:
        role = Supervisor(harness.equipment)
        seen: list[threading.Thread] = []
        done = threading.Event()

        def work() -> None:
            seen.append(threading.current_thread())
            done.set()

        thread = role.background("probe", work)
        assert done.wait(5)
        thread.join(5)
    assert seen == [thread] and thread.daemon
    assert thread.name == "artoo-supervisor-probe"


def test_what_background_work_raises_is_logged_not_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with RoleHarness(Supervisor) as harness, caplog.at_level(logging.ERROR):
        role = Supervisor(harness.equipment)

        def work() -> None:
            raise RuntimeError("the operator callback broke")

        role.background("operator", work).join(5)
    assert any("background work failed" in r.getMessage() for r in caplog.records)
