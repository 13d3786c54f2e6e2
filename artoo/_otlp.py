"""A store's event log as OpenTelemetry traces (``artoo export --format otlp | otlp-proto``).

One trace per task; its trace id is the first 16 bytes of ``sha256("artoo-trace:" + task_id)``
and every span id is derived the same way from the task id and the span's place in the run, so
exporting the same log twice gives the same bytes. The spans, after the GenAI semantic
conventions:

- ``task`` — the root: first to last envelope of the task; ERROR status when abandoned.
  Law 1 confirmations (``ConfirmationRequest`` / ``ConfirmationDecision``) are its events.
- ``round {n}`` — one per medium-loop round; its ``GGSDecision`` is an event (``ggs.decision``
  with D, P, Ω, L, ∇L and the macro-state).
- ``subtask`` — a SubTask to its SubTaskOutcome, under its round.
- ``invoke_agent {role}`` — one role step that called a model or ran tools: an Executor
  attempt (from the SubTask or CorrectionSignal that started it to its ExecutionResult), or the
  model calls a role made before the message they led to (Perceiver → TaskSpec, Planner →
  DispatchManifest …).
- ``chat {model}`` — one per ``LLMCall``, ending at its envelope's time, lasting its latency.
- ``execute_tool {tool}`` — one per tool call of an attempt. A ToolCall records its duration,
  not its start: the k-th starts when the attempt's k-th model call ended.

The log keeps times in seconds; spans carry them in nanoseconds.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import (
    ResourceSpans,
    ScopeSpans,
    Span,
    Status,
    TracesData,
)

from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    GGSDecision,
    LLMCall,
    SubTask,
    SubTaskOutcome,
)

from .replay._read import TaskLog

__all__ = ["otlp_traces", "read_otlp_json", "span_id", "to_otlp_json", "trace_id"]

_SCOPE = "artoo.export"
_Attr = str | bool | int | float


def trace_id(task_id: str) -> bytes:
    """The 16-byte trace id of a task: derived from its id alone."""
    return hashlib.sha256(b"artoo-trace:" + task_id.encode()).digest()[:16]


def span_id(task_id: str, key: str) -> bytes:
    """The 8-byte id of the span ``key`` (``task``, ``round/0``, ``chat/17`` …) of a task."""
    return hashlib.sha256(f"artoo-span:{task_id}/{key}".encode()).digest()[:8]


def _ns(ts: float) -> int:
    return round(ts * 1e9)


def _value(value: _Attr) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=value)


def _attrs(attrs: dict[str, _Attr | None]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_value(v)) for k, v in attrs.items() if v is not None]


@dataclass
class _Span:
    key: str
    name: str
    parent: str | None
    start: float
    end: float
    kind: int = Span.SPAN_KIND_INTERNAL
    attrs: dict[str, _Attr | None] = field(default_factory=dict)
    events: list[tuple[float, str, dict[str, _Attr | None]]] = field(default_factory=list)
    error: str | None = None

    def proto(self, task_id: str) -> Span:
        span = Span(
            trace_id=trace_id(task_id),
            span_id=span_id(task_id, self.key),
            name=self.name,
            kind=self.kind,  # type: ignore[arg-type]
            start_time_unix_nano=_ns(self.start),
            end_time_unix_nano=_ns(max(self.end, self.start)),
            attributes=_attrs(self.attrs),
            events=[
                Span.Event(time_unix_nano=_ns(t), name=n, attributes=_attrs(a))
                for t, n, a in self.events
            ],
        )
        if self.parent is not None:
            span.parent_span_id = span_id(task_id, self.parent)
        if self.error is not None:
            span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=self.error))
        return span


def _role(env: Envelope) -> str:
    return env.sender.split("/", 1)[0]


def _provider(model: str) -> str:
    return model.split(":", 1)[0] if ":" in model else model.split("/", 1)[0]


class _TaskTrace:
    """Builds one task's spans from its envelopes (one pass, seq order)."""

    def __init__(self, task: TaskLog, include_content: bool) -> None:
        self.task = task
        self.content = include_content
        self.by_seq = {e.seq: e for e in task.envelopes}
        self.spans: dict[str, _Span] = {}
        self.pending: dict[tuple[str, str], list[Envelope]] = {}
        self.subtask_round: dict[str, int] = {}

    def build(self) -> list[_Span]:
        envs = self.task.envelopes
        final = self.task.final
        root = _Span("task", "task", None, envs[0].ts, envs[-1].ts)
        root.attrs = {
            "artoo.task.id": self.task.task_id,
            "artoo.task.text": self.task.text,
            "artoo.task.status": final.status if final else None,
        }
        if final is None or final.status == "abandon":
            root.error = (final.reason or "abandon") if final else "no FinalResult"
        self.spans["task"] = root
        for env in envs:
            self._see(env)
        for (role, subtask_id), calls in self.pending.items():  # calls no message followed
            self._step(f"step/{calls[0].seq}", role, subtask_id, calls, calls[-1].ts, None)
        return sorted(self.spans.values(), key=lambda s: (s.start, -s.end, s.key))

    def _round(self, n: int, ts: float) -> str:
        key = f"round/{n}"
        span = self.spans.get(key)
        if span is None:
            span = self.spans[key] = _Span(key, f"round {n}", "task", ts, ts)
            span.attrs = {"artoo.round": n}
        span.start, span.end = min(span.start, ts), max(span.end, ts)
        return key

    def _parent_of(self, subtask_id: str, round_: int | None, ts: float) -> str:
        if subtask_id and f"subtask/{subtask_id}" in self.spans:
            return f"subtask/{subtask_id}"
        if round_ is not None:
            return self._round(round_, ts)
        return "task"

    def _see(self, env: Envelope) -> None:
        body = env.body
        if isinstance(body, LLMCall):
            self.pending.setdefault((body.role, body.subtask_id), []).append(env)
            return
        round_: int | None = getattr(body, "round", None)
        if round_ is not None:
            self._round(round_, env.ts)
        if isinstance(body, SubTask):
            key = f"subtask/{body.subtask_id}"
            self.subtask_round[body.subtask_id] = body.round
            span = _Span(key, "subtask", self._round(body.round, env.ts), env.ts, env.ts)
            span.attrs = {
                "artoo.subtask.id": body.subtask_id,
                "artoo.subtask.instruction": body.instruction,
                "artoo.instance": env.to,
            }
            self.spans[key] = span
        elif isinstance(body, SubTaskOutcome):
            sub = self.spans.get(f"subtask/{body.subtask_id}")
            if sub is not None:
                sub.end = max(sub.end, env.ts)
                sub.attrs.update({"artoo.outcome": body.status, "artoo.attempts": body.attempts})
                if body.status != "matched":
                    sub.error = body.reason or body.status
        elif isinstance(body, GGSDecision):
            self.spans[self._round(body.round, env.ts)].events.append(
                (
                    env.ts,
                    "ggs.decision",
                    {
                        "artoo.seq": env.seq,
                        "artoo.ggs.directive": body.directive,
                        "artoo.ggs.d": body.d,
                        "artoo.ggs.p": body.p,
                        "artoo.ggs.omega": body.omega,
                        "artoo.ggs.loss": body.loss,
                        "artoo.ggs.grad": body.grad,
                        "artoo.ggs.urgency": body.urgency,
                    },
                )
            )
        elif isinstance(body, ConfirmationRequest | ConfirmationDecision):
            attrs: dict[str, _Attr | None] = {"artoo.seq": env.seq}
            attrs["artoo.confirmation.id"] = body.request_id
            if isinstance(body, ConfirmationRequest):
                attrs.update({"gen_ai.tool.name": body.tool, "artoo.action": body.action})
            else:
                attrs.update({"artoo.approved": body.approved, "artoo.by": body.by})
            self.spans["task"].events.append((env.ts, f"law1.{type(body).__name__}", attrs))
        subtask_id: str = getattr(body, "subtask_id", "")
        if isinstance(body, ConfirmationRequest):
            return  # asked mid-step: the step goes on to its result
        calls = self.pending.pop((_role(env), subtask_id), [])
        if isinstance(body, ExecutionResult):
            cause = self.by_seq.get(env.cause) if env.cause is not None else None
            start = cause.ts if cause is not None else None
            key = f"attempt/{body.subtask_id}/{body.attempt}"
            span = self._step(key, "executor", body.subtask_id, calls, env.ts, start)
            span.attrs.update({"artoo.attempt": body.attempt, "artoo.round": body.round})
            if not body.ok:
                span.error = body.error or (body.stop or "failed")
            self._tools(key, body, calls, env.ts)
        elif calls:
            self._step(f"step/{env.seq}", _role(env), subtask_id, calls, env.ts, None, round_)
        if isinstance(body, CorrectionSignal) and f"subtask/{subtask_id}" in self.spans:
            self.spans[f"subtask/{subtask_id}"].end = env.ts

    def _step(
        self,
        key: str,
        role: str,
        subtask_id: str,
        calls: list[Envelope],
        end: float,
        start: float | None,
        round_: int | None = None,
    ) -> _Span:
        starts = [c.ts - c.body.latency_ms / 1000 for c in calls]
        begin = min([*starts, *([start] if start is not None else [])], default=end)
        if round_ is None and subtask_id:
            round_ = self.subtask_round.get(subtask_id)
        parent = self._parent_of(subtask_id, round_, begin)
        span = _Span(key, f"invoke_agent {role}", parent, begin, end)
        span.attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": role}
        self.spans[key] = span
        self._grow(parent, begin, end)
        for env in calls:
            self._chat(env, key)
        return span

    def _grow(self, key: str | None, start: float, end: float) -> None:
        while key is not None:
            span = self.spans[key]
            span.start, span.end = min(span.start, start), max(span.end, end)
            key = span.parent

    def _chat(self, env: Envelope, parent: str) -> None:
        call: LLMCall = env.body
        usage = call.usage
        span = _Span(
            f"chat/{env.seq}",
            f"chat {call.model}",
            parent,
            env.ts - call.latency_ms / 1000,
            env.ts,
            kind=Span.SPAN_KIND_CLIENT,
        )
        span.attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(call.model),
            "gen_ai.request.model": call.model,
            "gen_ai.usage.input_tokens": usage.get("prompt_tokens", usage.get("input_tokens")),
            "gen_ai.usage.output_tokens": usage.get(
                "completion_tokens", usage.get("output_tokens")
            ),
            "artoo.call_id": call.call_id,
            "artoo.role": call.role,
            "artoo.tier": call.tier,
            "artoo.seq": env.seq,
        }
        if call.error is not None or call.refused is not None:
            span.error = call.error or f"budget {call.refused} spent"
            span.attrs["error.type"] = "budget_refused" if call.refused else "model_error"
        if self.content:
            span.attrs["gen_ai.input.messages"] = json.dumps(call.request.get("messages", []))
            output: dict[str, Any] = {"role": "assistant", "content": call.response}
            if call.tool_calls:
                output["tool_calls"] = call.tool_calls
            span.attrs["gen_ai.output.messages"] = json.dumps([output])
        self.spans[span.key] = span

    def _tools(
        self, parent: str, result: ExecutionResult, calls: list[Envelope], end: float
    ) -> None:
        for k, tool in enumerate(result.tool_calls):
            start = calls[k].ts if k < len(calls) else end - tool.elapsed_ms / 1000
            span = _Span(f"tool/{parent}/{k}", f"execute_tool {tool.tool}", parent, start, start)
            span.end = start + tool.elapsed_ms / 1000
            span.attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool.tool,
                "gen_ai.tool.call.id": f"{result.subtask_id}/{result.attempt}/{k}",
                "artoo.tool.target": tool.target,
                "artoo.tool.exit_code": tool.exit_code,
                "artoo.tool.refused": tool.refusal is not None,
            }
            if not tool.ok:
                span.error = tool.error or "failed"
                span.attrs["error.type"] = "refused" if tool.refusal is not None else "tool_error"
            self.spans[span.key] = span
            self._grow(parent, span.start, span.end)


def otlp_traces(tasks: Iterable[TaskLog], *, include_content: bool = False) -> list[TracesData]:
    """One ``TracesData`` per task (one resource ``service.name=artoo``, one scope), its spans
    in start order. Prompts and completions only with ``include_content``."""
    out: list[TracesData] = []
    resource = Resource(attributes=_attrs({"service.name": "artoo"}))
    for task in tasks:
        if not task.envelopes:
            continue
        spans = _TaskTrace(task, include_content).build()
        scope = ScopeSpans(
            scope=InstrumentationScope(name=_SCOPE),
            spans=[s.proto(task.task_id) for s in spans],
        )
        out.append(
            TracesData(resource_spans=[ResourceSpans(resource=resource, scope_spans=[scope])])
        )
    return out


def to_otlp_proto(traces: Iterable[TracesData]) -> bytes:
    """The traces as one binary ``ExportTraceServiceRequest`` (an OTLP/HTTP ``/v1/traces`` body)."""
    request = ExportTraceServiceRequest()
    for data in traces:
        request.resource_spans.extend(data.resource_spans)
    return request.SerializeToString(deterministic=True)


def _hex_ids(node: Any, decode: bool) -> Any:
    """Swap the id fields between protobuf JSON's base64 and OTLP JSON's hex."""
    if isinstance(node, list):
        return [_hex_ids(n, decode) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
            v = base64.b64encode(bytes.fromhex(v)).decode() if decode else base64.b64decode(v).hex()
        out[k] = _hex_ids(v, decode)
    return out


def to_otlp_json(data: TracesData) -> str:
    """One line of the OTLP file-exporter format: ``TracesData`` as OTLP JSON (lowerCamelCase
    keys, hex trace and span ids, enums as integers)."""
    as_dict = json_format.MessageToDict(data, use_integers_for_enums=True)
    return json.dumps(_hex_ids(as_dict, decode=False), sort_keys=True, separators=(",", ":"))


def read_otlp_json(lines: Iterable[str | bytes]) -> Iterator[TracesData]:
    """Parse OTLP JSON lines back into ``TracesData`` with protobuf's own JSON parser (hex ids
    turned back into bytes first; unknown fields rejected)."""
    for line in lines:
        if line.strip():
            yield json_format.ParseDict(_hex_ids(json.loads(line), decode=True), TracesData())
