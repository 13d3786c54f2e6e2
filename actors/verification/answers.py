"""Structured answers the roles ask models for, and the helpers that turn them into messages.

These are the JSON shapes a model (or a ``scripted:`` file) must return. Ids are never
chosen by the model: criteria and subtasks get ids from code.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from artoo.actors.verification.request import content_words
from artoo.schemas import Check, Criterion, UserQuestion

__all__ = [
    "CriterionAnswer",
    "CriterionVerdictAnswer",
    "PerceiverAnswer",
    "PlanAnswer",
    "PlannedSubtask",
    "QuestionAnswer",
    "VerdictAnswer",
    "VerdictsAnswer",
    "answered_prompt",
    "bounded_question",
    "echoes",
    "make_criteria",
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


class PerceiverAnswer(msgspec.Struct, kw_only=True):
    """The Perceiver's reading of a request."""

    intent: str
    slug: str = ""
    criteria: list[CriterionAnswer] = []
    kind: str = ""
    """question, change or creation (code checks it against the request)."""
    answer: str = ""
    """For a question, what the answer must state: number, name, value or text."""
    question: QuestionAnswer | None = None
    """Only when the request is ambiguous: one question to the user (the task waits)."""


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


def make_criteria(answers: list[CriterionAnswer], prefix: str) -> list[Criterion]:
    """Give model-stated criteria code-chosen ids (``<prefix>1``, ``<prefix>2`` …).

    A criterion that claims to be verifiable without a check is plausible.
    """
    out = []
    for i, a in enumerate(answers, start=1):
        mode = a.mode if (a.mode == "plausible" or a.check is not None) else "plausible"
        out.append(
            Criterion(
                id=f"{prefix}{i}", text=a.text, mode=mode, check=a.check, weight=max(a.weight, 0.0)
            )
        )
    return out


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


def echoes(text: str, said: str, share: float = 0.8) -> bool:
    """True when ``text`` (a model's criterion) only echoes what artoo ``said`` to it
    (pure): it has at least two content words and at least ``share`` of them are in
    ``said``. A small model re-asked with "These checks cannot be used: the request asks
    for a count but no criterion checks one …" answered with the criterion "the request
    asks for a count but no criterion checks one" — a criterion no answer can meet."""
    words = content_words(text)
    return len(words) >= 2 and len(words & content_words(said)) >= share * len(words)


def restates_request(question: QuestionAnswer, request: str, share: float = 0.6) -> bool:
    """True when a model's question to the user only restates the request (pure): it has
    at least two content words, and they and the request's share at least ``share`` of
    their union (Jaccard) — "How many lines are in notes/todo.txt? [1 / 2 / …]" for "how
    many lines does notes/todo.txt have?". Such a question asks the user for the task's
    own answer: it settles nothing and is not asked. A short clarification ("Which
    file?") or one that names what the request does not (a choice between files, a
    format) is kept."""
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
