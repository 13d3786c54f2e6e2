"""The roster: every role the System starts, declared in one table.

A role is added by declaring it here (one line); the RoleRunner starts singletons once
and pair roles once per effector pair (``Config.max_parallel`` pairs), in this order.
"""

from __future__ import annotations

from .agent_validator import AgentValidator
from .dispatcher import Dispatcher
from .dreamer import Dreamer
from .executor import Executor
from .ggs import GGS
from .memory import Memory
from .meta_validator import MetaValidator
from .perceiver import Perceiver
from .planner import Planner
from .queen import Queen
from .runner import RoleSpec
from .supervisor import Supervisor

__all__ = ["ROSTER"]

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
)
