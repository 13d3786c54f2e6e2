"""The replay backend: answers from recorded LLMCall records."""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Iterable

import msgspec

from artoo.schemas import LLMCall

from ._types import LLMError, LLMRequest, LLMResponse, ToolCallRequest, _snippet


# --------------------------------------------------------------------------- replay
class ReplayBackend:
    """Serves recorded :class:`~artoo.schemas.LLMCall` answers, for re-running a run.

    Calls are queued per (role, subtask_id) in recorded order; each request takes the
    next call of its queue. A recorded failure is raised again as :class:`LLMError`; a
    request with nothing left in its queue raises ``LLMError("no recorded call …")``.
    """

    def __init__(self, calls: Iterable[LLMCall]) -> None:
        self._queues: dict[tuple[str, str], deque[LLMCall]] = defaultdict(deque)
        for call in calls:
            self._queues[(call.role, call.subtask_id)].append(call)
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The next recorded answer for the request's role and subtask."""
        key = (request.role, request.subtask_id)
        with self._lock:
            queue = self._queues.get(key)
            call = queue.popleft() if queue else None
        if call is None:
            raise LLMError(
                f"no recorded call for role {request.role} subtask {request.subtask_id!r}: "
                f"{_snippet(request)!r}"
            )
        if call.error is not None:
            raise LLMError(call.error)
        try:
            calls = msgspec.convert(call.tool_calls, list[ToolCallRequest])
        except msgspec.ValidationError as exc:
            raise LLMError(f"recorded call {call.call_id} has malformed tool_calls: {exc}") from exc
        return LLMResponse(
            content=call.response,
            tool_calls=calls,
            usage=dict(call.usage),
            model=call.model,
            latency_ms=call.latency_ms,
        )

    def remaining(self) -> int:
        """How many recorded calls have not been served."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())
