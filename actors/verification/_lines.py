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
- :func:`lost_from` — the same, of a diff already read into its sides.
- :func:`lines_read_back` — whether a diff's lines read back as the request, word by
  word (a line changed in place by the words that changed).
- :func:`repair_command` — the command that makes only what the request accounts for of
  a change that would lose lines, keeping them.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence

from .request import change_word_places, change_words

__all__ = [
    "SIMILAR",
    "diff_sides",
    "lines_read_back",
    "lost_from",
    "lost_lines",
    "pair_lines",
    "repair_command",
]

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
    sides = None if diff is None else diff_sides(diff)
    return None if sides is None else lost_from(request, *sides)


def lost_from(request: str, removed: Sequence[str], added: Sequence[str]) -> list[str]:
    """:func:`lost_lines` of a diff already read into its ``removed`` and ``added`` lines
    (:func:`diff_sides`; pure)."""
    words = change_words(request)
    return [
        line
        for line, kept in pair_lines(removed, added)
        if kept is None and change_words(line) and not change_words(line) <= words
    ]


def lines_read_back(
    request: str, removed: Sequence[str], added: Sequence[str], *, in_place: bool = True
) -> bool:
    """Whether a diff's ``removed`` and ``added`` lines read back as the ``request``, word
    by word (pure; :func:`.request.change_words`).

    ``in_place``: a line changed in place (:func:`pair_lines`: a removed line and the
    added line that keeps it, not the same line moved) whose words changed both ways —
    some gone, some come — is read back by the words that changed (:func:`_replaced`):
    ``def shout(text: str) -> str:`` → ``def yell(text: str) -> str:`` for "rename the
    function shout to yell in src/textutil.py", whose ``def``, ``text`` and ``str`` are
    no words of the request. Every other line, and every line when ``in_place`` is off,
    is read back only when each of its words is a word of the request: no collateral
    change, no value the request does not state."""
    places = change_word_places(request)
    held = [*removed, *added]  # the lines held to all their words
    if in_place:
        held, left = list(removed), Counter(added)
        for line, new in pair_lines(removed, added):
            replaced = None if new is None else _replaced(places, line, new)
            if replaced is None or new is None:
                continue  # not changed in place, or the same words: held to all its words
            if not replaced:
                return False
            held.remove(line)
            left[new] -= 1
        held += left.elements()
    return all(change_words(line) <= places.keys() for line in held)


def _replaced(places: Mapping[str, int], old: str, new: str) -> bool | None:
    """Whether ``old`` changed in place to ``new`` reads back as the request whose words
    first appear at ``places`` (:func:`.request.change_word_places`), or None when no
    word of ``old`` was replaced by a word of ``new`` (the same words, or words only
    removed or only added: each line is held to all its words). True when all hold —

    - every word that changed (of ``old`` not in ``new``, of ``new`` not in ``old``) is a
      word of the request;
    - the line is located: every word of both lines is the request's, or a word gone is
      not a number — an identifier the request names (``shout``); a value alone places
      no line: "change the west region's 800 to 850" is not ``east,800`` → ``east,850``;
    - each word gone first appears in the request before each word come ("rename shout
      to yell", "change red to blue", "from 800 to 850"): blue → red is not "change red
      to blue"."""
    before, after = change_words(old), change_words(new)
    gone, came = before - after, after - before
    if not gone or not came:
        return None
    if not (gone | came) <= places.keys():
        return False
    if not (before | after) <= places.keys() and all(w.isdigit() for w in gone):
        return False
    return max(places[w] for w in gone) < min(places[w] for w in came)


_SPLICE = (
    "import json,sys;p=sys.argv[1];s=json.loads(sys.argv[2]);t=open(p).read().splitlines();"
    '[t.__setitem__(t.index(a),b) for a,b in s["replace"]];'
    'open(p,"w").write("\\n".join(t+s["append"])+"\\n")'
)
"""The program of a :func:`repair_command` that changes lines in place: each line replaced
where it is (its first occurrence: a line no longer there fails the command, and nothing
is written), then the lines appended."""


def repair_command(
    request: str, path: str, removed: Sequence[str], added: Sequence[str]
) -> str | None:
    """The shell command that makes, of a change of ``path`` that would lose lines (its
    diff's ``removed`` and ``added`` lines, :func:`diff_sides`), only what the ``request``
    accounts for — keeping every line it would lose (pure); None when no part of it is.

    A small model asked to "append the line 'TODO: call Bob' to notes/todo.txt" wrote that
    line alone over the file, and asked to "rename the function shout to yell in
    src/textutil.py" wrote the renamed function alone: told so, it wrote the same again.
    Of such a change, two parts are the request's:

    - a line changed in place (:func:`pair_lines`) that reads back as the request
      (:func:`_replaced`: ``def shout(message):`` → ``def yell(message):``), made where
      the line is, with its indentation;
    - a new line (not one moved) every word of which is the request's
      (:func:`.request.change_words`), appended.

    Only a change every added line of which is so accounted for (or a line moved back) is
    repaired: one that also adds a line of other words — a made-up row, a line changed
    not as the request words it — is the model's own rewrite, not the request's change,
    and code picks no part of it (a small model asked to change west's 800 to 850 wrote
    ``west,800`` and a new ``west,850`` among made-up rows). A line removed is kept.

    Only appends: ``printf '%s\\n' '…' >> path``; else a ``python3 -c`` that replaces each
    line at its first occurrence and appends the new lines (a line no longer there fails
    it, writing nothing). The command still goes through every gate — Law 1, the
    request's consent — and its effects are the workspace's record of what was done."""
    places = change_word_places(request)
    words = places.keys()
    replace: list[tuple[str, str]] = []
    used: Counter[str] = Counter()
    for old, new in pair_lines(removed, added):
        if new is None:
            continue
        used[new] += 1
        if old.strip() == new.strip():
            continue  # moved: kept where it is
        if not _replaced(places, old, new):
            return None  # changed in place, but not as the request words it
        indent = old[: len(old) - len(old.lstrip())]
        replace.append((old, indent + new.strip()))
    append: list[str] = []
    left = Counter(added) - used
    for line in added:  # the new lines, in the order written
        if left[line] <= 0 or not line.strip():
            continue
        left[line] -= 1
        if not change_words(line) or not change_words(line) <= words:
            return None  # a line the model made up: its change is not the request's
        if line.strip() not in append:
            append.append(line.strip())
    if not replace and not append:
        return None
    target = shlex.quote(path)
    if not replace:
        return "printf '%s\\n' " + " ".join(shlex.quote(line) for line in append) + f" >> {target}"
    spec = json.dumps({"replace": replace, "append": append}, ensure_ascii=False)
    return f"python3 -c {shlex.quote(_SPLICE)} {target} {shlex.quote(spec)}"
