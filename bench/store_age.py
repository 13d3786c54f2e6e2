"""Does a task cost more as the store ages? (issue: hostile world, "per-task cost
independent of the store's age").

Runs ``--tasks`` tasks (default 3,000) one after the other through one ``artoo.System`` on
one store, each perceiver → planner → one subtask whose executor makes ONE shell call
(``ls``, spilled like every result) → accept, on a zero-latency scripted model. Prints the
rate (tasks/s) of the first and the last ``--window`` tasks (default 500) and their ratio,
the store's size, and how many spill directories it holds. The baseline is the same run's
own first window (measured in the same process, on the same machine).

Target (issue): the last 500 at ≥ 90% of the first 500's rate. Before per-task spill
directories, every attempt listed the whole ``spill/`` directory: 600 tasks went from 266
to 24 tasks/s.

Usage: ``python bench/store_age.py [--tasks 3000] [--window 500] [--sandbox auto|off]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

import artoo
from artoo.schemas import Config
from artoo.testing import write_script

TARGET = 0.9


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print the figures (the last line is JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        default="auto",
        help="Config.tools.sandbox (off: the framework's own cost, shell calls unsandboxed)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="artoo-bench-age-"))
    try:
        workspace = base / "workspace"
        shutil.copytree(Path(str(resources.files("artoo") / "demo_data" / "workspace")), workspace)
        # each task: the executor calls the shell once, then answers (entries used in order)
        model = write_script(
            base / "script.toml",
            [
                {"role": "perceiver", "times": 0, "content": {"intent": "list", "slug": "list"}},
                {
                    "role": "planner",
                    "times": 0,
                    "content": {
                        "subtasks": [{"instruction": "List the files", "tools": ["shell"]}]
                    },
                },
                *(
                    entry
                    for _ in range(args.tasks)
                    for entry in (
                        {
                            "role": "executor",
                            "tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}],
                        },
                        {"role": "executor", "content": "listed"},
                    )
                ),
            ],
        )
        config = Config.model_validate(
            {"durability": "none", "max_parallel": 1, "tools": {"sandbox": args.sandbox}}
        )
        stamps: list[float] = []
        cpu: list[float] = []  # this process's CPU and its children's (the shell calls)
        statuses: dict[str, int] = {}
        with artoo.System.open(
            base / "store", model=model, workspace=workspace, config=config
        ) as s:
            for i in range(args.tasks):
                result = s.run(f"list the files ({i})", timeout=60)
                statuses[result.status] = statuses.get(result.status, 0) + 1
                stamps.append(time.perf_counter())
                t = os.times()
                cpu.append(t.user + t.system + t.children_user + t.children_system)
        first = args.window / (stamps[args.window - 1] - stamps[0])
        last = args.window / (stamps[-1] - stamps[-args.window])
        # CPU per task: steadier than wall time on a shared machine (others' load does not
        # count), blind to waiting (I/O, locks)
        cpu_first = (cpu[args.window - 1] - cpu[0]) / (args.window - 1) * 1000
        cpu_last = (cpu[-1] - cpu[-args.window]) / (args.window - 1) * 1000
        spill_dirs = sum(1 for p in (base / "store" / "spill").iterdir() if p.is_dir())
        size_mb = sum(p.stat().st_size for p in (base / "store").rglob("*") if p.is_file()) / 1e6
        figures = {
            "tasks": args.tasks,
            "window": args.window,
            "first_rate": round(first, 1),
            "last_rate": round(last, 1),
            "ratio": round(last / first, 3),
            "cpu_ms_first": round(cpu_first, 2),
            "cpu_ms_last": round(cpu_last, 2),
            "cpu_ratio": round(cpu_first / cpu_last, 3),
            "target": TARGET,
            "met": last / first >= TARGET,
            "spill_task_dirs": spill_dirs,
            "store_mb": round(size_mb, 1),
            "statuses": statuses,
        }
        print(f"{args.tasks} tasks with one shell call each, one store, max_parallel 1")
        print(f"first {args.window}: {first:.1f} tasks/s   last {args.window}: {last:.1f} tasks/s")
        print(f"ratio last/first: {last / first:.3f} (target ≥ {TARGET}: "
              f"{'met' if figures['met'] else 'NOT met'})")  # fmt: skip
        print(f"CPU per task: first {cpu_first:.2f} ms, last {cpu_last:.2f} ms "
              f"(first/last {cpu_first / cpu_last:.3f})")  # fmt: skip
        print(f"store: {size_mb:.1f} MB, {spill_dirs} task spill directories; {statuses}")
        if args.json:
            print(json.dumps(figures))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
