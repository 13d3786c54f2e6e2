"""Grounding of stated facts: a model's figure is never proof (equipment of the validators).

An answer to a question about the workspace states numbers — a count, an amount, a size.
A small model will state one it never saw (task 7 of ``bench/real_model.py``: an awk for
``"East"`` printed nothing and the Executor answered "1500"; the same model, as validator,
found that plausible). :func:`grounding` decides, deterministically and from the logged
tool results alone, whether every number the answer states is backed by them.

The rule. A number the answer states — a whole or decimal number standing alone
(``7``, ``1,300``, ``12.5``; not the ``2`` of ``todo2.txt`` or ``v2``, not a list marker
``1.`` at the start of a line, not a number inside a ``code span`` that holds more than
the number, not a command's exit or return code unless the request asks about one) — is
**grounded** when it equals (as a value: ``1300`` = ``1,300`` = ``1300.00``):

1. a number the request itself states (the user's figure is given, not claimed);
2. a number code measured for this answer (``measured``: a ``count_matches`` check that
   passed);
3. a number that occurs in a tool result (any digit run, decimal or ``1,234`` group) —
   for a task with a kind, what the workspace gave the call (a command's stdout, another
   built-in tool's ``ToolCall.content``), not a note the tool adds around it
   (:func:`tool_outputs`);
4. a count code derives from one tool result, or from one section of a shell result
   (``--- stdout ---``): its lines, its non-empty lines, its words, the lines that contain
   a word of the request (as ``grep -c``, exact case or any case; a plural word's
   singular too: "how many classes" counts the lines holding ``class``) — what a model
   may count by reading a listing or a file;
5. a sum or mean code derives from one such section: the sum of all its numbers, or the
   sum or mean of one column (the k-th number of every line that has one) — a total the
   model adds up from a file's figures. A mean matches when rounded to the answer's
   decimals.

Anything else — a figure found in no tool result and derivable from none — is
**ungrounded**: the validators fail the criterion as logical and the Executor is asked
again with the numbers named. Only answers to questions are held to it
(:func:`asks_question`); the check is necessary, not sufficient: a small number is
usually derivable from something, a large wrong one seldom is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

import msgspec

from artoo.schemas import ToolCall

from ._guards import asks_question

__all__ = [
    "Grounding",
    "asks_question",
    "derivable",
    "grounding",
    "read_sources",
    "singular",
    "stated_count",
    "stated_numbers",
    "tool_outputs",
]

_STATED = re.compile(
    r"(?<![\w./\\-])(?<!\d:)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/]|[.,:-]\d)"
)
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*][ \t]+)?\d+[.)][ \t]", re.MULTILINE)
_CODE_SPAN = re.compile(r"`([^`\n]*)`")
_PROCESS_NUMBER = re.compile(
    r"\b(?:exit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?|return\s+(?:code|status))"
    r"\s*(?:(?:of|is|was)\s+|[=:]\s*)?`?\d+`?",
    re.IGNORECASE,
)
"""How a command ran, not what it found: "exit code 0", "exited with status 1", "return
code 2" — masked unless the request itself asks about an exit or return code."""
_DOUBLE_QUOTED = re.compile(r'["\u201c]([^"\u201c\u201d\n]*)["\u201d]')
_OPTION_NUMBER = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:=|\s+)\d+")
"""A command option's number: ``-maxdepth 0``, ``-n 5``, ``--lines=5`` (a count's
reading: an answer that quotes its command unquoted)."""
_ASKS_PROCESS = re.compile(r"\b(?:exit|return\s+(?:code|status))", re.IGNORECASE)
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_LINE_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_SECTION = re.compile(r"^--- [\w ]+ ---$", re.MULTILINE)
_TERM = re.compile(r"[A-Za-z_][\w-]{1,}")
_MAX_TERMS = 40


class Grounding(msgspec.Struct, frozen=True, kw_only=True):
    """The numbers an answer states, and those of them no tool result backs."""

    stated: tuple[str, ...] = ()
    ungrounded: tuple[str, ...] = ()

    @property
    def grounded(self) -> bool:
        """True when every stated number is backed."""
        return not self.ungrounded

    def evidence(self) -> str:
        """What a failed criterion says to the Executor (empty when grounded)."""
        if self.grounded:
            return ""
        shown = ", ".join(self.ungrounded)
        return (
            f"the answer states {shown}, which no tool result shows or adds up to (a figure "
            "of your own is not proof): run a tool that shows it, and answer with the figure "
            "the tool returned"
        )


def _value(token: str) -> Decimal | None:
    try:
        return Decimal(token.replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the patterns only give digits
        return None


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _blank_quoted(m: re.Match[str]) -> str:
    """A code span or quoted text blanked, unless it holds the number alone."""
    return m.group() if _STATED.fullmatch(m.group(1).strip()) else _blank(m)


def stated_numbers(answer: str, request: str = "", *, quoted: bool = False) -> list[str]:
    """The numbers ``answer`` states, as written, in order (pure): standing alone, not a
    list marker, not inside a code span that holds more than the number, not a command's
    exit or return code (unless ``request`` asks about one).

    ``quoted`` (a count's reading, :func:`stated_count`): nor inside a double-quoted text
    that holds more than the number (a command or an output the answer quotes: "find
    src -maxdepth 0 | wc -l"), nor the number of a command option (``-maxdepth 0``,
    ``-n 5``, ``--lines=5``)."""
    masked = _LIST_MARKER.sub(_blank, answer)
    if not _ASKS_PROCESS.search(request):
        masked = _PROCESS_NUMBER.sub(_blank, masked)
    masked = _CODE_SPAN.sub(_blank_quoted, masked)
    if quoted:
        masked = _DOUBLE_QUOTED.sub(_blank_quoted, masked)
        masked = _OPTION_NUMBER.sub(_blank, masked)
    return [m.group() for m in _STATED.finditer(masked)]


def stated_count(answer: str, request: str = "") -> int | None:
    """The count ``answer`` states, read as a person would, or None when it states none
    or it is ambiguous (pure): of the numbers :func:`stated_numbers` reads with
    ``quoted`` (no code span, quoted command or output, exit code, option or list
    marker), those the request itself states are set aside while others remain ("the 5
    files hold 3 python files" for "how many of the 5 files …"); the count is the one
    value the rest hold, whole — several different values ("was 0 … you should get 3"),
    or a fraction, state none. A count check reads this: no guess passes it."""
    tokens = stated_numbers(answer, request, quoted=True)
    values = [v for t in tokens if (v := _value(t)) is not None]
    given = _given(request)
    own = [v for v in values if v not in given]
    distinct = set(own or values)
    if len(distinct) != 1:
        return None
    (value,) = distinct
    return int(value) if value == value.to_integral_value() else None


def _given(request: str) -> set[Decimal]:
    """The values the request states (any digit run, decimal or ``1,234`` group)."""
    given = {v for t in _DIGITS.findall(request) if (v := _value(t)) is not None}
    return given | {v for t in _GROUPED.findall(request) if (v := _value(t)) is not None}


def _legacy_sections(text: str) -> list[str]:
    """Each part a ``--- name ---`` line opens in a shell result of a log older than
    ``ToolCall.stdout``/``stderr`` (the streams were only in the display text then)."""
    parts = _SECTION.split(text)
    return [p.strip("\n") for p in parts[1:]]


def singular(word: str) -> str | None:
    """The singular of an English plural ``word``, or None (pure, by its ending alone):
    ``classes`` → ``class``, ``boxes`` → ``box``, ``files`` → ``file``; None for a word of
    three letters or fewer, one ending in ``ss`` or not in ``s``. A request counts
    ``classes`` where a file's lines say ``class``."""
    low = word.lower()
    if len(low) <= 3 or not low.endswith("s") or low.endswith("ss"):
        return None
    if low.endswith("es") and low[:-2].endswith(("ss", "x", "ch", "sh", "z")):
        return word[:-2]
    return word[:-1]


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def derivable(
    outputs: Iterable[str], terms: Sequence[str] = (), *, counts: bool = True
) -> tuple[set[Decimal], list[Decimal]]:
    """What the tool results ``outputs`` back (pure): the exact values (rules 3–5 of the
    module docstring, but means) and the means (matched after rounding); a term's lines
    are counted for its :func:`singular` too, in any case. ``counts`` off
    leaves out rule 4 — the lines, non-empty lines, words and lines holding a term — for
    a value that is no count (the proof's reading of a request that does not ask to
    count: ``proof._backers``); the numbers printed, the sums and the means stay."""
    exact: set[Decimal] = set()
    means: list[Decimal] = []
    for output in outputs:
        for token in (*_DIGITS.findall(output), *_GROUPED.findall(output)):
            value = _value(token)
            if value is not None:
                exact.add(value)
        section = output
        lines = section.splitlines()
        if counts:
            exact.update(
                Decimal(n)
                for n in (
                    _line_count(section),
                    sum(1 for line in lines if line.strip()),
                    len(section.split()),
                )
            )
            for term in terms:
                exact.add(Decimal(sum(term in line for line in lines)))
                for form in (term, singular(term)):
                    if form:
                        low = form.lower()
                        exact.add(Decimal(sum(low in line.lower() for line in lines)))
        columns: list[list[Decimal]] = []
        total = Decimal(0)
        for line in lines:
            for k, token in enumerate(_LINE_NUMBER.findall(line)):
                number = Decimal(token)
                total += number
                if k == len(columns):
                    columns.append([])
                columns[k].append(number)
        exact.add(abs(total))
        for column in columns:
            exact.add(abs(sum(column, Decimal(0))))
            means.append(abs(sum(column, Decimal(0)) / len(column)))
    return exact, means


def _rounds_to(mean: Decimal, value: Decimal) -> bool:
    places = max(0, -int(value.as_tuple().exponent))
    return abs(mean - value) <= Decimal(5) / Decimal(10) ** (places + 1)


def grounding(
    answer: str,
    outputs: Iterable[str],
    *,
    request: str = "",
    context: str = "",
    measured: Iterable[int | str] = (),
) -> Grounding:
    """Whether every number ``answer`` states is backed by the tool results ``outputs``,
    stated by ``request`` (the user's words), or ``measured`` by code (pure; the rule is
    the module's). The words of ``request`` and ``context`` (the subtask's instruction)
    are what rule 4 counts lines containing; ``context``'s numbers are not given."""
    stated = stated_numbers(answer, request)
    if not stated:
        return Grounding()
    given = _given(request) | {Decimal(n) for n in measured}
    terms = list(dict.fromkeys(_TERM.findall(f"{request}\n{context}")))[:_MAX_TERMS]
    exact, means = derivable(outputs, terms)
    ungrounded: list[str] = []
    for token in stated:
        value = _value(token)
        if value is None or value in given or value in exact:
            continue
        if any(_rounds_to(m, value) for m in means):
            continue
        if token not in ungrounded:
            ungrounded.append(token)
    return Grounding(stated=tuple(stated), ungrounded=tuple(ungrounded))


def tool_outputs(calls: Iterable[ToolCall], *, strict: bool = False) -> list[str]:
    """What the tools returned: each call's logged result (``output_preview``: what the
    model was shown) and a command's streams on their own (``stdout``, ``stderr``),
    whether the call succeeded or not; never an error text.

    ``strict`` (a task with ``TaskSpec.kind``; older logs keep the lenient reading):
    only what a call that worked printed — a failed or refused call, a command that
    exited non-zero or wrote to stderr (``cat missing | wc -l`` prints 0 and exits 0),
    grounds nothing, nor does a command's display header (``exit code: 0`` would back
    every "0"): a figure printed by a failed command is not proof. Nor does a note a
    built-in tool adds around what the workspace gave: another tool's result is its
    ``content`` (a ``read_file`` page without "… Use read_file(…, offset=1024) …", a read
    past the end "" — its note's ``offset=0`` once backed an awk's wrong total of 0); a
    call logged before that field, or with none, is read as the model was shown it."""
    texts: list[str] = []
    for call in calls:
        if strict:
            if not call.ok or call.exit_code not in (None, 0) or (call.stderr or "").strip():
                continue
            if call.stdout is not None or call.stderr is not None:
                texts.extend(t for t in (call.stdout,) if t)
            elif call.content is not None and call.tool != "shell":
                texts.extend(t for t in (call.content,) if t)
            elif call.output_preview and call.tool != "shell":
                texts.append(call.output_preview)
            elif call.output_preview:  # an older shell record: its stdout section only
                texts.extend(_stdout_sections(call.output_preview))
            continue
        if not call.output_preview:
            continue
        texts.append(call.output_preview)
        if call.stdout is None and call.stderr is None:
            texts.extend(_legacy_sections(call.output_preview))
        else:
            texts.extend(t for t in (call.stdout, call.stderr) if t)
    return texts


def _stdout_sections(text: str) -> list[str]:
    """The ``--- stdout ---`` part of a shell result logged before ``ToolCall.stdout``."""
    parts = _SECTION.split(text)
    heads = _SECTION.findall(text)
    return [p.strip("\n") for h, p in zip(heads, parts[1:], strict=False) if "stdout" in h]


def read_sources(calls: Iterable[ToolCall]) -> list[str]:
    """What a tool call that worked read or was told to read: its target and its
    arguments (a command's text, a path) — where a name an answer states may come from
    besides the results (generalised grounding; pure)."""
    out: list[str] = []
    for call in calls:
        if not call.ok or call.exit_code not in (None, 0):
            continue
        if call.target:
            out.append(call.target)
        out.extend(str(v) for v in call.args.values() if isinstance(v, str))
    return out
