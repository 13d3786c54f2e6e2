"""artoo: an event-sourced actor system that runs LLM agents as a hierarchy of roles.

The public faces: :class:`System` (embed it), :class:`TaskHandle`, the message types in
:mod:`artoo.schemas` (``FinalResult``, ``Config`` … re-exported here), and the test
helpers in :mod:`artoo.testing`.

Imports are lazy: ``import artoo`` or ``import artoo.schemas`` loads no actor, no
LevelDB binding, no numpy and no pykka; the first use of :class:`System` does.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

logging.getLogger("artoo").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from artoo.actors.llm import ModelNotConfigured
    from artoo.actors.tools import SandboxUnavailable
    from artoo.eventstore import StoreLocked
    from artoo.schemas import Config, ConfirmationRequest, Envelope, FinalResult

    from .system import System, TaskHandle

_LAZY = {
    "Config": "artoo.schemas",
    "ConfirmationRequest": "artoo.schemas",
    "Envelope": "artoo.schemas",
    "FinalResult": "artoo.schemas",
    "ModelNotConfigured": "artoo.actors.llm",
    "SandboxUnavailable": "artoo.actors.tools",
    "StoreLocked": "artoo.eventstore",
    "System": "artoo.system",
    "TaskHandle": "artoo.system",
}

__all__ = [
    "Config",
    "ConfirmationRequest",
    "Envelope",
    "FinalResult",
    "ModelNotConfigured",
    "SandboxUnavailable",
    "StoreLocked",
    "System",
    "TaskHandle",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'artoo' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
