"""artoo: an event-sourced actor system that runs LLM agents as a hierarchy of roles.

The public faces: :class:`System` (embed it), :class:`TaskHandle`, the message types in
:mod:`artoo.schemas` (``FinalResult``, ``Config`` … re-exported here), and the test
helpers in :mod:`artoo.testing`.
"""

import logging

from artoo.actors.llm import ModelNotConfigured
from artoo.eventstore import StoreLocked
from artoo.schemas import Config, ConfirmationRequest, Envelope, FinalResult

from .system import System, TaskHandle

__version__ = "0.1.0"

logging.getLogger("artoo").addHandler(logging.NullHandler())

__all__ = [
    "Config",
    "ConfirmationRequest",
    "Envelope",
    "FinalResult",
    "ModelNotConfigured",
    "StoreLocked",
    "System",
    "TaskHandle",
    "__version__",
]
