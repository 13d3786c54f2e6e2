"""The lines a change keeps, changes and loses (pure).

A ``FileEffect.diff`` lists the lines a change removed and added, with no context. Read
against the user's request it says what the change did to the file's other lines: a line
removed and added back changed (``west,800`` → ``west,850``, ``def shout(`` → ``def
yell(``), moved (the same line added elsewhere) or was **lost** — removed, with nothing
like it added back. A request consents to changing the file it names, not to losing
lines it never mentions: "append the line 'TODO: call Bob' to notes/todo.txt" done as one
``write_file`` of the new line alone loses the file's seven other lines.

- :func:`diff_sides` — a diff's removed and added lines.
- :func:`pair_lines` — each removed line with the added line that keeps it, if any.
- :func:`lost_lines` — the removed lines the request does not account for.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from .request import change_words

__all__ = ["SIMILAR", "diff_sides", "lost_lines", "pair_lines"]

SIMILAR = 0.6
"""How alike (``difflib.SequenceMatcher.ratio``) an added line must be to a removed one
to be that line changed in place: ``west,800`` / ``west,850`` 0.88, ``def shout(text:
str) -> str:`` / ``def yell(text: str) -> str:`` 0.84; ``TODO: write the README`` /
``TODO: call Bob`` 0.39 is another line."""


def diff_sides(diff: str) -> tuple[list[str], list[str]] | None:
    """The lines a ``FileEffect.diff`` removed and added, each in file order (pure); None
    for a text that is no such diff (a line that is neither ``-`` nor ``+`` …)."""
    removed: list[str] = []
    added: list[str] = []
    for line in diff.split("\n") if diff else ():
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
        else:
            return None
    return removed, added


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.strip(), b.strip(), autojunk=False).ratio()


def pair_lines(removed: Sequence[str], added: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each removed line with the added line that keeps it, or None (pure), in the order
    of ``removed``. An added line keeps one removed line at most: first the same line
    (stripped) added anywhere — a line moved — then, for each removed line in order, the
    most alike added line left, when at least :data:`SIMILAR` alike — a line changed in
    place."""
    free = list(range(len(added)))
    kept: dict[int, int] = {}
    for i, line in enumerate(removed):
        same = next((j for j in free if added[j].strip() == line.strip()), None)
        if same is not None:
            kept[i] = same
            free.remove(same)
    for i, line in enumerate(removed):
        if i in kept or not free:
            continue
        best = max(free, key=lambda j: _similarity(line, added[j]))
        if _similarity(line, added[best]) >= SIMILAR:
            kept[i] = best
            free.remove(best)
    return [(line, added[kept[i]] if i in kept else None) for i, line in enumerate(removed)]


def lost_lines(request: str, diff: str | None) -> list[str] | None:
    """The lines ``diff`` removes that the ``request`` does not account for, in file
    order (pure): each removed line that holds a word (a blank line or one of punctuation
    is not lost), that no added line keeps (:func:`pair_lines`: not moved, not changed in
    place), and one of whose words the request does not hold (:func:`.request.change_words`;
    "remove the TODO about the train" accounts for ``TODO: book the train``… only when
    every word of it is the request's). ``[]``: nothing lost. None when the diff is
    unknown (``FileEffect.diff`` None: a binary or oversized file) or is no diff."""
    if diff is None:
        return None
    sides = diff_sides(diff)
    if sides is None:
        return None
    words = change_words(request)
    return [
        line
        for line, kept in pair_lines(*sides)
        if kept is None and change_words(line) and not change_words(line) <= words
    ]
