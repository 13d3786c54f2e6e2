"""The registry's value types: confirmation requests, outcomes, tool errors, limits."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgspec

from artoo.schemas import FileEffect, Law1Check, Refusal, ToolCall, ToolSpec

CONTEXT_LIMIT = 4 * 1024
"""Characters of a result that go into the model's context (head + tail)."""

SPILL_LIMIT = 30 * 1024
"""Results longer than this get a load_data pointer and a ToolCall.spill_ref."""

_SHELL = shutil.which("bash") or "/bin/sh"
_TARGET_PARAMS = ("path", "file", "filename", "target", "directory", "dir", "url")
_SPILL_NAME = re.compile(r"^.+_(\d+)\.txt$")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

F = TypeVar("F", bound=Callable[..., Any])


class ConfirmationNeeded(msgspec.Struct, frozen=True, kw_only=True):
    """An irreversible action waiting for a yes (the Executor turns it into a
    ConfirmationRequest on the bus)."""

    tool: str
    args: dict[str, Any]
    target: str | None
    reason: str
    action: str
    subtask_id: str = ""
    attempt: int = 1
    effects: tuple[FileEffect, ...] = ()
    """What approving changes, as observed in the sandbox (or computed for write_file)."""
    gate: str = ""
    """The gate that asks when it is not Law 1's (``resume``: a call under way when the
    process stopped, run again only with a yes; see ``artoo._resume``)."""


class ToolOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one call gives: the structured ToolCall record (``call``; for ``shell`` it
    carries the exit code), the text the model sees (``content``) and the full result
    (``output``)."""

    call: ToolCall
    content: str
    output: str = ""


Confirm = Callable[[ConfirmationNeeded], bool]
"""Asks the operator whether an irreversible action may go ahead (True: approved)."""


class ToolRunner(Protocol):
    """What runs one tool call of an attempt and never raises: the live
    :class:`~artoo.actors.tools.ToolRegistry`, or a runner serving a recorded run's calls."""

    def call(
        self, name: str, args: dict[str, Any], *, subtask_id: str = "", attempt: int = 1
    ) -> ToolOutcome:
        """The call's outcome: its ToolCall record and the text the model is shown."""
        ...


class ToolRunnerFactory(Protocol):
    """Makes one attempt's runner from its live registry. Replay gives one that serves the
    recorded calls (asking ``confirm`` as the recorded run's Law 1 gate did) and falls back
    to ``live`` once a fork has left the record."""

    def __call__(self, live: ToolRunner, *, task_id: str, confirm: Confirm) -> ToolRunner:
        """The runner of one attempt of ``task_id``."""
        ...


def deny(request: ConfirmationNeeded) -> bool:
    """The default ``confirm``: every irreversible action is denied."""
    return False


def head_tail(text: str, limit: int = CONTEXT_LIMIT, *, count: bool = True) -> str:
    """``text`` itself if it fits in ``limit`` characters, else its head and tail with
    ``"… [N chars omitted] …"`` between them, ``limit`` characters at most. Without
    ``count`` the marker states no figure (``"… [chars omitted] …"``): a record the proof
    reads (``ToolCall.content``, a command's streams) holds no number of the tool's own."""
    if len(text) <= limit:
        return text
    figure = "9" * len(str(len(text))) + " " if count else ""
    marker_len = len(f"\n… [{figure}chars omitted] …\n")
    budget = limit - marker_len
    if budget <= 1:
        return text[:limit]
    head, tail = budget - budget // 2, budget // 2
    omitted = f"{len(text) - head - tail} " if count else ""
    return f"{text[:head]}\n… [{omitted}chars omitted] …\n{text[-tail:]}"


# =========================================================================== internals
class Unasked(Exception):
    """Raised by a ``confirm`` callback that refuses an action without asking anyone, for
    a reason of its own (``refusal``, ``message``: what the model is shown after
    ``"error: "``). The call is refused as a Law 1 denial is — nothing of it applied — but
    with this refusal, not ``law1_denied``: no one denied it."""

    def __init__(self, message: str, refusal: Refusal) -> None:
        super().__init__(message)
        self.message = message
        self.refusal = refusal


class _ToolError(Exception):
    """A call that could not run (refused or failed before producing output)."""

    def __init__(
        self,
        message: str,
        target: str | None = None,
        refusal: Refusal | None = None,
        *,
        effects: tuple[FileEffect, ...] = (),
        sandboxed: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.target = target
        self.refusal = refusal
        self.effects = effects  # what the refused call would have changed
        self.sandboxed = sandboxed


class _BadArgs(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Call:
    args: dict[str, Any]
    subtask_id: str
    attempt: int
    blocked: tuple[str, ...]
    law1: list[Law1Check] = field(default_factory=list)
    """Law 1's decisions on the call so far, gate by gate (logged as ``ToolCall.law1``)."""


@dataclass(frozen=True, slots=True)
class _Result:
    text: str
    target: str | None
    ok: bool = True
    error: str | None = None
    exit_code: int | None = None
    effects: tuple[FileEffect, ...] = ()
    sandboxed: bool = False
    stdout: str | None = None  # a command's streams, recorded as ToolCall.stdout/stderr
    stderr: str | None = None
    content: str | None = None  # what the workspace gave, without the tool's notes
    whole: bool = False
    """``content`` is a record the proof parses (``run_tests``' JSON): logged whole,
    never cut to the context limit."""
    notes: tuple[str, ...] = ()
    """Lines the tool adds for the model after the whole result (and its spill pointer):
    in what the model is shown (``ToolOutcome.content``) only — not in the saved result,
    ``ToolCall.output_preview`` or a command's streams, so the proof never reads one as
    output."""


@dataclass(frozen=True, slots=True)
class _Tool:
    spec: ToolSpec
    args: type[msgspec.Struct]  # the arguments (see _schema._describe)
    run: Callable[[dict[str, Any], _Call], _Result]
    spill: bool = True
