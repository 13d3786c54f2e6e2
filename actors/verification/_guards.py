"""What a check may be used for, read from the request it answers: a count asked or
stated, a question that writes nothing, a count glob narrower than what was asked. Pure
functions; :mod:`.checks` re-exports the public ones."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from artoo.schemas import Check

from ._tables import written_to
from .request import content_words, duties, request_paths

__all__ = [
    "asks_count",
    "asks_question",
    "code_count_check",
    "count_checked",
    "guess_problem",
    "measures_other",
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


def asks_count(request: str, kind: str = "", shape: str = "") -> bool:
    """True when ``request`` asks for a count (pure). With the Perceiver's reading
    (``TaskSpec.kind``/``shape``) the structured one decides first: a request whose
    answer is a name, a value or free text (:func:`.request.duties`, code's shape winning
    over the model's) asks no count. A number is a count or an amount (a sum, a maximum),
    which no structured field tells apart: there, and for logs written before
    ``TaskSpec.kind``, the keyword reading ("how many", "count", "number of") decides."""
    if kind or shape:
        said = duties(request, kind, shape).shape
        if said is not None and said != "number":
            return False
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


def guess_problem(check: Check, request: str, kind: str = "", shape: str = "") -> str | None:
    """Why ``check`` guesses the answer or does not fit the request, or None (pure): a
    ``count_equals`` — or, when the request asks for a count, an ``output_contains`` of a
    bare number — whose number the request does not state (a count the task asks for is
    unknown until the work is done: ``count_matches`` has code measure it instead); a
    ``count_matches`` for a request that asks for no count (an amount, a name); a check of
    the workspace's state (``file_exists``, ``file_contains``, ``file_matches``) for a
    request that asks a question and writes nothing (it would pass whatever the answer;
    ``kind`` and ``shape`` are the Perceiver's reading, see :func:`writes_nothing` and
    :func:`asks_count`)."""
    if check.kind in ("table_value", "code_value") and str(check.value).strip() != request.strip():
        return f"{check.kind} is written by code, with the request as its value: check null"
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
    if check.kind == "count_matches" and not asks_count(request, kind, shape):
        return (
            "count_matches checks a count, and the request asks for none: check what it asks "
            "for (or check null)"
        )
    if check.kind == "count_equals":
        guessed = check.value
    elif (
        check.kind == "output_contains"
        and asks_count(request, kind, shape)
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


_WC = re.compile(r"\bwc\s+((?:-[A-Za-z]+\s+)*)[\w./~'\"][^\s|;&)`]*")
_WC_UNIT = {"l": "lines", "w": "words", "c": "bytes", "m": "chars"}


def _plain_counts(text: str) -> list[tuple[str, str]]:
    """The plain counts ``text`` runs: each ``wc -l|-w|-c|-m FILE`` not fed by a pipe
    (``grep x f | wc -l`` counts what the pipeline selected, which may be anything), as
    ``(unit, command)`` pairs (pure); the command's last word is the file."""
    out = []
    for m in _WC.finditer(text):
        if text[: m.start()].rstrip().endswith("|"):
            continue
        flags = "".join(f.lstrip("-") for f in m.group(1).split())
        unit = next((_WC_UNIT[f] for f in flags if f in _WC_UNIT), "lines" if not flags else "")
        if unit:
            out.append((unit, m.group().strip()))
    return out


def measures_other(
    text: str,
    request: str,
    kind: str = "",
    shape: str = "",
    checks: Sequence[Check] = (),
    *,
    unit_first: bool = False,
) -> str | None:
    """Why a plan's ``text`` (a subtask's instruction) measures another quantity than the
    one ``request`` asks for, or None (pure): it runs a plain count (``wc -l FILE``: the
    file's lines, words, bytes or chars) while the request asks a question whose answer
    is no such count — a name, a value or text (the Perceiver's ``kind``/``shape`` read
    by :func:`.request.duties`), a number or an answer of unknown shape that is no count
    and never speaks of the unit (a sum, a maximum), a count of
    something else ("how many classes …" is not the file's lines), or the lines holding a
    term the request names (a quoted string, an all-capitals word). A request that names
    the command itself, or that only changes or creates (no answer asked), is not judged.
    With the task's ``checks``, a plain count of a file that a ``count_matches`` check
    counts otherwise ("lines containing tool" of the same file) measures another quantity
    too: the check is the structured reading of what the request counts.
    The class of a small model pasting one counting example onto every question (the plan
    replaced the request: "run wc -l FILE" for "what is the highest price in FILE?").
    ``unit_first`` (``Config.unit_count_phrase``): a unit named before "count" is the
    request's ("wc -l src/app.py" serves "what is the line count of src/app.py?"; without,
    every plan of a real 1.5B model for it was rejected and the task abandoned)."""
    said = duties(request, kind, shape)
    if not said.answers:
        return None
    for unit, command in _plain_counts(text):
        if command in request or re.search(r"\bwc\b", request):
            continue
        if said.shape in ("name", "value", "text"):
            wanted = f"a {said.shape}"
        elif not asks_count(request, kind, shape):
            if _names_unit(unit, request):
                continue  # "is it longer than 20 lines?": the request speaks of the unit
            if said.shape == "number":
                wanted = "a number that is no count of the file's " + unit
            else:
                wanted = f"an answer that is no count of the file's {unit}"
        elif (other := _other_unit(unit, request)) is not None or not _counts_unit(
            unit, request, unit_first=unit_first
        ):
            wanted = f"a count of {other}" if other else "a count of something else"
        elif unit == "lines" and (term := _ignored_term(unit, request)) is not None:
            wanted = f"the lines with {term}"
        elif (counted := _checked_otherwise(command, unit, checks)) is not None:
            wanted = f"the {counted} (its count check)"
        else:
            continue
        return (
            f"{command!r} measures the file's {unit}, and the request asks for {wanted}: each "
            "subtask must serve the request's own quantity"
        )
    return None


def _checked_otherwise(command: str, unit: str, checks: Sequence[Check]) -> str | None:
    """What a ``count_matches`` check of the file ``command`` counts, when it is not the
    file's plain ``unit`` (``lines containing tool`` against ``wc -l``), or None (pure)."""
    path = command.split()[-1].strip("'\"")
    for check in checks:
        if check.kind != "count_matches" or check.path.strip().strip("/") != path.strip("/"):
            continue
        if str(check.value).strip().lower() != unit:
            return str(check.value).strip()
    return None


def _names_unit(unit: str, request: str) -> bool:
    """True when ``request`` names ``unit`` or a synonym of it anywhere (pure)."""
    return any(w.lower() in _SAME_UNIT[unit] for w in re.findall(r"[A-Za-z]+", request))


def _counts_unit(unit: str, request: str, *, unit_first: bool = False) -> bool:
    """True when the words after "how many" / "number of" / "count the" name ``unit``
    (or a synonym of it: rows, entries for lines) (pure). ``unit_first``
    (``Config.unit_count_phrase``): so does the word before "count" — "what is the line
    count of src/app.py?" counts lines, "the word count of README.md" words."""
    m = _COUNTED.search(request)
    if m is not None and any(w.lower() in _SAME_UNIT[unit] for w in m.group(1).split()):
        return True
    return unit_first and any(
        w.group(1).lower() in _SAME_UNIT[unit] for w in _UNIT_COUNT.finditer(request)
    )


_UNIT_COUNT = re.compile(r"\b([A-Za-z]+)[ \t]+count\b", re.I)
"""A unit named before "count": "the line count of …", "its word count"."""


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


_PLAIN_COUNT_WORDS = frozenset(
    "are is was be in on does do did contain contains containing hold holds has have "
    "there total count number inside".split()
)
"""The words a plain count request may hold besides its unit, its path and the term its
lines hold ("how many words does docs/x.md contain?"): any other word may be a
condition ("have the category tool", "scored above 80") a plain count ignores."""


_WRITE_WORDS = frozenset("write save put store record result then alone new file".split())
"""The words a count request that writes its count to a file may hold besides those of a
plain count ("count the TODO lines in notes/todo.txt and write the count to x.txt")."""


def code_count_check(
    request: str, kind: str = "", shape: str = "", *, unit_first: bool = False
) -> Check | None:
    """The ``count_matches`` code writes for a plain count request, or None (pure): a
    request that asks for a count (:func:`asks_count`), names one workspace path, and
    whose words after "how many" / "number of" / "count the" name one plain unit (lines,
    rows, words, bytes, characters, files), every other word of it being that unit, the
    path, a quoted or all-capitals term its lines hold (``lines containing TODO``:
    :func:`narrowed`) or one of :data:`_PLAIN_COUNT_WORDS` — "how many lines are in
    notes/meeting.txt?" → ``count_matches notes/meeting.txt lines``. Anything more ("how
    many rows of data/x.csv have the category tool?", "how many python files are under
    src?") may narrow the count, and code writes nothing (fail closed: the model's
    reading, checked by the guards, decides as before). A request that writes
    (``request.duties``) naming two paths, one of them the file it writes the count to
    (``_tables.written_to``: "count the TODO lines in notes/todo.txt and write the count
    to todo_count.txt"), gets the count of the other with ``into`` that file — the
    check judges what the file holds — and may also say the words of the write
    (:data:`_WRITE_WORDS`). ``unit_first`` (``Config.unit_count_phrase``): the unit may
    come before "count" instead ("what is the line count of src/app.py?")."""
    if not asks_count(request, kind, shape):
        return None
    paths = request_paths(request)
    into = written_to(request, paths) if len(paths) == 2 and duties(request, kind).writes else None
    if into is not None:  # "… and write the count to todo_count.txt": the file is judged
        paths = [p for p in paths if p != into]
    if len(paths) != 1:
        return None
    units = [u for u in _SAME_UNIT if _counts_unit(u, request, unit_first=unit_first)]
    if len(units) != 1:
        return None
    check = Check(kind="count_matches", path=paths[0], value=units[0], into=into or "")
    check = narrowed(check, request) or check
    term = str(check.value).removeprefix("lines containing ").lower() if check.value else ""
    allowed = {paths[0].lower(), *_SAME_UNIT[units[0]], term, *_PLAIN_COUNT_WORDS}
    if into is not None:
        allowed |= {into.lower(), *_WRITE_WORDS}
    if not content_words(request) <= allowed:
        return None
    return check


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
