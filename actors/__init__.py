"""artoo.actors: who acts — the Bus, the Role base, the roster of roles, their equipment.

A flat public surface over private-by-convention modules; names load on first use, so
importing one module (say ``artoo.actors.clock``) does not load the rest.

- The bus: :class:`Bus`, :class:`Delivery`, :class:`Tap`, :class:`BusClosed`,
  :class:`BusError`.
- Roles: :class:`Role`, :func:`handles`, :class:`Equipment`, :class:`Inbox`,
  :class:`Tick`, the roster :data:`ROSTER` of :class:`RoleSpec`, the
  :class:`RoleRunner`, and every role class (Queen, Perceiver, Planner, Dispatcher,
  Executor, AgentValidator, MetaValidator, GGS, Memory, Dreamer, Supervisor).
- Equipment: :class:`ToolCatalog`, :data:`BUILTIN_TOOLS`, the clock (:class:`Clock`,
  :class:`SystemClock`, :class:`IdSource`), the cost ledger (:func:`task_cost`).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Bus": "bus",
    "BusClosed": "bus",
    "BusError": "bus",
    "Delivery": "bus",
    "Tap": "bus",
    "Equipment": "base",
    "Inbox": "base",
    "Operator": "base",
    "Role": "base",
    "Tick": "base",
    "handles": "base",
    "ROSTER": "roster",
    "RoleRunner": "runner",
    "RoleSpec": "runner",
    "ToolCatalog": "catalog",
    "BUILTIN_TOOLS": "catalog",
    "Clock": "clock",
    "SystemClock": "clock",
    "IdSource": "clock",
    "task_cost": "ledger",
    "AgentValidator": "agent_validator",
    "Dispatcher": "dispatcher",
    "Dreamer": "dreamer",
    "Executor": "executor",
    "GGS": "ggs",
    "Memory": "memory",
    "MetaValidator": "meta_validator",
    "Perceiver": "perceiver",
    "Planner": "planner",
    "Queen": "queen",
    "Supervisor": "supervisor",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'artoo.actors' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
