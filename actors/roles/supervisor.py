"""Supervisor — keeps the roles alive.

Responsibilities:
    Watch for RoleFailed, which a role publishes only when it crashed (a handler raised
    and its actor stopped). Restart that role at once through the RoleRunner, resuming at
    the envelope after the one it failed on — nothing on the way to a role is lost. The
    tasks the crashed role was serving are ended by the GGS (FinalResult abandon naming
    the crash), which also consumes RoleFailed.

Input contract:
    RoleFailed.

Output contract:
    Nothing on the bus; restarts actors through ``Equipment.runner``.

Constraints:
    Does NOT end tasks itself; does NOT restart on a clean failure (a step without a valid
    model answer is a StepFailed, not a crash); gives up on a role that crashed more than
    ``Config.supervisor.max_restarts`` times within ``restart_window_s`` (clock time), and
    tries again once the window has moved past the old crashes.
"""

from __future__ import annotations

from collections import deque
from typing import ClassVar

from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.schemas import (
    Envelope,
    Message,
    RoleFailed,
)

__all__ = ["RestartBudget", "Supervisor"]


class RestartBudget:
    """At most ``limit`` restarts per role within any ``window_s`` seconds (pure)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._times: dict[str, deque[float]] = {}

    def allow(self, role: str, now: float) -> bool:
        """True (and counted) if ``role`` may be restarted at ``now``."""
        times = self._times.setdefault(role, deque())
        while times and now - times[0] >= self.window_s:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True


class Supervisor(Role):
    """The Supervisor actor."""

    name: ClassVar[str] = "supervisor"
    publishes: ClassVar[tuple[type[Message], ...]] = ()
    consumes: ClassVar[tuple[type[Message], ...]] = (RoleFailed,)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        cfg = equipment.config.supervisor
        self.budget = RestartBudget(cfg.max_restarts, cfg.restart_window_s)

    @handles(RoleFailed)
    def on_role_failed(self, env: Envelope) -> None:
        body: RoleFailed = env.body
        runner = self.ctx.runner
        if runner is None:
            return
        if not self.budget.allow(body.role, self.ctx.clock.now()):
            self.log.error(
                "role not restarted: restart budget spent",
                crashed=body.role,
                limit=self.budget.limit,
                window_s=self.budget.window_s,
            )
            return
        if not runner.restart(body.role, body.last_seq + 1):
            self.log.error("role could not be restarted", crashed=body.role)
