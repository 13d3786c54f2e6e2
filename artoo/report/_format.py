"""Formatting shared by the report's renderers: times, numbers, rates, the glossary."""

from __future__ import annotations

import datetime as dt

from ._model import Quantiles, Summary

GLOSSARY = [
    ("D", "distance to the goal: how much of what was asked is still failing (0 = done)"),
    ("P", "penalty: how far the last round moved the wrong way (worse results, waste)"),
    ("Ω", "cost: the share of the time and call budget the task has used"),
    ("L", "loss, the one number the loop drives down: a weighted sum of D, P and Ω"),
    ("∇L", "how fast L is changing between rounds (near 0 = stuck)"),
    ("accept", "every criterion passed; the result is kept"),
    ("success", "the goal was reached (a task-level end)"),
    ("refine", "close to done: try the same approach again with the feedback"),
    ("change_path", "same goal and approach, but another way around an obstacle"),
    ("change_approach", "the approach itself is wrong: plan differently"),
    ("break_symmetry", "stuck between equal options: force a different choice"),
    ("abandon", "stop: the budget is spent or going on cannot help"),
]
"""Plain-language meanings of the symbols and macro-states used in the report."""


def when(ts: float | None) -> str:
    """A clock time as UTC, to the second (``-`` for none)."""
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def num(x: float | int | None, digits: int = 1) -> str:
    """A number for a table: fixed decimals, ``-`` for none."""
    if x is None:
        return "-"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{digits}f}"


def pct(x: float | None) -> str:
    """A rate as a percentage (``-`` for none)."""
    return "-" if x is None else f"{100 * x:.1f}%"


def ms(x: float | None) -> str:
    """Milliseconds for a table: whole above 100, one decimal above 1, else two."""
    if x is None:
        return "-"
    return num(x, 0 if x >= 100 else 1 if x >= 1 else 2)


def q3(q: Quantiles) -> tuple[str, str, str]:
    """p50, p95, p99 for a table."""
    return ms(q.p50), ms(q.p95), ms(q.p99)


def escalation_line(s: Summary) -> str:
    """``"3 (high 1, low 2); ended: task_ended 2, open 1"`` or ``"0"``."""
    if not s.escalations:
        return "0"
    severities = ", ".join(f"{k} {v}" for k, v in s.escalations_by_severity.items())
    ended = ", ".join(f"{k} {v}" for k, v in s.escalations_ended.items())
    return f"{s.escalations} ({severities}); ended: {ended}"
