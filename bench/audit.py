"""How long ``artoo audit`` takes against the number of envelopes (issue: audit report
review, "≤ 1 s per 10,000 envelopes").

Writes synthetic stores of 10^4, 10^5 and 10^6 envelopes (``--sizes``): tasks of ten
envelopes each (a request, four model calls, an execution result with two tool calls, two
GGS decisions, a FinalResult; one task in 20 abandons after a denied confirmation), then
times :func:`artoo.report.audit_report` in each format on each store, reading the log
included. Prints seconds and seconds per 10,000 envelopes; the baseline is reading the
same log alone (``EventLog.read``), measured in the same run.

Usage: ``python bench/audit.py [--sizes 10000,100000,1000000] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from artoo.eventstore import EventLog
from artoo.report import audit_report
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    ToolCall,
    UserRequest,
)

T0 = 1_790_000_000.0
TARGET_S_PER_10K = 1.0


def _task(i: int) -> list[tuple[str, object]]:
    tid = f"task-{i:07d}"
    usage = {"prompt_tokens": 300 + i % 50, "completion_tokens": 20 + i % 7}
    calls = [
        (
            "executor" if k % 2 else "planner",
            LLMCall(
                call_id=f"{tid}-{k}",
                role="executor" if k % 2 else "planner",
                tier="tool",
                model="m",
                usage=usage,
                latency_ms=200.0 + (i * 7 + k * 13) % 400,
            ),
        )
        for k in range(4)
    ]
    if i % 20 == 19:
        end: list[tuple[str, object]] = [
            (
                "executor",
                ConfirmationRequest(request_id=f"{tid}-r", action="rm f", reason="delete"),
            ),
            ("queen", ConfirmationDecision(request_id=f"{tid}-r", approved=False)),
            ("ggs", FinalResult(task_id=tid, status="abandon", reason="replan_budget")),
        ]
    else:
        end = [
            (
                "ggs",
                GGSDecision(round=1, d=0, p=0, omega=0.2, loss=0.08, grad=-0.5, directive="accept"),
            ),
            ("ggs", FinalResult(task_id=tid, status="accept", reason="criteria_met")),
        ]
    return [
        ("user", UserRequest(text=f"task {i}")),
        *calls,
        (
            "executor",
            ExecutionResult(
                subtask_id=f"{tid}-s",
                tool_calls=[
                    ToolCall(tool="shell", elapsed_ms=40.0),
                    ToolCall(tool="read_file", elapsed_ms=1.0),
                ],
            ),
        ),
        (
            "ggs",
            GGSDecision(
                round=0, d=1, p=0.5, omega=0.1, loss=0.8, grad=0.3, directive="change_path"
            ),
        ),
        *end,
    ][:10]


def make_store(path: Path, n: int) -> None:
    """A store of ``n`` envelopes of synthetic tasks."""
    with EventLog.open(path / "events", durability="none") as log:
        batch: list[Envelope] = []
        seq = 0
        i = 0
        while seq < n:
            for sender, body in _task(i):
                if seq >= n:
                    break
                seq += 1
                batch.append(
                    Envelope(
                        seq=seq,
                        ts=T0 + seq * 0.05,
                        task_id=f"task-{i:07d}",
                        sender=sender,
                        to=None,
                        cause=None,
                        body=body,
                    )
                )
            i += 1
            if len(batch) >= 10_000:
                log.append(batch)
                batch = []
        if batch:
            log.append(batch)


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print the figures (the last line is JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    results = []
    print(
        f"{'envelopes':>10} {'read only s':>12} {'md s':>8} {'json s':>8} {'html s':>8} "
        f"{'worst s/10k':>12}"
    )
    for n in sizes:
        root = Path(tempfile.mkdtemp(prefix="artoo-bench-audit-"))
        try:
            make_store(root, n)
            start = time.perf_counter()
            with EventLog.open(root / "events", durability="none") as log:
                for _ in log.read():
                    pass
            row: dict[str, float] = {"envelopes": n, "read_s": time.perf_counter() - start}
            for fmt in ("md", "json", "html"):
                start = time.perf_counter()
                audit_report(root, fmt=fmt)  # type: ignore[arg-type]
                row[f"{fmt}_s"] = time.perf_counter() - start
            worst = max(row["md_s"], row["json_s"], row["html_s"]) / (n / 10_000)
            row["worst_s_per_10k"] = worst
            results.append(row)
            print(
                f"{n:>10,} {row['read_s']:>12.2f} {row['md_s']:>8.2f} {row['json_s']:>8.2f} "
                f"{row['html_s']:>8.2f} {worst:>12.3f}"
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
    met = all(r["worst_s_per_10k"] <= TARGET_S_PER_10K for r in results)
    print(f"target ≤ {TARGET_S_PER_10K} s per 10,000 envelopes: {'met' if met else 'NOT met'}")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
