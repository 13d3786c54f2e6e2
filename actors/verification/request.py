"""The request is the truth: what the user's own text asks, read by code (equipment).

The Perceiver's model states the request's **kind** (``question``, ``change``,
``creation``) and the **shape** of the value an answer must state (``number``, ``name``,
``value``, ``text``) as structured fields of its answer (``PerceiverAnswer.kind``,
``PerceiverAnswer.answer``). Code checks them against the request and, where the two
readings disagree, keeps the stricter duties (:func:`duties`): a request that both a
question and a change could be held to must answer *and* keep its file checks.

Everything here is pure and reads only the request and the answer, so the task-level
verdict it gives (:func:`answer_problem`) is recomputed by ``artoo replay --verify``.

- :func:`request_tag` — the intent's memory tag (``TaskSpec.slug``), decided by code from
  the request: the same request, or a light paraphrase of it (case, punctuation, word
  order, stop words), gets the same tag in every run.
- :func:`code_kind` / :func:`code_shape` — what code can see of the request's form.
- :func:`duties` — what the answer is held to, from the model's reading and code's.
- :func:`answer_problem` — why a final answer does not answer the request, or None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, get_args

import msgspec

__all__ = [
    "AnswerShape",
    "Duties",
    "RequestKind",
    "answer_problem",
    "change_word_places",
    "change_words",
    "code_kind",
    "code_shape",
    "code_values",
    "content_words",
    "duties",
    "named_values",
    "request_tag",
    "same_request",
    "traced",
]

RequestKind = Literal["question", "change", "creation"]
"""What a request asks for: an answer (``question``), a change to what exists
(``change``), or something new (``creation``)."""
AnswerShape = Literal["number", "name", "value", "text"]
"""What an answer to a question must state: a number (how many), a name (which, what is
the name of), a value (what does … return / print / contain), or free text."""

KINDS: tuple[str, ...] = get_args(RequestKind)
SHAPES: tuple[str, ...] = get_args(AnswerShape)

# --------------------------------------------------------------------------- the tag
_STOPWORDS = frozenset(
    """a an the of in on at to for from by with about into over under and or but
    is are was were be been being do does did doing done please can could would will shall
    should may might must i me my we our you your it its this that these those there here
    what which who whom whose how when where why tell show give find let lets us just
    some any all each every much many me also then than so very""".split()
)
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z][\w]{0,7}\b")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_PATHS = frozenset({"e.g", "i.e", "a.k.a", "etc"})


def request_paths(text: str) -> list[str]:
    """The workspace paths ``text`` names (pure, in order): ``src/models``,
    ``notes/todo.txt``, ``README.md`` — what a derivation must read to answer it."""
    found = (m.group().strip(".").removeprefix("./") for m in _PATH.finditer(text))
    return [p for p in dict.fromkeys(found) if p and "//" not in p and p.lower() not in _NOT_PATHS]


def content_words(text: str) -> set[str]:
    """The content words of ``text`` (pure): its paths whole (``notes/todo.txt``), then
    its other words lowercase, no stop words, no single letters — what two texts must
    share to say the same thing (``answers.echoes``, ``answers.restates_request``)."""
    low = text.lower()
    paths = {m.group().strip(".") for m in _PATH.finditer(low)}
    rest = _PATH.sub(" ", low)
    return paths | {w for w in _WORD.findall(rest) if len(w) > 1 and w not in _STOPWORDS}


def change_words(text: str) -> set[str]:
    """The words of ``text`` a change is held to (pure): as :func:`content_words` — its
    paths whole, its other words lowercase, no stop words — but a single letter or digit
    counts too (``x = 5`` → ``x``, ``5``: a one-digit value is a value). What every line a
    change read back by effect added or removed must share with the request
    (:func:`.proof.read_back_by_effect`)."""
    return set(change_word_places(text))


def change_word_places(text: str) -> dict[str, int]:
    """Each of :func:`change_words`'s words of ``text`` with the offset where it first
    appears in it (pure): what a change read back in place is ordered by — "rename shout
    to yell" names ``shout`` before ``yell`` (:func:`._lines.lines_read_back`)."""
    low = text.lower()
    places: dict[str, int] = {}
    for m in _PATH.finditer(low):
        path = m.group().strip(".")
        places.setdefault(path, low.index(path, m.start()))
    rest = _PATH.sub(lambda m: " " * len(m.group()), low)  # the other words keep their offsets
    for m in _WORD.finditer(rest):
        if m.group() not in _STOPWORDS:
            places.setdefault(m.group(), m.start())
    return places


def same_request(a: str, b: str) -> bool:
    """Whether two requests are the very same request, case and spacing aside (pure): what
    memory replays an accepted episode's plan and reading for — a paraphrase is not."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def request_tag(text: str, limit: int = 48) -> str:
    """The intent's memory tag of a request (pure): the words of its file paths as written
    (lowercase), then its other content words — lowercase, no punctuation, no stop words,
    no single letters, none its paths hold, each once, sorted — joined by ``-`` and cut at
    a word boundary within ``limit`` characters.

    The same request always maps to the same tag, and so does a light paraphrase that
    changes only case, punctuation, stop words or word order ("How many lines are in
    notes/todo.txt?" and "how many lines in notes/todo.txt" → ``notes-todo-txt-lines``).
    The model's free slug is never used (it differs from run to run)."""
    low = text.lower()
    paths = sorted(dict.fromkeys(m.group().strip(".") for m in _PATH.finditer(low)))
    rest = _PATH.sub(" ", low)
    named = list(dict.fromkeys(w for p in paths for w in _WORD.findall(p)))
    words = sorted(
        {
            w
            for w in _WORD.findall(rest)
            if len(w) > 1 and w not in _STOPWORDS and w not in named and not _plural_of(w, rest)
        }
    )
    parts = named + words
    tag = ""
    for part in parts:
        joined = f"{tag}-{part}" if tag else part
        if len(joined) > limit:
            break
        tag = joined
    return tag or "task"


def _plural_of(word: str, text: str) -> bool:
    """True when ``word`` is the plural of a word ``text`` also holds (keep one form)."""
    return word.endswith("s") and re.search(rf"\b{re.escape(word[:-1])}\b", text) is not None


# --------------------------------------------------------------------------- the kind
_WH = re.compile(r"^\W*(?:how|what|what's|whats|which|who|whose|whom|when|where|why)\b", re.I)
_COUNT = re.compile(r"\bhow\s+many\b|\bhow\s+much\b|\bnumber\s+of\b|\bcount\b|\btotal\b", re.I)
_NAME = re.compile(r"^\W*(?:which|who|whose)\b|\bname\s+of\b|\bwhat\s+is\s+\w+\s+called\b", re.I)
_VALUE = re.compile(
    r"\b(?:return|returns|returned|print|prints|output|outputs|evaluate|evaluates|value)\b",
    re.I,
)


def code_kind(text: str) -> Literal["question"] | None:
    """What code can see of a request's kind (pure): ``question`` for a request that ends
    in ``?`` or opens with a question word (how, what, which, who, …); None otherwise —
    an imperative ("Do the weekly report", "List the files") may be a question or a change,
    and only the model's reading, held to the stricter duties, can tell. An opening
    auxiliary verb ("Do …", "Is …") is not a question without a ``?``."""
    stripped = text.strip()
    if stripped.endswith("?") or _WH.search(stripped):
        return "question"
    return None


def code_shape(text: str) -> AnswerShape | None:
    """What code can see of the value a question asks for (pure): ``name`` for which /
    who / the name of (first: "which team has the higher total?" asks a name), ``number``
    for a count or an amount (how many, how much, number of, count, total), ``value`` for
    what something returns, prints or outputs; None when code cannot tell."""
    if _NAME.search(text):
        return "name"
    if _COUNT.search(text):
        return "number"
    if code_kind(text) == "question" and _VALUE.search(text):
        return "value"
    return None


class Duties(msgspec.Struct, frozen=True, kw_only=True):
    """What a task's answer is held to, from its request.

    ``answers``: the answer must answer (state the asked-for value, grounded in tool
    results, not describe the process). ``writes``: the request may change or create
    files, so checks of the workspace (``file_exists`` …) are kept. ``shape``: the value
    the answer must state (None: any). ``unsure``: the model's reading and code's
    disagreed (or the model gave none), so both duties were kept."""

    answers: bool
    writes: bool
    shape: AnswerShape | None = None
    unsure: bool = False


def duties(text: str, kind: str = "", shape: str = "") -> Duties:
    """The duties of a request (pure): the model's ``kind`` and ``shape`` (from the
    Perceiver's answer; empty when it gave none, as in older logs) checked against what
    code sees of ``text``. Agreement keeps the one reading; disagreement — a change that
    ends in ``?``, a question that code sees as no question (an imperative) — keeps both
    duties (the stricter checks). With no valid reading from the model (``unknown``) the
    file checks stay and the answer must answer when code sees a question or an asked-for
    value. Code's shape wins over the model's (a count is a number whatever the model
    said)."""
    seen = code_kind(text)
    stated = kind if kind in KINDS else ""
    if stated == "question" and seen == "question":
        answers, writes, unsure = True, False, False
    elif stated in ("change", "creation") and seen is None:
        answers, writes, unsure = False, True, False
    elif not stated:  # no reading from the model: code's alone, file checks kept
        answers, writes, unsure = seen == "question" or code_shape(text) is not None, True, True
    else:  # the readings disagree: the stricter duties
        answers, writes, unsure = True, True, True
    got: AnswerShape | None = code_shape(text)
    if got is None and shape in SHAPES:
        got = shape  # type: ignore[assignment]  # checked against SHAPES
    return Duties(answers=answers, writes=writes, shape=got if answers else None, unsure=unsure)


# --------------------------------------------------------------------------- the answer
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_HOWTO = re.compile(r"\byou\s+(?:can|could|would|should|may|might|need\s+to|will)\b", re.I)
_PROCESS_SUBJECT = re.compile(
    r"\b(?:the|this|that|my|your)\s+(?:\w+\s+)?(?:command|output|script|tool|code|query|"
    r"execution|call|pipeline|search|result)s?\b",
    re.I,
)
_PROCESS_VERB = re.compile(
    r"\b(?:successfully|executed|ran|run|captured|completed|worked|as\s+expected|"
    r"is\s+empty|was\s+empty|returned\s+nothing|no\s+output|produced|printed\s+nothing)\b",
    re.I,
)
_META = re.compile(r"\b(?:success\s+criteri(?:on|a)|the\s+criteri(?:on|a)|meets?\s+the)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")
_CODEISH = re.compile(
    r"`[^`\n]+`|\"[^\"\n]+\"|'[^'\n]+'|\b[A-Za-z_]\w*(?:\.\w+)+\b|\b\d+(?:\.\d+){2,}\b|"
    r"\b[a-z]+_\w+\b|"
    r"\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b(?:True|False|None|null|true|false)\b|\b\w+\(\)"
)
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*][ \t]+)?\d+[.)][ \t]", re.MULTILINE)
_FIGURE = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")
"""A figure alone (``800``, ``1,300``, ``12.5``) — not a dotted numeral like ``2.3.1``."""
_PROPER = re.compile(r"(?<=[^\s.!?:]\s)[A-Z][\w-]+")  # a capitalised word inside a sentence
_EMPHASIS = re.compile(
    r"\*\*([^*\n]+)\*\*|__([^_\n]+)__|(?<![*\w])\*([^*\s](?:[^*\n]*[^*\s])?)\*(?![*\w])"
)
"""Markdown emphasis: ``**drill**``, ``__drill__``, ``*drill*`` (not ``a * b * c``)."""
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_NAME_WORD = re.compile(r"[A-Za-z_]\w*(?:-\w+)*")


def _process_sentence(sentence: str) -> bool:
    return bool(_PROCESS_SUBJECT.search(sentence) and _PROCESS_VERB.search(sentence))


def code_values(answer: str, request: str) -> list[str]:
    """The code-like values ``answer`` states — quoted strings, code spans, dotted, snake
    or camel names, calls, literals, dotted numerals (a version: ``2.3.1``, which is no
    number) — that ``request`` does not already hold (pure):
    what generalised grounding traces to the tool results."""
    return _unasked(_CODEISH.finditer(answer), request)


def named_values(answer: str, request: str) -> list[str]:
    """The names ``answer`` states, for a question that asks for a name (pure, in order,
    each once): the capitalised words inside a sentence (not a sentence's first word:
    "… is Circle."), then the words in markdown emphasis (``**drill**``, ``__drill__``,
    ``*drill*``; not in a code span, not a label such as ``**Answer:**``) — none the
    request already holds, none a stop word. A plain name is no code-like value
    (:func:`code_values`); to the proof it is one only where a name is asked for."""
    found = [m.group() for m in _PROPER.finditer(answer)]
    prose = _CODE_SPAN.sub(" ", answer)
    for m in _EMPHASIS.finditer(prose):
        text = next(g for g in m.groups() if g is not None)
        if not (text.rstrip().endswith(":") or prose[m.end() : m.end() + 1] == ":"):
            found += _NAME_WORD.findall(text)  # not a label (**Answer:**, **Answer**:)
    asked = set(_TOKEN.findall(request))
    names = []
    for name in dict.fromkeys(found):
        tokens = set(_TOKEN.findall(name))
        if len(name) > 1 and name.lower() not in _STOPWORDS and tokens and not tokens <= asked:
            names.append(name)
    return names


def _new_values(answer: str, request: str, outputs: Sequence[str] = ()) -> list[str]:
    """The values the answer states (code-like values, numbers, capitalised names inside a
    sentence, and any word a tool printed) that the request does not already hold (pure).
    With the tool results (``outputs``), a name counts only when the tools showed it
    (``Python`` in advice on how to search is not a value the workspace gave), and a plain
    word of the answer that stands in a tool result is a value read from the workspace
    ("It prints hello artoo" after a run that printed it); the answer's own words about
    the value ("a string that includes …") are not. A list item's number is no value."""
    answer = _LIST_MARKER.sub(" ", answer)
    numbers = _unasked(_NUMBER.finditer(answer), request)
    names = _unasked((*_CODEISH.finditer(answer), *_PROPER.finditer(answer)), request)
    if not outputs:
        return numbers + names
    shown = {t for o in outputs for t in _TOKEN.findall(o)}
    asked = set(_TOKEN.findall(request))
    traced_names = [v for v in names if set(_TOKEN.findall(v)) <= shown | asked]
    words = [
        t
        for t in _TOKEN.findall(answer)
        if len(t) > 1 and t in shown and t not in asked and t.lower() not in _STOPWORDS
    ]
    return numbers + traced_names + words


def _unasked(found: Iterable[re.Match[str]], request: str) -> list[str]:
    asked = set(_TOKEN.findall(request))
    out = []
    for m in found:
        tokens = set(_TOKEN.findall(m.group()))
        if tokens and not tokens <= asked:
            out.append(m.group())
    return out


def traced(value: str, sources: list[str], request: str = "") -> bool:
    """True when every word of ``value`` (a code-like value an answer states) occurs in
    one of ``sources`` (what the tools returned and the paths they read) or in the
    request (pure): a name or a string no tool showed is the model's own."""
    words = set(_TOKEN.findall(request))
    for source in sources:
        words.update(_TOKEN.findall(source))
    return all(t in words for t in _TOKEN.findall(value))


def answer_problem(
    request: str, output: str, duty: Duties, outputs: Sequence[str] = ()
) -> str | None:
    """Why ``output`` does not answer ``request``, or None (pure; only a request held to
    answer — ``duty.answers`` — is judged):

    - an empty answer;
    - an answer that talks about its own criteria ("… which meets the success
      criteria") — a claim about the checks is not an answer;
    - an answer that describes the process instead of the value: a sentence about the
      command / output / script and what it did ("The command successfully captured the
      output", "The output is empty as expected") with no value stated outside such
      sentences; or a statement that the output was empty beside a non-zero figure;
    - an answer that says how to find the value ("To determine …, you can use …") and
      states none outside that advice (its commands are not the value);
    - an answer that lacks the asked-for value: a number for ``number``; for ``name`` or
      ``value``, a name or value the request does not already state (a quoted string,
      a code name, a literal, a number) — repeating the question's own words is not an
      answer.
    """
    if not duty.answers:
        return None
    text = output.strip()
    if not text:
        return "the answer is empty: a question needs the asked-for value"
    if _META.search(text):
        return (
            "the answer talks about its criteria instead of answering: state the value the "
            "request asks for"
        )
    howto = [s for s in _sentences(text) if _HOWTO.search(s)]
    if howto:  # advice on how to find it: its commands and steps are not the value
        steps = _FENCE.sub(" ", _LIST_MARKER.sub(" ", text))
        text = " ".join(s for s in _sentences(steps) if not _HOWTO.search(s))
        if not _new_values(text, request, outputs):
            return (
                "the answer says how to find the value (" + _clip(howto[0]) + ") instead of "
                "stating it"
            )
    sentences = _sentences(text)
    process = [s for s in sentences if _process_sentence(s)]
    rest = " ".join(s for s in sentences if not _process_sentence(s))
    if process and not _new_values(text, request, outputs) and not (duty.shape is None and rest):
        return (
            "the answer describes the process (" + _clip(process[0]) + ") instead of stating "
            "the value the request asks for"
        )
    empty = [s for s in process if re.search(r"\bempty\b|\bnothing\b|\bno output\b", s, re.I)]
    figures = [n for n in _NUMBER.findall(rest) if n.strip("-0.,")]
    if empty and figures:
        return (
            f"the answer states {figures[0]} and also that the output was empty "
            f"({_clip(empty[0])}): it contradicts itself"
        )
    if duty.shape == "number" and not _NUMBER.search(text):
        return "the request asks how many (a number) and the answer states none"
    if duty.shape in ("name", "value") and not _new_values(text, request, outputs):
        return (
            f"the request asks for a {duty.shape} and the answer states none the request "
            "did not already hold (repeating the question is not an answer)"
        )
    if duty.shape == "name" and not [
        v for v in _new_values(text, request, outputs) if not _FIGURE.fullmatch(v.strip())
    ]:
        return (
            "the request asks for a name (which …) and the answer states only figures: a "
            "number is not the name asked for"
        )
    return None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _clip(sentence: str, limit: int = 80) -> str:
    flat = " ".join(sentence.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
