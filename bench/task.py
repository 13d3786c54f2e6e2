"""Benchmark of a whole task through ``artoo.System`` on a scripted model (issue: task bench).

In one run it measures:

1. **Framework overhead per task** with a zero-latency scripted model: ``--tasks`` tasks
   (after ``--warmup`` warm-up tasks) run one after the other through ``System.run``, each
   perceiver → planner → one subtask (the executor answers without tools; one verifiable
   criterion decided by a rule check, ``output_contains``) → accept. Durability ``none``
   and ``batch`` run on two Systems at once, task by task in turn, so machine noise hits
   both alike; ``max_parallel`` is the Config default unless ``--max-parallel``.
   Reported: median, p90 and min ms per task; bus envelopes per task (counted in the event
   log); median ms per bus hop (median per-task time / envelopes per task); bus group
   commits per task (one fsync each under ``batch``) next to the disk's own append+fsync
   time; process CPU ms per task; and the baseline: the task's recorded model requests
   replayed directly on a ``ScriptedBackend`` — what the model seam itself costs. A
   breakdown by step (the gap between consecutive envelopes of a task, from their
   writer-stamped ``ts``) shows which role's handler and hop the time goes to.
2. **Parallel subtasks**: tasks of 1, 4 and 16 subtasks of one ``sequence`` with
   ``--latency-ms`` (200) of simulated latency on every executor call (the script's
   ``delay_ms``), ``max_parallel`` 16, sizes interleaved; the median wall time of
   ``--repeat`` tasks of each size, and its ratio to the 1-subtask median.
3. The machine: CPU model, cores, Python version, platform, load average.

Targets (issue): median framework overhead ≤ 20 ms per task; 16 parallel subtasks ≤ 1.5×
the wall time of one. The bench reports whether each is met; it never fails on them.

Usage: ``python bench/task.py [--tasks 30] [--warmup 2] [--max-parallel N] [--repeat 5]
[--latency-ms 200] [--json]``. With ``--json`` the last line printed is one JSON object
with every figure. Stores and workspaces (a copy of ``artoo/demo_data/workspace``) live in
a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

import artoo
from artoo.actors.llm import LLMRequest, ScriptedBackend
from artoo.eventstore import EventLog
from artoo.schemas import Config, LLMCall
from artoo.testing import write_script

TARGET_OVERHEAD_MS = 20.0
TARGET_PARALLEL_RATIO = 1.5
PARALLEL_SIZES = (1, 4, 16)
MAX_PARALLEL = 16
SCRIPTED = "scripted:"


# --------------------------------------------------------------------------- scripts
def script_entries(subtasks: int, executor_delay_ms: int) -> list[dict[str, Any]]:
    """Script entries for tasks of ``subtasks`` parallel subtasks (reusable: ``times = 0``).

    Each subtask has one verifiable criterion (``output_contains`` its part number), so the
    Agent-Validator decides it by rule, with no model call.
    """
    plan = [
        {
            "instruction": f"Write part {i:02d}",
            "sequence": 1,
            "criteria": [
                {
                    "text": "names its part",
                    "mode": "verifiable",
                    "check": {"kind": "output_contains", "value": f"part {i:02d}"},
                }
            ],
        }
        for i in range(subtasks)
    ]
    entries: list[dict[str, Any]] = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {"intent": "write the parts", "slug": "write-parts", "criteria": []},
        },
        {"role": "planner", "times": 0, "content": {"subtasks": plan}},
    ]
    for i in range(subtasks):
        entry: dict[str, Any] = {
            "role": "executor",
            "times": 0,
            "match": f"Subtask: Write part {i:02d}",
            "content": f"this is part {i:02d}",
        }
        if executor_delay_ms:
            entry["delay_ms"] = executor_delay_ms
        entries.append(entry)
    return entries


# --------------------------------------------------------------------------- figures
def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linear between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Overhead:
    """Per-task figures of one durability mode."""

    durability: str
    tasks: int
    median_ms: float
    p90_ms: float
    min_ms: float
    envelopes_per_task: float
    model_calls_per_task: float
    median_ms_per_hop: float
    groups_per_task: float
    cpu_ms_per_task: float
    direct_model_ms_per_task: float
    in_log_median_ms: float
    steps_ms: dict[str, float]
    statuses: dict[str, int]


@dataclass(frozen=True)
class Parallel:
    """Wall time of tasks of ``subtasks`` parallel subtasks."""

    subtasks: int
    runs_ms: list[float]
    median_ms: float
    ratio_to_one: float
    statuses: dict[str, int]


# --------------------------------------------------------------------------- runs
def _workspace(root: Path) -> Path:
    target = root / "workspace"
    source = Path(str(resources.files("artoo") / "demo_data" / "workspace"))
    shutil.copytree(source, target)
    return target


def _count(statuses: list[str]) -> dict[str, int]:
    return {s: statuses.count(s) for s in sorted(set(statuses))}


@dataclass
class _Lane:
    """One open System under measurement and what its measured tasks gave."""

    name: str
    store: Path
    model: str
    system: artoo.System
    times_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    groups: int = 0

    def take(self, text: str, *, measure: bool = True) -> None:
        """Run one task to its FinalResult; keep its figures when ``measure``."""
        cpu = time.process_time()
        start = time.perf_counter()
        result = self.system.run(text, timeout=60)
        elapsed = (time.perf_counter() - start) * 1000
        if measure:
            self.times_ms.append(elapsed)
            self.cpu_ms.append((time.process_time() - cpu) * 1000)
            self.ids.append(result.task_id)
            self.statuses.append(result.status)


def _open_lane(
    stack: contextlib.ExitStack,
    root: Path,
    name: str,
    entries: list[dict[str, Any]],
    config: Config,
) -> _Lane:
    base = root / name
    base.mkdir()
    workspace = _workspace(base)
    model = write_script(base / "script.toml", entries)
    system = stack.enter_context(
        artoo.System.open(base / "store", model=model, workspace=workspace, config=config)
    )
    return _Lane(name, base / "store", model, system)


def _interleave(lanes: list[_Lane], warmup: int, rounds: int) -> None:
    """Warm every lane up, then run ``rounds`` rounds of one task per lane, so that machine
    noise hits every lane alike; counts each lane's group commits while measured."""
    for i in range(warmup):
        for lane in lanes:
            lane.take(f"write the parts, warm-up {i}", measure=False)
    before = {}
    for lane in lanes:
        lane.system.flush(10)
        before[lane.name] = lane.system.bus.stats()["groups"]
    for i in range(rounds):
        for lane in lanes:
            lane.take(f"write the parts, take {i}")
    for lane in lanes:
        lane.system.flush(10)
        lane.groups = int(lane.system.bus.stats()["groups"] - before[lane.name])


def _read_tasks(store: Path, task_ids: list[str]) -> list[list[Any]]:
    with EventLog.open(store / "events", durability="none") as log:
        return [list(log.read_task(task_id)) for task_id in task_ids]


def _sender_role(sender: str) -> str:
    return sender.split("/", 1)[0]


def step_breakdown(tasks: list[list[Any]]) -> dict[str, float]:
    """Median ms from the previous envelope of the task to each envelope, by step.

    A step is named ``sender→Kind`` (the pair suffix dropped); the gap is measured on the
    envelopes' ``ts`` (stamped by the bus writer per group commit), so it holds the sending
    role's handler time plus one bus hop. Envelopes of one group have a zero gap.
    """
    gaps: dict[str, list[float]] = {}
    for events in tasks:
        for prev, env in itertools.pairwise(events):
            step = f"{_sender_role(env.sender)}→{type(env.body).__name__}"
            gaps.setdefault(step, []).append((env.ts - prev.ts) * 1000)
    return {step: round(statistics.median(values), 3) for step, values in gaps.items()}


def _direct_model_ms(model: str, calls: list[LLMCall]) -> float:
    """Wall ms of the recorded requests replayed directly on a fresh ScriptedBackend."""
    backend = ScriptedBackend(model.removeprefix(SCRIPTED))
    requests = [msgspec.convert(call.request, LLMRequest) for call in calls]
    for request in requests[:3]:  # warm the regex and code paths
        backend.complete(request)
    start = time.perf_counter()
    for request in requests:
        backend.complete(request)
    return (time.perf_counter() - start) * 1000


def fsync_ms(directory: Path, n: int = 40) -> list[float]:
    """Wall ms of ``n`` appends of 300 bytes each followed by ``os.fsync`` (the disk's floor
    for one ``batch`` group commit)."""
    path = directory / "fsync-probe"
    times: list[float] = []
    with path.open("ab") as f:
        for _ in range(n):
            start = time.perf_counter()
            f.write(b"x" * 300)
            f.flush()
            os.fsync(f.fileno())
            times.append((time.perf_counter() - start) * 1000)
    path.unlink()
    return times


def _overhead_of(lane: _Lane, durability: str) -> Overhead:
    events = _read_tasks(lane.store, lane.ids)
    tasks = len(lane.ids)
    envelopes = statistics.fmean(len(task) for task in events)
    calls = [e.body for task in events for e in task if isinstance(e.body, LLMCall)]
    median = statistics.median(lane.times_ms)
    in_log = [(task[-1].ts - task[0].ts) * 1000 for task in events]
    return Overhead(
        durability=durability,
        tasks=tasks,
        median_ms=median,
        p90_ms=percentile(lane.times_ms, 0.9),
        min_ms=min(lane.times_ms),
        envelopes_per_task=envelopes,
        model_calls_per_task=len(calls) / tasks,
        median_ms_per_hop=median / envelopes,
        groups_per_task=lane.groups / tasks,
        cpu_ms_per_task=statistics.median(lane.cpu_ms),
        direct_model_ms_per_task=_direct_model_ms(lane.model, calls) / tasks,
        in_log_median_ms=statistics.median(in_log),
        steps_ms=step_breakdown(events),
        statuses=_count(lane.statuses),
    )


def run_overhead(root: Path, tasks: int, warmup: int, max_parallel: int) -> list[Overhead]:
    """Sequential one-subtask tasks on a zero-latency script, durability ``none`` and
    ``batch`` interleaved task by task (see the module docstring)."""
    modes = ("none", "batch")
    with contextlib.ExitStack() as stack:
        lanes = [
            _open_lane(
                stack,
                root,
                f"overhead-{mode}",
                script_entries(1, 0),
                Config(durability=mode, max_parallel=max_parallel),
            )
            for mode in modes
        ]
        _interleave(lanes, warmup, tasks)
    return [_overhead_of(lane, mode) for lane, mode in zip(lanes, modes, strict=True)]


def run_parallel(root: Path, repeat: int, latency_ms: int) -> list[Parallel]:
    """Tasks of 1, 4 and 16 parallel subtasks, interleaved; ratios to the 1-subtask median."""
    config = Config(durability="none", max_parallel=MAX_PARALLEL)
    with contextlib.ExitStack() as stack:
        lanes = [
            _open_lane(stack, root, f"parallel-{n}", script_entries(n, latency_ms), config)
            for n in PARALLEL_SIZES
        ]
        _interleave(lanes, 1, repeat)
    one = statistics.median(lanes[0].times_ms)
    return [
        Parallel(
            subtasks=n,
            runs_ms=[round(r, 2) for r in lane.times_ms],
            median_ms=statistics.median(lane.times_ms),
            ratio_to_one=statistics.median(lane.times_ms) / one,
            statuses=_count(lane.statuses),
        )
        for n, lane in zip(PARALLEL_SIZES, lanes, strict=True)
    ]


# --------------------------------------------------------------------------- machine
def machine() -> dict[str, Any]:
    """CPU model, cores, Python, platform and the load average when the bench started."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "loadavg": load,
    }


# --------------------------------------------------------------------------- output
def _overhead_lines(result: dict[str, Any]) -> list[str]:
    modes = result["overhead"]
    fsync = result["fsync"]
    lines = [
        "1. framework overhead per task (zero-latency scripted model, sequential tasks, "
        f"max_parallel {result['max_parallel']}, the two modes interleaved)",
        f"{'durability':<11}{'tasks':>6}{'median ms':>11}{'p90 ms':>9}{'min ms':>9}"
        f"{'env/task':>10}{'ms/hop':>8}{'groups':>8}{'cpu ms':>8}{'calls':>7}"
        f"{'direct model ms':>17}  statuses",
    ]
    for o in modes:
        lines.append(
            f"{o['durability']:<11}{o['tasks']:>6}{o['median_ms']:>11.2f}{o['p90_ms']:>9.2f}"
            f"{o['min_ms']:>9.2f}{o['envelopes_per_task']:>10.1f}{o['median_ms_per_hop']:>8.3f}"
            f"{o['groups_per_task']:>8.1f}{o['cpu_ms_per_task']:>8.2f}"
            f"{o['model_calls_per_task']:>7.1f}{o['direct_model_ms_per_task']:>17.3f}"
            f"  {o['statuses']}"
        )
    lines += [
        "   (ms/hop = median / envelopes per task; groups = bus group commits per task, one "
        "fsync each under batch; cpu ms = process CPU per task, median; direct model ms = "
        "the same model calls made directly on the ScriptedBackend)",
        f"   disk: one 300-byte append + fsync: median {fsync['median_ms']:.3f} ms, "
        f"p90 {fsync['p90_ms']:.3f} ms",
        "",
        "   where a task's time goes: median ms before each envelope (sender's handler + hop)",
        f"   {'step':<36}" + "".join(f"{o['durability']:>9}" for o in modes),
    ]
    for step in dict.fromkeys(step for o in modes for step in o["steps_ms"]):
        cells = "".join(f"{o['steps_ms'].get(step, float('nan')):>9.3f}" for o in modes)
        lines.append(f"   {step:<36}{cells}")
    lines.append(
        f"   {'first → last envelope (median)':<36}"
        + "".join(f"{o['in_log_median_ms']:>9.3f}" for o in modes)
    )
    lines.append(
        f"   {'outside the log (median − that)':<36}"
        + "".join(f"{o['median_ms'] - o['in_log_median_ms']:>9.3f}" for o in modes)
    )
    return lines


def _report(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"machine: {m['cpu']}, {m['cores']} cores, {m['implementation']} {m['python']}, "
        f"{m['platform']}, load average {m['loadavg']}",
        "",
        *_overhead_lines(result),
        "",
        f"2. parallel subtasks ({result['latency_ms']} ms per executor call, "
        f"max_parallel {MAX_PARALLEL}, median of {result['repeat']}, sizes interleaved)",
        f"{'subtasks':>8}{'median ms':>11}{'ratio to 1':>12}  runs ms / statuses",
    ]
    for p in result["parallel"]:
        lines.append(
            f"{p['subtasks']:>8}{p['median_ms']:>11.1f}{p['ratio_to_one']:>12.3f}"
            f"  {p['runs_ms']} {p['statuses']}"
        )
    t = result["targets"]
    lines += [
        "",
        f"targets: median overhead ≤ {TARGET_OVERHEAD_MS:g} ms — none {t['overhead_none_ms']:.2f}"
        f" ms {_verdict(t['overhead_none_met'])}, batch {t['overhead_batch_ms']:.2f} ms "
        f"{_verdict(t['overhead_batch_met'])}; 16 parallel ≤ {TARGET_PARALLEL_RATIO:g}× one — "
        f"{t['parallel_ratio']:.3f}× {_verdict(t['parallel_met'])}",
        f"bench wall time: {result['bench_s']:.1f} s",
    ]
    return "\n".join(lines)


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints a table, or (``--json``) one JSON object last."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=30, help="measured tasks per mode")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up tasks per mode")
    parser.add_argument(
        "--max-parallel",
        type=int,
        default=Config().max_parallel,
        help="max_parallel of the overhead runs (default: the Config default)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="tasks per parallel size")
    parser.add_argument("--latency-ms", type=int, default=200, help="executor latency")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    host = machine()
    with tempfile.TemporaryDirectory(prefix="artoo-bench-task-") as tmp:
        root = Path(tmp)
        disk = fsync_ms(root)
        overhead = run_overhead(root, args.tasks, args.warmup, args.max_parallel)
        parallel = run_parallel(root, args.repeat, args.latency_ms)
        disk += fsync_ms(root)
    by_mode = {o.durability: o for o in overhead}
    sixteen = next(p for p in parallel if p.subtasks == max(PARALLEL_SIZES))
    result: dict[str, Any] = {
        "bench": "task",
        "machine": host,
        "tasks": args.tasks,
        "warmup": args.warmup,
        "max_parallel": args.max_parallel,
        "latency_ms": args.latency_ms,
        "repeat": args.repeat,
        "fsync": {
            "median_ms": statistics.median(disk),
            "p90_ms": percentile(disk, 0.9),
        },
        "overhead": [asdict(o) for o in overhead],
        "parallel": [asdict(p) for p in parallel],
        "targets": {
            "overhead_ms": TARGET_OVERHEAD_MS,
            "overhead_none_ms": by_mode["none"].median_ms,
            "overhead_none_met": by_mode["none"].median_ms <= TARGET_OVERHEAD_MS,
            "overhead_batch_ms": by_mode["batch"].median_ms,
            "overhead_batch_met": by_mode["batch"].median_ms <= TARGET_OVERHEAD_MS,
            "parallel_max_ratio": TARGET_PARALLEL_RATIO,
            "parallel_ratio": sixteen.ratio_to_one,
            "parallel_met": sixteen.ratio_to_one <= TARGET_PARALLEL_RATIO,
        },
        "bench_s": time.perf_counter() - started,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
