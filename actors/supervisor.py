"""Supervisor — keeps the roles alive.

Responsibilities:
    Watch for RoleFailed. When the failed role's actor has stopped (a handler raised),
    start a fresh instance and subscribe it so that it receives every envelope after the
    one it failed on — nothing on the way to a role is lost. The tasks the failed role
    was serving are ended by the GGS (FinalResult abandon naming the error), which also
    consumes RoleFailed.

Input contract:
    RoleFailed.

Output contract:
    Nothing on the bus; restarts actors through the System's ``restart`` service.

Constraints:
    Does NOT end tasks itself (the GGS publishes every FinalResult); does NOT restart a
    role whose actor is still alive (a clean failure of one task is not a crash); gives
    up on a role that fails more than ``max_restarts`` times in a row.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ClassVar

from artoo.schemas import Envelope, Message, RoleFailed

from .base import Role

__all__ = ["Supervisor"]

logger = logging.getLogger("artoo.actors")


class Supervisor(Role):
    """The Supervisor actor."""

    name: ClassVar[str] = "supervisor"
    consumes: ClassVar[tuple[type[Message], ...]] = (RoleFailed,)
    max_restarts: ClassVar[int] = 100

    def __init__(self, ctx, instance=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, instance)
        self.restart: Callable[[str, int], bool] = ctx.services["restart"]
        self.restarts: dict[str, int] = {}

    def on_role_failed(self, env: Envelope) -> None:
        body: RoleFailed = env.body
        count = self.restarts.get(body.role, 0)
        if count >= self.max_restarts:
            logger.error("role %s failed %d times; not restarting", body.role, count)
            return
        if self.restart(body.role, body.last_seq + 1):
            self.restarts[body.role] = count + 1
            logger.warning("restarted role %s after: %s", body.role, body.error)
