"""Law 1 by effect, the registry's step between observing a call's effects and applying
them: the reading's scope gate, the before-images, and the decision (reversible changes
go ahead; docs/sandbox.md).

A mixin of :class:`~._registry.ToolRegistry`, called by ``write_file`` and by a
sandboxed ``shell`` once the command's effects are observed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from artoo.actors.law1 import QUESTION_REFUSAL, Scope, decide_by_effect
from artoo.schemas import FileEffect, Law1Check

from ._images import ImageKeeper
from ._types import _Call, _ToolError


def missing_parents(workspace: Path, relative: str) -> tuple[FileEffect, ...]:
    """The directories writing ``relative`` beneath ``workspace`` creates on the way (its
    missing parents, outermost first), as ``created`` effects: what ``write_file`` does
    besides the file, so undo removes them too."""
    parts = relative.split("/")[:-1]
    made = []
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        if not os.path.lexists(workspace / folder):
            made.append(FileEffect(path=folder, change="created", kind="dir"))
    return tuple(made)


class _ByEffect:
    """The scope gate, before-images and Law 1's decision by effect (a mixin of
    ToolRegistry; the attributes below are set by its constructor, ``_judge`` is the
    Law 1 gate of :class:`~._confine._Guards`)."""

    workspace: Path
    images: ImageKeeper | None
    scope: Scope | None
    _judge: Callable[..., None]

    def _by_effect(
        self,
        call: _Call,
        tool: str,
        action: str,
        effects: tuple[FileEffect, ...],
        after: Callable[[FileEffect], str],
        *,
        sandboxed: bool = False,
    ) -> tuple[tuple[FileEffect, ...], Law1Check]:
        """Judge ``effects`` (about to be applied) by Law 1 and the subtask's reading; the
        effects as they will be logged — each with its before-image kept
        (``FileEffect.before``) and what will be applied (``FileEffect.after``, from
        ``after``) — and the decision, which asked the operator when it had to (a denial
        raises, as the Law 1 gate does). During a question a call that would change the
        workspace beyond the reading's targets is refused unasked (``out_of_scope``,
        nothing applied, no image kept)."""
        first = decide_by_effect(effects, self.scope)
        if first.basis == "scope" and not first.ask:
            call.law1.append(first)
            raise _ToolError(
                f"refused: {QUESTION_REFUSAL} (the call would change {first.target}); "
                "answer from what the workspace shows",
                first.target,
                "out_of_scope",
                effects=effects,
                sandboxed=sandboxed,
            )
        effects = self._imaged(effects, after)
        check = decide_by_effect(effects, self.scope)
        self._judge(call, check, tool, action, effects, sandboxed=sandboxed)
        return effects, check

    def _imaged(
        self, effects: tuple[FileEffect, ...], after: Callable[[FileEffect], str]
    ) -> tuple[FileEffect, ...]:
        """``effects`` with their images: ``before`` — the before-image of every path the
        call changes or removes, kept in the store's blobs (a removed directory's whole
        tree, once, at its top; a mode change's own entry), "" when it cannot be kept —,
        and ``after`` (a removal's is ""). With no store (``images`` None) they are left
        as they are: nothing could be undone."""
        if self.images is None:
            return effects
        removed = {e.path for e in effects if e.change in ("deleted", "replaced")}
        out = []
        for e in effects:
            if e.path in (".", "…"):  # summaries, not paths
                out.append(e)
                continue
            before = ""
            covered = any(e.path.startswith(r + "/") for r in removed)
            if e.change != "created" and not covered:
                before = self.images.keep(self.workspace, e.path, tree=e.change != "metadata")
            applied = "" if e.change == "deleted" else after(e)
            out.append(msgspec.structs.replace(e, before=before, after=applied))
        return tuple(out)
