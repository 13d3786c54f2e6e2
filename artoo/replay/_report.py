"""What ``artoo replay --verify`` found: the report and its mismatches."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from artoo.schemas import Envelope

__all__ = ["Mismatch", "VerifyReport", "compare", "mismatch"]


@dataclass(frozen=True)
class Mismatch:
    """A logged value that its recomputation does not reproduce."""

    seq: int
    kind: str
    field: str
    logged: Any
    recomputed: Any
    task_id: str | None = None

    def __str__(self) -> str:
        return (
            f"seq {self.seq} {self.kind}.{self.field}: logged {self.logged!r}, "
            f"recomputed {self.recomputed!r}"
        )


@dataclass
class VerifyReport:
    """What ``verify`` recomputed (per check), what it could not, and every mismatch."""

    checked: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    mismatches: list[Mismatch] = field(default_factory=list)
    retired: Counter[str] = field(default_factory=Counter)
    """Decisions of a task logged under a retired policy (``schemas.policy``), taken as
    logged rather than recomputed, by check."""

    @property
    def ok(self) -> bool:
        """True when every recomputed decision agrees with the log."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        """Plain data (``--json``)."""
        return {
            "ok": self.ok,
            "checked": dict(self.checked),
            "skipped": dict(self.skipped),
            "retired": dict(self.retired),
            "mismatches": [
                msgspec.to_builtins(
                    {
                        "seq": m.seq,
                        "task_id": m.task_id,
                        "kind": m.kind,
                        "field": m.field,
                        "logged": m.logged,
                        "recomputed": m.recomputed,
                    }
                )
                for m in self.mismatches
            ],
        }


_UNLOGGED: dict[str, dict[str, Any]] = {
    "GGSDecision": {"params": {}},
    "FinalResult": {"reason": None},
}
"""Fields added after artoo 0.1 with the value a log written before them reads as: such a
value means "not logged", and is not compared."""


def mismatch(
    report: VerifyReport,
    seq: int,
    kind: str,
    name: str,
    logged: Any,
    recomputed: Any,
    task_id: str | None,
) -> None:
    """Record one mismatch, its values as plain data."""
    report.mismatches.append(
        Mismatch(
            seq,
            kind,
            name,
            msgspec.to_builtins(logged),
            msgspec.to_builtins(recomputed),
            task_id,
        )
    )


def compare(report: VerifyReport, env: Envelope, logged: Any, recomputed: Any) -> None:
    """Record a mismatch per differing field of two Structs (or values)."""
    kind = type(env.body).__name__
    unlogged = _UNLOGGED.get(type(logged).__name__, {})
    a, b = msgspec.to_builtins(logged), msgspec.to_builtins(recomputed)
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key in unlogged and a.get(key) == unlogged[key]:
                continue
            if a.get(key) != b.get(key):
                report.mismatches.append(
                    Mismatch(env.seq, kind, key, a.get(key), b.get(key), env.task_id)
                )
    elif a != b:
        report.mismatches.append(Mismatch(env.seq, kind, "", a, b, env.task_id))
