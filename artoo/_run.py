"""``artoo run``: one task to its FinalResult, shown live; Ctrl-C cancels it cleanly."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

import msgspec
from rich.console import Console
from rich.text import Text

from artoo.actors.verification.proof import how_established

from ._config import Settings, load_settings
from ._live import LiveView, summary_of
from ._terminal import EXIT_INTERRUPTED, literal, terminal_operator

__all__ = ["check_model", "run_command", "settings_for"]
"""Exit status after Ctrl-C (128 + SIGINT), as shells expect."""
CANCEL_WAIT_S = 0.8
"""After Ctrl-C: how long to wait for the cancelled task's FinalResult."""
CLOSE_AFTER_S = 0.5
"""After the FinalResult: the bound on closing (a role still in a model call is left)."""


def settings_for(args: argparse.Namespace) -> Settings:
    """The effective configuration of a command: files, environment, then its flags."""
    flags = {key: getattr(args, key, None) for key in ("store", "workspace", "model", "api_base")}
    return load_settings(flags=flags, sets=list(getattr(args, "set", None) or []))


def check_model(settings: Settings) -> None:
    """Before anything is logged: every real model string names a known provider and has
    its credentials (litellm's own validation); raises ModelNotConfigured in one line."""
    from artoo.actors.llm import ModelNotConfigured, model_problem, resolve_models

    models = resolve_models(settings.config)
    for model in sorted(set(models.values())):
        if model.startswith("scripted:"):
            continue
        problem = model_problem(model, api_base=settings.api_base)
        if problem is not None:
            raise ModelNotConfigured(problem)


def run_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``args.text``; the exit status is 0 (accept/success), 1 (abandon) or 130
    (interrupted)."""
    from .system import System

    settings = settings_for(args)
    check_model(settings)
    options: dict[str, Any] = {"api_base": settings.api_base} if settings.api_base else {}
    operator = terminal_operator(console, input) if args.confirm == "ask" else None
    system = System.open(
        settings.store,
        config=settings.config,
        workspace=settings.workspace,
        operator=operator,
        model_options=options,
    )
    view: LiveView | None = None
    shown_final = threading.Event()
    ours: list[str] = []  # the task's id, once submitted
    try:
        if args.jsonl:
            system.subscribe(_only(ours, _json_lines(shown_final)))
        elif not (args.json or args.quiet):
            view = LiveView(console)
            system.subscribe(_only(ours, _until_final(view, shown_final)))
            view.start()
        handle = system.submit(
            args.text,
            timeout=args.timeout,
            max_model_calls=args.max_calls,
            max_tokens=args.max_tokens,
        )
        ours.append(handle.task_id)
        interrupted = False
        try:
            result = handle.result(system.config.task_deadline_s(args.timeout) + 30.0)
        except KeyboardInterrupt:
            interrupted = True
            if view is not None:
                view.stop()
            print("artoo: interrupted: cancelling the task", file=sys.stderr, flush=True)
            handle.cancel("cancelled by the operator (Ctrl-C)")
            try:
                result = handle.result(CANCEL_WAIT_S)
            except (TimeoutError, KeyboardInterrupt):
                return EXIT_INTERRUPTED
        if args.jsonl or view is not None:
            shown_final.wait(2.0)  # let the live lines finish before the result
    finally:
        if view is not None:
            view.stop()
        system.close(CLOSE_AFTER_S)
    if args.json:
        print(json.dumps(msgspec.to_builtins(result)))
    elif not args.jsonl:
        c = result.cost
        if view is not None:
            console.print()
        summary = summary_of(result.status, result.summary)
        console.print(Text(result.status, style="bold") + Text(": ") + literal(summary))
        if result.output and not args.quiet:
            console.print(literal(result.output))
        if result.established is not None:  # how the answer was established (issue 23)
            console.print(literal(how_established(result.established, result.established_by)))
        if not args.quiet:
            console.print(
                f"[dim]task {handle.task_id}; cost: {c.model_calls} model calls "
                f"({c.sequential_calls} sequential), {c.tokens_in} tokens in, "
                f"{c.tokens_out} out, {c.elapsed_ms / 1000:.1f} s; {result.replans} replans[/]"
            )
    if interrupted:
        return EXIT_INTERRUPTED
    return 0 if result.status in ("accept", "success") else 1


def _only(ours: list[str], callback: Any) -> Any:
    """``callback`` for this task's envelopes (and those of no task): on a PostgreSQL
    store a System's subscribers see every System's envelopes."""

    def see(env: Any) -> None:
        if ours and env.task_id is not None and env.task_id != ours[0]:
            return
        callback(env)

    return see


def _until_final(view: LiveView, shown: threading.Event) -> Any:
    from artoo.schemas import FinalResult

    def show(env: Any) -> None:
        if isinstance(env.body, FinalResult):
            shown.set()
            return
        view(env)

    return show


def _json_lines(shown: threading.Event) -> Any:
    from artoo.schemas import FinalResult

    from .export import _line as envelope_line

    def write(env: Any) -> None:
        if shown.is_set():
            return  # the stream ends with the result (a timer's later observation is not shown)
        sys.stdout.buffer.write(envelope_line(env) + b"\n")
        sys.stdout.buffer.flush()
        if isinstance(env.body, FinalResult):
            shown.set()

    return write
