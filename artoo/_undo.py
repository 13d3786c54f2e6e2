"""``artoo undo TASK`` and :meth:`artoo.System.undo`: a task's applied workspace changes
undone from their before-images, all or nothing, and logged.

What a task applied is read from its log: each ``ToolCallEnded`` whose call's effects were
applied (:func:`applied`), each effect with the before-image kept when it was applied
(``FileEffect.before``, a blob of the store) and what it applied (``FileEffect.after``).
Undo then

1. refuses a task with no FinalResult (still running), one already undone (its log holds
   a ``WorkspaceRestored``), one that changed nothing, and one with a change it cannot
   restore (no before-image: over ``tools.undo_max_mb``, or logged before images were
   kept; an image missing from the store's blobs; more paths than the record lists);
2. checks that every path still holds what the task left there — the last call's
   ``after`` of each, absent where it removed — else refuses, naming the path that
   changed since, and changes nothing;
3. undoes the calls newest first — per call: created paths removed (deepest first; a
   created directory must hold nothing else), modified and replaced paths put back from
   their images (bytes, mode, owner), removed paths re-created (files, links, whole
   trees), then the modes of directories — through one :class:`~artoo.actors.tools.
   Restorer`, which undoes every step when one fails;
4. returns the :class:`~artoo.schemas.WorkspaceRestored` the System logs under the task.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from artoo.actors.tools import ImageKeeper, Restorer, UndoConflict, current_of
from artoo.eventstore import BlobMissing
from artoo.schemas import (
    Envelope,
    FileEffect,
    FinalResult,
    ToolCall,
    ToolCallEnded,
    WorkspaceRestored,
)

__all__ = ["UndoRefused", "applied", "undo_task"]


class UndoRefused(ValueError):
    """Undo did nothing, for the reason given in one line."""


def applied(call: ToolCall) -> bool:
    """Whether ``call``'s effects were applied to the workspace (pure): it had effects,
    was not refused, and ran to its result — a ``write_file`` that worked, or a sandboxed
    command whatever its exit code (a command whose changes could not be applied, or were
    discarded, logs no exit code or no effects)."""
    return bool(call.effects) and call.refusal is None and (call.ok or call.exit_code is not None)


@dataclass(frozen=True)
class _Call:
    seq: int
    effects: tuple[FileEffect, ...]


def _depth(path: str) -> int:
    return path.count("/")


def _under(path: str, tops: set[str]) -> bool:
    return any(path.startswith(top + "/") for top in tops)


def _removed_tops(effects: Sequence[FileEffect]) -> set[str]:
    return {e.path for e in effects if e.change in ("deleted", "replaced")}


def _calls(task_id: str, envelopes: Sequence[Envelope]) -> list[_Call]:
    """The task's applied calls, oldest first, checked undoable (else UndoRefused)."""
    if not any(isinstance(e.body, FinalResult) for e in envelopes):
        if not envelopes:
            raise UndoRefused(f"no task {task_id} in the store")
        raise UndoRefused(f"task {task_id} is still running: undo it once it has ended")
    done = next((e for e in envelopes if isinstance(e.body, WorkspaceRestored)), None)
    if done is not None:
        raise UndoRefused(f"task {task_id} was undone already (seq {done.seq})")
    calls = []
    for env in envelopes:
        if isinstance(env.body, ToolCallEnded) and applied(env.body.call):
            effects = tuple(e for e in env.body.call.effects if e.path != ".")
            tops = _removed_tops(effects)
            for e in effects:
                if e.path == "…":
                    raise UndoRefused(
                        f"the call at seq {env.seq} changed more paths than its record lists: "
                        f"task {task_id} cannot be undone"
                    )
                if e.change != "created" and not e.before and not _under(e.path, tops):
                    raise UndoRefused(
                        f"no before-image of '{e.path}' was kept (over tools.undo_max_mb, or "
                        f"logged before images were): task {task_id} cannot be undone"
                    )
                if e.change != "deleted" and e.kind in ("file", "symlink") and not e.after:
                    raise UndoRefused(
                        f"the log does not say what the task wrote to '{e.path}': task "
                        f"{task_id} cannot be undone"
                    )
            calls.append(_Call(env.seq, effects))
    if not calls:
        raise UndoRefused(f"task {task_id} changed nothing in the workspace: nothing to undo")
    return calls


def _expected(calls: Sequence[_Call]) -> dict[str, tuple[str, str]]:
    """What each path the task touched holds at its end, as ``(kind, sha)``
    (:func:`~artoo.actors.tools.current_of`'s terms), by replaying the calls' effects."""
    state: dict[str, tuple[str, str]] = {}
    for call in calls:
        for e in call.effects:
            if e.change == "deleted":
                for path in [p for p in state if p.startswith(e.path + "/")]:
                    state[path] = ("absent", "")
                state[e.path] = ("absent", "")
            elif e.kind in ("file", "symlink"):
                state[e.path] = (e.kind, e.after)
            else:
                state[e.path] = (e.kind, "")
    return state


def _check(task_id: str, workspace: Path, calls: Sequence[_Call]) -> None:
    """Every path holds what the task left there (else UndoRefused naming the first)."""
    for path, want in sorted(_expected(calls).items()):
        if current_of(workspace, path) != want:
            raise UndoRefused(
                f"'{path}' changed since task {task_id} applied it: nothing was undone"
            )


def _undo_call(restorer: Restorer, call: _Call, done: list[str]) -> None:
    """Undo one call's effects (see the module docstring, step 3)."""
    effects = call.effects
    tops = _removed_tops(effects)
    for e in sorted(
        (e for e in effects if e.change == "created"), key=lambda e: _depth(e.path), reverse=True
    ):
        restorer.take_away(e.path, empty_dir=e.kind == "dir")
        done.append(e.path)
    for e in effects:
        if e.change in ("modified", "replaced"):
            restorer.take_away(e.path, empty_dir=True)
            restorer.put(e.path, e.before)
            done.append(e.path)
        elif e.change == "metadata" and e.kind != "dir":
            restorer.chmod(e.path, e.before)
            done.append(e.path)
    for e in sorted(
        (e for e in effects if e.change == "deleted" and not _under(e.path, tops)),
        key=lambda e: _depth(e.path),
    ):
        restorer.put(e.path, e.before)
        done.append(e.path)
    for e in effects:
        if e.change == "metadata" and e.kind == "dir":
            restorer.chmod(e.path, e.before)
            done.append(e.path)


def undo_task(
    task_id: str, envelopes: Sequence[Envelope], workspace: Path, keeper: ImageKeeper
) -> WorkspaceRestored:
    """Undo task ``task_id`` (its logged ``envelopes``) in ``workspace`` from the
    before-images ``keeper`` reads, all or nothing; the WorkspaceRestored to log. Raises
    UndoRefused, having changed nothing, for every reason in the module docstring."""
    calls = _calls(task_id, envelopes)
    for call in calls:
        for e in call.effects:
            if e.before and not keeper.blobs.has(e.before):
                raise UndoRefused(
                    f"the before-image of '{e.path}' is missing from the store's blobs: task "
                    f"{task_id} cannot be undone"
                )
    _check(task_id, workspace, calls)
    restorer = Restorer(workspace, keeper)
    done: list[str] = []
    try:
        for call in reversed(calls):
            _undo_call(restorer, call, done)
    except (UndoConflict, OSError, BlobMissing, KeyError) as exc:
        left = restorer.rollback()
        if isinstance(exc, UndoConflict):
            what = f"{exc} (changed since task {task_id})"
        else:
            what = f"undoing task {task_id} failed ({exc})"
        if left:
            raise UndoRefused(
                f"{what}; these paths could not be put back: {', '.join(left)}"
            ) from None
        raise UndoRefused(f"{what}: nothing was undone") from None
    restorer.commit()
    return WorkspaceRestored(
        paths=list(dict.fromkeys(posixpath.normpath(p) for p in done)),
        seqs=[c.seq for c in reversed(calls)],
        reason=f"undo of task {task_id}: {len(done)} path(s) restored",
    )
