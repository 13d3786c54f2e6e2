"""``artoo repl``: talk to the Queen — submit tasks, watch them, answer the inbox.

Line editing and history come from prompt_toolkit (history in ``<store>/repl_history``);
where it cannot be imported, from the standard library's ``readline``.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._store import parse_store

if TYPE_CHECKING:
    from .system import System, TaskHandle

__all__ = ["HELP", "Repl", "run_repl"]

HELP = """\
  TEXT            submit TEXT as a task (progress is printed as it happens)
  /status         the tasks still running and what waits in the inbox
  /tasks          every task of this session with its status
  /inbox          what waits for you: confirmations and escalation tickets
  /approve ID     approve a confirmation        /deny ID      deny it
  /continue ID    let a ticket's task go on     /cancel TASK  cancel a task (or a ticket's task)
  /answer ID TEXT answer a question (one of its options, or free text)
  /pause TASK     pause a task (no model or tool call; its deadline stops)
  /resume TASK    resume a paused task
  /audit          the Auditor's report of the window so far
  /memory         how much memory the store holds
  /help           this help                     /quit         leave (running tasks end)"""

_PROGRESS = frozenset(
    {"TaskRequest", "GGSDecision", "SubTaskOutcome", "ConfirmationRequest", "EscalationTicket"}
)


class Repl:
    """The commands of the REPL over one open System; ``say`` prints a line (thread-safe
    as the caller's printing is)."""

    def __init__(self, system: System, say: Callable[[str], None]) -> None:
        self.system = system
        self.say = say
        # the tasks resumed at open (the stopped process left them open) are this session's
        self.handles: dict[str, TaskHandle] = {h.task_id: h for h in system.resumed}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ live progress
    def on_envelope(self, env: Any) -> None:
        """A subscriber callback: one line per step of a task of this session."""
        if env.task_id not in self.handles:
            return
        body = env.body
        kind = type(body).__name__
        short = env.task_id[:8]
        if kind == "FinalResult":
            self.say(f"[{short}] done: {body.status} — {body.summary}")
        elif kind == "ConfirmationRequest":
            self.say(
                f"[{short}] needs your approval: {body.action} — {body.reason} "
                f"(/approve {body.request_id} or /deny {body.request_id})"
            )
        elif kind == "EscalationTicket":
            self.say(
                f"[{short}] ticket {body.ticket_id} {body.severity} {body.kind}: "
                f"{body.summary} (/continue {body.ticket_id} or /cancel {body.ticket_id})"
            )
        elif kind == "UserQuestion":
            choices = " / ".join(body.options) if body.options else "free text"
            self.say(
                f"[{short}] {body.role} asks: {body.text} [{choices}] "
                f"(/answer {body.question_id} ANSWER)"
            )
        elif kind == "GGSDecision":
            self.say(f"[{short}] {body.directive}")
        elif kind == "SubTaskOutcome":
            self.say(f"[{short}] subtask {body.status}")
        elif kind in _PROGRESS:
            self.say(f"[{short}] {kind}")

    # ------------------------------------------------------------------ commands
    def handle(self, line: str) -> bool:
        """Do one line; False when the REPL should end."""
        line = line.strip()
        if not line:
            return True
        if not line.startswith("/"):
            handle = self.system.submit(line)
            with self._lock:
                self.handles[handle.task_id] = handle
            self.say(f"task {handle.task_id} submitted")
            return True
        command, _, arg = line.partition(" ")
        arg = arg.strip()
        if command in ("/quit", "/exit"):
            return False
        action = {
            "/help": lambda _: self.say(HELP),
            "/status": self._status,
            "/tasks": self._tasks,
            "/inbox": self._inbox,
            "/approve": lambda a: self._answer(a, "approve"),
            "/deny": lambda a: self._answer(a, "deny"),
            "/continue": lambda a: self._answer(a, "continue"),
            "/cancel": self._cancel,
            "/answer": self._reply,
            "/pause": lambda a: self._pause(a, "pause"),
            "/resume": lambda a: self._pause(a, "resume"),
            "/audit": self._audit,
            "/memory": self._memory,
        }.get(command)
        if action is None:
            self.say(f"unknown command {command} (/help lists them)")
            return True
        try:
            action(arg)
        except (ValueError, TimeoutError) as exc:
            self.say(f"error: {exc}")
        return True

    def _running(self) -> list[TaskHandle]:
        with self._lock:
            return [h for h in self.handles.values() if not h.done()]

    def _status(self, _: str) -> None:
        running = self._running()
        waiting = len(self.system.inbox())
        self.say(f"{len(running)} running, {waiting} waiting in the inbox")
        for h in running:
            self.say(f"  {h.task_id} {self._state(h)}")

    def _tasks(self, _: str) -> None:
        with self._lock:
            handles = list(self.handles.values())
        if not handles:
            self.say("no tasks yet")
        for h in handles:
            if h.done():
                r = h.result(0)
                self.say(f"  {h.task_id} {r.status}: {r.summary}")
            else:
                self.say(f"  {h.task_id} {self._state(h)}")

    def _inbox(self, _: str) -> None:
        items = self.system.inbox()
        if not items:
            self.say("the inbox is empty")
        for item in items:
            what = item.severity or "confirmation"
            self.say(
                f"  {item.item_id} {what} (task {item.task_id}): {item.summary} "
                f"[{' / '.join(item.answers)}]"
            )

    def _answer(self, item_id: str, decision: str) -> None:
        if not item_id:
            raise ValueError("which one? give the ID /inbox shows")
        self.system.answer(item_id, decision)
        self.say(f"{item_id}: {decision}")

    def _reply(self, arg: str) -> None:
        question_id, _, text = arg.partition(" ")
        if not question_id or not text.strip():
            raise ValueError("which question, and what answer? /answer ID TEXT")
        if not any(i.item_id == question_id and i.kind == "question" for i in self.system.inbox()):
            raise ValueError(f"no open question {question_id} (/inbox lists them)")
        self.system.answer(question_id, text.strip())
        self.say(f"{question_id}: answered")

    def _state(self, handle: TaskHandle) -> str:
        return "paused" if self.system.pauses.paused(handle.task_id) else "running"

    def _pause(self, arg: str, decision: str) -> None:
        if not arg:
            raise ValueError(f"which task? /{decision} TASK")
        handle = self._one(arg)
        self.system.answer(handle.task_id, decision)
        self.say(f"{handle.task_id}: {'paused' if decision == 'pause' else 'resumed'}")

    def _one(self, prefix: str) -> TaskHandle:
        """The one task of this session whose id starts with ``prefix``."""
        with self._lock:
            found = [h for t, h in self.handles.items() if t.startswith(prefix)]
        if len(found) != 1:
            raise ValueError(f"no single task of this session starts with {prefix!r}")
        return found[0]

    def _cancel(self, arg: str) -> None:
        if not arg:
            raise ValueError("which task? /cancel TASK (or a ticket's ID)")
        if any(i.item_id == arg and i.kind == "ticket" for i in self.system.inbox()):
            self._answer(arg, "cancel")
            return
        handle = self._one(arg)
        handle.cancel("cancelled from the repl")
        self.say(f"cancelling {handle.task_id}")

    def _audit(self, _: str) -> None:
        r = self.system.audit()
        ended = ", ".join(f"{k} {v}" for k, v in sorted(r.tasks_ended.items())) or "none"
        self.say(
            f"audit window so far: {r.envelopes} envelopes, {r.tasks_started} tasks started, "
            f"ended: {ended}; {len(r.boundary_violations)} boundary violations, "
            f"{len(r.drift)} drift alerts, {len(r.anomalies)} anomalies"
        )

    def _memory(self, _: str) -> None:
        megrams = self.system.megrams
        count = sum(1 for _ in megrams.megrams())
        tags = sum(1 for _ in megrams.tags())
        self.say(f"memory: {count} megrams over {tags} tags")


def _reader(history: Path) -> Callable[[str], str]:
    """A line reader with editing and history: prompt_toolkit, else readline."""
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
    except ImportError:  # pragma: no cover - prompt_toolkit is a dependency
        import readline  # noqa: F401  (input() gains line editing)

        return input
    session: PromptSession[str] = PromptSession(history=FileHistory(str(history)))
    return session.prompt


def run_repl(args: argparse.Namespace) -> int:
    """The ``artoo repl`` loop: EOF (Ctrl-D) or ``/quit`` ends it, closing the System."""
    from .system import System

    store = parse_store(args.store)  # a directory or a postgresql:// URL
    with System.open(store, model=args.model, workspace=args.workspace, inbox=True) as system:
        read = _reader(system.store / "repl_history")  # a PostgreSQL store's: its scratch
        try:
            from prompt_toolkit.patch_stdout import patch_stdout
        except ImportError:  # pragma: no cover
            from contextlib import nullcontext as patch_stdout  # type: ignore[assignment]
        with patch_stdout():
            repl = Repl(system, lambda text: print(text, flush=True))
            system.subscribe(repl.on_envelope)
            print("artoo repl — type a task, or /help", flush=True)
            while True:
                try:
                    line = read("artoo> ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
                if not repl.handle(line):
                    break
    return 0
