"""Law 1 by effect against the subtask's reading: the scope gate and reversible changes
(pure; docs/design.md "reversible by construction", docs/sandbox.md).

The reading (``SubTask.kind``, ``SubTask.targets``) names the paths a request reads,
writes, creates or deletes. When it names any (:attr:`Scope.active`), a call's effects are
judged against it before Law 1's plain rule (:func:`~._decide.decide_effects`):

1. **Scope.** An effect on a path outside the write, create and delete targets
   (:func:`in_scope`) is out of the request's scope. During a ``question`` the call is
   refused unasked (:data:`QUESTION_REFUSAL`); otherwise the operator is asked
   (:data:`OUTSIDE_TARGETS`) about every effect of the call at once.
2. **Reversible by construction.** When every effect that changes existing data is an
   in-workspace modification of a reading's target whose before-image is kept
   (:func:`reversible`), the call goes ahead with no operator (basis ``reversible``):
   ``artoo undo`` restores it.
3. Otherwise Law 1 asks as before, about the effects that are not reversible.

With no targets (an older log, a reading that named none) the decision is exactly
:func:`~._decide.decide_effects`'s: today's behaviour.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from artoo.schemas import FileEffect, Law1Check, SubTask, Target

from ._decide import describe_effects

__all__ = [
    "OUTSIDE_TARGETS",
    "QUESTION_REFUSAL",
    "REVERSIBLE_CHANGES",
    "Scope",
    "decide_by_effect",
    "in_scope",
    "reversible",
]

QUESTION_REFUSAL = "the request is a question: it writes nothing"
"""Why a call that would change the workspace during a question is refused."""

OUTSIDE_TARGETS = "outside the request's targets"
"""The reason an effect outside the reading's targets is asked about (a prefix)."""

REVERSIBLE_CHANGES = frozenset({"modified", "metadata"})
"""The changes of a regular file that undo restores exactly from its before-image (its
bytes, mode and owner). A deletion still asks: the reading must name it (role delete)."""


def _norm(path: str) -> str | None:
    """``path`` as a workspace-relative POSIX path without a trailing ``/``, or None."""
    if not path or path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


@dataclass(frozen=True)
class Scope:
    """A subtask's reading as the gate reads it: its ``kind`` and ``targets``."""

    kind: str = ""
    targets: tuple[Target, ...] = ()

    @classmethod
    def of(cls, subtask: SubTask) -> Scope:
        """The scope of ``subtask`` (its reading's kind and targets)."""
        return cls(subtask.kind, tuple(subtask.targets))

    @property
    def active(self) -> bool:
        """The reading names targets: the gate judges effects against them."""
        return bool(self.targets)

    def paths(self, *roles: str) -> set[str]:
        """The normalised paths of the targets of ``roles``."""
        return {p for t in self.targets if t.role in roles and (p := _norm(t.path)) is not None}

    @property
    def create_dirs(self) -> set[str]:
        """The create targets that are directories (``path/``): a new file goes in."""
        return {
            p
            for t in self.targets
            if t.role == "create" and t.path.endswith("/") and (p := _norm(t.path)) is not None
        }

    @property
    def writes(self) -> set[str]:
        """The write targets and the create targets that are files (a file the task
        created, changed again)."""
        dirs = self.create_dirs
        return {p for p in self.paths("write", "create") if p not in dirs}


def in_scope(effect: FileEffect, scope: Scope) -> bool:
    """Whether ``effect`` is on a path the reading lets the request change (pure): a
    write or create target, a path under a create directory target or under (or at) a
    delete target, or a directory created on the way to one of them (``mkdir -p``). The
    volume summary (path ``.``) is passed over; the summary of paths past the listing
    (``…``) is out of scope."""
    if effect.path == "." and effect.hazard == "volume":
        return True
    path = _norm(effect.path)
    if path is None or effect.path == "…":
        return False
    if path in scope.writes:
        return True
    if any(_under(path, d) for d in scope.create_dirs | scope.paths("delete")):
        return True
    if effect.change == "created" and effect.kind == "dir":
        named = scope.paths("write", "create", "delete")
        return any(_under(target, path) for target in named)
    return False


def reversible(effect: FileEffect, scope: Scope) -> bool:
    """Whether ``effect`` is reversible by construction (pure): a ``modified`` or
    ``metadata`` change of a regular file with no hazard, whose before-image is kept
    (``FileEffect.before``), on a write target of the reading or a file under a create
    directory target (a file the task created)."""
    if not scope.active or effect.kind != "file" or effect.hazard is not None:
        return False
    if effect.change not in REVERSIBLE_CHANGES or not effect.before:
        return False
    path = _norm(effect.path)
    if path is None:
        return False
    return path in scope.writes or any(_under(path, d) for d in scope.create_dirs)


def decide_by_effect(effects: Sequence[FileEffect], scope: Scope | None = None) -> Law1Check:
    """Law 1's decision on a call's ``effects`` under the subtask's reading (pure; see
    the module docstring): ``scope`` (ask, or refuse during a question), ``reversible``
    (go ahead), or ``effects`` (ask about the irreversible effects that are not
    reversible, the first one the target; go ahead when there are none)."""
    if scope is not None and scope.active:
        outside = [e for e in effects if not in_scope(e, scope)]
        if outside and scope.kind == "question":
            return Law1Check(basis="scope", reason=QUESTION_REFUSAL, target=outside[0].path)
        if outside:
            return Law1Check(
                basis="scope",
                ask=True,
                reason=f"{OUTSIDE_TARGETS}: {describe_effects(outside)}",
                target=outside[0].path,
            )
    harmful = [e for e in effects if e.irreversible]
    rest = [e for e in harmful if scope is None or not reversible(e, scope)]
    if harmful and not rest:
        return Law1Check(basis="reversible")
    if not rest:
        return Law1Check(basis="effects")
    return Law1Check(basis="effects", ask=True, reason=describe_effects(rest), target=rest[0].path)
