"""Builders shared by the LLM gateway tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from artoo.actors.llm import (
    LLMGateway,
    LLMRequest,
    LLMResponse,
)
from artoo.schemas import (
    LLMCall,
)

DATA = Path(__file__).parent / "data"
MOCK_MODEL = "openai/gpt-4o-mini"


# --------------------------------------------------------------------------- helpers
def req(text: str = "hi", role: str = "executor", tier: str = "tool", **kw: Any) -> LLMRequest:
    return LLMRequest(role=role, tier=tier, messages=[{"role": "user", "content": text}], **kw)


class StepClock:
    """A manual clock whose monotonic time advances by ``step`` seconds on every read."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.t = 100.0

    def now(self) -> float:
        return 1_700_000_000.0

    def monotonic(self) -> float:
        self.t += self.step
        return self.t


class Sequence:
    """A backend that hands the n-th request to the n-th backend (one each)."""

    def __init__(self, *backends: Any) -> None:
        self.backends = list(backends)

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self.backends.pop(0).complete(request)


class Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise self.exc


def counter_ids() -> Any:
    n = iter(range(1, 10_000))
    return lambda: f"id{next(n)}"


class Recorder(list[LLMCall]):
    """A gateway recorder keeping every LLMCall and the task id it came with."""

    def __init__(self) -> None:
        super().__init__()
        self.task_ids: list[str | None] = []

    def __call__(self, call: LLMCall, task_id: str | None) -> None:
        self.append(call)
        self.task_ids.append(task_id)


def gateway(backend: Any, calls: Recorder, **kw: Any) -> LLMGateway:
    return LLMGateway(
        {"brain": backend, "tool": backend},
        {"brain": "brain-model", "tool": "tool-model"},
        record=calls,
        new_id=counter_ids(),
        **kw,
    )


class Answer(msgspec.Struct, frozen=True):
    count: int
    note: str = ""


class Inner(msgspec.Struct, frozen=True):
    name: str


class Outer(msgspec.Struct, frozen=True):
    items: list[Inner]
