"""The LLMGateway: routes a request to its tier's backend, measures it, records an LLMCall."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from artoo.actors.runtime.clock import Clock, SystemClock
from artoo.actors.runtime.clock import new_id as _default_new_id
from artoo.schemas import LLMCall

from ._budget import BudgetSpent, TaskBudgets
from ._resolve import resolve_backend
from ._types import LLMBackend, LLMError, LLMRequest, LLMResponse


# --------------------------------------------------------------------------- gateway
class LLMGateway:
    """Routes each request to its tier's backend, measures it and records an LLMCall.

    ``record(call, task_id)`` receives one :class:`~artoo.schemas.LLMCall` per call,
    failed calls included, with the request's task id (LLMCall has no task field: the
    caller publishes it on the bus under that task), before ``complete`` returns or
    raises. Latency is measured on ``clock``'s monotonic time and replaces the backend's
    own figure. The gateway keeps no count of its own: a task's cost is computed from the
    recorded LLMCalls by the one ledger (:func:`artoo.actors.runtime.ledger.task_cost`).

    With ``budgets``, each call is first reserved against its task's budget; a call the
    budget does not allow is not made: it is recorded with ``refused`` set and
    :class:`~artoo.actors.llm.BudgetSpent` is raised.
    """

    def __init__(
        self,
        backends: Mapping[str, LLMBackend],
        models: Mapping[str, str],
        *,
        record: Callable[[LLMCall, str | None], None],
        clock: Clock | None = None,
        new_id: Callable[[], str] = _default_new_id,
        budgets: TaskBudgets | None = None,
    ) -> None:
        self._backends = dict(backends)
        self._budgets = budgets
        self._models = dict(models)
        self._record = record
        self._clock = clock or SystemClock()
        self._new_id = new_id

    @classmethod
    def from_models(
        cls,
        models: Mapping[str, str],
        *,
        record: Callable[[LLMCall, str | None], None],
        clock: Clock | None = None,
        new_id: Callable[[], str] = _default_new_id,
        **backend_kwargs: Any,
    ) -> LLMGateway:
        """A gateway whose backends come from :func:`resolve_backend`; tiers with the same
        model string share one backend (so one script's use counts span both tiers)."""
        built: dict[str, LLMBackend] = {}
        for model in models.values():
            if model not in built:
                built[model] = resolve_backend(model, **backend_kwargs)
        backends = {tier: built[model] for tier, model in models.items()}
        return cls(backends, models, record=record, clock=clock, new_id=new_id)

    def wrap_backends(self, wrap: Callable[[LLMBackend], LLMBackend]) -> None:
        """Put ``wrap(backend)`` in place of each tier's backend (a System resuming a task
        serves its recorded answers first: :mod:`artoo._resume`)."""
        self._backends = {tier: wrap(backend) for tier, backend in self._backends.items()}

    @property
    def models(self) -> dict[str, str]:
        """The model string of each tier."""
        return dict(self._models)

    def stopped(self, task_id: str | None) -> bool:
        """True once ``task_id`` was cancelled (no model or tool call starts for it)."""
        return self._budgets is not None and self._budgets.stopped(task_id)

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Call the tier's backend; always record the call; return or raise :class:`LLMError`
        (:class:`BudgetSpent`, a subclass, when the task's budget refuses the call;
        :class:`TaskStopped`, not recorded — no call was made — when the task was
        cancelled)."""
        if self._budgets is not None:
            try:
                self._budgets.reserve(request.task_id)
            except BudgetSpent as spent:
                call = self._llm_call(request, None, spent, 0.0)
                self._record(msgspec.structs.replace(call, refused=spent.budget), request.task_id)
                raise
        start = self._clock.monotonic()
        response: LLMResponse | None = None
        error: LLMError | None = None
        try:
            backend = self._backends.get(request.tier)
            if backend is None:
                raise LLMError(f"no backend for tier {request.tier!r}")
            response = backend.complete(request)
        except LLMError as exc:
            error = exc
        except Exception as exc:  # a backend bug still ends as a recorded LLMError
            error = LLMError(f"{type(exc).__name__}: {exc}")
            error.__cause__ = exc
        latency_ms = max(0.0, (self._clock.monotonic() - start) * 1000)
        if response is not None:
            response = msgspec.structs.replace(response, latency_ms=latency_ms)
            if self._budgets is not None:
                usage = response.usage
                self._budgets.commit(
                    request.task_id,
                    int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
                )
        self._record(self._llm_call(request, response, error, latency_ms), request.task_id)
        if error is not None:
            raise error
        assert response is not None
        return response

    def _llm_call(
        self,
        request: LLMRequest,
        response: LLMResponse | None,
        error: LLMError | None,
        latency_ms: float,
    ) -> LLMCall:
        return LLMCall(
            call_id=self._new_id(),
            role=request.role,
            tier=request.tier,
            model=self._models.get(request.tier, ""),
            request=msgspec.to_builtins(request),
            response=response.content if response is not None else None,
            tool_calls=[msgspec.to_builtins(c) for c in response.tool_calls] if response else [],
            usage=dict(response.usage) if response is not None else {},
            latency_ms=latency_ms,
            error=str(error) if error is not None else None,
            subtask_id=request.subtask_id,
        )
