"""Benchmark of the EventLog and the write-ahead Bus (issue 2).

In one run, on the same realistic message (an ExecutionResult carrying one structured
ToolCall, ~230-byte body, ~290-byte envelope) it measures, best of ``--repeat`` rounds
interleaved so that machine noise hits every figure alike:

a. raw plyvel: ``WriteBatch`` puts of the pre-encoded envelopes under ``e|<seq>`` in groups
   of 4096, ``sync=False`` — the baseline every ratio divides by; also the same plus the
   per-task index entries the EventLog writes, built before timing
   (``raw_plyvel_indexed``: one ``t|<task>|<first seq>`` key per task and group);
b. ``EventLog.append`` (encodes each Envelope) and ``EventLog.append_encoded`` (the bus's
   pre-encoded path), groups of 4096, durability ``none``;
c. the Bus end to end — ``publish`` → persisted → delivered to one subscriber actor (timed
   until that actor has received every message) — durability ``none`` and ``batch``, with
   1 and 8 publishing threads; ``bus_none_1pub_64tasks``: the same over 64 tasks; and
   ``bus_none_1pub_no_index``: messages of no task, so the log writes the same keys as (a)
   (no ``t|`` index) — the bus's own overhead; ``bus_none_1pub_slow_tap``: the 1-publisher
   ``none`` case beside a tap (maxsize 100) whose reader sleeps 1 ms on every envelope —
   its ratio to the same case without the tap is ``slow_tap_ratio`` (issue 2: ≥ 0.8);
d. each of the above as a ratio to (a), and to ``raw_plyvel_indexed`` (the same key set):
   best against best, and paired — each round's rate over raw's rate in the same round,
   median and range over the rounds (a short raw run catches a quiet moment of a shared
   machine more easily than a longer bus run, so best-against-best is the noisier figure);
e. the same append workload on the ``eventsourcing`` library's SQLite application recorder
   (``insert_events`` in groups of 4096; WAL, autocommit per group);
f. publish → deliver to one subscribing agent on AutoGen core's in-memory
   ``SingleThreadedAgentRuntime`` (no persistence at all).

Encoded forms are n distinct byte strings; publishers cycle through 1,024 distinct bodies
(as warm in cache as a body just built). The messages belong to ``--tasks`` concurrent tasks
(default 8), interleaved round robin (message i is of task i mod tasks): every group holds
messages of every task, as when several tasks run at once. (e) and (f) are skipped with
"skipped: not installed" when the library is absent (``pip install eventsourcing
autogen-core``).

Usage: ``python bench/bus.py [--n 50000] [--repeat 3] [--tasks 8] [--json]``. With
``--json`` the last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import platform
import statistics
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

from artoo.actors.runtime.bus import Bus, Delivery, Tap
from artoo.eventstore import EventLog, envelope_tail
from artoo.schemas import Envelope, ExecutionResult, ToolCall, encode_envelope

GROUP = 4096
POOL = 1024  # distinct bodies the publishers cycle through
TASKS = 8  # concurrent tasks the messages belong to (--tasks)
MANY_TASKS = 64  # the bus_none_1pub_64tasks case
_pack_seq = struct.Struct(">Q").pack


def task_ids(n: int, tasks: int) -> list[str]:
    """n task ids, round robin over ``tasks`` distinct ULID-like ids."""
    ids = [f"01JB6Z6QW7V6M2YQ3K4N5P{k:04d}" for k in range(tasks)]
    return [ids[i % tasks] for i in range(n)]


# --------------------------------------------------------------------------- data
def sample_body(i: int = 0) -> ExecutionResult:
    """A realistic Executor result with one structured tool call (~230-byte body)."""
    call = ToolCall(tool="list_dir", args={"path": "src"}, target="src")
    return ExecutionResult(subtask_id=f"01JB6Z{i:06d}", output="12 entries", tool_calls=[call])


@dataclass
class Workload:
    """The same n messages in every form a case takes, built before any timing."""

    bodies: list[ExecutionResult]
    task_ids: list[str]  # the task of each message
    envelopes: list[Envelope]  # seq 0: EventLog.append assigns
    records: list[bytes]  # encode_envelope of each, with its seq (1..n)
    tails: list[bytes]  # what EventLog.append_encoded takes
    index: list[list[tuple[bytes, bytes]]]  # per group of GROUP: its t| index entries

    @classmethod
    def build(cls, n: int, tasks: int = TASKS) -> Workload:
        """n messages of ``tasks`` tasks. The encoded forms are n distinct byte strings; the
        bodies cycle through a pool of POOL distinct objects, as warm in cache as a body its
        publisher has just built (n cold pre-built bodies would add cache misses a real bus
        avoids).
        """
        ts = 1_700_000_000.0
        pool = [sample_body(i) for i in range(POOL)]
        bodies = [pool[i % POOL] for i in range(n)]
        ids = task_ids(n, tasks)
        envelopes = [
            Envelope(0, ts, t, "executor", "pair-1", 41, b)
            for t, b in zip(ids, bodies, strict=True)
        ]
        records = [
            encode_envelope(Envelope(seq, ts, t, "executor", "pair-1", 41, b))
            for seq, (t, b) in enumerate(zip(ids, bodies, strict=True), 1)
        ]
        tails = [
            envelope_tail(t, "executor", "pair-1", 41, b) for t, b in zip(ids, bodies, strict=True)
        ]
        index = [_index(first + 1, ids[first : first + GROUP]) for first in range(0, n, GROUP)]
        return cls(bodies, ids, envelopes, records, tails, index)


def _index(first_seq: int, ids: list[str]) -> list[tuple[bytes, bytes]]:
    """One group's index entries as the EventLog writes them: per task, the key of its
    first seq, the value its other seqs (8 bytes big-endian each)."""
    seqs: dict[str, list[int]] = {}
    for seq, task_id in enumerate(ids, first_seq):
        seqs.setdefault(task_id, []).append(seq)
    return [
        (
            b"t|" + task_id.encode() + b"|" + _pack_seq(own[0]),
            struct.pack(f">{len(own) - 1}Q", *own[1:]),
        )
        for task_id, own in seqs.items()
    ]


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
def bench_raw(path: Path, work: Workload, indexed: bool) -> float:
    """Raw plyvel WriteBatch puts of the pre-encoded envelopes (indexed: + the task index
    entries, built beforehand)."""
    db = plyvel.DB(str(path), create_if_missing=True)
    records = work.records
    n = len(records)
    start = time.perf_counter()
    for first in range(0, n, GROUP):
        batch = db.write_batch()
        put = batch.put
        for seq, data in enumerate(records[first : first + GROUP], first + 1):
            put(b"e|" + _pack_seq(seq), data)
        if indexed:
            for key, value in work.index[first // GROUP]:
                put(key, value)
        batch.write()
    elapsed = time.perf_counter() - start
    db.close()
    return n / elapsed


def bench_append(path: Path, work: Workload) -> float:
    """EventLog.append: Envelope objects in, encoded and written in groups of 4096."""
    envelopes = work.envelopes
    with EventLog.open(path, durability="none") as log:
        start = time.perf_counter()
        for first in range(0, len(envelopes), GROUP):
            log.append(envelopes[first : first + GROUP])
        return len(envelopes) / (time.perf_counter() - start)


def bench_append_encoded(path: Path, work: Workload) -> float:
    """EventLog.append_encoded: the bus's path, pre-encoded tails in groups of 4096."""
    tails = work.tails
    ids = work.task_ids
    with EventLog.open(path, durability="none") as log:
        start = time.perf_counter()
        for first in range(0, len(tails), GROUP):
            last = first + GROUP
            log.append_encoded(first + 1, 1.0, ids[first:last], tails[first:last])
        return len(tails) / (time.perf_counter() - start)


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
    path: Path,
    work: Workload,
    durability: str,
    threads: int,
    ids: list[str] | list[None] | None = None,
    slow_tap: bool = False,
) -> BusFigure:
    """publish → persisted → delivered to one subscriber actor, with ``threads`` publishers.

    ``ids``: the task of each message (default: the workload's). ``[None] * n`` publishes
    messages of no task: no ``t|`` index key, so the log writes exactly the keys of raw
    plyvel (``e|<seq>`` only). ``slow_tap``: beside the subscriber, a tap (maxsize 100)
    whose reader sleeps 1 ms on every envelope; its drops are in ``extra``.
    """
    n = len(work.bodies)
    tasks = work.task_ids if ids is None else ids
    done = threading.Event()
    with EventLog.open(path, durability=durability) as log:  # type: ignore[arg-type]
        bus = Bus(log)
        counter = _Counter.start(n, done)
        bus.subscribe(None, counter)
        tap = bus.tap(maxsize=100) if slow_tap else None
        reader = threading.Thread(target=_sleep_through, args=(tap,), daemon=True)
        reader.start()
        gate = threading.Barrier(threads + 1)

        def publisher(bodies: list[ExecutionResult], share: list[str] | list[None]) -> None:
            publish = bus.publish
            gate.wait()
            for body, task_id in zip(bodies, share, strict=True):
                publish(body, sender="executor", task_id=task_id, to="pair-1", cause=41)

        shares = [(work.bodies[k::threads], tasks[k::threads]) for k in range(threads)]
        workers = [threading.Thread(target=publisher, args=share) for share in shares]
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
        reader.join(30)
    extra = {"tap_dropped": tap.dropped} if tap is not None else {}
    return BusFigure(n / elapsed, int(stats["groups"]), float(stats["avg_group_size"]), extra)


def _sleep_through(tap: Tap | None) -> None:
    """A slow observer: sleep 1 ms on every envelope until the tap ends."""
    if tap is None:
        return
    for _ in tap:
        time.sleep(0.001)


def bench_eventsourcing(path: Path, work: Workload) -> float | None:
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
    records = work.records
    n = len(records)
    start = time.perf_counter()
    for first in range(0, n, GROUP):
        recorder.insert_events(
            [
                StoredEvent(originator, version, topic, data)
                for version, data in enumerate(records[first : first + GROUP], first + 1)
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

    payloads = [
        AutogenResult(b.subtask_id, b.output, [msgspec.to_builtins(c) for c in b.tool_calls])
        for b in map(sample_body, range(n))
    ]

    async def run() -> float:
        runtime = SingleThreadedAgentRuntime()
        await Sink.register(runtime, "sink", Sink)
        await runtime.add_subscription(TypeSubscription(topic_type="bench", agent_type="sink"))
        runtime.start()
        topic = TopicId("bench", "default")
        start = time.perf_counter()
        for payload in payloads:
            await runtime.publish_message(payload, topic_id=topic)
        await done.wait()
        elapsed = time.perf_counter() - start
        await runtime.stop_when_idle()
        return n / elapsed

    return asyncio.run(run())


# --------------------------------------------------------------------------- the run
def run(n: int, repeat: int, tasks: int = TASKS) -> dict[str, Any]:
    """Every figure, best of ``repeat`` interleaved rounds, with ratios to raw plyvel."""
    work = Workload.build(n, tasks)
    many = task_ids(n, MANY_TASKS)
    body = work.bodies[0]
    n_slow = max(1_000, n // 10)  # AutoGen handles a few thousand messages per second
    best: dict[str, float] = {}
    rounds: dict[str, list[float]] = {}  # every round's rate, to pair with raw's of that round
    groups: dict[str, float] = {}
    skipped: list[str] = []

    def keep(name: str, value: float | None) -> None:
        if value is None:
            if name not in skipped:
                skipped.append(name)
        else:
            best[name] = max(best.get(name, 0.0), value)
            rounds.setdefault(name, []).append(value)

    cases: list[tuple[str, Callable[[Path], float | None]]] = [
        ("raw_plyvel", lambda p: bench_raw(p, work, indexed=False)),
        ("raw_plyvel_indexed", lambda p: bench_raw(p, work, indexed=True)),
        ("eventlog_append", lambda p: bench_append(p, work)),
        ("eventlog_append_encoded", lambda p: bench_append_encoded(p, work)),
    ]
    for durability in ("none", "batch"):
        for threads in (1, 8):
            name = f"bus_{durability}_{threads}pub"

            def case(p: Path, d: str = durability, t: int = threads, name: str = name) -> float:
                figure = bench_bus(p, work, d, t)
                if figure.rate >= best.get(name, 0.0):
                    groups[name] = figure.avg_group
                return figure.rate

            cases.append((name, case))
    cases.append(
        (f"bus_none_1pub_{MANY_TASKS}tasks", lambda p: bench_bus(p, work, "none", 1, many).rate)
    )
    cases.append(
        ("bus_none_1pub_no_index", lambda p: bench_bus(p, work, "none", 1, [None] * n).rate)
    )
    cases.append(
        ("bus_none_1pub_slow_tap", lambda p: bench_bus(p, work, "none", 1, slow_tap=True).rate)
    )
    cases.append(("eventsourcing_sqlite", lambda p: bench_eventsourcing(p, work)))
    cases.append(("autogen_core_inmemory", lambda p: bench_autogen(n_slow)))

    for _ in range(repeat):
        for name, case in cases:
            if name in skipped:
                continue
            with tempfile.TemporaryDirectory(prefix="artoo-bench-") as tmp:
                keep(name, case(Path(tmp) / "db"))
    raw = best["raw_plyvel"]
    indexed = best["raw_plyvel_indexed"]
    raw_rounds = rounds["raw_plyvel"]
    paired = {
        name: [v / r for v, r in zip(values, raw_rounds, strict=True)]
        for name, values in rounds.items()
        if len(values) == len(raw_rounds)
    }
    return {
        "bench": "bus",
        "machine": machine(),
        "n": n,
        "tasks": tasks,
        "n_autogen": n_slow,
        "repeat": repeat,
        "envelope_bytes": len(work.records[0]),
        "body_bytes": len(msgspec.msgpack.encode(body)),
        "rates_per_s": {k: round(v) for k, v in best.items()},
        "ratio_to_raw": {k: round(v / raw, 3) for k, v in best.items()},
        "ratio_to_raw_indexed": {k: round(v / indexed, 3) for k, v in best.items()},
        "paired_ratio_to_raw": {
            k: {
                "median": round(statistics.median(v), 3),
                "min": round(min(v), 3),
                "max": round(max(v), 3),
            }
            for k, v in paired.items()
        },
        "avg_group_size": {k: round(v, 1) for k, v in groups.items()},
        "slow_tap_ratio": round(best["bus_none_1pub_slow_tap"] / best["bus_none_1pub"], 3),
        "skipped": skipped,
    }


def print_human(result: dict[str, Any]) -> None:
    """The figures as a table."""
    m = result["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['platform']}")
    print(f"libraries: plyvel {m['plyvel']}, msgspec {m['msgspec']}, pykka {m['pykka']}")
    print(
        f"n = {result['n']} messages of {result['tasks']} interleaved tasks (AutoGen: "
        f"{result['n_autogen']}), best of {result['repeat']}; envelope "
        f"{result['envelope_bytes']} B, body {result['body_bytes']} B"
    )
    print(
        f"{'case':26s} {'msg/s':>10s} {'× raw':>7s} {'× raw+index':>12s}  "
        f"{'paired × raw: median [min, max]':32s} group"
    )
    for name, rate in result["rates_per_s"].items():
        group = result["avg_group_size"].get(name)
        p = result["paired_ratio_to_raw"].get(name)
        spread = f"{p['median']:.3f} [{p['min']:.3f}, {p['max']:.3f}]" if p else ""
        print(
            f"{name:26s} {rate:10,d} {result['ratio_to_raw'][name]:7.3f} "
            f"{result['ratio_to_raw_indexed'][name]:12.3f}  {spread:32s}"
            + (f" {group:.0f}" if group else "")
        )
    print(
        f"a tap sleeping 1 ms per envelope: {result['slow_tap_ratio']:.3f}× the rate without "
        "(target ≥ 0.8)"
    )
    for name in result["skipped"]:
        print(f"{name:28s} skipped: not installed")


def main(argv: list[str] | None = None) -> None:
    """Parse the options, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000, help="messages per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is kept")
    parser.add_argument("--tasks", type=int, default=TASKS, help="concurrent tasks (round robin)")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    result = run(args.n, args.repeat, args.tasks)
    print_human(result)
    if args.json:
        print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
