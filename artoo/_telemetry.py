"""Live telemetry: each task's spans to an OpenTelemetry collector as the task ends.

A tap on the bus (never slowing the roles) gathers each task's envelopes; at its
FinalResult the task's spans are built exactly as ``artoo export --format otlp`` builds
them (``artoo._otlp``), each verdict is added as a ``gen_ai.evaluation.result`` event on
its span (the GenAI semantic conventions: ``gen_ai.evaluation.name``,
``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``,
``gen_ai.evaluation.explanation``), and the spans go to opentelemetry-sdk's
``BatchSpanProcessor`` with its OTLP/HTTP exporter, which batches and sends them on its
own thread. ``Config.telemetry.otlp_endpoint`` turns it on.

Where a verdict goes: an attempt's verdicts (CorrectionSignal) on the attempt's span, a
subtask's final verdicts (SubTaskOutcome) on the subtask's span, the task-level verdicts
(OutcomeSummary, ReplanRequest) on the round's span.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from artoo.schemas import (
    CorrectionSignal,
    Envelope,
    FinalResult,
    OutcomeSummary,
    ReplanRequest,
    SubTaskOutcome,
    TelemetryConfig,
    Verdict,
)

from ._otlp import otlp_traces, span_id
from .replay._read import TaskLog

__all__ = ["EVALUATION_EVENT", "LiveExporter", "evaluations"]

EVALUATION_EVENT = "gen_ai.evaluation.result"


def evaluations(task: TaskLog) -> list[tuple[str, float, Verdict]]:
    """``(span key, time, verdict)`` for every verdict of the task, in log order."""
    out: list[tuple[str, float, Verdict]] = []
    for env in task.envelopes:
        body = env.body
        if isinstance(body, CorrectionSignal):
            key = f"attempt/{body.subtask_id}/{body.attempt}"
            out += [(key, env.ts, v) for v in body.verdicts]
        elif isinstance(body, SubTaskOutcome):
            out += [(f"subtask/{body.subtask_id}", env.ts, v) for v in body.verdicts]
        elif isinstance(body, OutcomeSummary | ReplanRequest):
            out += [(f"round/{body.round}", env.ts, v) for v in body.task_verdicts]
    return out


def _event_attributes(v: Verdict) -> dict[str, Any]:
    return {
        "gen_ai.evaluation.name": f"criterion {v.criterion_id}",
        "gen_ai.evaluation.score.value": 1.0 if v.passed else 0.0,
        "gen_ai.evaluation.score.label": "pass" if v.passed else "fail",
        "gen_ai.evaluation.explanation": v.evidence,
        "artoo.verdict.signal": v.signal,
        "artoo.verdict.confidence": v.confidence,
        "artoo.verdict.attempt": v.attempt,
        **({"artoo.verdict.failure_class": v.failure_class} if v.failure_class else {}),
    }


def readable_spans(task: TaskLog) -> list[Any]:
    """The task's spans as opentelemetry-sdk ``ReadableSpan`` objects (for its exporters),
    with the verdicts as evaluation events."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    kinds = {2: SpanKind.SERVER, 3: SpanKind.CLIENT, 4: SpanKind.PRODUCER, 5: SpanKind.CONSUMER}
    by_id: dict[bytes, list[tuple[float, Verdict]]] = {}
    for key, ts, verdict in evaluations(task):
        by_id.setdefault(span_id(task.task_id, key), []).append((ts, verdict))
    out: list[Any] = []
    for data in otlp_traces([task]):
        for resource_spans in data.resource_spans:
            resource = Resource.create(
                {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            )
            for scope_spans in resource_spans.scope_spans:
                scope = InstrumentationScope(scope_spans.scope.name)
                spans = list(scope_spans.spans)
                known = {s.span_id for s in spans}
                for span in spans:
                    trace = int.from_bytes(span.trace_id, "big")
                    context = SpanContext(
                        trace, int.from_bytes(span.span_id, "big"), False, TraceFlags(1)
                    )
                    parent = (
                        SpanContext(
                            trace, int.from_bytes(span.parent_span_id, "big"), False, TraceFlags(1)
                        )
                        if span.parent_span_id
                        else None
                    )
                    events = [
                        Event(e.name, _attributes(e.attributes), e.time_unix_nano)
                        for e in span.events
                    ]
                    mine = by_id.get(span.span_id, [])
                    if span.name == "task":  # verdicts whose span the trace lacks
                        mine = mine + [
                            item
                            for sid, items in sorted(by_id.items())
                            if sid not in known
                            for item in items
                        ]
                    events += [
                        Event(EVALUATION_EVENT, _event_attributes(v), round(ts * 1e9))
                        for ts, v in mine
                    ]
                    status = (
                        Status(StatusCode.ERROR, span.status.message)
                        if span.status.code == 2
                        else Status(StatusCode.UNSET)
                    )
                    out.append(
                        ReadableSpan(
                            name=span.name,
                            context=context,
                            parent=parent,
                            resource=resource,
                            attributes=_attributes(span.attributes),
                            events=sorted(events, key=lambda e: e.timestamp or 0),
                            kind=kinds.get(span.kind, SpanKind.INTERNAL),
                            status=status,
                            start_time=span.start_time_unix_nano,
                            end_time=span.end_time_unix_nano,
                            instrumentation_scope=scope,
                        )
                    )
    return out


def _attributes(values: Iterable[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in values:
        which = kv.value.WhichOneof("value")
        if which is not None:
            out[kv.key] = getattr(kv.value, which)
    return out


class LiveExporter:
    """A subscriber that sends each task's spans to ``config.otlp_endpoint`` when it
    ends (see the module docstring). :meth:`close` flushes what is left (bounded)."""

    def __init__(self, config: TelemetryConfig, *, timeout_s: float = 5.0) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if not config.otlp_endpoint:
            raise ValueError("telemetry.otlp_endpoint is not set")
        self.exporter = OTLPSpanExporter(endpoint=config.otlp_endpoint, timeout=timeout_s)
        self.processor = BatchSpanProcessor(
            self.exporter, schedule_delay_millis=config.export_interval_s * 1000
        )
        self._tasks: dict[str, TaskLog] = {}
        self._lock = threading.Lock()
        self.sent_tasks = 0

    def __call__(self, env: Envelope) -> None:
        """Take one envelope (the tap's thread)."""
        if env.task_id is None:
            return
        with self._lock:
            task = self._tasks.setdefault(env.task_id, TaskLog(env.task_id))
            task.envelopes.append(env)
            if not isinstance(env.body, FinalResult):
                return
            del self._tasks[env.task_id]
        for span in readable_spans(task):
            self.processor.on_end(span)
        self.sent_tasks += 1

    def close(self, timeout_s: float = 2.0) -> None:
        """Send what is batched, then stop (within about ``timeout_s``)."""
        self.processor.force_flush(int(timeout_s * 1000))
        self.processor.shutdown()
