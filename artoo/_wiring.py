"""Small pieces of the System's construction: the Config from a mapping, the gateway's
recorder."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from artoo.actors.runtime.bus import BusError
from artoo.schemas import Config

if TYPE_CHECKING:
    from artoo.actors.runtime.bus import Bus

__all__ = ["config_from", "recorder"]


def config_from(values: Mapping[str, Any] | None) -> Config:
    """A Config from a mapping; an invalid one is a ValueError in one line per field."""
    try:
        return Config(**dict(values or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(f"invalid configuration: {problems}") from None


RECORD_WAIT_S = 5.0
"""How long a model answer waits to be logged before the role acts on it."""


def recorder(bus: Bus) -> Callable[..., None]:
    """The gateway's record callback: every LLMCall goes on the bus, and is logged before
    the role acts on the answer — a process killed after it has the answer in the log, so
    a resume serves it instead of asking the model again (``artoo._resume``)."""

    def record(call: Any, task_id: str | None = None) -> None:
        bus.publish(call, sender=call.role, task_id=task_id)
        try:
            bus.flush(RECORD_WAIT_S)
        except BusError:
            pass  # a failed log is the System's to report

    return record
