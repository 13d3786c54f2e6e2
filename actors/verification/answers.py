"""Structured answers the roles ask models for, and the helpers that turn them into messages.

These are the JSON shapes a model (or a ``scripted:`` file) must return. Ids are never
chosen by the model: criteria and subtasks get ids from code.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from artoo.schemas import Check, Criterion

__all__ = [
    "CriterionAnswer",
    "CriterionVerdictAnswer",
    "PerceiverAnswer",
    "PlanAnswer",
    "PlannedSubtask",
    "VerdictAnswer",
    "VerdictsAnswer",
    "make_criteria",
    "slugify",
]


class CriterionAnswer(msgspec.Struct, kw_only=True):
    """A success criterion as a model states it."""

    text: str
    mode: Literal["verifiable", "plausible"] = "plausible"
    check: Check | None = None
    weight: float = 1.0


class PerceiverAnswer(msgspec.Struct, kw_only=True):
    """The Perceiver's reading of a request."""

    intent: str
    slug: str = ""
    criteria: list[CriterionAnswer] = []
    kind: str = ""
    """question, change or creation (code checks it against the request)."""
    answer: str = ""
    """For a question, what the answer must state: number, name, value or text."""


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
