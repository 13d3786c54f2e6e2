"""Resume after a crash: time from ``System.open`` to a resumed task's next step, with
10^4 and 10^6 envelopes in the store (targets: 1 s and 5 s).

The store: filler tasks (each a UserRequest, 98 ExecutionResults, a FinalResult) and, last,
one task a killed process left open — the envelopes of a real scripted run cut just before
the Executor's last model call. Its "next step" is its first envelope logged after the
resume (the model call the log could not answer). Baseline from the same run: opening the
same store with ``recovery = "abandon"`` (the open that only ends the task).

Usage: python bench/resume.py [--sizes 10000,1000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import msgspec

import artoo
from artoo.eventstore import EventLog, open_memory
from artoo.schemas import (
    Config,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    TaskResumed,
    UserRequest,
)
from artoo.testing import write_script

ENTRIES = [
    {"role": "perceiver", "content": {"intent": "write a file", "slug": "write-file"}},
    {"role": "planner", "content": {"subtasks": [{"instruction": "write made.txt"}]}},
    {
        "role": "executor",
        "tool_calls": [{"name": "write_file", "arguments": {"path": "made.txt", "content": "x"}}],
    },
    {"role": "executor", "content": "done"},
]


def _recorded_task(tmp: Path) -> list[Envelope]:
    """A real run's envelopes, cut before the Executor's last model call."""
    ws = tmp / "ws0"
    ws.mkdir()
    model = write_script(tmp / "s0.toml", ENTRIES)
    with artoo.System.open(
        tmp / "s0", model=model, workspace=ws, config=Config(durability="none")
    ) as system:
        handle = system.submit("write made.txt")
        handle.result(60)
        task_id = handle.task_id
    with EventLog.open(tmp / "s0" / "events", durability="none") as log:
        envs = list(log.read_task(task_id))
    calls = [i for i, e in enumerate(envs) if isinstance(e.body, LLMCall)]
    return envs[: calls[-1]]


def _store(tmp: Path, size: int, task: list[Envelope]) -> Path:
    store = tmp / f"store-{size}"
    store.mkdir()
    per = 100
    with EventLog.open(store / "events", durability="none") as log:
        batch: list[Envelope] = []
        for t in range(max(0, (size - len(task)) // per)):
            tid = f"01FILLER{t:018d}"
            batch.append(Envelope(0, 1.0, tid, "host", None, None, UserRequest(text="x")))
            body = ExecutionResult(subtask_id="s", output="y" * 100)
            batch += [Envelope(0, 1.0, tid, "executor", None, None, body)] * (per - 2)
            end = FinalResult(task_id=tid, status="accept")
            batch.append(Envelope(0, 1.0, tid, "ggs", None, None, end))
            if len(batch) >= 20_000:
                log.append(batch)
                batch = []
        log.append(batch)
        offset = log.last_seq + 1 - task[0].seq  # the task's causes follow it
        log.append(
            [
                msgspec.structs.replace(
                    e, seq=0, cause=None if e.cause is None else e.cause + offset
                )
                for e in task
            ]
        )
        memory = Config().memory  # the projection caught up, as in use
        open_memory(
            store / "memory",
            log,
            attention_floor=memory.attention_floor,
            decision_band=memory.decision_band,
        ).close()
    return store


def _open(store: Path, tmp: Path, recovery: str) -> float:
    """Seconds from System.open to the resumed task's first new envelope (abandon: to the
    end of open)."""
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    model = write_script(tmp / "rest.toml", ENTRIES[3:])
    start = time.time()
    system = artoo.System.open(
        store, model=model, workspace=ws, config=Config(durability="none", recovery=recovery)
    )
    try:
        if recovery == "abandon":
            return time.time() - start
        [handle] = system.resumed
        handle.result(60)
        system.flush(10)
    finally:
        system.close()
    with EventLog.open(store / "events", durability="none") as log:
        envs = list(log.read_task(handle.task_id))
    mark = next(i for i, e in enumerate(envs) if isinstance(e.body, TaskResumed))
    return envs[mark + 1].ts - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="artoo-bench-resume-"))
    rows = []
    try:
        task = _recorded_task(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            built = time.perf_counter()
            store = _store(tmp, size, task)
            copy = tmp / f"copy-{size}"
            shutil.copytree(store, copy)
            built = time.perf_counter() - built
            resumed = _open(store, tmp, "resume")
            abandoned = _open(copy, tmp, "abandon")
            rows.append(
                {
                    "envelopes": size,
                    "resume_next_step_s": round(resumed, 3),
                    "abandon_open_s": round(abandoned, 3),
                    "ratio": round(resumed / abandoned, 2),
                    "built_s": round(built, 1),
                }
            )
            print(
                f"{size:>9,} envelopes: open → resumed task's next step {resumed:.3f} s; "
                f"open with recovery=abandon {abandoned:.3f} s ({resumed / abandoned:.2f}x); "
                f"store built in {built:.1f} s",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
