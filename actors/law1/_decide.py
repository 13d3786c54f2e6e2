"""Law 1's decisions on one tool call, as pure functions of what they read: the tool
registry calls them to decide, ``artoo replay --verify`` calls them again on the logged
inputs (``ToolCall.effects``, the command) and compares.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from typing import TypeVar

from artoo.schemas import FileEffect, Law1Check

from ._classify import classify_shell
from ._remote import classify_remote

__all__ = ["decide_command", "decide_effects", "decide_remote", "describe_effects"]

_T = TypeVar("_T")

_VERBS = {
    "deleted": "delete",
    "modified": "overwrite",
    "replaced": "replace",
    "metadata": "change",
    "created": "create",
}


def describe_effects(effects: Sequence[FileEffect], limit: int = 8) -> str:
    """One line for a person: what approving would do, e.g. ``"would delete notes.txt
    (6 bytes); overwrite todo.txt (+1 -0 lines, 10 -> 14 bytes)"``."""
    parts = []
    for e in effects[:limit]:
        size = e.size_before if e.change == "deleted" else None
        detail = e.summary or (f"{size:,} bytes" if size is not None else e.kind)
        if e.hazard and e.change != "created":
            detail += f"; {e.hazard}"
        parts.append(f"{_VERBS[e.change]} {e.path} ({detail})")
    more = f"; and {len(effects) - limit:,} more" if len(effects) > limit else ""
    return "would " + "; ".join(parts) + more


def decide_effects(effects: Sequence[FileEffect]) -> Law1Check:
    """Law 1 by effect (pure): a call whose effects only create paths goes ahead; one that
    deletes or changes existing data asks, about the first such path, with
    :func:`describe_effects` of every such effect as its reason."""
    harmful = tuple(e for e in effects if e.irreversible)
    if not harmful:
        return Law1Check(basis="effects")
    return Law1Check(
        basis="effects", ask=True, reason=describe_effects(harmful), target=harmful[0].path
    )


def decide_command(
    command: str, cwd: str | os.PathLike[str] | None, target: str | None = None
) -> Law1Check:
    """Law 1 by parsing (no sandbox): :func:`~artoo.actors.law1.classify_shell` of
    ``command`` in ``cwd`` (None: an empty workspace — how ``replay --verify`` recomputes
    it). ``reads_workspace`` says whether the verdict differs from the empty workspace's;
    ``target`` is what the operator is asked about."""
    verdict = classify_shell(command, cwd) if cwd is not None else _bare(classify_shell, command)
    bare = verdict if cwd is None else _bare(classify_shell, command)
    return Law1Check(
        basis="parser",
        ask=verdict.irreversible,
        reason=verdict.reason,
        target=target if verdict.irreversible else None,
        reads_workspace=verdict != bare,
    )


def decide_remote(
    command: str,
    cwd: str | os.PathLike[str] | None,
    *,
    network: bool,
    target: str | None = None,
) -> Law1Check:
    """Law 1's remote-effects gate for a sandboxed command:
    :func:`~artoo.actors.law1.classify_remote` of ``command`` in ``cwd`` (None: an empty
    workspace), with ``reads_workspace`` as in :func:`decide_command`."""

    def remote(cmd: str, where: str) -> tuple[bool, str]:
        return classify_remote(cmd, where, network=network)

    verdict = remote(command, os.fspath(cwd)) if cwd is not None else _bare(remote, command)
    bare = verdict if cwd is None else _bare(remote, command)
    ask, reason = verdict
    return Law1Check(
        basis="remote",
        ask=ask,
        reason=reason,
        target=target if ask else None,
        reads_workspace=verdict != bare,
        network=network,
    )


def _bare(classify: Callable[[str, str], _T], command: str) -> _T:
    """``classify(command, d)`` in a new empty directory ``d``."""
    with tempfile.TemporaryDirectory(prefix="artoo-law1-") as empty:
        return classify(command, empty)
