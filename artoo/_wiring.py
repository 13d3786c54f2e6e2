"""Small pieces of the System's construction: the Config from a mapping, the gateway's
recorder."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

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


def recorder(bus: Bus) -> Callable[..., None]:
    """The gateway's record callback: every LLMCall goes on the bus."""

    def record(call: Any, task_id: str | None = None) -> None:
        bus.publish(call, sender=call.role, task_id=task_id)

    return record
