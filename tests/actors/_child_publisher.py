"""Child process for the SIGKILL test: publish numbered messages, report flushed counts.

Usage: python _child_publisher.py <events-dir> <durability> <flush-every>

Prints ``ready`` once the log is open, then after every ``flush()`` that returned the
number of messages published so far (all of them persisted), one per line, flushed to
stdout at once. Runs until killed. Message ``i`` (from 1) has ``subtask_id == str(i)``,
so with one publisher its seq is ``i``.
"""

from __future__ import annotations

import sys

from artoo.actors.runtime.bus import Bus
from artoo.eventstore import EventLog
from artoo.schemas import ExecutionResult


def main() -> None:
    path, durability, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
    log = EventLog.open(path, durability=durability)  # type: ignore[arg-type]
    bus = Bus(log)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    i = 0
    while True:
        for _ in range(every):
            i += 1
            body = ExecutionResult(subtask_id=str(i), output="x" * 120)
            bus.publish(body, sender="child", task_id=f"task-{i % 7}")
        bus.flush()
        out.write(f"{i}\n")
        out.flush()


if __name__ == "__main__":
    main()
