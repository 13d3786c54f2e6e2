"""``artoo export --format otlp``: one OpenTelemetry trace per task of the demo's real log,
parsed back with opentelemetry-proto's own messages."""

from __future__ import annotations

import io
import json
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status, TracesData

from artoo.cli import main
from artoo.eventstore import EventLog
from artoo.export import export_otlp, read_otlp_json, trace_id
from artoo.schemas import Envelope, ExecutionResult, FinalResult, GGSDecision, LLMCall


def _logged(store: Path) -> list[Envelope]:
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read())


def _spans(traces: list[TracesData]) -> list[Span]:
    return [
        span
        for data in traces
        for rs in data.resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
    ]


def _attr(span: Span, key: str) -> object:
    for kv in span.attributes:
        if kv.key == key:
            return getattr(kv.value, kv.value.WhichOneof("value"))
    return None


def _export(store: Path, **kw: bool) -> bytes:
    out = io.BytesIO()
    export_otlp(store, out, **kw)
    return out.getvalue()


def test_the_demo_store_exports_one_trace_per_task_that_opentelemetry_proto_parses(
    demo_store: Path,
) -> None:
    logged = _logged(demo_store)
    lines = _export(demo_store).splitlines()
    traces = list(read_otlp_json(lines))
    tasks = list(dict.fromkeys(e.task_id for e in logged if e.task_id))
    assert len(traces) == len(tasks) == 5
    for data, task in zip(traces, tasks, strict=True):
        spans = _spans([data])
        roots = [s for s in spans if not s.parent_span_id]
        assert [s.name for s in roots] == ["task"] and _attr(roots[0], "artoo.task.id") == task
        assert {s.trace_id for s in spans} == {trace_id(task)}  # every span in its task's trace
        ids = {s.span_id for s in spans}
        assert len(ids) == len(spans) and all(
            s.parent_span_id in ids for s in spans if s.parent_span_id
        )
        assert all(s.start_time_unix_nano <= s.end_time_unix_nano for s in spans)
    # the OTLP JSON encoding itself: hex ids, integer enums, camelCase
    first = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert first["traceId"] == trace_id(tasks[0]).hex() and isinstance(first["kind"], int)


def test_one_chat_span_per_llm_call_with_the_genai_attributes(demo_store: Path) -> None:
    logged = _logged(demo_store)
    calls = {e.seq: e.body for e in logged if isinstance(e.body, LLMCall)}
    chats = [
        s
        for s in _spans(list(read_otlp_json(_export(demo_store).splitlines())))
        if _attr(s, "gen_ai.operation.name") == "chat"
    ]
    assert len(chats) == len(calls) > 0
    for span in chats:
        call = calls[_attr(span, "artoo.seq")]  # type: ignore[index]
        assert span.name == f"chat {call.model}" and span.kind == Span.SPAN_KIND_CLIENT
        assert _attr(span, "gen_ai.request.model") == call.model
        assert _attr(span, "gen_ai.usage.input_tokens") == call.usage["prompt_tokens"]
        assert _attr(span, "gen_ai.usage.output_tokens") == call.usage["completion_tokens"]
        assert _attr(span, "gen_ai.provider.name") == "scripted"
        assert _attr(span, "gen_ai.input.messages") is None  # content only when asked
    with_content = _spans(
        list(read_otlp_json(_export(demo_store, include_content=True).splitlines()))
    )
    assert all(
        _attr(s, "gen_ai.input.messages") for s in with_content if s.name.startswith("chat ")
    )


def test_tool_calls_rounds_decisions_and_outcomes_are_spans_and_events(demo_store: Path) -> None:
    logged = _logged(demo_store)
    spans = _spans(list(read_otlp_json(_export(demo_store).splitlines())))
    tools = [tc for e in logged if isinstance(e.body, ExecutionResult) for tc in e.body.tool_calls]
    tool_spans = [s for s in spans if s.name.startswith("execute_tool ")]
    assert sorted(s.name for s in tool_spans) == sorted(f"execute_tool {t.tool}" for t in tools)
    assert all(_attr(s, "gen_ai.tool.call.id") for s in tool_spans)
    attempts = [e for e in logged if isinstance(e.body, ExecutionResult)]
    assert len([s for s in spans if s.name == "invoke_agent executor"]) == len(attempts)
    decisions = [e.body for e in logged if isinstance(e.body, GGSDecision)]
    events = [ev for s in spans if s.name.startswith("round ") for ev in s.events]
    assert [_attr(ev, "artoo.ggs.directive") for ev in events if ev.name == "ggs.decision"] == [  # type: ignore[arg-type]
        d.directive for d in decisions
    ]
    abandoned = {
        e.task_id for e in logged if isinstance(e.body, FinalResult) and e.body.status == "abandon"
    }
    errors = {
        s.trace_id for s in spans if s.name == "task" and s.status.code == Status.STATUS_CODE_ERROR
    }
    assert errors == {trace_id(t) for t in abandoned if t}
    law1 = [ev.name for s in spans if s.name == "task" for ev in s.events]
    assert "law1.ConfirmationRequest" in law1 and "law1.ConfirmationDecision" in law1


def test_the_export_is_deterministic_and_the_binary_request_holds_the_same_spans(
    demo_store: Path, tmp_path: Path
) -> None:
    assert _export(demo_store) == _export(demo_store)
    target = tmp_path / "traces.pb"
    assert main(["export", str(demo_store), "--format", "otlp-proto", "-o", str(target)]) == 0
    request = ExportTraceServiceRequest.FromString(target.read_bytes())
    json_spans = _spans(list(read_otlp_json(_export(demo_store).splitlines())))
    proto_spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert proto_spans == json_spans


def test_the_cli_exports_one_task(demo_store: Path, tmp_path: Path) -> None:
    task = next(e.task_id for e in _logged(demo_store) if e.task_id)
    assert task is not None
    target = tmp_path / "one.jsonl"
    assert (
        main(["export", str(demo_store), "--task", task, "--format", "otlp", "-o", str(target)])
        == 0
    )
    (data,) = read_otlp_json(target.read_bytes().splitlines())
    assert {s.trace_id for s in _spans([data])} == {trace_id(task)}
