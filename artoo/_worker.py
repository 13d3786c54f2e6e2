"""``artoo worker postgresql://…``: a worker process of a PostgreSQL store.

A worker is a System opened with ``worker=True`` (:mod:`artoo._fleet`): it leases queued
tasks (at most ``--concurrency`` at a time) and runs each wholly here — its roles, its
sandbox, the workspace ``--workspace-root`` — appending every envelope to the store's one
shared log. It runs until SIGTERM or Ctrl-C; then the tasks it still runs end abandon
"system closed" (as at any System's close). A worker whose database cannot be reached
for 10 s stops (exit 1). Killed outright, its leases run out and
another System takes its tasks over, exactly once (resumes them from the log, or with
``recovery = "abandon"`` ends them ``worker_lost``).
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from rich.console import Console

from ._run import check_model, settings_for

__all__ = ["worker_command"]


def worker_command(args: argparse.Namespace, console: Console) -> int:
    """Run a worker until SIGTERM or SIGINT (exit 0), or until its store cannot be
    reached for ``FAILING_S`` seconds (exit 1)."""
    from ._store import parse_store
    from .system import System

    if parse_store(args.store).url is None:
        raise ValueError("artoo worker needs a PostgreSQL store: a postgresql:// URL")
    args.workspace = args.workspace_root
    settings = settings_for(args)
    check_model(settings)
    options: dict[str, Any] = {"api_base": settings.api_base} if settings.api_base else {}
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with System.open(
            args.store,
            config=settings.config,
            workspace=settings.workspace,
            model_options=options,
            worker=True,
            concurrency=args.concurrency,
            lease_s=args.lease_s,
        ) as system:
            console.print(
                f"worker {system.writer} on {parse_store(args.store).name}: "
                f"concurrency {args.concurrency}, workspace {settings.workspace}",
                highlight=False,
            )
            assert system.fleet is not None
            while not stop.wait(0.5):
                if system.fleet.failing or system.bus.halted:
                    console.print("artoo: worker: the store cannot be reached; stopping")
                    return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
