"""The runtime's structured logs: structlog over the standard library, no global set-up.

Role start/stop/restart, crashes, clean step failures, sandbox and budget decisions are
logged as structured events (``event`` plus key/values such as ``role`` and ``task``)
through the standard ``logging`` logger ``artoo.runtime``. artoo configures nothing
globally: the host's own logging set-up decides where they go (``artoo`` carries a
``NullHandler``); each key/value also reaches handlers as a ``LogRecord`` attribute.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog

__all__ = ["runtime_logger"]

_STDLIB = logging.getLogger("artoo.runtime")


def _message(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Put the key/values into the message too, so a plain formatter shows them."""
    event = str(event_dict.get("event", ""))
    pairs = " ".join(f"{k}={v}" for k, v in event_dict.items() if k != "event")
    event_dict["event"] = f"{event} {pairs}".strip()
    return event_dict


def runtime_logger(**bound: Any) -> Any:
    """A structlog logger bound to ``bound`` (e.g. ``role="executor/pair-0"``), writing
    through ``logging.getLogger("artoo.runtime")``; ``.bind(task=...)`` narrows it."""
    logger = structlog.wrap_logger(
        _STDLIB,
        processors=[
            structlog.stdlib.filter_by_level,
            _message,
            structlog.stdlib.render_to_log_kwargs,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return logger.bind(**bound)
