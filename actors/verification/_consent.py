"""The request's own consent to a Law 1 action (pure): the user's request is the operator's
own words, so when it names a path as what it changes, the operator has already said yes
to changing that path.

The Queen asks :func:`request_consent` before it relays a Law 1 ConfirmationRequest to the
operator (``Config.request_consent``); a reason approves the request at once
(``ConfirmationDecision.by = "request"``), None leaves it to the operator as before. Every
rule fails closed: anything the request does not plainly ask for is None.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from artoo.schemas import FileEffect

from ._lines import diff_sides, lines_read_back, lost_lines
from .request import duties, request_paths

__all__ = ["CONSENTED_CHANGES", "asks_removal", "request_consent"]

CONSENTED_CHANGES: frozenset[str] = frozenset({"modified", "replaced", "deleted"})
"""The changes a request can consent to: changing or removing a file's data (a
``metadata`` change — mode, owner, times — is never what a request names)."""

_REMOVE = re.compile(r"\b(?:delete|remove|erase|rm|discard)\b|\bget\s+rid\s+of\b", re.I)


def asks_removal(text: str) -> bool:
    """Whether ``text`` asks to remove something: one of delete, remove, erase, rm, get
    rid of, discard, as a whole word, in any case (pure)."""
    return _REMOVE.search(text) is not None


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
    text: str,
    kind: str,
    effects: Sequence[FileEffect],
    *,
    keep_lines: bool = True,
    created: Sequence[str] = (),
    read_back: bool = False,
) -> str | None:
    """Why the request ``text`` (read as ``kind``, ``TaskSpec.kind``) already consents to
    every one of ``effects``, in one line; None when it does not (pure).

    It consents only when all of these hold:

    - the request asks for a change: its :func:`~.request.duties` write files and are
      sure (the model read a change or a creation and code sees no question);
    - there are effects (a decision the parser made, with no observed effects, is never
      consented), and each is a ``modified``, ``replaced`` or ``deleted`` file with no
      ``hazard``, on a path the request names (:func:`~.request.request_paths`, exactly,
      both normalised);
    - a ``deleted`` effect: the request also asks to remove something
      (:func:`asks_removal`) — "append to notes/todo.txt" does not consent to deleting it;
    - a ``modified`` effect, with ``keep_lines`` (``Config.refuse_lost_lines``): its
      ``FileEffect.diff`` is known and loses no line the request does not account for
      (:func:`~._lines.lost_lines`) — the request consents to changing the file it
      names, not to losing its other lines ("append the line … to notes/todo.txt" does
      not consent to a ``write_file`` of that line alone, which loses the seven others)
      — but for a file the task itself created (``created``: the asking subtask's
      calls made it), whose lines are its own: "write the count to todo_count.txt",
      written wrong and then right, is consented.

    - a ``modified`` effect, with ``read_back`` (``Config.consent_reads_back``): its diff
      reads back as the request, word by word (:func:`~._lines.lines_read_back`: every
      line it adds or changes holds only the request's words, a line changed in place by
      the words that changed) — the request consents to the change it words, not to any
      change of the file that loses no line: a small model asked to change west's 800 to
      850 rewrote every row of data/sales.csv with values of its own, each row "changed in
      place", and one asked to *name* a function of src/textutil.py ran ``sed -i 's/ /-/g'``
      on it; both were consented. A file the task itself created is not held to it.
    A new path with no hazard (``FileEffect.irreversible`` false: Law 1 never asks of
    it) needs no consent and is passed over — a command that rewrites the named file and
    leaves a new scratch file beside it is consented; at least one effect must be
    consented.
    """
    if not effects:
        return None
    reading = duties(text, kind)
    if not reading.writes or reading.unsure:
        return None
    named = {p for p in map(_normal, request_paths(text)) if p is not None}
    removal = asks_removal(text)
    paths: list[str] = []
    for effect in effects:
        if not effect.irreversible:
            continue  # a new path: Law 1 asks nothing of it
        path = _normal(effect.path)
        if path is None or path not in named:
            return None
        if effect.hazard is not None or effect.change not in CONSENTED_CHANGES:
            return None
        if effect.change == "deleted" and not removal:
            return None
        own = path in {_normal(c) for c in created}
        if (
            keep_lines
            and effect.change == "modified"
            and not own
            and lost_lines(text, effect.diff) != []
        ):
            return None  # lines lost, or a diff not known: the operator's to decide
        if read_back and effect.change == "modified" and not own:
            sides = None if effect.diff is None else diff_sides(effect.diff)
            if sides is None or not lines_read_back(text, *sides):
                return None  # a change the request does not word: the operator's
        if path not in paths:
            paths.append(path)
    if not paths:
        return None
    return f"the request names {', '.join(paths)} as what it changes"
