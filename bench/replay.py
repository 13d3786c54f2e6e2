"""Benchmark of reading a log back for replay (issue 11).

In one run, rounds interleaved so that machine noise hits every figure alike:

a. raw plyvel: iterate every ``e|<seq>`` record of the log (key and value bytes, nothing
   decoded) — the baseline every ratio divides by;
a'. raw plyvel, values only (``include_key=False``: all a reader of the whole log needs) —
   a stricter baseline, shown beside it;
b. ``EventLog.open`` + ``read()``: the records decoded into Envelopes (bodies typed), after
   the open-time scan of every key for gaps;
b'. ``EventLog.open(read_only=True)`` + ``read()``: the same without the open-time scan
   (the read checks each envelope's seq as it goes and raises the same CorruptLog at a
   gap) — how replay reads;
c. ``artoo.replay.read_store``: what every replay command starts with — open the store
   read_only, read and decode every envelope, group them by task.

Over two logs: ``small`` — ``--n`` envelopes (default 10⁶) of the message bench/bus.py uses
(an ExecutionResult with one ToolCall, ~290-byte envelope) spread round robin over 8 tasks;
``demo`` — ``--demo-n`` envelopes (default 10⁵) cycling through the envelopes of a fresh
``artoo demo`` store (the real mix: LLMCalls with their prompts, manifests, verdicts …),
each copy under its own task id. Each figure is the best of ``--repeat`` rounds; ratios are
best against best and paired (each round's rate over raw's in the same round: median
[min, max]), as in bench/bus.py.

Then, on the demo store itself: ``verify`` decisions recomputed per second, and ``rerun``
seconds per task (a scratch System per task, answers served from the log).

Usage: ``python bench/replay.py [--n 1000000] [--demo-n 100000] [--repeat 3] [--json]``.
With ``--json`` the last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import plyvel
from rich.console import Console

from artoo.demo import run_demo
from artoo.eventstore import EventLog
from artoo.replay import read_store, rerun, verify
from artoo.schemas import Envelope, ExecutionResult, ToolCall

sys.path.insert(0, str(Path(__file__).parent))
from bus import machine, task_ids

GROUP = 4096


def small_envelopes(n: int) -> list[Envelope]:
    """n envelopes of bench/bus.py's message, round robin over 8 tasks."""
    body = ExecutionResult(
        subtask_id="01JB6Z6QW7V6M2YQ3K4N5P6R7S",
        round=1,
        attempt=1,
        output="42 files matched",
        tool_calls=[
            ToolCall(
                tool="glob",
                args={"pattern": "src/**/*.py"},
                target="src",
                output_preview="src/a.py\nsrc/b.py\nsrc/c.py",
                elapsed_ms=1.25,
                subtask_id="01JB6Z6QW7V6M2YQ3K4N5P6R7S",
            )
        ],
    )
    tasks = task_ids(n, 8)
    return [
        Envelope(0, 1.7e9 + i * 1e-4, tasks[i], "executor/pair-0", "pair-0", i, body)
        for i in range(n)
    ]


def demo_envelopes(demo_store: Path, n: int) -> list[Envelope]:
    """n envelopes cycling through the demo store's, each pass under fresh task ids."""
    with EventLog.open(demo_store / "events", durability="none") as log:
        logged = list(log.read())
    out: list[Envelope] = []
    k = 0
    while len(out) < n:
        for env in logged[: n - len(out)]:
            task = f"{env.task_id}-{k}" if env.task_id else None
            out.append(msgspec.structs.replace(env, seq=0, task_id=task))
        k += 1
    return out


def write_log(store: Path, envelopes: list[Envelope]) -> int:
    """Write the envelopes into ``store``/events; the log's size on disk in bytes."""
    with EventLog.open(store / "events", durability="none") as log:
        for i in range(0, len(envelopes), GROUP):
            log.append(envelopes[i : i + GROUP])
    return sum(f.stat().st_size for f in (store / "events").iterdir())


def raw_iterate(store: Path) -> int:
    """(a) every e| record, bytes only."""
    db = plyvel.DB(str(store / "events"))
    try:
        n = 0
        for _key, _value in db.iterator(start=b"e|", stop=b"e}"):
            n += 1
        return n
    finally:
        db.close()


def raw_values(store: Path) -> int:
    """(a') every e| record's value, bytes only (no keys: what a reader needs)."""
    db = plyvel.DB(str(store / "events"))
    try:
        n = 0
        for _value in db.iterator(start=b"e|", stop=b"e}", include_key=False):
            n += 1
        return n
    finally:
        db.close()


def eventlog_read(store: Path) -> int:
    """(b) open (scanning every key for gaps) and every envelope decoded."""
    with EventLog.open(store / "events", durability="none") as log:
        n = 0
        for _env in log.read():
            n += 1
        return n


def eventlog_read_only(store: Path) -> int:
    """(b') open read_only (no scan at open: the read checks every seq) and every envelope
    decoded — how replay reads."""
    with EventLog.open(store / "events", durability="none", read_only=True) as log:
        n = 0
        for _env in log.read():
            n += 1
        return n


def replay_read(store: Path) -> int:
    """(c) read_store: decoded and grouped by task."""
    envelopes, _tasks = read_store(store)
    return len(envelopes)


CASES: dict[str, Callable[[Path], int]] = {
    "raw_plyvel_iterate": raw_iterate,
    "raw_plyvel_values": raw_values,
    "eventlog_read": eventlog_read,
    "eventlog_read_only": eventlog_read_only,
    "read_store": replay_read,
}


def measure(store: Path, n: int, repeat: int) -> dict[str, Any]:
    """Rates of every case, best and per round."""
    rounds: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeat):
        for name, case in CASES.items():
            t0 = time.perf_counter()
            got = case(store)
            dt = time.perf_counter() - t0
            assert got == n, (name, got, n)
            rounds[name].append(n / dt)
    raw = rounds["raw_plyvel_iterate"]
    out: dict[str, Any] = {}
    for name, rates in rounds.items():
        paired = [r / b for r, b in zip(rates, raw, strict=True)]
        out[name] = {
            "best_per_s": max(rates),
            "best_x_raw": max(rates) / max(raw),
            "paired_x_raw": [statistics.median(paired), min(paired), max(paired)],
        }
    return out


def run(n: int, demo_n: int, repeat: int) -> dict[str, Any]:
    """Every figure of the benchmark."""
    result: dict[str, Any] = {"machine": machine(), "n": n, "demo_n": demo_n, "repeat": repeat}
    with tempfile.TemporaryDirectory(prefix="artoo-bench-replay-") as tmp:
        demo = Path(tmp) / "demo-store"
        assert run_demo(demo, Console(file=io.StringIO()), clean=True) == 0
        for name, envelopes in (
            ("small", small_envelopes(n)),
            ("demo", demo_envelopes(demo, demo_n)),
        ):
            store = Path(tmp) / f"log-{name}"
            size = write_log(store, envelopes)
            del envelopes
            figures = measure(store, n if name == "small" else demo_n, repeat)
            result[name] = {"bytes_on_disk": size, "cases": figures}
        t0 = time.perf_counter()
        report = verify(demo)
        dt = time.perf_counter() - t0
        decisions = sum(report.checked.values())
        result["verify"] = {
            "decisions": decisions,
            "seconds": dt,
            "per_s": decisions / dt,
            "ok": report.ok,
        }
        t0 = time.perf_counter()
        again = rerun(demo)
        dt = time.perf_counter() - t0
        result["rerun"] = {
            "tasks": len(again.tasks),
            "seconds": dt,
            "s_per_task": dt / max(len(again.tasks), 1),
            "ok": again.ok,
        }
    return result


def print_human(result: dict[str, Any]) -> None:
    """The figures as a table."""
    m = result["machine"]
    print(
        f"{m['cpu']} ({m['cores']} cores), Python {m['python']}, plyvel {m['plyvel']}, "
        f"msgspec {m['msgspec']}; best of {result['repeat']} rounds"
    )
    for name in ("small", "demo"):
        n = result["n"] if name == "small" else result["demo_n"]
        mb = result[name]["bytes_on_disk"] / 1e6
        print(f"\n{name}: {n:,} envelopes, {mb:,.0f} MB on disk")
        print(f"{'case':22s} {'best env/s':>12s} {'best×raw':>9s}  paired×raw median [min, max]")
        values = result[name]["cases"]["raw_plyvel_values"]["best_per_s"]
        for case, f in result[name]["cases"].items():
            med, lo, hi = f["paired_x_raw"]
            print(
                f"{case:22s} {f['best_per_s']:12,.0f} {f['best_x_raw']:9.3f}  "
                f"{med:.3f} [{lo:.3f}, {hi:.3f}]  ×values-only {f['best_per_s'] / values:.3f}"
            )
    v, r = result["verify"], result["rerun"]
    print(
        f"\nverify (demo store): {v['decisions']} decisions in {v['seconds']:.3f} s = "
        f"{v['per_s']:,.0f}/s, ok={v['ok']}"
    )
    print(
        f"rerun (demo store): {r['tasks']} tasks in {r['seconds']:.2f} s = "
        f"{r['s_per_task']:.3f} s per task, ok={r['ok']}"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the options, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="envelopes of the small log")
    parser.add_argument("--demo-n", type=int, default=100_000, help="envelopes of the demo mix")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is kept")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    result = run(args.n, args.demo_n, args.repeat)
    print_human(result)
    if args.json:
        print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
