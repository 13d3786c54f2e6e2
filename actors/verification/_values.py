"""The values an answer states, by the shape of the answer asked for, and how to compare them
(pure).

A reading names the shape of the answer a question asks for — ``number``, ``name`` (an
identifier, a file or module, a key), ``value`` (a scalar from a config or code),
``boolean``, ``version``, ``list`` or ``text`` (free text, never compared). Everything
here reads the **form** of an answer or a tool's output — code spans, quotes, emphasis,
digits, dots, slashes, list punctuation — and never its words, so "Die Zeilenlänge ist
88." states 88 as "The line length is 88." does.

- :func:`normal` / :func:`same` — a value's canonical form for a shape, and equality.
- :func:`stated` — the candidate values an answer states, most clearly marked first.
- :func:`states` / :func:`shows` — an answer / a tool's output states a value (whole
  tokens: "2.1.3" does not state 2.1, "10" does not state 1).
- :func:`items` / :func:`same_set` — the items a list answer names, and set equality.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Hashable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = [
    "SHAPES",
    "items",
    "normal",
    "same",
    "same_set",
    "shows",
    "stated",
    "states",
]

SHAPES = ("number", "name", "value", "boolean", "version", "list", "text")
"""Every answer shape a reading names."""

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
"""The literal vocabulary of booleans in the formats read (YAML, TOML, INI, JSON, Python)
— a format's words, not a language's. Bare in prose only ``true``/``false`` count: the
others must be marked (code, quotes, emphasis) or be the whole answer."""
_NULLS = frozenset({"null", "none", "~", "nil"})

_QUOTES = "\"'`*«»„“”‚‘’‹›"
_TRAILING = ".,;:!?…"
_LEADING = "¿¡"

_NUMBER = re.compile(
    r"""(?P<sign>[+\-−])?(?P<cur>[$€£¥₹])?(?:
      (?P<g>\d{1,3}(?P<sep>[,'_\u00a0\u202f])\d{3}(?:(?P=sep)\d{3})*)(?:\.(?P<gf>\d+))?
    | (?P<d>\d{1,3}(?:\.\d{3}){2,}|\d{1,3}(?:\.\d{3})+(?=,))(?:,(?P<df>\d+))?
    | (?P<i>\d+)(?:\.(?P<f>\d+))?
    | (?P<c>\d+),(?P<cf>\d{1,2}|\d{4,})
    )(?:[eE](?P<e>[+\-]?\d{1,4}))?(?P<unit>%|‰|[$€£¥₹]|-?[^\W\d_]+)?""",
    re.VERBOSE,
)
"""A number as written: grouped ``1,300`` / ``1'300`` / ``1 300`` (no-break space) /
``1_300``, German ``1.300.000`` and ``1.300,5``, plain ``1300.00``, decimal comma ``1,5``
(a comma and one, two or four or more digits), an exponent, and a unit glued to it
(``5MB``, ``50%``, ``88-character``). One dot group alone (``1.300``) is a decimal point."""
_VERSION = re.compile(
    r"(?P<op>===?|[<>!~^]=?|\^|~)?(?P<v>[vV])?(?P<n>\d+(?:\.\d+)*"
    r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|post|rev|r|dev)[-_.]?\d*)*(?:\+[\w.]+)?)"
)
_SPLIT = re.compile(r"[\s=;|()\[\]{}]+|,(?=\D)")
_MARKER = re.compile(r"(?m)^[ \t]*(?:\d{1,3}[.)]|[-*+•]|#{1,6})[ \t]+(?=\S)")
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_SPAN = re.compile(r"(`+)([^`\n]+?)\1")
_QUOTED = re.compile(
    r"\"([^\"\n]+)\"|“([^”\n]+)”|„([^“”\n]+)[“”]|«\s*([^»\n]+?)\s*»"
    r"|‘([^’\n]+)’|(?<!\w)'([^'\n]+)'(?!\w)"
)
_EMPHASIS = re.compile(r"\*\*([^*\n]+)\*\*|(?<![*\w])\*([^*\n]+)\*(?![*\w])")
_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?")
_GROUP_SPACE = re.compile(r"(?<=\d)[\u00a0\u202f](?=\d{3}(?!\d))")


def _clean(text: str) -> str:
    """``text`` without the markup around it: quotes, backticks, asterisks, trailing
    sentence punctuation, leading ``¿¡``, a trailing ``()``."""
    prev = None
    s = text.strip()
    while s != prev:
        prev = s
        s = s.strip(_QUOTES).rstrip(_TRAILING).lstrip(_LEADING).strip()
        if s.endswith("()"):
            s = s[:-2]
    return s


# -- one value's canonical form ---------------------------------------------------------


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Decimal):
        return Decimal(value).normalize() if Decimal(value).is_finite() else None
    if isinstance(value, float):
        finite = value == value and abs(value) != float("inf")
        return _number(Decimal(repr(value))) if finite else None
    if not isinstance(value, str):
        return None
    words = _GROUP_SPACE.sub("", _clean(value)).split()
    if not words or any(ch.isdigit() for w in words[1:] for ch in w):
        return None
    return _numeral(words[0])


def _numeral(token: str) -> Decimal | None:
    m = _NUMBER.fullmatch(token)
    if m is None:
        return None
    if m["g"]:
        whole, frac = m["g"].replace(m["sep"], ""), m["gf"]
    elif m["d"]:
        whole, frac = m["d"].replace(".", ""), m["df"]
    elif m["i"]:
        whole, frac = m["i"], m["f"]
    else:
        whole, frac = m["c"], m["cf"]
    text = f"{'-' if m['sign'] in ('-', '−') else ''}{whole}.{frac or '0'}e{m['e'] or 0}"
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return None


def _boolean(value: Any, vocabulary: bool = True) -> bool | None:
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    s = _clean(value).casefold()
    if s in ("true", "false") or (vocabulary and s in _TRUE | _FALSE):
        return s in _TRUE
    return None


def _version(value: Any) -> tuple[Any, ...] | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    s = _clean(value if isinstance(value, str) else repr(value))
    m = _VERSION.fullmatch(s.split(",")[0].replace(" ", ""))
    if m is None:
        found = [t for t in (_version_token(w) for w in _words(s)) if t]
        if len(found) != 1:
            return None
        m = _VERSION.fullmatch(found[0])
        assert m is not None
    try:
        v = Version(m["n"])
    except InvalidVersion:
        return ("written", m["n"].casefold())
    return (v.epoch, v.release, v.pre, v.post, v.dev, v.local)


def _version_token(word: str) -> str | None:
    """``word`` if it is a version by its form: dotted digits, or ``v``/an operator before
    digits (``2.1.3``, ``v2``, ``>=3.8``, ``2.1rc1``)."""
    m = _VERSION.fullmatch(word)
    if m is None or not (m["op"] or m["v"] or not m["n"].isdigit()):
        return None
    return word


_PYPATH = re.compile(r"(?:\w+/)*\w+\.pyi?|(?:\w+/)+\w+")
_DOTTED = re.compile(r"\w+(?:\.\w+)*")


def _name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    s = _clean(value).replace("\\", "/")
    while s.startswith("./"):
        s = s[2:]
    s = s.rstrip("/")
    if not s or any(ch.isspace() for ch in s) or not any(ch.isalpha() or ch == "_" for ch in s):
        return None
    if _PYPATH.fullmatch(s):
        s = re.sub(r"\.pyi?$", "", s).replace("/", ".")
    if _DOTTED.fullmatch(s):
        s = re.sub(r"\.__init__$", "", s)
        s = s[4:] if s.startswith("src.") and len(s) > 4 else s
    return s


def _text(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset | dict):
        return None
    s = " ".join(_clean(str(value)).split()).casefold()
    return "null" if s in _NULLS else (s or None)


def normal(value: Any, shape: str) -> Hashable | None:
    """``value``'s canonical form for ``shape``; None when it is not of that shape (and for
    ``text``). number: a ``Decimal`` (``1,300`` = ``1300.00`` = ``1300 lines``); version:
    its release *as written* with pre/post/dev/local parts (``v2.1`` = ``2.1`` = ``>=2.1``,
    but ``2.1`` ≠ ``2.1.0`` ≠ ``2.1.3``); boolean: a bool (``true/yes/on/1``); name: the
    text without markup, a Python path as its module (``src/pkg/mod.py`` = ``pkg.mod``);
    value: ``("number"|"boolean"|"text", …)``, the first that reads; list: a frozenset of
    :func:`_item_key`. ``same`` on ``value`` is wider than equality of these."""
    if shape == "number":
        return _number(value)
    if shape == "boolean":
        return _boolean(value)
    if shape == "version":
        return _version(value)
    if shape == "name":
        return _name(value)
    if shape == "value":
        n, b = _number(value), _boolean(value)
        t = _text(value)
        if n is not None:
            return ("number", n)
        if b is not None:
            return ("boolean", b)
        return None if t is None else ("text", t)
    if shape == "list":
        seq = items(value) if isinstance(value, str) else value
        if not isinstance(seq, list | tuple | set | frozenset):
            return None
        return frozenset(k for k in map(_item_key, seq) if k is not None)
    return None


def same(a: Any, b: Any, shape: str) -> bool:
    """``a`` and ``b`` are the same value of ``shape`` (reflexive and symmetric on values
    the shape reads; never for ``text``). For ``value``: as numbers when both read as
    numbers, else as booleans when both do (``"1"`` and ``True``), else as text
    (casefolded, markup and spacing aside; ``None``, ``null``, ``~`` alike)."""
    if shape == "value":
        na, nb = _number(a), _number(b)
        if na is not None and nb is not None:
            return na == nb
        ba, bb = _boolean(a), _boolean(b)
        if ba is not None and bb is not None:
            return ba == bb
        ta, tb = _text(a), _text(b)
        return ta is not None and ta == tb
    if shape == "text":
        return False
    key = normal(a, shape)
    return key is not None and key == normal(b, shape)


# -- the values an answer states --------------------------------------------------------


def _words(text: str, parts: bool = True) -> list[str]:
    """``text``'s tokens: split at spaces, ``= ; |``, brackets and a comma before a
    non-digit, markup stripped (digits grouped by a no-break space kept together); with
    ``parts``, a token such as ``west,800`` or ``key:value`` (no number, no time of day)
    also by its parts."""
    out: list[str] = []
    for raw in _SPLIT.split(_GROUP_SPACE.sub("", text)):
        word = _clean(raw)
        if not word:
            continue
        out.append(word)
        if (
            parts
            and ("," in word or ":" in word)
            and _numeral(word) is None
            and not _TIME.fullmatch(word)
        ):
            out.extend(w for w in (_clean(p) for p in re.split(r"[,:]", word)) if w)
    return out


def _marked(answer: str) -> tuple[list[str], str]:
    """The pieces form marks in ``answer`` — code (fenced lines, then spans), quotes,
    emphasis, in that order — and the text left, list markers removed."""
    pieces: list[str] = []
    text = answer

    def take(pattern: re.Pattern[str], lines: bool = False) -> None:
        nonlocal text
        for m in pattern.finditer(text):
            inner = next(g for g in reversed(m.groups()) if g) if m.lastindex else m.group(0)
            pieces.extend(x.strip() for x in (inner.splitlines() if lines else [inner]))
        text = pattern.sub(" ", text)

    take(_FENCE, lines=True)
    take(_SPAN)
    take(_QUOTED)
    take(_EMPHASIS)
    return [p for p in pieces if p], _MARKER.sub(" ", text)


def _code_like(word: str) -> bool:
    return any(ch.isdigit() or ch in "._/\\-:@" for ch in word.strip(".")) or (
        any(ch.isupper() for ch in word[1:]) or word.startswith(("_", "."))
    )


def _of_shape(word: str, shape: str, marked: bool) -> bool:
    if shape == "number":
        return _numeral(word) is not None
    if shape == "version":
        return (_version_token(word) is not None or (marked and word.isdigit())) and (
            _version(word) is not None
        )
    if shape == "boolean":
        return _boolean(word, vocabulary=marked) is not None
    if shape == "name":
        return _name(word) is not None
    return _text(word) is not None  # value


def stated(answer: str, shape: str) -> list[str]:
    """The values ``answer`` states for ``shape``, most clearly marked first: code, then
    quoted text, then emphasis (each whole when it reads as the shape, else its tokens),
    then tokens of the rest — for names and values those that look like code (digits,
    ``._/-:``, inner capitals) before plain words, plain words last first. A number stands
    alone (not in ``todo2.txt``, ``v2``, a date, a time, a list marker); a bare integer is
    a version only when marked; ``yes/no/on/off`` are booleans only when marked or the
    whole answer. Duplicates (by :func:`normal`) dropped; ``list`` gives :func:`items`."""
    if shape == "list":
        return items(answer)
    if shape not in SHAPES or shape == "text":
        return []
    pieces, rest = _marked(answer)
    whole = _clean(answer)
    found: list[str] = []
    for piece in pieces:
        clean = _clean(piece)
        if clean and _of_shape(clean, shape, marked=True):
            found.append(clean)
        else:
            found.extend(w for w in _words(piece) if _of_shape(w, shape, marked=True))
    bare = [w for w in _words(rest) if _of_shape(w, shape, marked=w == whole)]
    if shape in ("name", "value"):
        plain = [w for w in bare if not _code_like(w)]
        bare = [w for w in bare if _code_like(w)] + plain[::-1]
    found.extend(bare)
    seen: set[Hashable] = set()
    out = []
    for word in found:
        key = normal(word, shape)
        if key is not None and key not in seen:
            seen.add(key)
            out.append(word)
    return out


def _bounded(text: str, needle: str) -> bool:
    """``needle`` occurs in ``text`` as whole tokens: not glued to a letter, digit, ``_``,
    ``-``, ``/`` or a dot that continues a name."""
    if not needle:
        return False
    glue = "_-/\\"
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        after2 = text[end + 1] if end + 1 < len(text) else " "
        if not (before.isalnum() or before in glue + ".") and not (
            after.isalnum()
            or after in glue
            or (after == "." and (after2.isalnum() or after2 == "_"))
        ):
            return True
        start = text.find(needle, start + 1)
    return False


def states(answer: str, value: Any, shape: str) -> bool:
    """``answer`` states ``value`` as a ``shape``: one of its values (:func:`stated`) is
    :func:`same`, or — for names and values — the value's text occurs in it as whole
    tokens. A list: the answer's :func:`items` are the value's items. Never for text."""
    if shape == "list":
        return normal(value, "list") is not None and same_set(items(answer), _seq(value))
    if shape not in SHAPES or shape == "text" or normal(value, shape) is None:
        return False
    if any(same(c, value, shape) for c in stated(answer, shape)):
        return True
    return shape in ("name", "value") and _bounded_value(answer, value, shape)


def _bounded_value(text: str, value: Any, shape: str) -> bool:
    """The value's text in ``text`` as whole tokens: a name as written, a value casefolded."""
    if shape == "name":
        return _bounded(text, _clean(value))
    needle = _text(value)
    return needle is not None and _bounded(text.casefold(), needle)


def shows(output: str, value: Any, shape: str) -> bool:
    """A tool's ``output`` shows ``value`` as a ``shape``: one of its tokens is
    :func:`same` (the formats' full boolean vocabulary but ``1/0``), or — for names and
    values — the value's text occurs as whole tokens. A list: every item shows."""
    if shape == "list":
        seq = _seq(value)
        return bool(seq) and all(
            shows(output, item, "name") or shows(output, item, "value") for item in seq
        )
    if shape not in SHAPES or shape == "text" or normal(value, shape) is None:
        return False
    for word in _words(output):
        if shape == "boolean" and word in ("1", "0"):
            continue
        if same(word, value, shape):
            return True
    return shape in ("name", "value") and _bounded_value(output, value, shape)


# -- lists ------------------------------------------------------------------------------

_BULLET = re.compile(r"^[ \t]*(?:\d{1,3}[.)]|[-*+•])[ \t]+(\S.*)$")
_ITEM_SPLIT = re.compile(r"[;,](?!\d{3}(?!\d))")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_AFTER_ITEM = re.compile(r"\s+[—–-]\s|:\s|\s\(")


def _seq(value: Any) -> list[Any]:
    if isinstance(value, str):
        return list(items(value))
    return list(value) if isinstance(value, list | tuple | set | frozenset) else []


def _item_key(item: Any) -> Hashable | None:
    """An item compared as a name when it reads as one, else as a scalar value."""
    if isinstance(item, str):
        key = _name(item)
        if key is not None:
            return ("name", key)
    return normal(item, "value")


def _line_item(line: str) -> str | None:
    pieces, _ = _marked(line)
    if pieces:
        return _clean(pieces[0])
    head = _clean(_AFTER_ITEM.split(line, maxsplit=1)[0])
    words = _words(head)
    if len(words) == 1:
        return words[0]
    code = [w for w in words if _code_like(w)]
    return code[0] if code else head or None


def items(answer: str) -> list[str]:
    """The items a list answer names, in order, by form: bullet or numbered lines (each
    line's first code span, else its text before `` — ``/``: ``/`` (``); else code spans
    and fenced lines (a span's commas split it); else lines of one token each (an INI
    multi-line value); else, in the sentence with most commas and semicolons, by
    position: the last token before the first comma, each segment between (its first
    code-like token, else its first), and of the last segment ``X <one word> Y`` both
    ends, else its code-like tokens, else its last of two, else its first. With no comma:
    the code-like tokens, or the one token. Duplicates dropped; what this misreads makes
    the sets differ (fail closed)."""
    lines = [m.group(1) for line in answer.splitlines() if (m := _BULLET.match(line))]
    bare = [line.strip() for line in answer.splitlines() if line.strip()]
    pieces, _ = _marked(answer)
    if lines:
        found = [i for i in map(_line_item, lines) if i]
    elif pieces:
        found = [_clean(p) for piece in pieces for p in _ITEM_SPLIT.split(piece)]
    elif len(bare) > 1 and all(len(line.split()) == 1 for line in bare):
        found = [_clean(line) for line in bare]
    else:
        found = _prose_items(answer)
    return list(dict.fromkeys(i for i in found if i))


def _prose_items(answer: str) -> list[str]:
    sentences = [s for s in _SENTENCE.split(answer.strip()) if s.strip()]
    if not sentences:
        return []
    sentence = max(sentences, key=lambda s: len(_ITEM_SPLIT.findall(s)))
    segments = [_words(s, parts=False) for s in _ITEM_SPLIT.split(sentence)]
    segments = [s for s in segments if s]
    if not segments:
        return []
    if len(segments) == 1:
        words = segments[0]
        code = [w for w in words if _code_like(w)]
        return code if code else words if len(words) == 1 else []
    found = [segments[0][-1]]
    for middle in segments[1:-1]:
        code = [w for w in middle if _code_like(w)]
        found += middle if len(middle) == 1 else code[:1] or middle[:1]
    last = segments[-1]
    code = [w for w in last if _code_like(w)]
    if len(last) == 3:
        found += [last[0], last[2]]
    elif code:
        found += code
    else:
        found += last[-1:] if len(last) == 2 else last[:1]
    return found


def same_set(a: Iterable[Any], b: Iterable[Any]) -> bool:
    """``a`` and ``b`` name the same set of items (complete: equal sets), each item a name
    when it reads as one (``pkg/mod.py`` = ``pkg.mod``) else a scalar value."""
    ka = {_item_key(x) for x in a}
    kb = {_item_key(x) for x in b}
    return None not in ka and None not in kb and ka == kb
