"""Structured answers the roles ask models for, and the helpers that turn them into messages.

These are the JSON shapes a model (or a ``scripted:`` file) must return. Ids are never
chosen by the model: criteria and subtasks get ids from code.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

import msgspec

from artoo.actors.verification.request import content_words
from artoo.schemas import Check, UserQuestion

__all__ = [
    "CriterionAnswer",
    "CriterionVerdictAnswer",
    "PerceiverAnswer",
    "PlanAnswer",
    "PlannedSubtask",
    "QuestionAnswer",
    "TargetAnswer",
    "VerdictAnswer",
    "VerdictsAnswer",
    "answered_prompt",
    "bounded_question",
    "restates_request",
    "slugify",
    "user_question",
]

QUESTION_TEXT_MAX = 500
"""Characters of a question kept (the rest cut)."""
OPTIONS_MAX = 8
"""Options of a question kept (the first ones)."""


class CriterionAnswer(msgspec.Struct, kw_only=True):
    """A success criterion as a model states it."""

    text: str
    mode: Literal["verifiable", "plausible"] = "plausible"
    check: Check | None = None
    weight: float = 1.0


class QuestionAnswer(msgspec.Struct, kw_only=True):
    """One question to the user, when the request leaves something open that only the
    user can settle: free text (no ``options``) or one of ``options``."""

    text: str
    options: list[str] = []
    default: str | None = None
    """What to take when the user does not answer in time (None: decide without it)."""


class TargetAnswer(msgspec.Struct, kw_only=True):
    """One path a request reads, writes, creates or deletes, as a model reads it."""

    path: str
    role: Literal["read", "write", "create", "delete"] = "read"
    """read, write (change an existing file), create (a new file; a directory ending in
    / that a new file goes into) or delete."""


class PerceiverAnswer(msgspec.Struct, kw_only=True):
    """The Perceiver's structured reading of a request (code checks every field:
    :func:`artoo.actors.verification.reading.checked`). The vocabularies are enums of the
    JSON schema, so a server that enforces it cannot put a sentence where a kind goes."""

    intent: str
    kind: Literal["question", "change", "creation", "mixed"]
    """question, change, creation, or mixed (a question and a change)."""
    answer: Literal["number", "name", "value", "boolean", "version", "list", "text"] = "text"
    """What an answer must state: number, name, value, boolean, version, list or text
    (required of a model by the schema it is given, :data:`SCHEMA_REQUIRED`, so it cannot
    leave a question's shape out; a script may)."""
    targets: list[TargetAnswer] = []
    key: str = ""
    """The key, setting, definition or column inside a file the request is about."""
    count: Literal["", "lines", "words", "chars", "bytes", "files", "matches"] = ""
    """For a count: lines, words, chars, bytes, files or matches ("" otherwise)."""
    call: str = ""
    """The Python call whose result or output the request asks, as the request writes it."""
    values: list[str] = []
    """The exact values the request itself gives (a new setting, a text to add, a name)."""
    question: QuestionAnswer | None = None
    """Only when the request is ambiguous: one question to the user (the task waits)."""

    __schema_required__: ClassVar[tuple[str, ...]] = ("answer",)
    """Fields the JSON schema a model is given requires, though decoding defaults them."""


class PlannedSubtask(msgspec.Struct, kw_only=True):
    """One subtask of a plan; equal ``sequence`` numbers run in parallel."""

    instruction: str
    sequence: int = 1
    tools: list[str] = []
    criteria: list[CriterionAnswer] = []


class PlanAnswer(msgspec.Struct, kw_only=True):
    """The Planner's decomposition of a task."""

    subtasks: list[PlannedSubtask]
    rationale: str = ""
    question: QuestionAnswer | None = None
    """Only for a choice the request does not settle: one question to the user (the task
    waits; the plan is asked again with the answer)."""


class VerdictAnswer(msgspec.Struct, kw_only=True):
    """A model's verdict on one criterion (the LLM rung of the verification ladder)."""

    passed: bool
    confidence: float = 0.0
    failure_class: Literal["logical", "environmental"] | None = None
    evidence: str = ""


class CriterionVerdictAnswer(msgspec.Struct, kw_only=True):
    """A model's verdict on one of several criteria judged together."""

    criterion: str
    passed: bool
    confidence: float = 0.0
    failure_class: Literal["logical", "environmental"] | None = None
    evidence: str = ""


class VerdictsAnswer(msgspec.Struct, kw_only=True):
    """A model's verdicts on all of an attempt's (or a round's) criteria, in one answer."""

    verdicts: list[CriterionVerdictAnswer]


def slugify(text: str, limit: int = 48) -> str:
    """A stable tag slug: lowercase words joined by '-', at most ``limit`` characters."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "-".join(words)[:limit].strip("-")
    return slug or "task"


def bounded_question(question: QuestionAnswer | None) -> QuestionAnswer | None:
    """A model's question made bounded (pure): None for no question or an empty one; the
    text cut to :data:`QUESTION_TEXT_MAX` characters; at most :data:`OPTIONS_MAX`
    distinct, non-empty options; a default kept only when it is one of them (or, for a
    free-text question, any non-empty text)."""
    if question is None or not question.text.strip():
        return None
    options: list[str] = []
    for option in question.options:
        option = option.strip()
        if option and option not in options and len(options) < OPTIONS_MAX:
            options.append(option)
    default = (question.default or "").strip() or None
    if options and default not in options:
        default = None
    return QuestionAnswer(
        text=question.text.strip()[:QUESTION_TEXT_MAX], options=options, default=default
    )


def restates_request(question: QuestionAnswer, request: str, share: float = 0.6) -> bool:
    """True when a model's question to the user only restates the request (pure): it has
    at least two words (:func:`.request.content_words`, any language), and they and the
    request's share at least ``share`` of their union (Jaccard). Such a question asks the
    user for the task's own answer: it settles nothing and is not asked. A short
    clarification, or one that names what the request does not, is kept."""
    words = content_words(question.text)
    if len(words) < 2:
        return False
    asked = content_words(request)
    return len(words & asked) >= share * len(words | asked)


def answered_prompt(question: str, answer: str) -> str:
    """What a role is told after its question to the user was answered (``answer`` "":
    no answer came; it decides without one)."""
    said = f"the user answered: {answer}" if answer else "no answer came: decide without it"
    return (
        f"You asked the user: {question}\n{said}.\n"
        "Answer again, in the same JSON shape, with no question."
    )


def user_question(
    question: QuestionAnswer, question_id: str, role: str, timeout_s: float, round: int = 0
) -> UserQuestion:
    """The UserQuestion a role publishes for a bounded question (pure)."""
    return UserQuestion(
        question_id=question_id,
        role=role,
        text=question.text,
        options=question.options,
        default=question.default,
        timeout_s=timeout_s,
        round=round,
    )
