"""The Role base class, the typed Equipment every role is built with, and reply inboxes.

A role is a ``pykka.ThreadingActor`` that receives committed groups of envelopes from the
Bus (one :class:`~artoo.actors.runtime.bus.Delivery` per group, through **one** subscription, so
broadcast and addressed kinds arrive together in seq order), unpacks them and calls the
handler registered for each envelope's body type. A role never calls another role: it
only publishes typed messages.

Handlers are registered explicitly with :func:`handles` and checked when the class is
defined: a kind in ``consumes`` or ``addressed`` without a handler, or a handler for a
kind the role does not declare, raises ``TypeError`` at import.

Every role also receives FinalResult: once a task has ended, its later envelopes are
ignored and the role's per-task state is dropped (``forget_task``).

Threads: every ``on_*`` hook and handler runs in the actor's own (daemon) thread, one
message at a time. ``tell`` from the bus writer only enqueues. A role that must wait on
something outside its mailbox — a host callback (the Queen's operator), a tap (the Judge's
pump), a model call off its own thread (the Judge's model rung) — gets that thread from the
runtime with :meth:`Role.background`: a named daemon thread, so the process never waits for
it, whose failure is logged; it talks back to the actor only by ``tell``.
"""

from __future__ import annotations

import collections
import logging
import threading
import traceback as tb_module
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, TypeVar

import pykka

from artoo.actors.tools.catalog import ToolCatalog
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    EscalationTicket,
    FinalResult,
    Message,
    QuestionAnswered,
    RoleFailed,
    TaskSpec,
    UserQuestion,
    Verdict,
)

from ._log import runtime_logger
from .bus import Delivery, Subscription
from .clock import Clock, SystemClock, new_id

if TYPE_CHECKING:
    from artoo.actors.llm import LLMGateway
    from artoo.actors.tools._sandbox import Sandbox
    from artoo.eventstore import BlobStore, MegramStore

    from .bus import Bus
    from .contracts import AuditSeat

__all__ = [
    "Equipment",
    "Inbox",
    "Operator",
    "RecordedVerdicts",
    "Role",
    "RoleContext",
    "Tick",
    "TicketOperator",
    "VerdictKey",
    "handles",
]

logger = logging.getLogger("artoo.actors")

Operator = Callable[[ConfirmationRequest], bool | None]
"""A human (or host policy) answering Law 1 confirmations: True approves, False/None denies."""

TicketOperator = Callable[[EscalationTicket], str | None]
"""A human (or host policy) told of an EscalationTicket the Queen relays: ``"cancel"`` ends
the task, ``"continue"`` lets it go on; anything else (or an exception) leaves the ticket
open in the inbox, for ``System.answer``."""


class VerdictKey(NamedTuple):
    """Which verdict: of a subtask's criterion at an attempt (the Agent-Validator), or of a
    task criterion in a round (the Meta-Validator: ``subtask_id`` empty, attempt 0)."""

    criterion_id: str
    subtask_id: str = ""
    round: int | None = None
    attempt: int = 0


class RecordedVerdicts(Protocol):
    """Verdicts of checks that read the workspace, as a recorded run logged them (replay
    gives one: a rerun's scratch workspace does not hold what the recorded one held)."""

    def verdict(self, key: VerdictKey) -> Verdict | None:
        """The logged verdict, or None (not recorded, or a fork gone live: the check runs)."""
        ...

    def reading(self) -> TaskSpec | None:
        """The logged TaskSpec: what the reading saw of the workspace (its ``listing`` and
        ``seen``), or None (not recorded, or a fork gone live: the workspace is read)."""
        ...


H = TypeVar("H", bound=Callable[..., Any])


class Restarter(Protocol):
    """What the Supervisor is given of the :class:`~artoo.actors.runtime.runner.RoleRunner`:
    a crashed role restarted from a seq."""

    def restart(self, sender: str, from_seq: int, *, wait_s: float = 2.0) -> bool:
        """Restart ``sender`` reading from ``from_seq``; False if it cannot be restarted."""
        ...


def handles(*kinds: type[Message]) -> Callable[[H], H]:
    """Register the decorated method as the role's handler of ``kinds``.

    Example::

        class Perceiver(Role):
            consumes = (TaskRequest,)

            @handles(TaskRequest)
            def on_task_request(self, env: Envelope) -> None: ...
    """
    if not kinds:
        raise TypeError("handles() needs at least one message class")

    def mark(fn: H) -> H:
        fn._artoo_handles = (*getattr(fn, "_artoo_handles", ()), *kinds)  # type: ignore[attr-defined]
        return fn

    return mark


@dataclass(frozen=True)
class Tick:
    """A timer tick told to roles that set ``wants_ticks``; ``now`` is the clock time."""

    now: float


@dataclass(frozen=True)
class Equipment:
    """What the roles of one System are built with: typed, no dict of services.

    ``megrams`` is read by the roles that read or apply memory (Memory, Dreamer; the
    Perceiver, once at start, for the accepted readings it keeps);
    ``runner`` for the Supervisor; ``tools`` names every tool an Executor may be offered.
    """

    bus: Bus
    config: Config = field(default_factory=Config)
    clock: Clock = field(default_factory=SystemClock)
    new_id: Callable[[], str] = new_id
    gateway: LLMGateway | None = None
    workspace: Path = field(default_factory=Path.cwd)
    store: Path | None = None
    operator: Operator | None = None
    ticket_operator: TicketOperator | None = None
    """Told of every ticket the Queen relays (``Config.queen.relay_at``)."""
    hold_confirmations: bool = False
    """With no ``operator``: a confirmation waits in the inbox for ``System.answer`` (denied
    at its timeout) instead of being denied at once."""
    megrams: MegramStore | None = None
    tools: ToolCatalog = field(default_factory=ToolCatalog)
    runner: Restarter | None = None
    pairs: tuple[str, ...] = ()
    sandbox: Sandbox | None = None
    """Where Executors run shell commands (None: the Law 1 parser decides instead)."""
    secrets: tuple[str, ...] = ()
    """Values never to show the model or log (credentials of ``model_options``), besides
    the host's secret-looking environment variables."""
    recorded_verdicts: RecordedVerdicts | None = None
    """Set only by ``artoo replay --rerun``: the validators take the verdict of a check that
    reads the workspace from it, as recorded (how tool calls are served instead is the tool
    catalog's ``runner``)."""
    recorded_decision: Callable[[str | None, str], ConfirmationDecision | None] | None = None
    """Set by a System resuming a task: the logged ConfirmationDecision of a request
    (task id, request id) its replay asks again — the Queen publishes it instead of asking
    the operator twice; None: not in the log."""
    question_operator: Callable[[UserQuestion], str | None] | None = None
    """Told of every question a role asks the user (``System.open(on_question=…)``): its
    answer, or None to leave the question in the inbox."""
    recorded_answer: Callable[[str | None, str], QuestionAnswered | None] | None = None
    """Set by a System resuming a task: the logged answer of a question its replay asks
    again (task id, question id) — the Queen publishes it instead of asking twice."""
    paused_s: Callable[[str, float], float] | None = None
    """Seconds a task has been paused up to a clock time (its deadline clock stood);
    None: tasks are never paused (``artoo._pause``)."""
    audit: AuditSeat | None = None
    """The Auditor's seat (its audit log, the event log, the boundary table): the runner
    gives it to the roles the roster marks ``audit=True`` only; None for every other."""
    blobs: BlobStore | None = None
    """The store's blobs, where the Executors' tools keep the before-image of every path
    a call changes (``artoo undo``); None: none are kept, so no change is reversible."""

    def model(self) -> LLMGateway:
        """The LLM gateway; RuntimeError when the System was opened without a model."""
        if self.gateway is None:
            raise RuntimeError("this System has no model (opened offline)")
        return self.gateway

    @property
    def spill_dir(self) -> Path:
        """Where tool results too large for the context are kept (``<store>/spill``)."""
        return (self.store or Path(self.workspace) / ".artoo") / "spill"


RoleContext = Equipment
"""The former name of :class:`Equipment` (kept for embedders' imports)."""


class Inbox:
    """An unbounded, never-dropping reply channel for a role that blocks in a handler.

    An Executor attempt (or a validator waiting for a human) runs inside one handler, so
    its mailbox is not read meanwhile. The replies it waits for — ConfirmationDecisions,
    the task's end — come through an Inbox instead: a bus subscription joined at a seq
    (no gap: everything committed from ``from_seq`` on is replayed first), holding every
    envelope until read. Open it with :meth:`Role.open_inbox`; close it when done.
    """

    def __init__(self) -> None:
        self._items: collections.deque[Envelope] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._closed = False
        self.subscription: Subscription | None = None

    def tell(self, message: Any) -> None:
        """Called by the bus writer with a Delivery; never blocks."""
        if isinstance(message, Delivery):
            with self._cond:
                self._items.extend(message.envelopes)
                self._cond.notify_all()

    def get(self, timeout: float | None = None) -> Envelope | None:
        """The next envelope, or None after ``timeout`` seconds / once closed and empty."""
        with self._cond:
            if not self._items and not self._closed:
                self._cond.wait_for(lambda: bool(self._items) or self._closed, timeout)
            return self._items.popleft() if self._items else None

    def drain(self) -> list[Envelope]:
        """Everything received and not yet read, without waiting."""
        with self._cond:
            out = list(self._items)
            self._items.clear()
            return out

    def wake(self) -> None:
        """End a blocked :meth:`get` (the role is stopping)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class Role(pykka.ThreadingActor):
    """Base of every role actor.

    Subclasses set ``name``, ``consumes`` (broadcast kinds), ``addressed`` (kinds received
    only when addressed ``to`` this instance), ``publishes`` (the Output contract) and
    register one handler per kind with :func:`handles`. All hooks run in the actor's own
    thread. Actor threads are daemons, so a host that forgets ``close()`` still exits.
    """

    use_daemon_thread = True

    name: ClassVar[str] = "role"
    consumes: ClassVar[tuple[type[Message], ...]] = ()
    addressed: ClassVar[tuple[type[Message], ...]] = ()
    """Kinds this role receives only when addressed to its instance (``to=instance``)."""
    publishes: ClassVar[tuple[type[Message], ...]] = ()
    """The role's Output contract: the kinds it may publish (besides RoleFailed, which any
    role publishes when it crashes). The Auditor derives its boundary table from these."""
    wants_ticks: ClassVar[bool] = False
    after_end: ClassVar[tuple[type[Message], ...]] = ()
    """Kinds still handled for a task whose FinalResult this role has seen (by default a
    role drops a task's messages after its end): for what may be published about a task
    after it ended, such as the Judge's tickets, which a monitor publishes a hop behind."""
    _handler_names: ClassVar[dict[type, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                for kind in getattr(fn, "_artoo_handles", ()):
                    table[kind] = attr
        declared = set(cls.consumes) | set(cls.addressed)
        missing = sorted(k.__name__ for k in declared if k not in table)
        if missing:
            raise TypeError(f"role {cls.__name__} consumes {', '.join(missing)} with no handler")
        extra = sorted(k.__name__ for k in table if k not in declared and k is not FinalResult)
        if extra:
            raise TypeError(f"role {cls.__name__} handles {', '.join(extra)} it does not consume")
        cls._handler_names = table

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__()
        self.ctx = equipment
        self.instance = instance
        self.sender = self.name if instance is None else f"{self.name}/{instance}"
        self.last_seq = 0
        self.log = runtime_logger(role=self.sender)
        self._current: Envelope | None = None  # only to name a crash's task
        self._finished: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._inboxes: set[Inbox] = set()
        self._handlers: dict[type, Callable[[Envelope], None]] = {
            kind: getattr(self, attr) for kind, attr in self._handler_names.items()
        }

    # ------------------------------------------------------------------ wiring
    @classmethod
    def subscribe(
        cls,
        bus: Bus,
        ref: Any,
        instance: str | None = None,
        *,
        from_seq: int | None = None,
    ) -> Subscription:
        """Subscribe ``ref`` (an instance of this role) to what it consumes, once.

        Broadcast kinds (``consumes`` and FinalResult) and addressed kinds (``addressed``,
        only ``to=instance``) share one subscription, so each committed group arrives as
        one Delivery in seq order. With ``from_seq`` (a restarted role) it first receives
        the logged envelopes from that seq on, then live ones, with no gap and no duplicate.
        """
        return bus.subscribe(
            (*cls.consumes, FinalResult),
            ref,
            to=instance,
            addressed=cls.addressed,
            from_seq=from_seq,
        )

    # ------------------------------------------------------------------ pykka hooks
    def on_start(self) -> None:
        """Runs in the actor's thread before its first message."""
        self.log.debug("role started")

    def on_stop(self) -> None:
        """Runs in the actor's thread when it stops (close or restart)."""
        for inbox in list(self._inboxes):
            inbox.wake()
        self.log.debug("role stopped")

    def on_receive(self, message: Any) -> Any:
        """Unpack a Delivery and call the handlers; runs in the actor's thread."""
        if isinstance(message, Delivery):
            for env in message.envelopes:
                self._dispatch(env)
        elif isinstance(message, Tick):
            self.on_tick(message.now)
        return None

    def _dispatch(self, env: Envelope) -> None:
        self.last_seq = env.seq
        self._current = env
        body = env.body
        if isinstance(body, FinalResult):
            handler = self._handlers.get(FinalResult)
            if handler is not None:
                handler(env)
            self._finish(body.task_id)
            return
        task_id = env.task_id
        if (
            task_id is not None
            and task_id in self._finished
            and not isinstance(body, self.after_end)
        ):
            return
        handler = self._handlers.get(type(body))
        if handler is not None:
            handler(env)

    def task_ended(self, task_id: str) -> bool:
        """True once this role has seen the task's FinalResult."""
        return task_id in self._finished

    def _finish(self, task_id: str) -> None:
        self._finished[task_id] = None
        while len(self._finished) > 100_000:
            self._finished.popitem(last=False)
        self.forget_task(task_id)

    def on_failure(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        """A handler raised: publish RoleFailed for the Supervisor. Runs in the actor's
        thread; the actor stops right after."""
        tasks = set(self.active_tasks())
        if self._current is not None and self._current.task_id is not None:
            tasks.add(self._current.task_id)
        error = f"{getattr(exception_type, '__name__', exception_type)}: {exception_value}"
        self.log.error("role crashed", error=error, tasks=sorted(tasks))
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
        task_id: str | None,
        cause: int | None,
        to: str | None = None,
    ) -> None:
        """Publish ``body`` for ``task_id``, answering the envelope at seq ``cause``."""
        self.ctx.bus.publish(body, sender=self.sender, task_id=task_id, to=to, cause=cause)

    def reply(self, env: Envelope, body: Message, *, to: str | None = None) -> None:
        """Publish ``body`` for ``env``'s task, with ``env`` as its cause."""
        self.ctx.bus.publish(body, sender=self.sender, task_id=env.task_id, to=to, cause=env.seq)

    def open_inbox(self, kinds: Iterable[type[Message]], from_seq: int) -> Inbox:
        """An :class:`Inbox` receiving ``kinds`` from ``from_seq`` on (replayed, then live).

        Close it with :meth:`close_inbox`.
        """
        inbox = Inbox()
        inbox.subscription = self.ctx.bus.subscribe(kinds, inbox, from_seq=from_seq)
        self._inboxes.add(inbox)
        return inbox

    def close_inbox(self, inbox: Inbox) -> None:
        """Stop an inbox's subscription."""
        if inbox.subscription is not None:
            self.ctx.bus.unsubscribe(inbox.subscription)
        self._inboxes.discard(inbox)

    def background(self, name: str, work: Callable[[], object]) -> threading.Thread:
        """Run ``work`` on a daemon thread named ``artoo-<role>-<name>`` (see the module's
        Threads note); an exception it raises is logged, never lost. Returns the thread."""

        def run() -> None:
            try:
                work()
            except Exception:
                self.log.exception("background work failed", work=name)

        thread = threading.Thread(target=run, name=f"artoo-{self.name}-{name}", daemon=True)
        thread.start()
        return thread

    def cancelled(self, task_id: str | None) -> bool:
        """Whether ``task_id`` was cancelled: no model call starts for it any more, and a
        step that could not finish for that reason publishes no StepFailed (the cancel
        ends the task). Runs in the actor's thread."""
        gateway = self.ctx.gateway
        return gateway is not None and gateway.stopped(task_id)

    def is_finished(self, task_id: str) -> bool:
        """True once a FinalResult for ``task_id`` reached this role."""
        return task_id in self._finished

    def active_tasks(self) -> list[str]:
        """Task ids this role holds state for (named in RoleFailed if it crashes)."""
        return []

    def forget_task(self, task_id: str) -> None:
        """Drop per-task state once the task has ended (actor thread)."""

    def on_tick(self, now: float) -> None:
        """Timer hook for roles with ``wants_ticks`` (actor thread); ``now`` is clock time."""
