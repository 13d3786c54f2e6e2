"""The request's own consent to a Law 1 action (pure): the user's request is the operator's
own words, so a deletion the reading of the request names — and the request itself spells
out — is one the operator has already said yes to.

The Queen asks :func:`request_consent` before it relays a Law 1 ConfirmationRequest to the
operator (``Config.request_consent``); a reason approves the request at once
(``ConfirmationDecision.by = "request"``), None leaves it to the operator as before. It
reads the reading (``TaskSpec.targets``), never the request's wording beyond the paths it
spells: a modification of a reading's target needs no consent (it is reversible by
construction and never asks: :func:`~artoo.actors.law1.decide_by_effect`). Every rule
fails closed: anything the reading does not name is None.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from artoo.actors.law1 import Scope, in_scope, reversible
from artoo.schemas import FileEffect, Target

__all__ = ["names_literally", "request_consent"]


def _normal(path: str) -> str | None:
    """``path`` as a workspace-relative POSIX path (``./a//b/`` → ``a/b``), or None when
    it is not one (empty, absolute, or leading out of the workspace)."""
    if not path or path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


def names_literally(text: str, path: str) -> bool:
    """Whether ``text`` spells ``path`` (a workspace-relative path, a directory with or
    without its trailing ``/``) as a whole path: not inside a longer one (pure)."""
    norm = _normal(path)
    if norm is None:
        return False
    for spelled in {norm, norm + "/", "./" + norm}:
        pattern = r"(?<![\w./-])" + re.escape(spelled) + r"(?![\w/-]|\.\w)"
        if re.search(pattern, text):
            return True
    return False


def request_consent(
    text: str, targets: Sequence[Target], effects: Sequence[FileEffect], *, kind: str = ""
) -> str | None:
    """Why the request ``text``, read with ``targets`` (and ``kind``: ``TaskSpec``'s),
    already consents to every one of ``effects`` that Law 1 asks about, in one line;
    None when it does not (pure).

    It consents only when there are effects (a decision the parser made, with none
    observed, is never consented) and each that changes existing data — but a change
    reversible by construction (:func:`~artoo.actors.law1.reversible`), which needs no
    yes — is a ``deleted`` path with no ``hazard`` at or beneath a ``delete`` target of
    the reading whose path the request spells (:func:`names_literally`): "delete
    notes/old.txt" read with that delete target consents to removing it; the same
    reading of "tidy up the notes" does not. A new path with no hazard needs no consent
    and is passed over; at least one deletion must be consented. An effect outside the
    reading's targets (:func:`~artoo.actors.law1.in_scope`: what the scope gate asked
    about) is never consented, new or not.
    """
    if not effects:
        return None
    scope = Scope(kind, tuple(targets))
    deletable = {
        p
        for t in targets
        if t.role == "delete" and (p := _normal(t.path)) is not None and names_literally(text, p)
    }
    paths: list[str] = []
    for effect in effects:
        if scope.active and not in_scope(effect, scope):
            return None  # the scope gate asked about it: the operator's, whatever it is
        if not effect.irreversible or reversible(effect, scope):
            continue  # a new path, or a change undo restores: Law 1 asks nothing of it
        path = _normal(effect.path)
        if path is None or effect.change != "deleted" or effect.hazard is not None:
            return None
        top = next((d for d in deletable if path == d or path.startswith(d + "/")), None)
        if top is None:
            return None
        if top not in paths:
            paths.append(top)
    if not paths:
        return None
    return f"the request asks to delete {', '.join(paths)}"
