"""What a check may be used for, read from the request it answers: a count asked or
stated, a question that writes nothing, a count glob narrower than what was asked. Pure
functions; :mod:`.checks` re-exports the public ones."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from artoo.schemas import Check

from .request import duties

__all__ = [
    "asks_count",
    "asks_question",
    "count_checked",
    "guess_problem",
    "narrowed",
    "widened",
    "writes_nothing",
]


_COUNT_ASKED = re.compile(r"\bhow\s+many\b|\bcount\b|\bnumber\s+of\b", re.IGNORECASE)
_COUNT_KINDS = ("count_equals", "count_matches")


_QUESTION = re.compile(
    r"\?|^\s*(?:how|what|which|who|whose|when|where|why|is|are|was|were|does|do|did)\b",
    re.IGNORECASE,
)
_WRITES = re.compile(
    r"\b(?:create|write|save|make|add|append|generate|produce|put|store|copy|move|rename)\b",
    re.IGNORECASE,
)
_STATE_KINDS = ("file_exists", "file_contains", "file_matches")


def asks_question(request: str) -> bool:
    """True when ``request`` asks a question (a ``?``, an opening question word, or a
    count) rather than orders a change (pure). The reading of logs written before
    ``TaskSpec.kind``; a task with a kind is read by :func:`.request.duties`."""
    return _QUESTION.search(request) is not None or asks_count(request)


def asks_count(request: str) -> bool:
    """True when ``request`` asks for a count ("how many", "count", "number of") (pure)."""
    return _COUNT_ASKED.search(request) is not None


def count_checked(checks: list[Check]) -> bool:
    """True when one of ``checks`` decides a count (``count_equals``/``count_matches``)."""
    return any(c.kind in _COUNT_KINDS for c in checks)


def writes_nothing(request: str, kind: str = "") -> bool:
    """True when a request only asks a question, so a check of the workspace's state
    proves nothing about its answer (pure). With the Perceiver's ``kind`` the structured
    reading decides (:func:`.request.duties`: when code and model disagree, the file
    checks stay); without one (a log from before ``TaskSpec.kind``) the old keyword
    reading does."""
    if kind:
        return not duties(request, kind).writes
    return asks_question(request) and not _WRITES.search(request)


def guess_problem(check: Check, request: str, kind: str = "") -> str | None:
    """Why ``check`` guesses the answer or does not fit the request, or None (pure): a
    ``count_equals`` — or, when the request asks for a count, an ``output_contains`` of a
    bare number — whose number the request does not state (a count the task asks for is
    unknown until the work is done: ``count_matches`` has code measure it instead); a
    ``count_matches`` for a request that asks for no count (an amount, a name); a check of
    the workspace's state (``file_exists``, ``file_contains``, ``file_matches``) for a
    request that asks a question and writes nothing (it would pass whatever the answer;
    ``kind`` is the Perceiver's reading, see :func:`writes_nothing`)."""
    if check.kind in _STATE_KINDS and writes_nothing(request, kind):
        return (
            f"{check.kind} checks the workspace, not the answer, and the request asks a "
            "question: check the answer (output_contains, count_matches) or check null"
        )
    if check.kind == "count_matches" and (unnamed := _unnamed(check.path, request)):
        return (
            f"count_matches path {check.path!r} names {unnamed!r}, which the request does not "
            "mention: count in the file or directory the request names"
        )
    if check.kind == "count_matches" and (narrowed := _narrowing(check.path, request)):
        return (
            f"count_matches path {check.path!r} counts only names with {narrowed!r}, which "
            "the request does not ask for: count what it names (a directory, or a pattern "
            "it states)"
        )
    if check.kind == "count_matches" and (term := _ignored_term(check.value, request)):
        return (
            f"count_matches counts every line, and the request counts the lines with "
            f"{term}: use 'lines containing {term}'"
        )
    if check.kind == "count_matches" and (other := _other_unit(check.value, request)):
        return (
            f"count_matches counts {check.value}, and the request counts {other}: count "
            f"what it asks for ('lines containing <text>' for {other} a line shows, such as "
            "'lines containing def ' for functions)"
        )
    if check.kind == "count_matches" and not asks_count(request):
        return (
            "count_matches checks a count, and the request asks for none: check what it asks "
            "for (or check null)"
        )
    if check.kind == "count_equals":
        guessed = check.value
    elif (
        check.kind == "output_contains"
        and asks_count(request)
        and re.fullmatch(r"\s*-?\d+\s*", str(check.value))
    ):
        guessed = check.value
    else:
        return None
    try:
        number = _integer(guessed, check.kind)
    except ValueError:
        return None  # check_problem reports the wrong type
    if str(abs(number)) in re.findall(r"\d+", request):
        return None
    return (
        f"{check.kind} {number} guesses the answer (the request does not state {number}); "
        "for a count the task asks for use count_matches (path = what to count, value = "
        "the unit): code counts, the output must state it"
    )


_ALIASES = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "md": "markdown",
    "txt": "text",
    "rs": "rust",
    "rb": "ruby",
    "sh": "shell",
    "yml": "yaml",
}


_COUNTED = re.compile(
    r"\b(?:how\s+many|number\s+of|count(?:\s+the)?)\s+((?:[A-Za-z_][\w-]*\s+){0,3})", re.I
)
_SAME_UNIT = {
    "lines": {"line", "lines", "row", "rows", "entry", "entries", "record", "records"},
    "words": {"word", "words"},
    "bytes": {"byte", "bytes"},
    "chars": {"char", "chars", "character", "characters", "letter", "letters"},
    "files": {"file", "files"},
}


def _other_unit(value: Any, request: str) -> str | None:
    """What the request counts when a plain ``count_matches`` unit (lines, words, bytes,
    chars, files) is not it, or None (pure): the first plural word after "how many" /
    "number of" / "count the" ("count the functions defined in …" counts functions, not
    the file's lines). ``lines containing <text>`` may count anything a line shows."""
    unit = str(value).strip().lower()
    if unit not in _SAME_UNIT:
        return None
    m = _COUNTED.search(request)
    if m is None:
        return None
    words = m.group(1).lower().split()
    plural = [w for w in words if w.endswith("s") and len(w) > 2]
    if not plural:
        return None
    noun = plural[0]
    return None if noun in _SAME_UNIT[unit] else noun


_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
_CAPS = re.compile(r"(?<![\w./-])[A-Z][A-Z0-9_]+(?![\w./-])")


def _ignored_term(value: Any, request: str) -> str | None:
    """The term a plain ``lines`` count ignores, or None (pure): a quoted string or an
    all-capitals word of the request (``TODO``, ``ERROR``; not part of a path) — "how
    many lines of notes/todo.txt mention TODO?" counts the lines with ``TODO``, not every
    line (a real-model reading counted 7 lines where 4 held it, and the answer 7 passed)."""
    if str(value).strip().lower() != "lines":
        return None
    quoted = [a or b for a, b in _QUOTED.findall(request)]
    terms = quoted + _CAPS.findall(request)
    return terms[0] if terms else None


def narrowed(check: Check, request: str) -> Check | None:
    """A plain ``lines`` count of a request that names what the lines hold, counting the
    lines containing it instead (``lines`` → ``lines containing TODO``); None for any
    other check (pure). The repair the Perceiver applies when the model repeats it."""
    if check.kind != "count_matches":
        return None
    term = _ignored_term(check.value, request)
    if term is None:
        return None
    return msgspec.structs.replace(check, value=f"lines containing {term}")


def _narrowing(path: str, request: str) -> str | None:
    """The literal text of a wildcard segment of ``path`` (``py`` of ``*.py``) that the
    request names nowhere — nor its language (``python`` for ``py``) — or None (pure).
    A glob that narrows the count to a kind the request never mentions measures
    something else (real-model bench: "how many files are in archive?" counted
    ``archive/**/*.py``, 0, and the answer 0 passed)."""
    wanted = request.lower()
    for segment in path.split("/"):
        if segment == "**" or not re.search(r"[*?\[]", segment):
            continue
        for word in re.findall(r"[A-Za-z0-9]+", segment):
            word = word.lower()
            if word not in wanted and _ALIASES.get(word, word) not in wanted:
                return word
    return None


def _unnamed(path: str, request: str) -> str | None:
    """The last plain segment of ``path`` before any wildcard (``src`` of ``src/**/*.py``)
    when the request does not mention it — not even its stem (``todo`` of ``todo.txt``) —
    or None (pure). A count in a place the request never names measures something else
    (real-model bench: ``src`` for "how many files are in the archive directory?")."""
    static = []
    for segment in path.strip().split("/"):
        if re.search(r"[*?\[]", segment):
            break
        if segment not in ("", "."):
            static.append(segment)
    if not static:
        return None
    last = static[-1]
    stem = last.split(".")[0] or last
    wanted = request.lower()
    return None if stem.lower() in wanted or last.lower() in wanted else last


def widened(check: Check, request: str) -> Check | None:
    """A ``count_matches`` check whose glob narrows the count to a kind the request never
    names, counting the directory before its first wildcard instead (``archive/**/*.py``
    → ``archive`` for "how many files are in archive?"); None for any other check (pure).
    The repair the Perceiver applies when the model repeats the narrowing."""
    if check.kind != "count_matches" or _narrowing(check.path, request) is None:
        return None
    static = []
    for segment in check.path.strip().split("/"):
        if re.search(r"[*?\[]", segment):
            break
        static.append(segment)
    return msgspec.structs.replace(check, path="/".join(static) or ".")


def _integer(value: Any, kind: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{kind}: value must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise ValueError(f"{kind}: value must be an integer, got {value!r}")
