"""The System facade: one store, one bus, every role — embedded in the host's process."""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import math
import re
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pykka

from artoo.actors.llm import (
    LLMGateway,
    ModelNotConfigured,
    TaskBudgets,
    backend_options,
    resolve_backend,
    resolve_models,
)
from artoo.actors.roles.auditor import AuditNow, Auditor
from artoo.actors.roles.dreamer import Dreamer, DreamNow
from artoo.actors.roles.judge import Judge, Settle
from artoo.actors.roles.memory import Memory
from artoo.actors.roles.queen import Queen
from artoo.actors.roles.roster import CONTRACTS, ROSTER
from artoo.actors.runtime.bus import Bus, Delivery
from artoo.actors.runtime.clock import Clock, IdSource, SystemClock
from artoo.actors.runtime.contracts import AuditSeat
from artoo.actors.runtime.role import (
    Equipment,
    Operator,
    RecordedVerdicts,
    Tick,
    TicketOperator,
)
from artoo.actors.runtime.runner import RoleRunner
from artoo.actors.tools import (
    Confirm,
    ImageKeeper,
    Sandbox,
    SandboxUnavailable,
    ToolRunner,
    ToolRunnerFactory,
    cleanup_spill,
    probe,
)
from artoo.actors.tools._sandbox import SCRATCH_BASES, Limits
from artoo.actors.tools.catalog import ToolCatalog
from artoo.eventstore import (
    MEMORY_EVENTS,
    AuditLog,
    AuditLogReader,
    BlobStore,
    EventLog,
    EventLogBackend,
    FileBlobStore,
    open_memory,
)
from artoo.eventstore._serve import SOCKET_NAME, LogServer
from artoo.schemas import (
    AuditReport,
    CancelRequest,
    Config,
    Cost,
    Envelope,
    EscalationTicket,
    FinalResult,
    LLMCall,
    QuestionAnswered,
    TaskCancelled,
    TicketResolved,
    UserQuestion,
    UserRequest,
    WorkspaceRestored,
)

from ._fleet import LEASE_S, Fleet, writer_id
from ._inbox import OperatorInbox
from ._pause import Pauses
from ._recovery import end_orphans, open_tasks
from ._resume import Resumer, resume_task
from ._store import StoreArg, StoreSpec, parse_store
from ._wiring import config_from as _config
from ._wiring import recorder as _recorder

__all__ = ["ModelNotConfigured", "System", "TaskHandle"]

logger = logging.getLogger("artoo")

HOST = "host"
SYSTEM = "system"
TICK_S = 0.05
_SECRET_OPTION = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
"""``model_options`` whose values are redacted from tool results (``api_key`` …)."""
CLOSE_BOUND_S = 5.0
"""``close()`` returns within about this many seconds, whatever the roles are doing."""

_open_systems: weakref.WeakSet[System] = weakref.WeakSet()

ROUTED: tuple[type, ...] = (CancelRequest, EscalationTicket, TicketResolved, LLMCall)
"""On a PostgreSQL store: what one System may log about a task another runs (the host's
cancel; the elected Judge's tickets, their resolution and its model calls). Each reaches
the roles of the System that runs the task only (``Bus(route=…)``)."""


@atexit.register
def _close_forgotten() -> None:
    """At interpreter exit, close every System the host forgot to close (bounded)."""
    for system in list(_open_systems):
        try:
            system.close()
        except Exception:  # pragma: no cover - best effort at exit
            logger.exception("closing a forgotten System at exit failed")


class TaskHandle:
    """A submitted task: its id, its one FinalResult, and a way to cancel it."""

    def __init__(self, system: System, task_id: str, future: Future[FinalResult]) -> None:
        self.system = system
        self.task_id = task_id
        self._future = future
        self.usage: Cost | None = None
        """The task's Cost (model calls, tokens, time) once it ended: ``FinalResult.cost``,
        computed by the one cost ledger (:func:`artoo.actors.runtime.ledger.task_cost`)."""

    def result(self, timeout: float | None = None) -> FinalResult:
        """Wait for the FinalResult; raises TimeoutError after ``timeout`` seconds, or the
        log's error if the event log stopped taking messages."""
        try:
            return self._future.result(timeout)
        except FutureTimeout:
            raise TimeoutError(f"task {self.task_id} has no result after {timeout} s") from None

    async def aresult(self, timeout: float | None = None) -> FinalResult:
        """Async twin of :meth:`result` for asyncio hosts."""
        return await asyncio.wait_for(asyncio.wrap_future(self._future), timeout)

    def done(self) -> bool:
        """True once the task has its FinalResult."""
        return self._future.done()

    def pause(self, reason: str = "") -> bool:
        """Pause the task: it makes no model or tool call (one under way ends first) and
        its deadline clock stops until :meth:`resume`; logged (TaskPaused), so it stays
        paused across a restart. False when it is paused already or has ended."""
        if self._future.done():
            return False
        return self.system.pauses.pause(self.task_id, reason=reason)

    def resume(self, reason: str = "") -> bool:
        """Resume the paused task (TaskUnpaused); False when it is not paused."""
        return self.system.pauses.resume(self.task_id, reason=reason)

    def cancel(self, reason: str = "cancelled by the host") -> None:
        """Ask the Queen to cancel the task (a CancelRequest); it still ends in exactly
        one FinalResult (abandon, ``reason="cancelled"``)."""
        if not self._future.done():
            self.system.budgets.stop(self.task_id)  # no model call starts after this
            self.system._publish(CancelRequest(reason=reason), task_id=self.task_id)


class _Listener(pykka.ThreadingActor):
    """A subscriber actor that hands each envelope to a Python callback (never drops)."""

    use_daemon_thread = True

    def __init__(self, callback: Callable[[Envelope], None]) -> None:
        super().__init__()
        self.callback = callback

    def on_receive(self, message: Any) -> Any:
        """Runs in the listener's thread."""
        if isinstance(message, Delivery):
            for env in message.envelopes:
                self.callback(env)
        return None


@dataclass(frozen=True)
class _Sync:
    """Asked of a role by the host to wait until its mailbox so far is handled."""


class System(OperatorInbox):
    """An artoo actor system on one store. Use :meth:`open`; close it (or use ``with``).

    Example::

        with artoo.System.open("./.artoo", model="openai/gpt-4o-mini") as system:
            result = system.run("count the python files under ./src")

    Every submitted task ends in exactly one FinalResult: at ``close()`` a task still
    running ends abandon "system closed"; a task the log shows started and never ended
    (the process was killed) is resumed from the log when the store is next opened
    (:attr:`resumed`; ``Config.recovery = "abandon"``: it ends abandon "interrupted…").
    A host that forgets ``close()`` still exits (actor threads are daemons; the System is
    closed at interpreter exit).
    """

    def __init__(
        self,
        store: Path,
        *,
        config: Config,
        workspace: Path,
        operator: Operator | None,
        clock: Clock,
        on_ticket: TicketOperator | None = None,
        inbox: bool = False,
        tools: Iterable[Callable[..., Any]],
        gateway_factory: Callable[[Bus, Clock, Callable[[], str], TaskBudgets], LLMGateway | None],
        secrets: tuple[str, ...] = (),
        runs_tools: bool = True,
        tool_runner: ToolRunnerFactory | None = None,
        recorded_verdicts: RecordedVerdicts | None = None,
        url: str | None = None,
        on_question: Callable[[UserQuestion], str | None] | None = None,
        worker: bool = False,
        concurrency: int = 1,
        lease_s: float = LEASE_S,
    ) -> None:
        self.store = store
        self.url = url
        """A PostgreSQL store's URL (``store`` is then this process's scratch directory:
        spill files and memory, the projection of the shared log); None for LevelDB."""
        self.config = config
        self.workspace = workspace
        self.clock = clock
        self.new_id = IdSource(clock)
        self.budgets = TaskBudgets()  # enforced by the gateway before each model call
        if not workspace.is_dir():
            raise FileNotFoundError(f"the workspace {workspace} is not a directory")
        self.sandbox = _sandbox_for(config, store) if runs_tools else None
        if url is None:
            _check_store(store)
        store.mkdir(parents=True, exist_ok=True)
        (store / "spill").mkdir(exist_ok=True)
        cleanup_spill(store / "spill", keep_s=config.tools.spill_keep_days * 86_400.0)
        self.log: EventLogBackend
        self.writer: str | None = None
        """On a PostgreSQL store: this System's writer id (its leases name it)."""
        self.fleet: Fleet | None = None
        """On a PostgreSQL store: its leases, heartbeats, election (:mod:`artoo._fleet`)."""
        self._follow: EventLogBackend | None = None
        if url is None:
            self.log = EventLog.open(store / "events", durability=config.durability)
        else:
            from artoo.eventstore._postgres import PostgresEventLog

            self.writer = writer_id()
            pg = PostgresEventLog.open(url, shared=True)  # many Systems append: one log
            try:
                pg.join(self.writer, worker=worker)
                self._follow = PostgresEventLog.open(url, create=False)
            except BaseException:
                pg.close()
                raise
            self.log = pg
        self._log_server: LogServer | None = None  # live reads (artoo replay), once running
        try:
            self.megrams = open_memory(  # the projection of this log, caught up
                store / "memory",
                self.log,
                attention_floor=config.memory.attention_floor,
                decision_band=config.memory.decision_band,
            )
        except BaseException:
            self.log.close()
            raise
        try:
            self._audit = _audit_seat(store, url)  # the Auditor's alone (its seat)
        except BaseException:
            self.megrams.close()
            self.log.close()
            raise
        self._closed = False
        self.blobs: BlobStore | None = None
        """The store's blobs: the before-images of the workspace changes tasks applied
        (``<store>/blobs`` files, or a PostgreSQL store's ``artoo_blobs``; :meth:`undo`)."""
        self._no_model: ModelNotConfigured | None = None
        """Set when opened with no model: reading works, :meth:`submit` raises it."""
        self._lock = threading.Lock()
        self._undo_lock = threading.Lock()  # one undo at a time: each reads the log first
        self._futures: dict[str, tuple[TaskHandle, Future[FinalResult]]] = {}
        self._remote: set[str] = set()  # submitted to the workers (they end them)
        self._taps: list[Any] = []
        self._telemetry: tuple[Any, threading.Thread, Any] | None = None
        self._failure: BaseException | None = None
        self.runner = RoleRunner()
        self._ticker_stop = threading.Event()
        self._ticker: threading.Thread | None = None
        try:
            if self._follow is not None:  # taps and memory see every writer's envelopes
                self.bus = Bus(
                    self.log,
                    clock,
                    follow=self._follow,
                    store_kinds=MEMORY_EVENTS,
                    routed_kinds=ROUTED,
                    route=self._runs_here,
                )
            else:
                self.bus = Bus(self.log, clock)
        except BaseException:
            self._audit.close()
            self.megrams.close()
            self.log.close()
            raise
        self.resumer = Resumer(sandboxed=self.sandbox is not None)
        self.pauses = Pauses(
            lambda body, task_id: self._publish(body, task_id=task_id),
            clock.now,
            self.budgets.stopped,
        )
        """The operator's pauses (:mod:`artoo._pause`)."""
        self.bus.resume_hook = self.resumer
        self.resumed: list[TaskHandle] = []
        self.interrupted: list[str] = []
        """The tasks the stopped process left open, resumed at open (``Config.recovery``)."""
        try:
            if url is not None:
                assert self.writer is not None
                self.fleet = Fleet(
                    url,
                    writer=self.writer,
                    log=self.log,
                    bus=self.bus,
                    now=clock.now,
                    begin=self._start,
                    elected=self._elected,
                    sender=SYSTEM,
                    worker=worker,
                    concurrency=concurrency,
                    lease_s=lease_s,
                )
            gateway = gateway_factory(self.bus, clock, self.new_id, self.budgets)
            # before any role runs: every task the log shows started and never ended
            to_resume: list[str] = []
            if gateway is not None:  # the log's answers first, then the pause gate
                gateway.wrap_backends(lambda b: self.resumer.backend(self.pauses.backend(b)))
            # (on a PostgreSQL store, of those with no queue row: the rest go by their leases)
            queued = None if self.fleet is None else self.fleet.queue.known
            if config.recovery == "abandon":
                self.interrupted = end_orphans(self.log, self.bus, sender=SYSTEM, skip=queued)
            elif gateway is not None:
                to_resume = open_tasks(self.log)
                if queued is not None and to_resume:
                    known = queued(to_resume)
                    to_resume = [t for t in to_resume if t not in known]
                if self.fleet is not None:
                    self.fleet.resume = functools.partial(resume_task, self)
                    for task_id in to_resume:  # resumed here: leased here
                        self.fleet.adopt(task_id)
            # opened with no model (reading): open tasks stay open, for an open that can
            # resume them
            self.blobs = _blobs_for(store, url, config)
            self.equipment = Equipment(
                bus=self.bus,
                config=config,
                clock=clock,
                new_id=self.new_id,
                gateway=gateway,
                workspace=workspace,
                store=store,
                operator=operator,
                ticket_operator=on_ticket,
                hold_confirmations=inbox,
                megrams=self.megrams,
                tools=ToolCatalog(tuple(tools), runner=tool_runner or self._tool_runner),
                runner=self.runner,
                pairs=tuple(f"pair-{i}" for i in range(config.max_parallel)),
                secrets=secrets,
                sandbox=self.sandbox,
                recorded_verdicts=recorded_verdicts,
                audit=AuditSeat(self._audit, self.log, CONTRACTS),
                recorded_decision=self.resumer.decision,
                recorded_answer=self.resumer.answer,
                question_operator=on_question,
                paused_s=self.pauses.paused_s,
                blobs=self.blobs,
            )
            self._results = _Listener.start(self._on_result)
            # on a PostgreSQL store: every writer's results (the host's tasks run anywhere)
            self.bus.subscribe(
                [FinalResult, TaskCancelled, UserQuestion, QuestionAnswered],
                self._results,
                store=True,
            )
            if self._follow is not None:  # and its own at once (twice: handled once)
                self.bus.subscribe([FinalResult, TaskCancelled], self._results)
            self.bus.on_failure(self._on_bus_failure)
            # on a PostgreSQL store the Auditor and the Judge run in the elected System only
            self.runner.start_all(
                ROSTER, self.equipment, defer=() if self.fleet is None else (Auditor, Judge)
            )
            self._telemetry = _telemetry(self.bus, config)
            self.resumed = [resume_task(self, task_id) for task_id in to_resume]
            if self.fleet is not None:
                self.fleet.start()
        except BaseException:
            self._shutdown(CLOSE_BOUND_S)
            raise
        on_advance = getattr(clock, "on_advance", None)
        if callable(on_advance):  # a ManualClock: ticks follow the clock, not wall time
            on_advance(self._tick)
        else:
            self._ticker = threading.Thread(
                target=self._tick_loop, name="artoo-ticker", daemon=True
            )
            self._ticker.start()
        if isinstance(self.log, EventLog):  # live reads of a held LevelDB store
            self._log_server = LogServer(self.log, store / SOCKET_NAME)
        _open_systems.add(self)

    @property
    def ctx(self) -> Equipment:
        """The roles' Equipment (former name)."""
        return self.equipment

    # ------------------------------------------------------------------ construction
    @classmethod
    def open(
        cls,
        store: StoreArg = "./.artoo",
        *,
        model: str | None = None,
        config: Config | Mapping[str, Any] | None = None,
        workspace: str | Path | None = None,
        operator: Operator | None = None,
        clock: Clock | None = None,
        tools: Iterable[Callable[..., Any]] = (),
        env: Mapping[str, str] | None = None,
        model_options: Mapping[str, Any] | None = None,
        on_ticket: TicketOperator | None = None,
        inbox: bool = False,
        on_question: Callable[[UserQuestion], str | None] | None = None,
        worker: bool = False,
        concurrency: int = 1,
        lease_s: float = LEASE_S,
    ) -> System:
        """Open (or create) the store and start every role.

        ``model`` is any litellm model string, or ``scripted:<path>`` for an offline
        script; without it the Config's models or ``ARTOO_MODEL`` /
        ``ARTOO_BRAIN_MODEL`` / ``ARTOO_TOOL_MODEL`` apply. With none of them the store
        still opens for reading (memory, audit, subscribe) and :meth:`submit` raises
        ModelNotConfigured, saying how to set one. ``operator`` answers Law 1
        confirmations (True approves); without one every irreversible action is denied,
        unless ``inbox=True``: then it waits in :meth:`inbox` for :meth:`answer` (denied
        at its timeout). ``on_ticket`` is told of every escalation ticket the Queen
        relays; it answers ``"cancel"``, ``"continue"``, or None to leave it in the inbox.
        ``on_question`` is told of every question a role asks the user (an ambiguous
        request, a choice the request does not settle): it answers with one of the
        question's options (free text when it has none), or None to leave it in the inbox
        for :meth:`answer`; the task waits, its deadline stopped, up to
        ``Config.question_timeout_s`` (then ``Config.question_on_timeout``).
        ``tools`` are Python functions offered to the Executors as extra tools.
        ``model_options`` go to every litellm call (``api_base``, ``api_key`` …); each
        call also gets ``timeout = config.role_timeout_s`` and ``max_tokens =
        config.max_output_tokens`` (unless ``model_options`` says otherwise).

        On a PostgreSQL store (docs/postgres.md) any number of Systems write at once.
        ``worker=True`` makes this System a worker (``artoo worker``): it leases queued
        tasks, at most ``concurrency`` at a time, each lease lasting ``lease_s`` seconds
        without a heartbeat. A non-worker System's :meth:`submit` then only enqueues
        while a worker runs. All three are for PostgreSQL stores only.
        """
        if worker and parse_store(store).url is None:
            raise ValueError("worker=True needs a PostgreSQL store (a postgresql:// URL)")
        cfg = config if isinstance(config, Config) else _config(config)
        if model is not None:
            cfg = cfg.model_copy(update={"model": model})
        try:
            models = resolve_models(cfg, env)
        except ModelNotConfigured as exc:
            no_model: ModelNotConfigured | None = exc  # reading works; submit says this
        else:
            no_model = None

        def gateway_factory(
            bus: Bus, clk: Clock, new_id: Callable[[], str], budgets: TaskBudgets
        ) -> LLMGateway | None:
            if no_model is not None:
                return None
            built: dict[str, Any] = {}  # tiers with the same model share one backend
            for name in models.values():
                if name not in built:
                    options = backend_options(name, cfg, model_options)
                    built[name] = resolve_backend(name, **options)
            backends = {tier: built[name] for tier, name in models.items()}
            return LLMGateway(
                backends,
                models,
                record=_recorder(bus),
                clock=clk,
                new_id=new_id,
                budgets=budgets,
            )

        spec = parse_store(store)
        system = cls(
            _store_dir(spec),
            url=spec.url,
            worker=worker,
            concurrency=concurrency,
            lease_s=lease_s,
            config=cfg,
            workspace=Path(workspace) if workspace is not None else Path.cwd(),
            operator=operator,
            on_ticket=on_ticket,
            inbox=inbox,
            on_question=on_question,
            clock=clock or SystemClock(),
            tools=tools,
            gateway_factory=gateway_factory,
            secrets=tuple(
                str(v)
                for k, v in dict(model_options or {}).items()
                if isinstance(v, str) and _SECRET_OPTION.search(k)
            ),
        )
        system._no_model = no_model
        return system

    @classmethod
    def open_offline(
        cls,
        store: StoreArg = "./.artoo",
        *,
        config: Config | None = None,
        workspace: str | Path | None = None,
    ) -> System:
        """Open a store with no model (memory, dreaming with fallback SOPs, inspection,
        :meth:`undo` in ``workspace``, default the current directory)."""
        spec = parse_store(store)
        return cls(
            _store_dir(spec),
            url=spec.url,
            config=config or Config(),
            workspace=Path(workspace) if workspace is not None else Path.cwd(),
            operator=None,
            clock=SystemClock(),
            tools=(),
            gateway_factory=lambda bus, clk, new_id, budgets: None,
            runs_tools=False,
        )

    # ------------------------------------------------------------------ the faces
    def submit(
        self,
        text: str,
        timeout: float | None = None,
        *,
        max_model_calls: int | None = None,
        max_tokens: int | None = None,
        deadline_s: float | None = None,
    ) -> TaskHandle:
        """Start a task and return at once with its TaskHandle.

        ``timeout`` is the task's deadline in seconds, as for :meth:`run` (default
        ``Config.task_timeout_s``); ``deadline_s`` is its former name (deprecated).

        ``max_model_calls`` / ``max_tokens`` bound the task's model use (default:
        ``Config.max_model_calls`` / ``max_tokens``): checked before each call, the call
        that would pass a budget is not made and the task ends abandon, reason
        ``budget``, ``FinalResult.budget`` naming which, the summary the figures.

        Raises RuntimeError once closed, and the log's error (wrapped in
        :class:`~artoo.actors.runtime.bus.BusError`) once the event log stopped taking messages.
        """
        if self._closed:
            raise RuntimeError("this System is closed")
        if self._failure is not None:
            raise self._failure_error()
        if self._no_model is not None:
            raise ModelNotConfigured(str(self._no_model))
        deadline_s = _deadline(timeout, deadline_s)
        if deadline_s is not None and not (math.isfinite(deadline_s) and deadline_s > 0):
            raise ValueError(
                f"a deadline must be a positive, finite number of seconds, not {deadline_s}"
            )
        calls, tokens = self.config.task_budget(max_model_calls, max_tokens)
        # a lone surrogate (a terminal's undecodable byte) cannot be logged: U+FFFD instead
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        request = UserRequest(
            text=text, deadline_s=deadline_s, max_model_calls=calls, max_tokens=tokens
        )
        task_id = self.new_id()
        fleet = self.fleet
        if fleet is not None and not fleet.worker and fleet.workers() > 0:
            handle = self._handle(task_id)  # a worker runs it; its FinalResult comes back
            with self._lock:
                self._remote.add(task_id)
            try:
                fleet.enqueue(task_id, request)
            except BaseException:
                with self._lock:
                    self._futures.pop(task_id, None)
                    self._remote.discard(task_id)
                raise
            return handle
        if fleet is not None:
            fleet.run_here(task_id, request)
        return self._start(task_id, request)

    def _handle(self, task_id: str) -> TaskHandle:
        """The task's handle: the one it has (a task submitted to the workers that this
        System then took over), or a new one."""
        with self._lock:
            entry = self._futures.get(task_id)
            if entry is not None:
                self._remote.discard(task_id)  # it runs here now
                return entry[0]
            future: Future[FinalResult] = Future()
            handle = TaskHandle(self, task_id, future)
            self._futures[task_id] = (handle, future)
        return handle

    def _start(self, task_id: str, request: UserRequest) -> TaskHandle:
        """Publish ``request`` as task ``task_id`` and return its handle (a new task, a
        resumed one: :func:`artoo._resume.resume_task`, or one a worker leased)."""
        handle = self._handle(task_id)
        self.budgets.open(task_id, request.max_model_calls, request.max_tokens)
        try:
            self._publish(request, task_id=task_id)
        except BaseException:
            with self._lock:
                self._futures.pop(task_id, None)
            self.budgets.close(task_id)
            raise
        return handle

    def _elected(self) -> None:
        """This System won the store's election: start its one Auditor and one Judge."""
        for role in (Auditor, Judge):
            self.runner.start(role, None)

    def run(
        self,
        text: str,
        timeout: float | None = None,
        *,
        max_model_calls: int | None = None,
        max_tokens: int | None = None,
    ) -> FinalResult:
        """Run a task to its FinalResult (blocks). ``timeout`` is the task's deadline;
        the budgets are :meth:`submit`'s."""
        handle = self.submit(text, timeout, max_model_calls=max_model_calls, max_tokens=max_tokens)
        return handle.result(self._wait_s(timeout))

    async def asubmit(
        self,
        text: str,
        timeout: float | None = None,
        *,
        max_model_calls: int | None = None,
        max_tokens: int | None = None,
        deadline_s: float | None = None,
    ) -> TaskHandle:
        """Async twin of :meth:`submit`."""
        return self.submit(
            text,
            _deadline(timeout, deadline_s),
            max_model_calls=max_model_calls,
            max_tokens=max_tokens,
        )

    async def arun(
        self,
        text: str,
        timeout: float | None = None,
        *,
        max_model_calls: int | None = None,
        max_tokens: int | None = None,
    ) -> FinalResult:
        """Async twin of :meth:`run`."""
        handle = self.submit(text, timeout, max_model_calls=max_model_calls, max_tokens=max_tokens)
        return await handle.aresult(self._wait_s(timeout))

    def _wait_s(self, timeout: float | None) -> float:
        # the GGS ends the task at its deadline (clock time); the host waits a margin more
        return self.config.task_deadline_s(timeout) + 30.0

    def subscribe(self, callback: Callable[[Envelope], None], *, maxsize: int = 10_000) -> Any:
        """Call ``callback`` with every envelope, from a tap thread; returns the Tap.

        A callback slower than the bus drops envelopes (counted in ``tap.dropped``;
        ``tap.catch_up()`` re-reads them from the log) — it never slows the roles.
        """
        tap = self.bus.tap(maxsize=maxsize)

        def _pump() -> None:
            for env in tap:
                try:
                    callback(env)
                except Exception:
                    logger.exception("subscriber callback failed")

        threading.Thread(target=_pump, name="artoo-subscriber", daemon=True).start()
        self._taps.append(tap)
        return tap

    def dream(self, timeout: float = 60.0) -> int:
        """Run one Dreamer pass now; returns the number of memory events it published.

        Memory first applies everything already published (so the pass sees the latest
        megrams), and applies what the pass published before this returns.
        """
        if not self.flush(timeout):
            raise TimeoutError(f"memory did not catch up within {timeout} s")
        count: int = self.runner.ref(Dreamer).ask(DreamNow(), timeout=timeout)  # type: ignore[assignment]
        if not self.flush(timeout):
            raise TimeoutError(f"memory did not apply the pass within {timeout} s")
        return int(count)

    def audit(self, timeout: float = 3.0) -> AuditReport:
        """The Auditor's report of the audit window so far (``complete=False``).

        Everything committed before the call is in it. Raises TimeoutError when the
        Auditor does not answer within ``timeout`` seconds (the paper's bound: 3 s).
        """
        if self._closed:
            raise RuntimeError("this System is closed")
        try:
            auditor = self.runner.ref(Auditor)
        except KeyError:
            raise RuntimeError(
                "the store's Auditor runs in another System (elected): read its audit log "
                "(artoo audit STORE)"
            ) from None
        try:
            report: AuditReport = auditor.ask(AuditNow(), timeout=timeout)  # type: ignore[assignment]
        except pykka.Timeout:
            raise TimeoutError(f"the Auditor did not answer within {timeout} s") from None
        return report

    @property
    def audit_log(self) -> AuditLogReader:
        """The store's audit log, read-only: ``reports()`` and ``verify()``."""
        if self.url is not None:
            from artoo.eventstore._pgaudit import PostgresAuditLogReader

            return PostgresAuditLogReader(self.url)
        return AuditLogReader(self.store / "audit")

    def undo(self, task_id: str) -> WorkspaceRestored:
        """Restore the workspace as it was before task ``task_id``'s applied changes,
        newest first, all or nothing, from the before-images its tool calls kept
        (:mod:`artoo._undo`); log it (a :class:`~artoo.schemas.WorkspaceRestored` under the
        task's id) and return it. Raises :class:`~artoo._undo.UndoRefused` (a ValueError,
        one line), having changed nothing, when the task is still running or undone
        already, changed nothing, kept no image of a change, or when a path no longer
        holds what the task left there (the line names it)."""
        from ._undo import UndoRefused, undo_task

        with self._lock:
            if task_id in self._futures:
                raise UndoRefused(f"task {task_id} is still running: undo it once it has ended")
        if self.blobs is None:  # pragma: no cover - every opened System has blobs
            raise UndoRefused("this System keeps no before-images")
        keeper = ImageKeeper(self.blobs, int(self.config.tools.undo_max_mb * 1024 * 1024))
        with self._undo_lock:
            envelopes = list(self.log.read_task(task_id))
            restored = undo_task(task_id, envelopes, self.workspace, keeper)
            self._publish(restored, task_id=task_id)
            self.bus.flush(CLOSE_BOUND_S)
        return restored

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything published so far is persisted, delivered, and applied to
        :attr:`megrams` by the Memory role (on a PostgreSQL store: everything any System
        committed so far); False if ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.bus.flush(timeout):
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        # a shared log: memory events follow it, every writer's committed so far
        store_seq = self.log.refresh() if self.url is not None else None  # type: ignore[attr-defined]
        if not self.bus.caught_up(store_seq, timeout=left):
            return False
        if self._closed:
            return True  # the roles are stopped; memory applied what it was given
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            # delivered is not yet applied: an ask waits behind every message in the mailbox
            self.runner.ref(Memory).ask(_Sync(), timeout=left)
        except (pykka.Timeout, pykka.ActorDeadError):
            return False
        return True

    # ------------------------------------------------------------------ internals
    def _tool_runner(self, live: ToolRunner, *, task_id: str, confirm: Confirm) -> ToolRunner:
        """One attempt's tool runner: the log's results of a resumed task first, then the
        pause gate, then ``live``."""
        gated = self.pauses.tools(live, task_id)
        return self.resumer.runner(gated, task_id=task_id, confirm=confirm)

    def _pause_answer(self, task_id: str, decision: str) -> str | None:
        """``answer(task_id, "pause" | "resume")``: why not, or None when done."""
        with self._lock:
            known = task_id in self._futures
        if not known:
            return f"no running task {task_id}"
        if decision == "pause":
            return None if self.pauses.pause(task_id, by="operator") else "already paused"
        return None if self.pauses.resume(task_id, by="operator") else "not paused"

    def _publish(self, body: Any, *, task_id: str | None = None) -> None:
        self.bus.publish(body, sender=HOST, task_id=task_id)

    def _on_result(self, env: Envelope) -> None:
        if isinstance(env.body, UserQuestion | QuestionAnswered):  # the deadline stands
            if env.task_id is not None:
                if isinstance(env.body, UserQuestion):
                    self.pauses.asked(env.task_id, env.ts)
                else:
                    self.pauses.answered(env.task_id, env.ts)
            return
        if isinstance(env.body, TaskCancelled):  # a cancel the Queen decided (a ticket)
            if env.task_id is not None:
                self.budgets.stop(env.task_id)
            return
        result: FinalResult = env.body
        self.budgets.close(result.task_id)
        if self.fleet is not None:
            self.fleet.ended(result.task_id)
        self.pauses.forget(result.task_id)
        with self._lock:
            entry = self._futures.pop(result.task_id, None)
            self._remote.discard(result.task_id)
        if entry is not None:
            handle, future = entry
            handle.usage = result.cost
            if not future.done():
                future.set_result(result)

    def _runs_here(self, env: Envelope) -> bool:
        """The bus's route on a PostgreSQL store: a message about a task goes to this
        System's roles only while this System runs the task (no task: always), and not
        when it is history a resume here replays (:meth:`artoo._resume.Resumer.replays`:
        the stopped worker's model calls, read late from the shared log, would count twice)."""
        if env.task_id is None or self.fleet is None:
            return True
        return self.fleet.runs(env.task_id) and not self.resumer.replays(env.task_id, env.seq)

    def _failure_error(self) -> BaseException:
        from artoo.actors.runtime.bus import BusError

        return BusError(f"the event log stopped taking messages: {self._failure!r}")

    def _on_bus_failure(self, exc: BaseException) -> None:
        """The log append failed (disk full …): every waiting handle fails at once."""
        self._failure = exc
        error = self._failure_error()
        with self._lock:
            pending = list(self._futures.values())
            self._futures.clear()
        for _, future in pending:
            if not future.done():
                future.set_exception(error)

    def _tick(self, now: float) -> None:
        for running in self.runner.running():
            if running.role.wants_ticks:
                try:
                    running.ref.tell(Tick(now))
                except pykka.ActorDeadError:
                    pass

    def _tick_loop(self) -> None:
        while not self._ticker_stop.wait(TICK_S):
            self._tick(self.clock.now())

    def close(self, timeout: float = CLOSE_BOUND_S) -> None:
        """End every running task, stop the roles, close the log and the memory store.

        Tasks still running end first with FinalResult(abandon, "system closed"). Returns
        within about ``timeout`` seconds (default :data:`CLOSE_BOUND_S`) even when a role
        is stuck in a model call or a tool (its daemon thread is left to end with the
        process; what it would publish after the close is not logged).
        """
        if self._closed:
            return
        _open_systems.discard(self)
        deadline = time.monotonic() + max(0.5, timeout)
        if self.fleet is not None:
            self.fleet.stop()  # no more leases or claims
        self._end_running_tasks(deadline - min(1.5, 0.3 * timeout))
        self._closed = True
        self._ticker_stop.set()
        if self._ticker is not None:
            self._ticker.join(1.0)
        self._shutdown(max(0.5, deadline - time.monotonic()))

    def _end_running_tasks(self, until: float) -> None:
        """Cancel (closing) every submitted task still open; the GGS ends each. Past
        ``until`` the System ends what is left itself."""
        with self._lock:  # not those the workers run: they end them
            open_tasks = [t for t in self._futures if t not in self._remote]
        if not open_tasks or self._failure is not None:
            return
        try:
            for task_id in open_tasks:
                self._publish(TaskCancelled(reason="system closed", closing=True), task_id=task_id)
            while time.monotonic() < until:
                with self._lock:
                    if not any(t in self._futures for t in open_tasks):
                        return
                time.sleep(0.01)
            with self._lock:  # the GGS did not answer in time: end them here
                left = [t for t in open_tasks if t in self._futures]
            for task_id in left:
                self.bus.publish(
                    FinalResult(
                        task_id=task_id, status="abandon", summary="system closed", reason="closed"
                    ),
                    sender=SYSTEM,
                    task_id=task_id,
                )
            self.bus.flush(max(0.1, until + 1.0 - time.monotonic()))
        except Exception:
            logger.exception("ending running tasks at close failed")

    def _settle(self, until: float) -> None:
        """Before the roles stop: log what is published about a task after its end. The
        Judge judges a hop behind the bus, so its tickets about a task that just ended (and
        their ``task_ended`` resolutions) may not be out yet; the Queen acknowledges each
        ticket below ``queen.relay_at`` even after the end. Stopping the roles all at once
        raced those two — the Judge's stop-time tickets reached a Queen already stopped or
        not — so whether a log held the Queen's TicketResolved depended on thread timing,
        and a rerun of the log could differ from it. Here the Judge judges everything
        committed, the Queen handles what that delivered, until nothing new is published."""
        try:
            judge, queen = self.runner.ref(Judge), self.runner.ref(Queen)
        except KeyError:  # not this System's Judge (a fleet's elected one), or no roles
            return
        for _ in range(4):
            before = self.bus.last_seq
            for ref, message in ((judge, Settle()), (queen, _Sync())):
                left = until - time.monotonic()
                if left <= 0:
                    return
                try:
                    ref.ask(message, timeout=left)
                except (pykka.Timeout, pykka.ActorDeadError):
                    return
                if not self.bus.flush(max(0.0, until - time.monotonic())):
                    return
            if self.bus.last_seq == before:
                return

    def _shutdown(self, bound_s: float) -> None:
        self._closed = True
        if hasattr(self, "pauses"):
            self.pauses.close()  # a call waiting at the pause gate is not made
        deadline = time.monotonic() + bound_s
        try:
            self.bus.flush(max(0.1, bound_s / 3))
            self.bus.caught_up(timeout=max(0.1, bound_s / 3))  # the last results told
            self._settle(deadline - 0.5 - bound_s / 6)
        except Exception:
            logger.exception("flush on close failed")
        self.runner.stop_all(max(0.1, deadline - time.monotonic() - 0.5))
        if hasattr(self, "_results"):
            try:
                self._results.stop(block=True, timeout=0.5)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass
        for tap in self._taps:
            tap.close()
        if self._telemetry is not None:  # the last tasks' spans, then stop (bounded)
            exporter, pump, tap = self._telemetry
            tap.close()
            pump.join(max(0.1, min(1.0, deadline - time.monotonic())))
            exporter.close(max(0.2, min(2.0, deadline - time.monotonic())))
        try:
            self.bus.close(max(0.1, deadline - time.monotonic()))
        except Exception:
            logger.exception("closing the bus failed")
        finally:
            if self.fleet is not None:
                self.fleet.close()
            self._audit.close()
            self.megrams.close()
            if self.blobs is not None:
                self.blobs.close()
            if self._log_server is not None:
                self._log_server.close()
            if self._follow is not None:
                self._follow.close()
            self.log.close()
            if self.url is not None:  # this process's scratch of a PostgreSQL store
                shutil.rmtree(self.store, ignore_errors=True)
        with self._lock:
            for _, future in self._futures.values():
                if not future.done():
                    future.set_exception(
                        RuntimeError("the System was closed before the task ended")
                    )
            self._futures.clear()

    def __enter__(self) -> System:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_STORE_ENTRIES = frozenset(
    {
        "events",
        "blobs",
        "memory",
        "audit",
        "spill",
        "fork.json",
        "repl_history",
        "memory.rebuild",
        SOCKET_NAME,
    }
)
"""What a store directory holds; a directory with anything else is not made a store."""


def _blobs_for(store: Path, url: str | None, config: Config) -> BlobStore:
    """The blob store of a store: ``<store>/blobs`` files, durable as the log is
    (``Config.durability``), or a PostgreSQL store's ``artoo_blobs`` table."""
    if url is not None:
        from artoo.eventstore import PostgresBlobStore

        return PostgresBlobStore(url)
    return FileBlobStore(store / "blobs", durability=config.durability)


def _store_dir(spec: StoreSpec) -> Path:
    """The directory a System keeps its store in: a LevelDB store's own, or for a
    PostgreSQL store a scratch directory of this process (spill files; memory, the
    projection of the shared log, rebuilt from it at open)."""
    if spec.path is not None:
        return spec.path
    return Path(tempfile.mkdtemp(prefix=f"artoo-{spec.name}-"))


def _audit_seat(store: Path, url: str | None) -> AuditLog:
    """The Auditor's writable audit log: ``<store>/audit``, or the PostgreSQL store's."""
    if url is None:
        return AuditLog(store / "audit")
    from artoo.eventstore._pgaudit import PostgresAuditLog

    return PostgresAuditLog(url, store / "audit")  # the watermark in this process's scratch


def _check_store(store: Path) -> None:
    """A store is a new or empty directory, or one that already is a store: a file, or a
    directory holding other things, is refused in one line (never made a store)."""
    if store.exists() and not store.is_dir():
        raise ValueError(f"the store {store} is a file: give a directory (new or empty)")
    if store.is_dir() and not (store / "events").is_dir():
        other = sorted(p.name for p in store.iterdir() if p.name not in _STORE_ENTRIES)
        if other:
            shown = ", ".join(other[:3]) + (" …" if len(other) > 3 else "")
            raise ValueError(
                f"{store} is not an artoo store (no events/) and is not empty ({shown}): "
                "give a new or empty directory, or an existing store"
            )


def _deadline(
    timeout: float | None, deadline_s: float | None, *, stacklevel: int = 3
) -> float | None:
    """``submit``'s deadline: ``timeout``, or the deprecated ``deadline_s``."""
    if deadline_s is None:
        return timeout
    warnings.warn(
        "submit(deadline_s=…) is deprecated: use timeout=…, as for run()",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    if timeout is not None and timeout != deadline_s:
        raise ValueError("give the deadline once: timeout (deadline_s is its former name)")
    return deadline_s


def _telemetry(bus: Bus, config: Config) -> tuple[Any, threading.Thread, Any] | None:
    """With ``config.telemetry.otlp_endpoint``: the live exporter, fed by a tap of its own
    on a thread of its own (off the bus's hot path)."""
    if not config.telemetry.otlp_endpoint:
        return None
    from ._telemetry import LiveExporter

    exporter = LiveExporter(config.telemetry)
    tap = bus.tap(maxsize=100_000)

    def pump() -> None:
        for env in tap:
            try:
                exporter(env)
            except Exception:
                logger.exception("live telemetry failed on seq %s", env.seq)

    thread = threading.Thread(target=pump, name="artoo-telemetry", daemon=True)
    thread.start()
    return exporter, thread, tap


_warned_no_sandbox = False


def hidden_paths(config: Config) -> tuple[Path, ...]:
    """``config.tools.hide`` with ``~`` expanded, those that exist."""
    paths = (Path(p).expanduser() for p in config.tools.hide)
    return tuple(p.resolve() for p in paths if p.exists() or p.is_symlink())


def sandbox_limits(config: Config) -> Limits:
    """The sandbox's limits from ``config.tools.limits`` (MiB to bytes)."""
    c, mib = config.tools.limits, 1 << 20
    return Limits(
        write_bytes=c.write_mb * mib,
        write_files=c.write_files,
        tmp_bytes=c.tmp_mb * mib,
        memory_bytes=c.memory_mb * mib,
        processes=c.processes,
        open_files=c.open_files,
        ask_bytes=c.ask_mb * mib,
        ask_files=c.ask_files,
    )


def _sandbox_for(config: Config, store: Path) -> Sandbox | None:
    """The sandbox ``config.tools.sandbox`` asks for: None for ``off``; for ``auto`` None
    (and a one-time warning) where the machine cannot make one; for ``required``
    SandboxUnavailable there."""
    global _warned_no_sandbox
    mode = config.tools.sandbox
    if mode == "off":
        return None
    reasons = []
    for base in SCRATCH_BASES:  # the upper layer cannot live on an overlay (a container's /)
        why = probe(network=config.tools.network, scratch_base=base)
        if why is None:
            # the store is hidden from commands (it may lie inside the workspace)
            return Sandbox(
                network=config.tools.network,
                scratch_base=base,
                hide=(store.resolve(), *hidden_paths(config)),
                read=tuple(
                    Path(p).expanduser() for p in config.tools.read if Path(p).expanduser().exists()
                ),
                limits=sandbox_limits(config),
            )
        reasons.append(why)
    why = reasons[0]
    if mode == "required":
        raise SandboxUnavailable(f"tools.sandbox is 'required' but {why}")
    if not _warned_no_sandbox:
        _warned_no_sandbox = True
        msg = (
            f"artoo: no sandbox ({why}); shell commands are judged by reading them "
            "(the Law 1 parser). Set tools.sandbox = 'required' to refuse to run without one."
        )
        logger.warning(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    return None
