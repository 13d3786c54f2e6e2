"""``artoo replay``: the thin command-line layer over :mod:`artoo.replay`."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from artoo._terminal import EXIT_ABANDON, EXIT_OK, literal

from ._fork import fork, origin_line
from ._rerun import rerun
from ._timeline import TaskRow, TimelineTask, task_table, timeline
from ._verify import verify

__all__ = ["replay_command"]


def replay_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``artoo replay`` with parsed ``args``; returns the exit code."""

    if not console.is_terminal:  # piped output: never cut a line
        console = Console(width=200, soft_wrap=True)
    if args.verify:
        return _verify(args, console)
    if args.rerun:
        return _rerun(args, console)
    if args.task is None:
        rows = task_table(args.store)
        if args.json:
            print(json.dumps([r.to_json() for r in rows], ensure_ascii=False))
        else:
            origin = origin_line(args.store)
            if origin is not None:
                console.print(literal(origin))
            _print_table(rows, args.store, console)
        return EXIT_OK
    tasks = timeline(args.store, args.task)
    if args.json:
        print(json.dumps(tasks[0].to_json(), ensure_ascii=False))
    else:
        _print_timeline(tasks[0], console)
    return EXIT_OK


def _print_table(rows: list[TaskRow], store: str, console: Console) -> None:

    table = Table(title=f"tasks of {store}")
    for col in ("task", "text", "status", "reason", "macro-states", "calls", "tokens", "s"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.task_id,
            literal(r.text[:60]),
            r.status or "(no end)",
            r.reason or "",
            " → ".join(r.states) or "—",
            f"{r.model_calls} model, {r.tool_calls} tool"
            + (f", {r.refused_calls} refused" if r.refused_calls else ""),
            f"{r.tokens_in}/{r.tokens_out}",
            f"{r.elapsed_s:.2f}",
        )
    console.print(table)
    if any(not r.status for r in rows):  # the store is not open elsewhere: none is running
        console.print(
            "(no end): the task's process was killed before it ended; the next "
            "System.open of this store (artoo run, repl, dream …) ends it abandon "
            "'interrupted'",
            style="dim",
        )


def _print_timeline(task: TimelineTask, console: Console) -> None:

    console.print(Text(f"task {task.task_id}: ", style="bold") + literal(task.text))
    for e in task.entries:
        head = Text(f"{e.seq:>6} {e.t:8.3f}s ", style="dim")
        head.append(Text(f"{e.sender:<24} ", style="cyan"))
        head.append_text(literal(e.text))
        console.print(head)
        for line in e.detail:
            console.print(Text(" " * 41) + literal(line))


def _verify(args: argparse.Namespace, console: Console) -> int:

    report = verify(args.store, args.task)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        checked = ", ".join(f"{n} {kind}" for kind, n in sorted(report.checked.items()))
        console.print(f"recomputed: {checked or 'nothing'}")
        if report.skipped:
            skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(report.skipped.items()))
            console.print(f"not recomputable from the log: {skipped}")
        if report.retired:
            retired = ", ".join(f"{n} {kind}" for kind, n in sorted(report.retired.items()))
            console.print(f"taken as logged (a retired policy's, docs/replay.md): {retired}")
        for m in report.mismatches:
            console.print(Text("MISMATCH ", style="bold red") + literal(str(m)))
        console.print(
            "every decision agrees with the log"
            if report.ok
            else f"{len(report.mismatches)} mismatches"
        )
    return EXIT_OK if report.ok else EXIT_ABANDON


def _rerun(args: argparse.Namespace, console: Console) -> int:

    settings = list(getattr(args, "set", None) or [])
    model = getattr(args, "model", None)
    if model:
        if args.task is None:
            raise ValueError("--model goes on live from one task: name it with --task")
        into = args.fork or f"{str(args.store).rstrip('/')}-fork-{args.task}"
        report = fork(
            args.store,
            args.task,
            model=model,
            into=into,
            workspace=args.workspace,
            settings=settings,
        )
    elif args.fork:
        raise ValueError("--fork needs --model (a fork goes on live with a model)")
    else:
        report = rerun(args.store, args.task, settings=settings)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        console.print(
            f"reran {len(report.tasks)} tasks, {report.compared} recorded messages matched"
        )
        if settings:
            console.print(literal(f"what-if {' '.join(settings)}:"))
        if report.divergence is None:
            console.print("zero divergence")
        else:
            console.print(literal(str(report.divergence)))
        for end in report.reran:
            if "fork" in end:
                live_from = end.get("live_from")
                console.print(literal(
                    f"fork {end['fork']}: {origin_line(end['fork'])}\n"
                    + (f"went live with {model} at: {live_from}" if live_from
                       else "never left the record (no call went to the model)")
                ))  # fmt: skip
            rerun_part = (
                f"rerun {' → '.join(end['path']) or '-'}, then stopped"
                if end.get("stopped")
                else f"rerun {end['status']} via {' → '.join(end['path']) or '-'}"
            )
            console.print(literal(
                f"task {end['task']}: {rerun_part}; recorded {end['recorded_status']} via "
                f"{' → '.join(end['recorded_path']) or '-'}"
            ))  # fmt: skip
        if report.unanswered and not model:
            console.print(literal("stopped where the log holds no answer (no model is asked):"))
            for call in report.unanswered:
                console.print(literal(f"  {call}"))
    return EXIT_OK if report.ok else EXIT_ABANDON
