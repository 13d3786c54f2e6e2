"""Receivers and builders shared by the Bus tests."""

from __future__ import annotations

import threading
from typing import Any

from artoo.actors.runtime.bus import Delivery
from artoo.schemas import Envelope, TaskCancelled


class ListReceiver:
    """A receiver whose ``tell`` runs in the writer thread: after flush() it has everything."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []

    def tell(self, message: Any) -> None:
        assert isinstance(message, Delivery)
        self.deliveries.append(message)

    @property
    def envelopes(self) -> list[Envelope]:
        return [e for d in self.deliveries for e in d.envelopes]


class GateReceiver(ListReceiver):
    """Blocks the writer inside its first ``tell`` until ``release()``."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self._gate = threading.Event()

    def tell(self, message: Any) -> None:
        self.entered.set()
        self._gate.wait(10)
        super().tell(message)

    def release(self) -> None:
        self._gate.set()


class DeadReceiver:
    def tell(self, message: Any) -> None:
        raise RuntimeError("receiver broke")


def cancel(reason: str = "") -> TaskCancelled:
    return TaskCancelled(reason=reason)
