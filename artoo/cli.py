"""The ``artoo`` command line."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

import msgspec
from rich.console import Console

from . import __version__
from ._terminal import (
    CONTROL,
    EXIT_ABANDON,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    literal,
)

if TYPE_CHECKING:
    from artoo.eventstore import AuditLogReader
    from artoo.replay import TaskLog

    from ._store import StoreSpec


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``artoo`` (``artoo --help``)."""
    parser = argparse.ArgumentParser(
        prog="artoo",
        description="artoo: an event-sourced actor system that runs LLM agents as a hierarchy "
        "of roles. Every message is kept in the store's event log.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run one task to its FinalResult",
        description="Run one task, showing its work live (the plan, each command, verdicts, "
        "the GGS's decisions); Ctrl-C cancels it (exit 130). Settings come from artoo.toml, "
        "[tool.artoo] in pyproject.toml, ARTOO_* variables and these flags (see artoo config).",
    )
    run.add_argument("text", help="the task, in free text")
    _add_settings(run)
    run.add_argument(
        "--timeout", type=seconds, default=None, help="task deadline in seconds (positive)"
    )
    run.add_argument(
        "--max-calls",
        type=positive_int,
        default=None,
        help="model calls the task may make; the call past it is not made (abandon, budget)",
    )
    run.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="tokens the task may use (overrun by at most the calls in flight)",
    )
    run.add_argument(
        "--confirm",
        choices=["deny", "ask"],
        default="deny",
        help="Law 1 confirmations: deny every irreversible action (default), or ask on this "
        "terminal, showing exactly which files would be deleted or changed; a change of a "
        "file the request's reading targets is reversible and never asked (artoo undo "
        "restores it), a deletion the reading names and the request spells out is approved "
        "by the request (request_consent)",
    )
    shown = run.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the FinalResult as JSON only")
    shown.add_argument(
        "--jsonl",
        action="store_true",
        help="print every envelope as a JSON line as it happens (artoo export's format), "
        "the FinalResult last",
    )
    shown.add_argument(
        "--quiet", "-q", action="store_true", help="print only the final status and summary"
    )

    config = sub.add_parser(
        "config",
        help="print the effective configuration and where each value came from",
        description="The configuration artoo run would use here: defaults, [tool.artoo] in "
        "pyproject.toml, artoo.toml, ARTOO_* environment variables, then flags — a later "
        "source overrides an earlier one.",
    )
    _add_settings(config, run_flags=False)
    config.add_argument(
        "--all", action="store_true", help="also the settings left at their defaults"
    )

    demo = sub.add_parser("demo", help="run five scripted scenarios offline (no network, no key)")
    demo.add_argument("--store", default=None, help="store directory (default: a fresh temp dir)")
    demo.add_argument(
        "--clean", action="store_true", help="remove the temp dir (workspace, store) at the end"
    )

    mem = sub.add_parser(
        "memory",
        help="show memory: potentials per tag with its requests and SOPs; --recall TEXT "
        "shows what a request would recall",
    )
    mem.add_argument("store", nargs="?", default="./.artoo", help="the store directory")
    mem.add_argument(
        "--recall",
        metavar="TEXT",
        help="show what this request would recall by meaning: the past requests with their "
        "keyword and vector ranks, scores and distractor flags, then the tags read",
    )
    mem.add_argument(
        "--embedder",
        choices=["hash", "minilm"],
        default="hash",
        help="sentence vectors for --recall (minilm needs the artoo[embed] extra; default: hash)",
    )
    mem.add_argument(
        "--rebuild",
        action="store_true",
        help="recompute memory from the event log (built aside, swapped in only when "
        "complete; a store in use is left untouched)",
    )

    dream = sub.add_parser("dream", help="run one Dreamer pass on a store now")
    dream.add_argument("store", nargs="?", default="./.artoo", help="the store directory")

    audit = sub.add_parser(
        "audit",
        help="an audit report of a store: summary, what needs attention, tasks, roles, tools, "
        "memory, windows; --verify checks the Auditor's hash-chained audit log",
        description="An audit report of a store, built from its event log. With --verify, "
        "--recompute or --reports, the Auditor's audit log (<store>/audit) instead: "
        "--verify checks its hash chain (exit 1 naming the first bad record); --recompute "
        "recomputes its reports from the event log and compares them (exit 1 on a "
        "difference); --reports prints them as JSON lines.",
    )
    audit.add_argument("store", nargs="?", default="./.artoo", help="the store directory")
    audit.add_argument("--since", default=None, help="from this time (epoch s or ISO 8601, UTC)")
    audit.add_argument("--until", default=None, help="up to this time (epoch s or ISO 8601)")
    audit.add_argument("--task", default=None, help="only this task")
    audit.add_argument(
        "--format",
        choices=["md", "json", "html"],
        default="md",
        help="md (default), json (schema: artoo.report.report_schema()), or one "
        "self-contained html page with plots",
    )
    audit.add_argument("-o", "--output", default=None, help="the file (default: stdout)")
    audit.add_argument(
        "--verify", action="store_true", help="check the hash chain; exit 1 on the first bad record"
    )
    audit.add_argument(
        "--expect-head",
        metavar="HASH",
        default=None,
        help="with --verify: the chain must still hold this record hash (the head an "
        "earlier verify printed, kept outside the store); exit 1 if not",
    )
    audit.add_argument(
        "--recompute",
        action="store_true",
        help="recompute the Auditor's reports from the event log and compare them",
    )
    audit.add_argument(
        "--window-s",
        type=seconds,
        default=None,
        help="the audit window the store ran with, for --recompute (default: Config's, 300)",
    )
    audit.add_argument(
        "--reports", action="store_true", help="print the Auditor's reports as JSON lines"
    )
    export = sub.add_parser(
        "export",
        help="write a store's event log out: envelopes as JSON lines, or OpenTelemetry traces",
    )
    export.add_argument("store", nargs="?", default="./.artoo", help="the store directory")
    export.add_argument("--task", default=None, help="only this task's envelopes")
    export.add_argument(
        "--format",
        choices=["jsonl", "otlp", "otlp-proto"],
        default="jsonl",
        help="jsonl: one envelope per line (read back with artoo.export.read_jsonl); otlp: one "
        "trace per task as OTLP JSON lines (the OTLP file-exporter format, GenAI semantic "
        "conventions); otlp-proto: one binary ExportTraceServiceRequest",
    )
    export.add_argument(
        "--include-content",
        action="store_true",
        help="otlp: put prompts and completions on the chat spans (left out by default)",
    )
    export.add_argument("-o", "--output", default=None, help="the file (default: stdout)")

    diff = sub.add_parser(
        "diff",
        help="two runs side by side: where they part, and their macro-states, calls, tokens "
        "and time",
        description="Align two tasks' envelopes by message kind and role and show where they "
        "part. Each run is STORE:TASK, or STORE alone when it holds one task; both may be "
        "the same store.",
    )
    diff.add_argument("a", help="run A: STORE[:TASK]")
    diff.add_argument("b", help="run B: STORE[:TASK]")
    diff.add_argument("--json", action="store_true", help="print the diff as JSON")
    replay = sub.add_parser(
        "replay",
        help="read a store's log back: a table of its tasks, or one task's timeline",
        description="Without --task, one row per task; with --task, the task's timeline: "
        "rounds, subtasks, attempts, tool calls, model calls, GGS decisions, memory reads "
        "and writes, and the final result.",
    )
    replay.add_argument("store", nargs="?", default="./.artoo", help="the store directory")
    replay.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="with --rerun, a what-if: rerun under this Config change (repeatable; e.g. "
        "ggs.delta=0.0, max_retries=1) and report the first decision it changes; it stops "
        "at the first call the log cannot answer, unless --model is given",
    )
    replay.add_argument(
        "--model",
        default=None,
        help="with --rerun --task: go on live with this model from the first call the log "
        "cannot answer, into a forked store (tools then run for real in --workspace)",
    )
    replay.add_argument(
        "--fork",
        default=None,
        metavar="DIR",
        help="with --model: the new store (default: STORE-fork-TASK); it records its parent "
        "store and seq in fork.json",
    )
    replay.add_argument(
        "--workspace",
        default=".",
        help="with --model: the root the file tools may touch once the fork goes live",
    )
    replay.add_argument("--task", default=None, help="show this task's timeline")
    replay.add_argument("--json", action="store_true", help="print JSON (for tools)")
    replay.add_argument(
        "--verify",
        action="store_true",
        help="recompute every deterministic decision (GGS decisions and MUST NOT sets, "
        "Planner calibration, rule verdicts, Law 1 decisions and their confirmations, the "
        "Dispatcher's grouping and order, megram quantization, the memory projection) "
        "from its logged inputs; exit 1 listing each mismatch (seq, logged, recomputed)",
    )
    replay.add_argument(
        "--rerun",
        action="store_true",
        help="re-execute the task(s) in a scratch store with every model answer and tool "
        "result served from the log (nothing runs for real), compare the new log with the "
        "recorded one; exit 1 with the first divergence and a field-level diff",
    )

    repl = sub.add_parser(
        "repl",
        help="talk to the Queen: submit tasks, watch them, answer the operator inbox",
        description="An interactive session on a store: free text submits a task (progress "
        "is printed live); /status, /tasks, /inbox, /approve ID, /deny ID, /continue ID, "
        "/cancel TASK, /audit, /memory, /help, /quit. Confirmations (but those the request "
        "consents to) and escalation tickets wait in the inbox (a confirmation is denied at "
        "its timeout). Line editing and "
        "history (<store>/repl_history) by prompt_toolkit.",
    )
    repl.add_argument("store", nargs="?", default="./.artoo", help="the store directory")
    repl.add_argument(
        "--model", help="litellm model string or scripted:<path> (default: $ARTOO_MODEL)"
    )
    repl.add_argument("--workspace", default=".", help="the root the file tools may touch")

    worker = sub.add_parser(
        "worker",
        help="run a worker of a PostgreSQL store: take submitted tasks and run them here",
        description="A worker process of a PostgreSQL store (docs/postgres.md): it leases "
        "submitted tasks (any number of workers, on any machines) and runs each wholly here "
        "(roles, sandbox, workspace), every envelope in the store's one log. Hosts' "
        "System.submit only enqueues while a worker runs. Stops on SIGTERM or Ctrl-C.",
    )
    worker.add_argument("store", help="the store: a postgresql:// URL")
    worker.add_argument(
        "--workspace-root",
        default=None,
        help="the workspace its tasks' tools work in (default .)",
    )
    worker.add_argument(
        "--concurrency", type=positive_int, default=1, help="tasks run at once (default 1)"
    )
    worker.add_argument(
        "--lease-s",
        type=seconds,
        default=10.0,
        help="a task's lease without a heartbeat; a dead worker's tasks are taken over "
        "once it runs out (default 10)",
    )
    worker.add_argument(
        "--model", help="litellm model string or scripted:<path> (default: $ARTOO_MODEL)"
    )
    worker.add_argument("--api-base", default=None, help="the model server's URL")
    worker.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="a Config setting (repeatable)"
    )

    undo = sub.add_parser(
        "undo",
        help="restore the workspace as it was before a task's changes",
        description="Undo every change task TASK applied to the workspace, newest first, "
        "from the before-images its tool calls kept in the store: a created path removed, "
        "a modified or replaced one put back (bytes and mode), a deleted one re-created "
        "(files, links, whole trees). All or nothing: when a path no longer holds what the "
        "task left there, nothing is done and one line names it (exit 1); so is a task "
        "still running, one already undone, or one with a change whose image was not kept "
        "(over tools.undo_max_mb). The undo is logged under the task (WorkspaceRestored).",
    )
    undo.add_argument("task", help="the task's id, or any unique prefix of it")
    undo.add_argument(
        "--store", default="./.artoo", help="the store directory or postgresql:// URL"
    )
    undo.add_argument("--workspace", default=".", help="the workspace the task changed (default .)")

    sub.add_parser("version", help="print the installed version")
    return parser


def _add_settings(parser: argparse.ArgumentParser, *, run_flags: bool = True) -> None:
    """The flags of the configuration (``artoo run``, ``artoo config``); None = not given,
    so the files and the environment decide (artoo._config)."""
    parser.add_argument("--store", default=None, help="the store directory (default ./.artoo)")
    parser.add_argument(
        "--model", help="litellm model string or scripted:<path> (default: $ARTOO_MODEL)"
    )
    parser.add_argument(
        "--api-base",
        default=None,
        help="the model server's URL (an OpenAI-compatible server: llama.cpp, vLLM, Ollama)",
    )
    parser.add_argument(
        "--workspace", default=None, help="the root the file tools may touch (default .)"
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a Config setting (repeatable; e.g. max_retries=1, ggs.delta=0.2)",
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``artoo`` console script."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("artoo: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `artoo export … | head -1`: the reader left; not an error
        _quiet_stdout()
        return EXIT_OK


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at devnull so the interpreter's final flush
    does not complain again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    try:
        if args.version or args.command == "version":
            print(f"artoo {__version__}")
            return EXIT_OK
        _check_args(args)
        if args.command == "run":
            from ._run import run_command

            return run_command(args, console)
        if args.command == "config":
            return _config(args, console)
        if args.command == "demo":
            from .demo import run_demo

            return run_demo(Path(args.store) if args.store else None, console, clean=args.clean)
        if args.command == "memory":
            return _memory(args, console)
        if args.command == "dream":
            return _dream(args, console)
        if args.command == "export":
            return _export(args)
        if args.command == "audit":
            if args.verify or args.recompute or args.reports:
                return _audit_log(args)
            return _audit(args)
        if args.command == "diff":
            return _diff(args)
        if args.command == "worker":
            from ._worker import worker_command

            return worker_command(args, console)
        if args.command == "repl":
            from .repl import run_repl

            return run_repl(args)
        if args.command == "replay":
            from .replay._cli import replay_command

            return replay_command(args, console)
        if args.command == "undo":
            return _undo(args, console)
    except Exception as exc:  # a clear one-line error, not a traceback
        from artoo.actors.llm import ModelNotConfigured
        from artoo.actors.tools import SandboxUnavailable
        from artoo.eventstore import StoreError

        errors = ModelNotConfigured | StoreError | SandboxUnavailable | OSError | ValueError
        if isinstance(exc, errors) and not isinstance(exc, BrokenPipeError):
            print(f"artoo: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise
    parser.print_help()
    return EXIT_OK


def seconds(value: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive, finite number of seconds, not {value}"
        )
    return number


def positive_int(value: str) -> int:
    """An argparse type: a positive whole number."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return number


def _check_args(args: argparse.Namespace) -> None:
    """What argparse cannot say: a store with a URL scheme artoo does not know, options
    that would be ignored, and task ids given as a unique prefix (resolved to the full id,
    or a one-line error)."""
    if getattr(args, "store", None):
        from ._store import parse_store

        parse_store(args.store)  # ValueError in one line: never a directory named "foo:"
    if args.command == "replay" and not args.rerun:
        given = [flag for flag, value in (("--set", args.set), ("--model", args.model)) if value]
        if given:
            raise ValueError(
                f"{' and '.join(given)} go with --rerun (a what-if rerun); "
                "without it they would be ignored"
            )
    if args.command in ("replay", "audit", "export", "undo") and getattr(args, "task", None):
        from ._ids import resolve_task

        args.task = resolve_task(args.store, args.task)


def _config(args: argparse.Namespace, console: Console) -> int:
    from rich.table import Table

    from ._run import settings_for

    settings = settings_for(args)
    table = Table(title="effective configuration (later sources override earlier ones)")
    for col in ("key", "value", "from"):
        table.add_column(col)
    for key, value in settings.values.items():
        source = settings.sources[key]
        if source == "default" and not args.all:
            continue
        table.add_row(literal(key), literal(json.dumps(value)), literal(source))
    if not console.is_terminal:
        console = Console(width=200)
    console.print(table)
    if not args.all:
        console.print("[dim]every other setting is at its default (artoo config --all)[/]")
    return EXIT_OK


def _memory(args: argparse.Namespace, console: Console) -> int:
    from rich.table import Table

    from ._store import parse_store
    from .memoryview import memory_rows, rebuild_memory

    spec = parse_store(args.store)
    if spec.path is not None and not (spec.path / "events").exists():
        raise ValueError(f"{spec} is not an artoo store (no events/ directory)")
    if args.rebuild:
        if spec.path is None:
            raise ValueError(
                "--rebuild is for a store directory (a PostgreSQL store's memory is its log's)"
            )
        n = rebuild_memory(spec.path)
        console.print(f"rebuilt memory from {n} memory events in the log")
    if not console.is_terminal:  # piped output: never cut a tag
        console = Console(width=200)
    if args.recall is not None:
        return _memory_recall(spec, args.recall, args.embedder, console)
    tags, sops = memory_rows(spec, time.time())
    table = Table(title=f"memory of {spec}")
    for col in ("space", "entity", "megrams", "attention", "decision", "action", "requests", "SOP"):
        table.add_column(col)
    for row in tags:
        table.add_row(
            literal(row.space),
            literal(row.entity),
            str(row.count),
            f"{row.attention:.2f}",
            f"{row.decision:+.2f}",
            row.action,
            literal("\n".join(row.requests)),
            literal("\n".join(row.sops)),
        )
    console.print(table)
    sop_table = Table(title="Common Sense (SOPs)")
    for col in ("space", "entity", "σ", "content"):
        sop_table.add_column(col)
    for m in sops:
        sop_table.add_row(
            literal(m.space), literal(m.entity), f"{m.sigma:+.0f}", literal(m.content)
        )
    console.print(sop_table)
    return EXIT_OK


def _memory_recall(spec: StoreSpec, text: str, embedder: str, console: Console) -> int:
    from rich.table import Table

    from .memoryview import memory_recall

    answer = memory_recall(spec, text, time.time(), embedder=embedder)
    table = Table(title=f"what {text!r} recalls ({embedder} vectors)")
    for col in ("request", "tag", "kw rank", "vec rank", "cosine", "fused", "disagree", "flag"):
        table.add_column(col)
    for r in answer.recalled:
        flag = "DISTRACTOR" if r.distractor else "recalled" if r.recalled else "-"
        table.add_row(
            literal(r.text),
            literal(r.space),
            str(r.keyword_rank or "-"),
            str(r.vector_rank or "-"),
            f"{r.vector:.2f}",
            f"{r.fused:.4f}",
            f"{r.disagreement:.2f}",
            flag,
        )
    console.print(table)
    read = [r.space for r in answer.recalled if r.recalled]
    console.print(
        f"tags read: {literal(', '.join(dict.fromkeys(read))) or '(none)'}; attention "
        f"{answer.attention:.2f}, decision {answer.decision:+.2f} → {answer.action}; "
        f"{len(answer.sops)} SOPs, {len(answer.episodes)} accepted episodes"
    )
    for m in answer.episodes:
        steps = "; ".join(", ".join(s.commands) or s.instruction for s in m.steps)
        console.print(f"  episode {m.id}: {literal(m.request)} → {literal(steps)}")
    return EXIT_OK


def _audit(args: argparse.Namespace) -> int:
    from .report import audit_report, parse_time

    text = audit_report(
        args.store,
        since=parse_time(args.since) if args.since is not None else None,
        until=parse_time(args.until) if args.until is not None else None,
        task_id=args.task,
        fmt=args.format,
    )
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(args.output, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        print(f"report written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _run_arg(spec: str) -> tuple[Path | StoreSpec, str | None]:
    """``STORE[:TASK]``: a store (a directory, or a URL: ``postgresql://h/db:TASK``) and
    maybe a task id."""
    from ._store import parse_store

    store, sep, task = spec.rpartition(":")
    if parse_store(spec).is_postgres:
        if sep and "/" not in task and "/" in store.split("://", 1)[1]:
            return parse_store(store), task
        return parse_store(spec), None
    if sep and store and Path(store).is_dir():
        return Path(store), task
    return Path(spec), None


def _one_task(spec: str) -> TaskLog:
    from ._ids import resolve_task
    from .replay import read_store

    store, task_id = _run_arg(spec)
    _, tasks = read_store(store, resolve_task(store, task_id))
    if len(tasks) != 1:
        ids = ", ".join(t.task_id for t in tasks) or "none"
        raise ValueError(f"{store} holds {len(tasks)} tasks: name one as {store}:TASK ({ids})")
    return tasks[0]


def _diff(args: argparse.Namespace) -> int:
    from .replay import diff_runs, render_diff

    result = diff_runs(_one_task(args.a), _one_task(args.b))
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        sys.stdout.write(render_diff(result).translate(CONTROL))
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    from ._store import parse_store
    from .export import export_jsonl, export_otlp

    store = parse_store(args.store)
    if store.path is not None and not (store.path / "events").exists():
        raise ValueError(f"{store} is not an artoo store (no events/ directory)")

    def write(out: IO[bytes]) -> str:
        if args.format == "jsonl":
            return f"{export_jsonl(store, out, task_id=args.task)} envelopes"
        n = export_otlp(
            store,
            out,
            task_id=args.task,
            binary=args.format == "otlp-proto",
            include_content=args.include_content,
        )
        return f"{n} spans"

    if args.output is None:
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        with open(args.output, "wb") as out:
            what = write(out)
        print(f"{what} written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _audit_log(args: argparse.Namespace) -> int:
    """``artoo audit --verify | --recompute | --reports``: the Auditor's audit log."""
    from artoo.eventstore import AuditLogReader

    from ._store import parse_store, read_audit

    store = parse_store(args.store)
    if store.path is not None and not (store.path / "events").exists():
        raise ValueError(f"{store} is not an artoo store (no events/ directory)")
    reader = read_audit(store) or AuditLogReader(Path(str(store)) / "audit")
    try:
        return _audit_log_of(args, store, reader)
    finally:
        reader.close()


def _audit_log_of(args: argparse.Namespace, store: StoreSpec, reader: AuditLogReader) -> int:
    from ._store import read_log

    if args.verify:
        check = reader.verify()
        if not check.ok:
            print(f"audit log: record {check.bad_record} is bad: {check.reason}")
            return EXIT_ABANDON
        print(f"audit log: {check.records} records, the hash chain is intact; head {check.head}")
        if args.expect_head is not None:
            at = reader.holds(args.expect_head)
            if at is None:
                print(
                    f"audit log: the expected head {args.expect_head} is not in the chain: "
                    "a record at or before it was rewritten or removed"
                )
                return EXIT_ABANDON
            print(f"audit log: the expected head is record {at}: every record up to it holds")
        return EXIT_OK
    reports = reader.reports()
    if args.recompute:
        from artoo.actors.roles.auditor import compare_reports
        from artoo.actors.roles.roster import CONTRACTS
        from artoo.schemas import AuditConfig

        window = AuditConfig(window_s=args.window_s) if args.window_s else AuditConfig()
        with read_log(store) as log:
            problems = compare_reports(reports, log.read(), CONTRACTS, window)
        for problem in problems:
            print(problem)
        if problems:
            return EXIT_ABANDON
        print(f"{len(reports)} reports: equal to their recomputation from the event log")
        return EXIT_OK
    for report in reports:
        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
    sys.stdout.buffer.flush()
    return EXIT_OK


def _undo(args: argparse.Namespace, console: Console) -> int:
    """``artoo undo TASK``: :meth:`System.undo` on the store, in the workspace; a refusal
    is one line on stderr and exit 1."""
    from ._store import parse_store
    from ._undo import UndoRefused
    from .system import System

    store = parse_store(args.store)
    if store.path is not None and not (store.path / "events").exists():
        raise ValueError(f"{store} is not an artoo store (no events/ directory)")
    with System.open_offline(store, workspace=args.workspace) as system:
        try:
            restored = system.undo(args.task)
        except UndoRefused as exc:
            print(f"artoo undo: {exc}", file=sys.stderr)
            return EXIT_ABANDON
    console.print(
        f"undone task {literal(args.task)}: {len(restored.paths)} path(s) restored from "
        f"{len(restored.seqs)} tool call(s)"
    )
    for path in restored.paths:
        console.print(f"  {literal(path)}")
    return EXIT_OK


def _dream(args: argparse.Namespace, console: Console) -> int:
    from .system import System

    store = Path(args.store)
    if not (store / "events").exists():
        raise ValueError(f"{store} is not an artoo store (no events/ directory)")
    with System.open_offline(store) as system:
        n = system.dream()
    console.print(f"dream pass: {n} memory events (forgotten, demoted, promoted)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
