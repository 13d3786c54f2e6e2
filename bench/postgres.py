"""Benchmark of the PostgreSQL store (issue 19): artoo's bus over the PostgreSQL event log
against the ``eventsourcing`` library's PostgreSQL application recorder, on the same server
in the same run.

One throwaway server (``artoo.testing.postgres_server``: fsync off, as in the tests — both
sides alike), each case in a fresh database, ``--repeat`` rounds interleaved so machine
noise hits every figure alike; the workload is ``bench/bus.py``'s (the same ~290-byte
envelopes over 8 tasks):

a. ``artoo_pg_bus``: the Bus end to end over :class:`PostgresEventLog` — ``publish`` →
   committed (one transaction per group) → delivered to one subscriber actor;
b. ``artoo_pg_append_encoded``: ``PostgresEventLog.append_encoded`` in groups of 1024;
c. ``eventsourcing_pg``: ``PostgresApplicationRecorder.insert_events`` in groups of 1024
   (the same record bytes as ``StoredEvent.state``);
d. ratios: (a) and (b) over (c), best against best and paired per round (median).

Usage: ``python bench/postgres.py [--n 20000] [--repeat 3] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, str(Path(__file__).parent))

from bus import Workload, _Counter, machine

from artoo.actors.runtime.bus import Bus
from artoo.eventstore._postgres import PostgresEventLog
from artoo.testing import PostgresServer, postgres_server

GROUP = 1024
"""Envelopes per append in (b) and (c): eventsourcing's recorder (psycopg pipeline mode)
stalls on this machine at 2,000+ rows per insert_events, so both sides use 1,024."""


def bench_pg_bus(url: str, work: Workload) -> float:
    """publish → committed → delivered to one subscriber, one publisher."""
    n = len(work.bodies)
    done = threading.Event()
    with PostgresEventLog.open(url) as log:
        bus = Bus(log)
        counter = _Counter.start(n, done)
        bus.subscribe(None, counter)
        publish = bus.publish
        start = time.perf_counter()
        for body, task_id in zip(work.bodies, work.task_ids, strict=True):
            publish(body, sender="executor", task_id=task_id, to="pair-1", cause=41)
        if not done.wait(600):
            raise RuntimeError("the subscriber did not receive every message")
        elapsed = time.perf_counter() - start
        bus.close()
        counter.stop()
    return n / elapsed


def bench_pg_append(url: str, work: Workload) -> float:
    """PostgresEventLog.append_encoded in groups of GROUP."""
    n = len(work.tails)
    with PostgresEventLog.open(url) as log:
        start = time.perf_counter()
        for first in range(0, n, GROUP):
            log.append_encoded(
                first + 1,
                1_700_000_000.0,
                work.task_ids[first : first + GROUP],
                work.tails[first : first + GROUP],
            )
        return n / (time.perf_counter() - start)


def bench_eventsourcing_pg(url: str, work: Workload) -> float | None:
    """eventsourcing's PostgreSQL application recorder, insert_events in groups of GROUP."""
    try:
        from eventsourcing.persistence import StoredEvent
        from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
    except ImportError:
        return None
    parsed = urlparse(url)
    datastore = PostgresDatastore(
        dbname=parsed.path.lstrip("/"),
        host=parse_qs(parsed.query)["host"][0],
        port=5432,
        user=parsed.username or "postgres",
        password="",
    )
    recorder = PostgresApplicationRecorder(datastore)
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


def run(n: int, repeat: int) -> dict[str, object]:
    """Every case ``repeat`` times, interleaved; the figures and ratios."""
    work = Workload.build(n)
    cases: list[tuple[str, Callable[[str], float | None]]] = [
        ("artoo_pg_bus", lambda url: bench_pg_bus(url, work)),
        ("artoo_pg_append_encoded", lambda url: bench_pg_append(url, work)),
        ("eventsourcing_pg", lambda url: bench_eventsourcing_pg(url, work)),
    ]
    rounds: dict[str, list[float]] = {name: [] for name, _ in cases}
    with postgres_server() as server:
        for _ in range(repeat):
            for name, case in cases:
                rate = case(_fresh(server))
                if rate is not None:
                    rounds[name].append(rate)
    out: dict[str, object] = {"n": n, "repeat": repeat, "machine": machine()}
    for name, rates in rounds.items():
        out[name] = max(rates) if rates else "skipped: not installed"
    peer = rounds["eventsourcing_pg"]
    for name in ("artoo_pg_bus", "artoo_pg_append_encoded"):
        if peer:
            out[f"{name}_x_eventsourcing_best"] = max(rounds[name]) / max(peer)
            out[f"{name}_x_eventsourcing_paired_median"] = statistics.median(
                a / b for a, b in zip(rounds[name], peer, strict=True)
            )
    return out


def _fresh(server: PostgresServer) -> str:
    return server.create_database()


def main(argv: list[str] | None = None) -> None:
    """Print every figure (``--json``: one JSON object as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(args.n, args.repeat)
    for key, value in figures.items():
        if key == "machine":
            continue
        shown = f"{value:,.2f}" if isinstance(value, float) else value
        print(f"{key:48} {shown}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
