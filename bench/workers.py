"""Benchmark of workers on a PostgreSQL store (issue 19): scripted tasks per second with
1, 2 and 4 ``artoo worker`` processes, in the same run.

One throwaway server (``artoo.testing.postgres_server``, fsync off), a fresh database per
case. A case starts N worker processes (``--concurrency`` tasks each, no sandbox: the
tasks run no tool) and waits until all are up, then a host System submits ``--tasks``
scripted tasks (perceive, plan, one executor answer, checks, GGS decision) and the clock
runs from the first submit to the last FinalResult the host got back. ``--delay-ms`` adds a
model latency to each executor answer (as a real model's), so the CPU is not the only limit.
Cases are interleaved over ``--repeat`` rounds; ratios are against 1 worker of the same run.

Usage: ``python bench/workers.py [--tasks 80] [--repeat 2] [--delay-ms 0] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bus import machine

import artoo
from artoo.schemas import Config
from artoo.testing import postgres_server, start_worker, write_script

WORKERS = (1, 2, 4)


def _script(directory: Path, delay_ms: float) -> str:
    executor: dict[str, Any] = {"role": "executor", "times": 0, "content": "hello"}
    if delay_ms:
        executor["delay_ms"] = delay_ms
    return write_script(
        directory / "script.toml",
        [
            {
                "role": "perceiver",
                "times": 0,
                "content": {"intent": "say hello", "slug": "hello", "criteria": []},
            },
            {
                "role": "planner",
                "times": 0,
                "content": {"subtasks": [{"instruction": "Say hello", "sequence": 1}]},
            },
            executor,
        ],
    )


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_case(
    url: str, workers: int, tasks: int, concurrency: int, model: str, workspace: Path
) -> tuple[float, float, float]:
    """Tasks per second with ``workers`` worker processes, and CPU ms per task of the
    host (this process, submit to last result) and of the workers (whole lives)."""
    procs = []
    children = _cpu(resource.RUSAGE_CHILDREN)
    try:
        for _ in range(workers):
            procs.append(start_worker(url, workspace, model, concurrency=concurrency)[0])
        config = Config(durability="none")
        with artoo.System.open(url, model=model, workspace=workspace, config=config) as host:
            assert host.fleet is not None
            while host.fleet.workers() < workers:
                time.sleep(0.05)
            start = time.perf_counter()
            host_cpu = _cpu(resource.RUSAGE_SELF)
            handles = [host.submit(f"say hello {i}") for i in range(tasks)]
            results = [h.result(600) for h in handles]
            elapsed = time.perf_counter() - start
            host_cpu = _cpu(resource.RUSAGE_SELF) - host_cpu
        # "hello" is judged by a model's verdict alone: success (accept needs proof by code)
        bad = [r for r in results if r.status not in ("accept", "success")]
        if bad:
            raise RuntimeError(f"{len(bad)} tasks did not end success: {bad[0]}")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    worker_cpu = _cpu(resource.RUSAGE_CHILDREN) - children
    return tasks / elapsed, 1000 * host_cpu / tasks, 1000 * worker_cpu / tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2, help="tasks per worker at once")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="executor answer latency")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[int, list[float]] = {n: [] for n in WORKERS}
    cpu: dict[int, list[tuple[float, float]]] = {n: [] for n in WORKERS}
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as server:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        model = _script(Path(tmp), args.delay_ms)
        for _ in range(args.repeat):
            for n in WORKERS:
                rate, host_ms, workers_ms = run_case(
                    server.create_database(), n, args.tasks, args.concurrency, model, workspace
                )
                figures[n].append(rate)
                cpu[n].append((host_ms, workers_ms))
                print(
                    f"{n} worker(s): {rate:.2f} tasks/s; CPU per task: host {host_ms:.1f} ms,"
                    f" workers {workers_ms:.1f} ms (with start-up)",
                    file=sys.stderr,
                )
    best = {n: max(v) for n, v in figures.items()}
    out = {
        "machine": machine(),
        "load_avg": os.getloadavg(),
        "tasks": args.tasks,
        "concurrency": args.concurrency,
        "delay_ms": args.delay_ms,
        "tasks_per_s": figures,
        "best": best,
        "cpu_ms_per_task_host_workers": cpu,
        "scaling": {n: best[n] / best[1] for n in WORKERS},
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.tasks} scripted tasks, concurrency {args.concurrency}, delay {args.delay_ms} ms")
    for n in WORKERS:
        print(
            f"  {n} worker(s): {best[n]:7.2f} tasks/s (best of {args.repeat})"
            f"  {best[n] / best[1]:.2f}x"
        )
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
