"""The decision policy a task runs under: the version replay recomputes its decisions by.

A change in how artoo decides (what proves an answer, what Law 1 asks, what a reading is)
is a new policy version, recorded in each task's ``TaskRequest.policy`` when the Queen
admits it, never a boolean in ``Config`` (Temporal's patch markers, eventsourcing's
upcasters: docs/replay.md says how an old version is retired).

- **0** — a log from before policy versions: the catalogue of proof rules fitted to one
  bench, switched by 28 ``Config`` booleans. Retired: replay takes its proof decisions
  (how an answer was established, when a second derivation was asked) as logged and
  recomputes the rest.
- **1** — the general proof (docs/proof.md): one structured reading; a question proven by
  two independent derivations, code the second wherever the file's format allows; a
  change proven by its effect (scope, formats, read-back, the workspace's tests); every
  applied change reversible (``artoo undo``).
- **2** — policy 1, and a task ends ``success`` only when every criterion passed: a
  round "close enough" (D ≤ δ) with a criterion failed is refined while the replan budget
  and Law 2 allow, else abandoned (docs/decisions/0003). Policy 1's logs replay by its
  rule (the GGS branches on ``TaskRequest.policy``).
- **3** — policy 2, and code's run of the request's call proves a number, boolean or
  version only when the call gave one (docs/decisions/0003; the proof branches on
  ``TaskRequest.policy``).
"""

from __future__ import annotations

__all__ = ["POLICIES", "POLICY", "RETIRED"]

POLICY = 3
"""The policy a task admitted now runs under."""

POLICIES = (0, 1, 2, 3)
"""Every policy a log may hold."""

RETIRED = (0,)
"""Policies whose proof code was removed: replay takes their proof decisions as logged."""
