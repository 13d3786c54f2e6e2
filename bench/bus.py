"""Benchmark of the EventLog and the write-ahead Bus (issue 2).

In one run, on the same realistic message (an ExecutionResult carrying one structured
ToolCall, ~230-byte body, ~290-byte envelope) it measures, best of ``--repeat`` rounds
interleaved so that machine noise hits every figure alike:

a. raw plyvel: ``WriteBatch`` puts of the pre-encoded envelopes under ``e|<seq>`` in groups
   of 4096, ``sync=False`` — the baseline every ratio divides by; also the same with the
   ``t|<task>|<seq>`` index keys the EventLog writes (``raw_indexed``);
b. ``EventLog.append`` (encodes each Envelope) and ``EventLog.append_encoded`` (the bus's
   pre-encoded path), groups of 4096, durability ``none``;
c. the Bus end to end — ``publish`` → persisted → delivered to one subscriber actor (timed
   until that actor has received every message) — durability ``none`` and ``batch``, with
   1 and 8 publishing threads;
d. each of the above as a ratio to (a);
e. the same append workload on the ``eventsourcing`` library's SQLite application recorder
   (``insert_events`` in groups of 4096; WAL, autocommit per group);
f. publish → deliver to one subscribing agent on AutoGen core's in-memory
   ``SingleThreadedAgentRuntime`` (no persistence at all).

(e) and (f) are skipped with "skipped: not installed" when the library is absent
(``pip install eventsourcing autogen-core``).

Usage: ``python bench/bus.py [--n 50000] [--repeat 3] [--json]``. With ``--json`` the last
line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import platform
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import plyvel
import pykka

from artoo.actors.bus import Bus, Delivery
from artoo.eventstore import EventLog, envelope_tail
from artoo.schemas import Envelope, ExecutionResult, ToolCall, encode_envelope

GROUP = 4096
TASK = "01JB6Z6QW7V6M2YQ3K4N5P6R7S"
_pack_seq = struct.Struct(">Q").pack


# --------------------------------------------------------------------------- data
def sample_body() -> ExecutionResult:
    """A realistic Executor result with one structured tool call (~230-byte body)."""
    call = ToolCall(tool="list_dir", args={"path": "src"}, target="src")
    return ExecutionResult(subtask_id="01JB6Z7A1", output="12 entries", tool_calls=[call])


def machine() -> dict[str, Any]:
    """CPU model, cores, Python and library versions."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "plyvel": _version("plyvel"),
        "msgspec": _version("msgspec"),
        "pykka": _version("pykka"),
    }


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --------------------------------------------------------------------------- measurements
def bench_raw(path: Path, n: int, data: bytes, indexed: bool) -> float:
    """Raw plyvel WriteBatch puts of pre-encoded envelopes (and, indexed, the task keys)."""
    db = plyvel.DB(str(path), create_if_missing=True)
    prefix = b"t|" + TASK.encode() + b"|"
    start = time.perf_counter()
    for first in range(1, n + 1, GROUP):
        batch = db.write_batch()
        put = batch.put
        for seq in range(first, min(first + GROUP, n + 1)):
            packed = _pack_seq(seq)
            put(b"e|" + packed, data)
            if indexed:
                put(prefix + packed, b"")
        batch.write()
    elapsed = time.perf_counter() - start
    db.close()
    return n / elapsed


def bench_append(path: Path, n: int, body: ExecutionResult) -> float:
    """EventLog.append: Envelope objects in, encoded and written in groups of 4096."""
    envelopes = [Envelope(0, 1.0, TASK, "executor", "pair-1", 41, body)] * GROUP
    with EventLog.open(path, durability="none") as log:
        start = time.perf_counter()
        for first in range(0, n, GROUP):
            log.append(envelopes[: min(GROUP, n - first)])
        return n / (time.perf_counter() - start)


def bench_append_encoded(path: Path, n: int, body: ExecutionResult) -> float:
    """EventLog.append_encoded: the bus's path, pre-encoded tails in groups of 4096."""
    records = [(TASK, envelope_tail(TASK, "executor", "pair-1", 41, body))] * GROUP
    with EventLog.open(path, durability="none") as log:
        start = time.perf_counter()
        for first in range(0, n, GROUP):
            log.append_encoded(first + 1, 1.0, records[: min(GROUP, n - first)])
        return n / (time.perf_counter() - start)


@dataclass
class AutogenResult:
    """The artoo body's fields as a dataclass (AutoGen routes dataclasses, not Structs)."""

    subtask_id: str
    output: str
    tool_calls: list[dict[str, Any]]


class _Counter(pykka.ThreadingActor):
    """A subscriber actor that counts what it receives and signals at ``n``."""

    use_daemon_thread = True

    def __init__(self, n: int, done: threading.Event) -> None:
        super().__init__()
        self._n = n
        self._done = done
        self.seen = 0

    def on_receive(self, message: Any) -> None:
        if isinstance(message, Delivery):
            self.seen += len(message.envelopes)
            if self.seen >= self._n:
                self._done.set()


@dataclass
class BusFigure:
    """One end-to-end run of the bus."""

    rate: float
    groups: int
    avg_group: float
    extra: dict[str, Any] = field(default_factory=dict)


def bench_bus(
    path: Path, n: int, body: ExecutionResult, durability: str, threads: int
) -> BusFigure:
    """publish → persisted → delivered to one subscriber actor, with ``threads`` publishers."""
    done = threading.Event()
    with EventLog.open(path, durability=durability) as log:  # type: ignore[arg-type]
        bus = Bus(log)
        counter = _Counter.start(n, done)
        bus.subscribe(None, counter)
        per = [n // threads + (1 if k < n % threads else 0) for k in range(threads)]
        gate = threading.Barrier(threads + 1)

        def publisher(count: int) -> None:
            publish = bus.publish
            gate.wait()
            for _ in range(count):
                publish(body, sender="executor", task_id=TASK, to="pair-1", cause=41)

        workers = [threading.Thread(target=publisher, args=(c,)) for c in per]
        for worker in workers:
            worker.start()
        gate.wait()
        start = time.perf_counter()
        for worker in workers:
            worker.join()
        if not done.wait(300):
            raise RuntimeError("the subscriber did not receive every message")
        elapsed = time.perf_counter() - start
        stats = bus.stats()
        bus.close()
        counter.stop()
    return BusFigure(n / elapsed, int(stats["groups"]), float(stats["avg_group_size"]))


def bench_eventsourcing(path: Path, n: int, data: bytes) -> float | None:
    """The same append workload on eventsourcing's SQLite application recorder."""
    try:
        from eventsourcing.persistence import StoredEvent
        from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
    except ImportError:
        return None
    path.mkdir(parents=True, exist_ok=True)
    datastore = SQLiteDatastore(str(path / "events.sqlite"))
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    originator = uuid.uuid4()
    topic = "artoo.schemas:ExecutionResult"
    start = time.perf_counter()
    for first in range(1, n + 1, GROUP):
        recorder.insert_events(
            [
                StoredEvent(originator, version, topic, data)
                for version in range(first, min(first + GROUP, n + 1))
            ]
        )
    elapsed = time.perf_counter() - start
    datastore.close()
    return n / elapsed


def bench_autogen(n: int) -> float | None:
    """publish → deliver to one agent on AutoGen core's in-memory runtime."""
    try:
        from autogen_core import (
            MessageContext,
            RoutedAgent,
            SingleThreadedAgentRuntime,
            TopicId,
            TypeSubscription,
            message_handler,
        )
    except ImportError:
        return None

    done = asyncio.Event()

    async def on_result(self: Any, message: AutogenResult, ctx: MessageContext) -> None:
        self.seen += 1
        if self.seen >= n:
            done.set()

    # this module postpones annotations; AutoGen routes by the handler's evaluated hints
    on_result.__annotations__ = {"message": AutogenResult, "ctx": MessageContext, "return": None}

    class Sink(RoutedAgent):
        def __init__(self) -> None:
            super().__init__("bench sink")
            self.seen = 0

        handle = message_handler(on_result)

    body = sample_body()
    payload = AutogenResult(
        body.subtask_id, body.output, [msgspec.to_builtins(c) for c in body.tool_calls]
    )

    async def run() -> float:
        runtime = SingleThreadedAgentRuntime()
        await Sink.register(runtime, "sink", Sink)
        await runtime.add_subscription(TypeSubscription(topic_type="bench", agent_type="sink"))
        runtime.start()
        topic = TopicId("bench", "default")
        start = time.perf_counter()
        for _ in range(n):
            await runtime.publish_message(payload, topic_id=topic)
        await done.wait()
        elapsed = time.perf_counter() - start
        await runtime.stop_when_idle()
        return n / elapsed

    return asyncio.run(run())


# --------------------------------------------------------------------------- the run
def run(n: int, repeat: int) -> dict[str, Any]:
    """Every figure, best of ``repeat`` interleaved rounds, with ratios to raw plyvel."""
    body = sample_body()
    data = encode_envelope(Envelope(1, time.time(), TASK, "executor", "pair-1", 41, body))
    n_slow = max(1_000, n // 10)  # AutoGen handles a few thousand messages per second
    best: dict[str, float] = {}
    groups: dict[str, float] = {}
    skipped: list[str] = []

    def keep(name: str, value: float | None) -> None:
        if value is None:
            if name not in skipped:
                skipped.append(name)
        else:
            best[name] = max(best.get(name, 0.0), value)

    cases: list[tuple[str, Callable[[Path], float | None]]] = [
        ("raw_plyvel", lambda p: bench_raw(p, n, data, indexed=False)),
        ("raw_plyvel_indexed", lambda p: bench_raw(p, n, data, indexed=True)),
        ("eventlog_append", lambda p: bench_append(p, n, body)),
        ("eventlog_append_encoded", lambda p: bench_append_encoded(p, n, body)),
    ]
    for durability in ("none", "batch"):
        for threads in (1, 8):
            name = f"bus_{durability}_{threads}pub"

            def case(p: Path, d: str = durability, t: int = threads, name: str = name) -> float:
                figure = bench_bus(p, n, body, d, t)
                if figure.rate >= best.get(name, 0.0):
                    groups[name] = figure.avg_group
                return figure.rate

            cases.append((name, case))
    cases.append(("eventsourcing_sqlite", lambda p: bench_eventsourcing(p, n, data)))
    cases.append(("autogen_core_inmemory", lambda p: bench_autogen(n_slow)))

    for _ in range(repeat):
        for name, case in cases:
            if name in skipped:
                continue
            with tempfile.TemporaryDirectory(prefix="artoo-bench-") as tmp:
                keep(name, case(Path(tmp) / "db"))
    raw = best["raw_plyvel"]
    return {
        "bench": "bus",
        "machine": machine(),
        "n": n,
        "n_autogen": n_slow,
        "repeat": repeat,
        "envelope_bytes": len(data),
        "body_bytes": len(msgspec.msgpack.encode(body)),
        "rates_per_s": {k: round(v) for k, v in best.items()},
        "ratio_to_raw": {k: round(v / raw, 3) for k, v in best.items()},
        "avg_group_size": {k: round(v, 1) for k, v in groups.items()},
        "skipped": skipped,
    }


def print_human(result: dict[str, Any]) -> None:
    """The figures as a table."""
    m = result["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['platform']}")
    print(f"libraries: plyvel {m['plyvel']}, msgspec {m['msgspec']}, pykka {m['pykka']}")
    print(
        f"n = {result['n']} messages (AutoGen: {result['n_autogen']}), best of "
        f"{result['repeat']}; envelope {result['envelope_bytes']} B, "
        f"body {result['body_bytes']} B"
    )
    print(f"{'case':28s} {'msg/s':>12s} {'× raw':>7s}  group")
    for name, rate in result["rates_per_s"].items():
        group = result["avg_group_size"].get(name)
        print(
            f"{name:28s} {rate:12,d} {result['ratio_to_raw'][name]:7.3f}"
            + (f"  {group:.0f}" if group else "")
        )
    for name in result["skipped"]:
        print(f"{name:28s} skipped: not installed")


def main(argv: list[str] | None = None) -> None:
    """Parse the options, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000, help="messages per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is kept")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    result = run(args.n, args.repeat)
    print_human(result)
    if args.json:
        print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
