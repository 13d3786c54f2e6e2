"""Law 1's decision on one tool call, as logged (``ToolCall.law1``).

The rules of ``messages.py`` apply: new fields get defaults and go last; a field's type
never changes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Law1Basis", "Law1Check"]

Law1Basis = Literal["effects", "parser", "remote", "reversible", "scope"]
"""What a Law 1 decision read: ``effects`` — the call's effects on the workspace
(``ToolCall.effects``: observed in the sandbox, computed for ``write_file``); ``parser`` —
the command line, read by :func:`~artoo.actors.law1.classify_shell` (no sandbox);
``remote`` — what a sandboxed command does outside the sandbox, read by
:func:`~artoo.actors.law1.classify_remote`; ``reversible`` — the effects, every one that
changes existing data an in-workspace modification of a target of the subtask's reading
whose before-image is kept (``FileEffect.before``): it went ahead, undoable with ``artoo
undo``; ``scope`` — the effects against the reading's targets (``SubTask.targets``): an
effect outside them asks, or, during a question, refuses the call (``ask`` False with a
``reason``: refusal ``out_of_scope``). Members are only ever added
(:func:`~artoo.actors.law1.decide_by_effect` decides the last two)."""


class Law1Check(msgspec.Struct, frozen=True, kw_only=True):
    """One Law 1 decision on a tool call, logged with what it depended on, so that
    ``artoo replay --verify`` can recompute it (``artoo.actors.law1.decide_*``)."""

    basis: Law1Basis
    ask: bool = False
    """The action needed the operator's yes (a ConfirmationRequest); False: it went ahead."""
    reason: str = ""
    """Why it is irreversible (the ConfirmationRequest's ``reason``); empty when not. For
    basis ``scope`` with ``ask`` False: why the call was refused unasked."""
    target: str | None = None
    """The target the operator was asked about (the ConfirmationRequest's ``target``)."""
    reads_workspace: bool = False
    """``parser``/``remote``: the verdict depends on the workspace's files (it differs from
    the verdict on an empty workspace), so the log alone cannot recompute it."""
    network: bool = False
    """``remote``: the sandbox let the command reach the network."""
    command: str = ""
    """``parser``/``remote``: the command line judged, when the ToolCall's ``args`` keep only
    its head and tail (it is longer than their limit); empty: ``args["command"]``."""
