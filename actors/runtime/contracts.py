"""The boundary table: who may publish what, derived from the roster (one table).

Each role declares its Output contract in ``Role.publishes``;
:func:`artoo.actors.runtime.runner.contracts_from` turns a roster into :class:`Contracts`,
which the Auditor checks every envelope against.
Besides the roles, two senders belong to the System itself: ``host`` (the facade:
UserRequest, CancelRequest; TaskCancelled at close; WorkspaceRestored, ``System.undo``)
and ``system`` (FinalResults it writes at open and close).
Any role may publish RoleFailed (its own crash).

Equipment of the Auditor (:class:`AuditSeat`), not a role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from artoo.schemas import (
    BoundaryRule,
    CancelRequest,
    FinalResult,
    MemoryQuery,
    TaskCancelled,
    UserRequest,
    WorkspaceRestored,
)

if TYPE_CHECKING:
    from artoo.eventstore import AuditLog, EventLogBackend

__all__ = ["SYSTEM_SENDERS", "AuditSeat", "Contracts"]

SYSTEM_SENDERS: Mapping[str, frozenset[str]] = {
    "host": frozenset(
        {
            UserRequest.__name__,
            CancelRequest.__name__,
            TaskCancelled.__name__,
            WorkspaceRestored.__name__,
        }
    ),
    "system": frozenset({FinalResult.__name__, TaskCancelled.__name__}),
}
"""The System's own senders and what each may publish."""


@dataclass(frozen=True)
class Contracts:
    """Role name → the kinds (class names) it may publish; which roles are effectors."""

    publishes: Mapping[str, frozenset[str]]
    effectors: frozenset[str]

    def check(self, sender: str, kind: str) -> BoundaryRule | None:
        """The boundary ``sender`` broke by publishing ``kind``, or None.

        ``sender`` may name an instance (``executor/pair-0``): its role is the part
        before the slash. An effector publishing MemoryQuery is named as such (the
        paper's example of a broken "does NOT": R3 querying R5 directly).
        """
        role = sender.split("/", 1)[0]
        allowed = self.publishes.get(role)
        if allowed is None:
            return "unknown_sender"
        if kind in allowed:
            return None
        if kind == MemoryQuery.__name__ and role in self.effectors:
            return "effector_memory_query"
        return "outside_contract"


@dataclass(frozen=True)
class AuditSeat:
    """What only the Auditor is given: its audit log (to append), the event log (to
    catch up from) and the boundary table. Every other role's Equipment has None."""

    log: AuditLog
    events: EventLogBackend
    contracts: Contracts
