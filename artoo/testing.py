"""Test helpers shipped with artoo: a manual clock, a throw-away store, a recording subscriber.

Example::

    from artoo.testing import ManualClock, Recorder, temporary_store

    with temporary_store() as store, EventLog.open(store / "events") as log:
        bus = Bus(log, clock=ManualClock())
        with Recorder() as recorder:
            bus.subscribe([TaskRequest], recorder.ref)
            bus.publish(TaskRequest(text="hi"), sender="queen")
            assert recorder.wait_for(1)
            assert recorder.envelopes[0].body.text == "hi"
        bus.close()
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import msgspec
import pykka

from artoo.actors.runtime.bus import Delivery
from artoo.actors.runtime.clock import ManualClock, Timer
from artoo.schemas import Envelope

from ._pgserver import PostgresServer, PostgresUnavailable, postgres_server

__all__ = [
    "ManualClock",
    "PostgresServer",
    "PostgresUnavailable",
    "Recorder",
    "RoleHarness",
    "Timer",
    "postgres_server",
    "start_worker",
    "temporary_store",
    "write_script",
]


# --------------------------------------------------------------------------- store
@contextmanager
def temporary_store() -> Iterator[Path]:
    """A fresh, empty store directory, removed afterwards.

    Example::

        with temporary_store() as store:
            log = EventLog.open(store / "events")
    """
    path = Path(tempfile.mkdtemp(prefix="artoo-store-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- recorder
class _RecorderActor(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self, sink: Callable[[Any], None]) -> None:
        super().__init__()
        self._sink = sink

    def on_receive(self, message: Any) -> None:
        self._sink(message)


class Recorder:
    """A subscriber actor that records every envelope it is told (as Delivery or Envelope).

    Subscribe ``recorder.ref``; read ``recorder.envelopes`` (a snapshot, in arrival order);
    ``wait_for(n)`` or ``wait_for(predicate)`` to block until they arrive; ``stop()`` it
    (or use it as a context manager).

    Example::

        with Recorder() as recorder:
            bus.subscribe(None, recorder.ref)
            bus.publish(TaskCancelled(reason="x"), sender="host")
            assert recorder.wait_for(lambda envs: envs[-1].kind == "TaskCancelled")
    """

    def __init__(self) -> None:
        """Start the actor."""
        self._cond = threading.Condition()
        self._envelopes: list[Envelope] = []
        self._deliveries = 0
        self.ref: pykka.ActorRef[Any] = _RecorderActor.start(self._record)

    def _record(self, message: Any) -> None:
        with self._cond:
            if isinstance(message, Delivery):
                self._envelopes.extend(message.envelopes)
                self._deliveries += 1
            elif isinstance(message, Envelope):
                self._envelopes.append(message)
                self._deliveries += 1
            else:
                return
            self._cond.notify_all()

    @property
    def envelopes(self) -> list[Envelope]:
        """A copy of everything received so far, in arrival order."""
        with self._cond:
            return list(self._envelopes)

    @property
    def deliveries(self) -> int:
        """How many mailbox messages (Delivery or Envelope) arrived."""
        with self._cond:
            return self._deliveries

    def wait_for(
        self,
        predicate_or_count: int | Callable[[list[Envelope]], bool],
        timeout: float = 5.0,
    ) -> bool:
        """Block until ``count`` envelopes arrived, or ``predicate(envelopes)`` holds.

        The predicate sees the live list (read it, do not keep or change it) and runs
        each time something arrives. Returns False when ``timeout`` seconds pass first.
        """
        check: Callable[[list[Envelope]], bool]
        if isinstance(predicate_or_count, int):
            count = predicate_or_count

            def check(envelopes: list[Envelope]) -> bool:
                return len(envelopes) >= count
        else:
            check = predicate_or_count
        deadline = time.monotonic() + timeout
        with self._cond:
            while not check(self._envelopes):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def stop(self) -> None:
        """Stop the actor (idempotent); later tells raise pykka.ActorDeadError."""
        if self.ref.is_alive():
            self.ref.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def write_script(path: str | Path, entries: list[dict[str, Any]]) -> str:
    """Write ``entries`` as a ``scripted:`` TOML script; returns the model string.

    Each entry is one ``[[response]]`` table (keys as in the README's script format)::

        model = write_script(tmp_path / "s.toml", [
            {"role": "perceiver", "content": {"intent": "say hello", "slug": "hello"}},
            {"role": "planner", "content": {"subtasks": [{"instruction": "Say hello"}]}},
            {"role": "executor", "content": "hello"},
        ])
        with artoo.System.open(tmp_path / "store", model=model) as system: ...
    """
    lines: list[str] = []
    for entry in entries:
        lines.append("[[response]]")
        lines.extend(f"{key} = {_toml(value)}" for key, value in entry.items())
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"scripted:{path}"


def _toml(value: object) -> str:
    if isinstance(value, str):
        return msgspec.json.encode(value).decode()  # a JSON string is a TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


# --------------------------------------------------------------------------- role harness
class RoleHarness:
    """Runs ONE role against a bus of its own (over an in-memory event log) and records
    what it publishes.

    The role gets real Equipment (a scripted model when ``model`` is given, the
    workspace, a MegramStore in a temporary directory when ``megrams=True``); you
    :meth:`send` it messages as any sender, and read back what it published.

    Example::

        with RoleHarness(Queen) as h:
            h.send(UserRequest(text="hi"), task_id="t1")
            (request,) = h.wait_for(TaskRequest)
            assert request.body.text == "hi"
    """

    def __init__(
        self,
        role: type[Any],
        *,
        instance: str | None = None,
        model: str | None = None,
        config: Any = None,
        workspace: str | Path | None = None,
        operator: Callable[[Any], bool | None] | None = None,
        ticket_operator: Callable[[Any], str | None] | None = None,
        hold_confirmations: bool = False,
        clock: Any = None,
        megrams: bool = False,
        tools: tuple[Callable[..., Any], ...] = (),
        pairs: tuple[str, ...] = ("pair-0",),
    ) -> None:
        from artoo.actors.llm import LLMGateway, resolve_backend
        from artoo.actors.runtime.bus import Bus
        from artoo.actors.runtime.clock import IdSource, SystemClock
        from artoo.actors.runtime.role import Equipment
        from artoo.actors.tools.catalog import ToolCatalog
        from artoo.eventstore import InMemoryEventLog, MegramStore
        from artoo.schemas import Config

        self._dir = Path(tempfile.mkdtemp(prefix="artoo-harness-"))
        self.clock = clock or SystemClock()
        self.log = InMemoryEventLog()
        self.bus = Bus(self.log, self.clock)
        self.megrams = MegramStore.open(self._dir / "memory") if megrams else None
        cfg = config if config is not None else Config()
        new_id = IdSource(self.clock)
        gateway = None
        if model is not None:
            backend = resolve_backend(model)
            bus = self.bus
            gateway = LLMGateway(
                {"brain": backend, "tool": backend},
                {"brain": model, "tool": model},
                record=lambda call, task_id: bus.publish(call, sender=call.role, task_id=task_id),
                clock=self.clock,
                new_id=new_id,
            )
        self.equipment = Equipment(
            bus=self.bus,
            config=cfg,
            clock=self.clock,
            new_id=new_id,
            gateway=gateway,
            workspace=Path(workspace) if workspace is not None else self._dir / "workspace",
            store=self._dir,
            operator=operator,
            ticket_operator=ticket_operator,
            hold_confirmations=hold_confirmations,
            megrams=self.megrams,
            tools=ToolCatalog(tuple(tools)),
            pairs=pairs,
        )
        self.equipment.workspace.mkdir(parents=True, exist_ok=True)
        self.recorder = Recorder()
        self.bus.subscribe(None, self.recorder.ref)
        self.role = role
        self.sender = role.name if instance is None else f"{role.name}/{instance}"
        self.ref = role.start(self.equipment, instance)
        role.subscribe(self.bus, self.ref, instance)

    def send(
        self, body: Any, *, task_id: str | None = "t1", to: str | None = None, sender: str = "test"
    ) -> None:
        """Publish ``body`` as ``sender`` (the role receives it if it consumes it)."""
        self.bus.publish(body, sender=sender, task_id=task_id, to=to)

    def tick(self, now: float | None = None) -> None:
        """Tell the role a timer tick at ``now`` (default: the clock's time)."""
        from artoo.actors.runtime.role import Tick

        self.ref.tell(Tick(self.clock.now() if now is None else now))

    def published(self, kind: type | None = None) -> list[Envelope]:
        """What the role published so far (optionally only ``kind``), in seq order."""
        self.bus.flush(10)
        self.recorder.ref.ask(None, timeout=10)  # delivered is not yet recorded: catch up
        return [
            e
            for e in self.recorder.envelopes
            if e.sender.startswith(self.role.name) and (kind is None or isinstance(e.body, kind))
        ]

    def wait_for(self, kind: type, count: int = 1, timeout: float = 10.0) -> list[Envelope]:
        """Block until the role published ``count`` envelopes of ``kind``; returns them.

        Raises AssertionError naming what it did publish when ``timeout`` passes first.
        """

        def enough(envelopes: list[Envelope]) -> bool:
            mine = [
                e
                for e in envelopes
                if e.sender.startswith(self.role.name) and isinstance(e.body, kind)
            ]
            return len(mine) >= count

        if not self.recorder.wait_for(enough, timeout):
            got = [type(e.body).__name__ for e in self.published()]
            raise AssertionError(f"{self.sender} published no {count} {kind.__name__}: {got}")
        return self.published(kind)

    def sync(self, timeout: float = 10.0) -> None:
        """Wait until the role handled everything sent so far."""
        self.bus.flush(timeout)
        self.ref.ask(None, timeout=timeout)

    def close(self) -> None:
        """Stop the role, the bus and the stores; remove the temporary directory."""
        try:
            self.ref.stop(block=True, timeout=5)
        except (pykka.ActorDeadError, pykka.Timeout):
            pass
        self.recorder.stop()
        self.bus.close()
        if self.megrams is not None:
            self.megrams.close()
        self.log.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# --------------------------------------------------------------------------- workers
def start_worker(
    url: str,
    workspace: str | Path,
    model: str,
    *,
    concurrency: int = 1,
    lease_s: float = 10.0,
    settings: tuple[str, ...] = ("durability=none", "tools.sandbox=off"),
) -> tuple[subprocess.Popen[str], str]:
    """Start ``artoo worker url`` in a new process (``--set`` each of ``settings``) and
    wait until it runs; returns the process and its writer id (its leases name it). Stop
    it with SIGTERM (it exits 0)."""
    argv = [sys.executable, "-m", "artoo", "worker", url, "--workspace-root", str(workspace)]
    argv += ["--concurrency", str(concurrency), "--lease-s", str(lease_s), "--model", model]
    for setting in settings:
        argv += ["--set", setting]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("worker "):
        proc.kill()
        raise RuntimeError(f"artoo worker did not start (exit {proc.wait()}): {line!r}")
    return proc, line.split()[1]
