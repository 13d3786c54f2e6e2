"""artoo.actors: who acts — the Bus, the Role base, the roster of roles, their equipment.

A flat public surface over the packages by concept; names load on first use, so importing
one module (say ``artoo.actors.runtime.clock``) does not load the rest.

- ``runtime/``: the write-ahead bus, the Role base and its Equipment, the runner, the clock,
  the cost ledger, the boundary contracts.
- ``roles/``: one module per role, each opening with its Job Description, and the roster.
- ``verification/``: the proof — the reading checked by code, the checks, derivations,
  how an answer was established, the verification ladder's rule and model rungs, the
  shapes of model answers.
- ``law1/``: Law 1 (the shell lexer and the classification of effects).
- ``tools/``: the tool registry, the sandbox, the catalog of tool names.
- ``llm/``: the model gateway and its backends (litellm, scripted, replay).

- The bus: :class:`Bus`, :class:`Delivery`, :class:`Tap`, :class:`BusClosed`,
  :class:`BusError`.
- Roles: :class:`Role`, :func:`handles`, :class:`Equipment`, :class:`Inbox`,
  :class:`Tick`, the roster :data:`ROSTER` of :class:`RoleSpec`, the
  :class:`RoleRunner`, and every role class (Queen, Perceiver, Planner, Dispatcher,
  Executor, AgentValidator, MetaValidator, GGS, Memory, Dreamer, Supervisor, Judge,
  Auditor).
- Equipment: :class:`ToolCatalog`, :data:`BUILTIN_TOOLS`, the clock (:class:`Clock`,
  :class:`SystemClock`, :class:`IdSource`), the cost ledger (:func:`task_cost`).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Bus": "runtime.bus",
    "BusClosed": "runtime.bus",
    "BusError": "runtime.bus",
    "Delivery": "runtime.bus",
    "Tap": "runtime.bus",
    "Equipment": "runtime.role",
    "Inbox": "runtime.role",
    "Operator": "runtime.role",
    "Role": "runtime.role",
    "Tick": "runtime.role",
    "handles": "runtime.role",
    "ROSTER": "roles.roster",
    "RoleRunner": "runtime.runner",
    "RoleSpec": "runtime.runner",
    "ToolCatalog": "tools.catalog",
    "BUILTIN_TOOLS": "tools.catalog",
    "Clock": "runtime.clock",
    "SystemClock": "runtime.clock",
    "IdSource": "runtime.clock",
    "task_cost": "runtime.ledger",
    "AgentValidator": "roles.agent_validator",
    "Dispatcher": "roles.dispatcher",
    "Dreamer": "roles.dreamer",
    "Executor": "roles.executor",
    "GGS": "roles.ggs",
    "Memory": "roles.memory",
    "MetaValidator": "roles.meta_validator",
    "Perceiver": "roles.perceiver",
    "Planner": "roles.planner",
    "Queen": "roles.queen",
    "Supervisor": "roles.supervisor",
    "Judge": "roles.judge",
    "Auditor": "roles.auditor",
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
