"""The request's own consent to a Law 1 action (pure): the user's request is the operator's
own words, so a deletion of a path the request itself names, which its reading reads as
one to delete, is already approved.

The Queen asks :func:`request_consent` before it relays a Law 1 ConfirmationRequest to the
operator (``Config.request_consent``); a reason approves it at once
(``ConfirmationDecision.by = "request"``), None leaves it to the operator. An in-workspace
modification of a reading's target needs no consent at all: it is reversible (its
before-image is kept; ``artoo undo``). Fails closed: anything else is None.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from artoo.schemas import FileEffect, Target

__all__ = ["request_consent"]


def _normal(path: str) -> str | None:
    """``path`` as a workspace-relative POSIX path (``./a//b`` → ``a/b``), or None when it
    is not one (empty, absolute, or leading out of the workspace)."""
    if not path or path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


def request_consent(
    text: str, targets: Sequence[Target], effects: Sequence[FileEffect]
) -> str | None:
    """Why the request ``text``, read with ``targets`` (the TaskSpec's), consents to every
    irreversible one of ``effects``, in one line; None when it does not (pure). Each must
    be a deletion with no hazard of a path that is a ``delete`` target of the reading and
    that the request's text names literally; at least one must be; a new path with no
    hazard (Law 1 asks nothing of it) is passed over."""
    deletes = {_normal(t.path.rstrip("/")) for t in targets if t.role == "delete"}
    paths: list[str] = []
    for effect in effects:
        if not effect.irreversible:
            continue
        path = _normal(effect.path)
        if path is None or path not in deletes or effect.hazard is not None:
            return None
        if effect.change != "deleted" or path not in text:
            return None
        if path not in paths:
            paths.append(path)
    if not paths:
        return None
    return f"the request asks to delete {', '.join(paths)}"
