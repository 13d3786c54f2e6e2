"""The roster: every role the System starts, declared in one table.

A role is added by declaring it here (one line); the RoleRunner starts singletons once
and pair roles once per effector pair (``Config.max_parallel`` pairs), in this order. The
Auditor alone is marked ``audit=True``: only it is given the audit log.
"""

from __future__ import annotations

from artoo.actors.runtime.contracts import Contracts
from artoo.actors.runtime.runner import RoleSpec, contracts_from

from .agent_validator import AgentValidator
from .auditor import Auditor
from .dispatcher import Dispatcher
from .dreamer import Dreamer
from .executor import Executor
from .ggs import GGS
from .judge import Judge
from .memory import Memory
from .meta_validator import MetaValidator
from .perceiver import Perceiver
from .planner import Planner
from .queen import Queen
from .supervisor import Supervisor

__all__ = ["CONTRACTS", "ROSTER"]

ROSTER: tuple[RoleSpec, ...] = (
    RoleSpec(Supervisor),
    RoleSpec(GGS),
    RoleSpec(Memory),
    RoleSpec(Dreamer),
    RoleSpec(Queen),
    RoleSpec(Perceiver),
    RoleSpec(Planner),
    RoleSpec(Dispatcher),
    RoleSpec(MetaValidator),
    RoleSpec(Executor, per_pair=True),
    RoleSpec(AgentValidator, per_pair=True),
    RoleSpec(Judge),
    RoleSpec(Auditor, audit=True),
)

CONTRACTS: Contracts = contracts_from(ROSTER)
"""The boundary table the Auditor checks: each role's Output contract (``publishes``)."""
