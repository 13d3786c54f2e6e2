"""The System facade: one store, one bus, every role — embedded in the host's process."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pykka

from artoo.actors.agent_validator import AgentValidator
from artoo.actors.base import Operator, Role, RoleContext, Tick
from artoo.actors.bus import Bus, Delivery
from artoo.actors.clock import Clock, IdSource, SystemClock
from artoo.actors.dispatcher import Dispatcher
from artoo.actors.dreamer import Dreamer, DreamNow
from artoo.actors.executor import Executor
from artoo.actors.ggs import GGS
from artoo.actors.llm import (
    LLMGateway,
    ModelNotConfigured,
    UsageTotals,
    resolve_backend,
    resolve_models,
)
from artoo.actors.memory import Memory
from artoo.actors.meta_validator import MetaValidator
from artoo.actors.perceiver import Perceiver
from artoo.actors.planner import Planner
from artoo.actors.queen import Queen
from artoo.actors.supervisor import Supervisor
from artoo.eventstore import EventLog
from artoo.eventstore.megrams import MegramStore
from artoo.memoryview import catch_up_memory
from artoo.schemas import Config, Envelope, FinalResult, TaskCancelled, UserRequest

__all__ = ["ModelNotConfigured", "System", "TaskHandle"]

logger = logging.getLogger("artoo")

HOST = "host"
TICK_S = 0.05


class TaskHandle:
    """A submitted task: its id, its one FinalResult, and a way to cancel it."""

    def __init__(self, system: System, task_id: str, future: Future[FinalResult]) -> None:
        self.system = system
        self.task_id = task_id
        self._future = future
        self.usage: UsageTotals | None = None
        """The gateway's own count of the task's model calls, set when the task ends."""

    def result(self, timeout: float | None = None) -> FinalResult:
        """Wait for the FinalResult; raises TimeoutError after ``timeout`` seconds."""
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

    def cancel(self, reason: str = "cancelled by the host") -> None:
        """Ask the system to end the task; it still ends in exactly one FinalResult."""
        if not self._future.done():
            self.system._publish(TaskCancelled(reason=reason), task_id=self.task_id)


class _Listener(pykka.ThreadingActor):
    """A subscriber actor that hands each envelope to a Python callback (never drops)."""

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


@dataclass
class _Running:
    cls: type[Role]
    instance: str | None
    ref: pykka.ActorRef[Any]


class System:
    """An artoo actor system on one store. Use :meth:`open`; close it (or use ``with``).

    Example::

        with artoo.System.open("./.artoo", model="openai/gpt-4o-mini") as system:
            result = system.run("count the python files under ./src")
    """

    def __init__(
        self,
        store: Path,
        *,
        config: Config,
        workspace: Path,
        operator: Operator | None,
        clock: Clock,
        tools: Iterable[Callable[..., Any]],
        gateway_factory: Callable[[Bus, Clock, Callable[[], str]], LLMGateway | None],
    ) -> None:
        self.store = store
        self.config = config
        self.workspace = workspace
        self.clock = clock
        self.new_id = IdSource(clock)
        store.mkdir(parents=True, exist_ok=True)
        (store / "spill").mkdir(exist_ok=True)
        self.log = EventLog.open(store / "events", durability=config.durability)
        try:
            self.megrams = MegramStore.open(store / "memory")
        except BaseException:
            self.log.close()
            raise
        catch_up_memory(self.log, self.megrams)  # the store is a projection of the log
        self.bus = Bus(self.log, clock)
        self._closed = False
        self._lock = threading.Lock()
        self._futures: dict[str, tuple[TaskHandle, Future[FinalResult]]] = {}
        self._running: dict[str, _Running] = {}
        self._taps: list[Any] = []
        try:
            gateway = gateway_factory(self.bus, clock, self.new_id)
            pairs = [f"pair-{i}" for i in range(config.max_parallel)]
            tool_list = list(tools)
            self.ctx = RoleContext(
                bus=self.bus,
                config=config,
                clock=clock,
                new_id=self.new_id,
                gateway=gateway,
                workspace=workspace,
                store=store,
                operator=operator,
                services={
                    "megrams": self.megrams,
                    "pairs": pairs,
                    "host_tools": tool_list,
                    "tool_names": ["glob", "read_file", "write_file", "shell", "load_data"]
                    + [fn.__name__ for fn in tool_list],
                    "restart": self._restart,
                },
            )
            self._results = _Listener.start(self._on_result)
            self.bus.subscribe([FinalResult], self._results)
            for cls in (
                Supervisor,
                GGS,
                Memory,
                Dreamer,
                Queen,
                Perceiver,
                Planner,
                Dispatcher,
                MetaValidator,
            ):
                self._start(cls, None)
            for pair in pairs:
                self._start(Executor, pair)
                self._start(AgentValidator, pair)
        except BaseException:
            self._shutdown()
            raise
        self._ticker_stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick_loop, name="artoo-ticker", daemon=True)
        self._ticker.start()

    # ------------------------------------------------------------------ construction
    @classmethod
    def open(
        cls,
        store: str | Path = "./.artoo",
        *,
        model: str | None = None,
        config: Config | Mapping[str, Any] | None = None,
        workspace: str | Path | None = None,
        operator: Operator | None = None,
        clock: Clock | None = None,
        tools: Iterable[Callable[..., Any]] = (),
        env: Mapping[str, str] | None = None,
        model_options: Mapping[str, Any] | None = None,
    ) -> System:
        """Open (or create) the store and start every role.

        ``model`` is any litellm model string, or ``scripted:<path>`` for an offline
        script; without it the Config's models or ``ARTOO_MODEL`` /
        ``ARTOO_BRAIN_MODEL`` / ``ARTOO_TOOL_MODEL`` apply, and with none of them
        ModelNotConfigured says how to set one. ``operator`` answers Law 1
        confirmations (True approves); without one every irreversible action is denied.
        ``tools`` are Python functions offered to the Executors as extra tools.
        ``model_options`` go to every litellm call (``api_base``, ``api_key`` …); each
        call also gets ``timeout = config.role_timeout_s``.
        """
        cfg = config if isinstance(config, Config) else Config(**dict(config or {}))
        if model is not None:
            cfg = cfg.model_copy(update={"model": model})
        models = resolve_models(cfg, env)

        def gateway_factory(bus: Bus, clk: Clock, new_id: Callable[[], str]) -> LLMGateway:
            built: dict[str, Any] = {}  # tiers with the same model share one backend
            for name in models.values():
                if name not in built:
                    options = (
                        {}
                        if name.startswith("scripted:")
                        else {"timeout": cfg.role_timeout_s, **dict(model_options or {})}
                    )
                    built[name] = resolve_backend(name, **options)
            backends = {tier: built[name] for tier, name in models.items()}
            return LLMGateway(backends, models, record=_recorder(bus), clock=clk, new_id=new_id)

        return cls(
            Path(store),
            config=cfg,
            workspace=Path(workspace) if workspace is not None else Path.cwd(),
            operator=operator,
            clock=clock or SystemClock(),
            tools=tools,
            gateway_factory=gateway_factory,
        )

    @classmethod
    def open_offline(
        cls, store: str | Path = "./.artoo", *, config: Config | None = None
    ) -> System:
        """Open a store with no model (memory, dreaming with fallback SOPs, inspection)."""
        return cls(
            Path(store),
            config=config or Config(),
            workspace=Path.cwd(),
            operator=None,
            clock=SystemClock(),
            tools=(),
            gateway_factory=lambda bus, clk, new_id: None,
        )

    def _start(self, role: type[Role], instance: str | None, from_seq: int | None = None) -> None:
        ref = role.start(self.ctx, instance)
        role.subscribe(self.bus, ref, instance, from_seq=from_seq)
        sender = role.name if instance is None else f"{role.name}/{instance}"
        self._running[sender] = _Running(role, instance, ref)

    def _restart(self, sender: str, from_seq: int) -> bool:
        running = self._running.get(sender)
        if running is None or self._closed:
            return False
        if not running.ref.actor_stopped.wait(5.0):
            return False  # still alive: a clean failure of one task, not a crash
        self._start(running.cls, running.instance, from_seq=from_seq)
        return True

    # ------------------------------------------------------------------ the faces
    def submit(self, text: str, *, deadline_s: float | None = None) -> TaskHandle:
        """Start a task and return at once with its TaskHandle."""
        if self._closed:
            raise RuntimeError("this System is closed")
        task_id = self.new_id()
        future: Future[FinalResult] = Future()
        handle = TaskHandle(self, task_id, future)
        with self._lock:
            self._futures[task_id] = (handle, future)
        self._publish(UserRequest(text=text, deadline_s=deadline_s), task_id=task_id)
        return handle

    def run(self, text: str, timeout: float | None = None) -> FinalResult:
        """Run a task to its FinalResult (blocks)."""
        handle = self.submit(text, deadline_s=timeout)
        wait = None if timeout is None else timeout + 30.0
        return handle.result(wait)

    async def asubmit(self, text: str, *, deadline_s: float | None = None) -> TaskHandle:
        """Async twin of :meth:`submit`."""
        return self.submit(text, deadline_s=deadline_s)

    async def arun(self, text: str, timeout: float | None = None) -> FinalResult:
        """Async twin of :meth:`run`."""
        handle = self.submit(text, deadline_s=timeout)
        return await handle.aresult(None if timeout is None else timeout + 30.0)

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
        count = self._running["dreamer"].ref.ask(DreamNow(), timeout=timeout)
        if not self.flush(timeout):
            raise TimeoutError(f"memory did not apply the pass within {timeout} s")
        return int(count)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything published so far is persisted, delivered, and applied to
        :attr:`megrams` by the Memory role; False if ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.bus.flush(timeout):
            return False
        if self._closed:
            return True  # the roles are stopped; memory applied what it was given
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            # delivered is not yet applied: an ask waits behind every message in the mailbox
            self._running["memory"].ref.ask(_Sync(), timeout=left)
        except (pykka.Timeout, pykka.ActorDeadError):
            return False
        return True

    # ------------------------------------------------------------------ internals
    def _publish(self, body: Any, *, task_id: str | None = None) -> None:
        self.bus.publish(body, sender=HOST, task_id=task_id)

    def _on_result(self, env: Envelope) -> None:
        result: FinalResult = env.body
        gateway = self.ctx.gateway
        usage = gateway.forget(result.task_id) if gateway is not None else None
        with self._lock:
            entry = self._futures.pop(result.task_id, None)
        if entry is not None:
            handle, future = entry
            handle.usage = usage
            if not future.done():
                future.set_result(result)

    def _tick_loop(self) -> None:
        while not self._ticker_stop.wait(TICK_S):
            now = self.clock.now()
            for running in list(self._running.values()):
                if running.cls.wants_ticks:
                    try:
                        running.ref.tell(Tick(now))
                    except pykka.ActorDeadError:
                        pass

    def close(self) -> None:
        """Stop every role, flush and close the log and the memory store."""
        if self._closed:
            return
        self._closed = True
        if hasattr(self, "_ticker_stop"):
            self._ticker_stop.set()
            self._ticker.join(2.0)
        self._shutdown()

    def _shutdown(self) -> None:
        self._closed = True
        try:
            self.bus.flush(10.0)
        except Exception:
            logger.exception("flush on close failed")
        for running in list(self._running.values()):
            try:
                running.ref.stop(block=True, timeout=10.0)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass
        if hasattr(self, "_results"):
            try:
                self._results.stop(block=True, timeout=5.0)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass
        for tap in self._taps:
            tap.close()
        try:
            self.bus.close()
        finally:
            self.megrams.close()
            self.log.close()
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


def _recorder(bus: Bus) -> Callable[..., None]:
    """The gateway's record callback: every LLMCall goes on the bus."""

    def record(call: Any, task_id: str | None = None) -> None:
        bus.publish(call, sender=call.role, task_id=task_id)

    return record
