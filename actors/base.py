"""The Role base class and the RoleContext every role is built with.

A role is a ``pykka.ThreadingActor`` that receives committed groups of envelopes from the
Bus (one :class:`~artoo.actors.bus.Delivery` per group), unpacks them and calls one
``on_<message_kind>`` handler per envelope, in seq order. A role never calls another role:
it only ``publish``-es typed messages.

Every role also consumes FinalResult: once a task has ended, its later envelopes are
ignored and the role's per-task state is dropped (``forget_task``).
"""

from __future__ import annotations

import collections
import logging
import re
import traceback as tb_module
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pykka

from artoo.schemas import (
    Config,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    Message,
    RoleFailed,
)

from .bus import Delivery
from .clock import Clock, SystemClock, new_id

if TYPE_CHECKING:
    from .bus import Bus
    from .llm import LLMGateway

__all__ = ["Operator", "Role", "RoleContext", "Tick"]

logger = logging.getLogger("artoo.actors")

Operator = Callable[[ConfirmationRequest], bool | None]
"""A human (or host policy) answering Law 1 confirmations: True approves, False/None denies."""


@dataclass(frozen=True)
class Tick:
    """A timer tick told to roles that set ``wants_ticks``; ``now`` is the clock time."""

    now: float


@dataclass
class RoleContext:
    """The equipment shared by the roles of one System (no global state)."""

    bus: Bus
    config: Config = field(default_factory=Config)
    clock: Clock = field(default_factory=SystemClock)
    new_id: Callable[[], str] = new_id
    gateway: LLMGateway | None = None
    workspace: Path = field(default_factory=Path.cwd)
    store: Path | None = None
    operator: Operator | None = None
    services: dict[str, Any] = field(default_factory=dict)


def _snake(name: str) -> str:
    return (
        re.sub(r"(?<!^)(?=[A-Z])", "_", name)
        .lower()
        .replace("g_g_s", "ggs")
        .replace("l_l_m", "llm")
        .replace("s_o_p", "sop")
    )


class Role(pykka.ThreadingActor):
    """Base of every role actor.

    Subclasses set ``name`` and ``consumes`` and define ``on_<snake_case_kind>(env)`` for
    each consumed message kind. All hooks run in the actor's own thread.
    """

    name: ClassVar[str] = "role"
    consumes: ClassVar[tuple[type[Message], ...]] = ()
    addressed: ClassVar[tuple[type[Message], ...]] = ()
    """Kinds this role receives only when addressed to its instance (``to=instance``)."""
    wants_ticks: ClassVar[bool] = False

    def __init__(self, ctx: RoleContext, instance: str | None = None) -> None:
        super().__init__()
        self.ctx = ctx
        self.instance = instance
        self.sender = self.name if instance is None else f"{self.name}/{instance}"
        self.last_seq = 0
        self.envelope: Envelope | None = None
        self._finished: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._handlers: dict[type, Callable[[Envelope], None]] = {}
        for kind in (*self.consumes, *self.addressed):
            self._handlers[kind] = getattr(self, "on_" + _snake(kind.__name__))

    # ------------------------------------------------------------------ wiring
    @classmethod
    def subscribe(
        cls,
        bus: Bus,
        ref: pykka.ActorRef[Any],
        instance: str | None = None,
        *,
        from_seq: int | None = None,
    ) -> list[Any]:
        """Subscribe ``ref`` (an instance of this role) to what it consumes.

        With ``from_seq`` (a restarted role) it first receives the logged envelopes from
        that seq on, then live ones, with no gap and no duplicate.
        """
        subs = [bus.subscribe((*cls.consumes, FinalResult), ref, from_seq=from_seq)]
        if cls.addressed:
            subs.append(bus.subscribe(cls.addressed, ref, to=instance, from_seq=from_seq))
        return subs

    # ------------------------------------------------------------------ pykka hooks
    def on_receive(self, message: Any) -> Any:
        """Unpack a Delivery and call the handlers; runs in the actor's thread."""
        if isinstance(message, Delivery):
            for env in message.envelopes:
                self._dispatch(env)
        elif isinstance(message, Tick):
            self.on_tick(message.now)
        elif isinstance(message, Envelope):
            self._dispatch(message)
        return None

    def _dispatch(self, env: Envelope) -> None:
        # the bus delivers each envelope once per subscription (a replay joins without gap
        # or duplicate); two subscriptions may interleave, so keep the highest seq seen
        if env.seq > self.last_seq:
            self.last_seq = env.seq
        self.envelope = env
        body = env.body
        task_id = env.task_id
        if isinstance(body, FinalResult):
            handler = self._handlers.get(FinalResult)
            if handler is not None:
                handler(env)
            self._finish(body.task_id)
            return
        if task_id is not None and task_id in self._finished:
            return
        handler = self._handlers.get(type(body))
        if handler is not None:
            handler(env)

    def _finish(self, task_id: str) -> None:
        self._finished[task_id] = None
        while len(self._finished) > 100_000:
            self._finished.popitem(last=False)
        self.forget_task(task_id)

    def on_failure(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        """Publish RoleFailed for the Supervisor; runs in the actor's thread, then it stops."""
        tasks = set(self.active_tasks())
        if self.envelope is not None and self.envelope.task_id is not None:
            tasks.add(self.envelope.task_id)
        error = f"{getattr(exception_type, '__name__', exception_type)}: {exception_value}"
        logger.error("role %s failed: %s", self.sender, error)
        try:
            self.ctx.bus.publish(
                RoleFailed(
                    role=self.sender,
                    error=error,
                    traceback="".join(tb_module.format_tb(traceback))[-4000:],
                    task_ids=sorted(tasks),
                    last_seq=self.last_seq,
                ),
                sender=self.sender,
                cause=self.last_seq or None,
            )
        except Exception:  # the bus may be closing; nothing else to do
            logger.exception("could not publish RoleFailed for %s", self.sender)

    # ------------------------------------------------------------------ for subclasses
    def publish(
        self,
        body: Message,
        *,
        task_id: str | None = None,
        to: str | None = None,
        cause: int | None = None,
    ) -> None:
        """Publish ``body``; task_id and cause default to the envelope being handled."""
        env = self.envelope
        if task_id is None and env is not None:
            task_id = env.task_id
        if cause is None and env is not None:
            cause = env.seq
        self.ctx.bus.publish(body, sender=self.sender, task_id=task_id, to=to, cause=cause)

    def is_finished(self, task_id: str) -> bool:
        """True once a FinalResult for ``task_id`` reached this role."""
        return task_id in self._finished

    def active_tasks(self) -> list[str]:
        """Task ids this role holds state for (named in RoleFailed if it crashes)."""
        return []

    def forget_task(self, task_id: str) -> None:
        """Drop per-task state once the task has ended."""

    def on_tick(self, now: float) -> None:
        """Timer hook for roles with ``wants_ticks``; runs in the actor's thread."""
