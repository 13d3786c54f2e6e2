"""The decision policy a task runs under: the version replay recomputes its decisions by.

A change in how artoo decides (what proves an answer, what Law 1 asks, what a reading is)
is a new policy version, recorded in each task's ``TaskRequest.policy`` when the Queen
admits it, never a boolean in ``Config`` (Temporal's patch markers, eventsourcing's
upcasters). What each version decides, and how one is retired: docs/replay.md, "Policy
versions". In short: 0, the retired catalogue (its proof taken as logged); 1, the general
proof (docs/proof.md); 2, ``success`` only when every criterion passed; 3, a number,
boolean or version proven by code's run only when the call gave one (decisions/0003).
"""

from __future__ import annotations

__all__ = ["POLICIES", "POLICY", "RETIRED"]

POLICY = 3
"""The policy a task admitted now runs under."""

POLICIES = (0, 1, 2, 3)
"""Every policy a log may hold."""

RETIRED = (0,)
"""Policies whose proof code was removed: replay takes their proof decisions as logged."""
