"""What code reads of a request's own text: its memory tag, whether two requests are the
very same, and the paths it names (pure; equipment of the Perceiver, the Planner and
Memory). No decision of the proof reads here: the proof reads the structured reading
(:mod:`.reading`).

- :func:`request_tag` — the intent's memory tag (``TaskSpec.slug``): the same request, or
  a light paraphrase of it (case, punctuation, word order), gets the same tag.
- :func:`same_request` — the very same request, case and spacing aside.
- :func:`request_paths` — the path-shaped tokens it names.
"""

from __future__ import annotations

import re

__all__ = [
    "content_words",
    "request_paths",
    "request_tag",
    "same_request",
]

# --------------------------------------------------------------------------- the tag
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z][\w]{0,7}\b")
_WORD = re.compile(r"\w+")
_NOT_PATHS = frozenset({"e.g", "i.e", "a.k.a", "etc"})


def request_paths(text: str) -> list[str]:
    """The workspace paths ``text`` names (pure, in order): ``src/models``,
    ``notes/todo.txt``, ``README.md`` — what a derivation must read to answer it."""
    found = (m.group().strip(".").removeprefix("./") for m in _PATH.finditer(text))
    return [p for p in dict.fromkeys(found) if p and "//" not in p and p.lower() not in _NOT_PATHS]


def content_words(text: str) -> set[str]:
    """The words of ``text`` (pure): its paths whole (``notes/todo.txt``), then its other
    words lowercase, of two characters or more, in any language."""
    low = text.lower()
    paths = {m.group().strip(".") for m in _PATH.finditer(low)}
    rest = _PATH.sub(" ", low)
    return paths | {w for w in _WORD.findall(rest) if len(w) > 1}


def same_request(a: str, b: str) -> bool:
    """Whether two requests are the very same request, case and spacing aside (pure): what
    memory replays an accepted episode's plan and reading for — a paraphrase is not."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def request_tag(text: str, limit: int = 48) -> str:
    """The intent's memory tag of a request (pure): the words of its file paths as written
    (lowercase), then its other words — lowercase, of two characters or more, none its
    paths hold, each once, sorted — joined by ``-`` and cut at a word boundary within
    ``limit`` characters. The same request always maps to the same tag, and so does one
    that changes only case, punctuation or word order; the model's free slug is never
    used (it differs from run to run). Paraphrases meet in memory by meaning (recall)."""
    low = text.lower()
    paths = sorted(dict.fromkeys(m.group().strip(".") for m in _PATH.finditer(low)))
    rest = _PATH.sub(" ", low)
    named = list(dict.fromkeys(w for p in paths for w in _WORD.findall(p)))
    words = sorted({w for w in _WORD.findall(rest) if len(w) > 1 and w not in named})
    tag = ""
    for part in named + words:
        joined = f"{tag}-{part}" if tag else part
        if len(joined) > limit:
            break
        tag = joined
    return tag or "task"
