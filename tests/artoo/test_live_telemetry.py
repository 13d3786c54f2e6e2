"""Live telemetry: a real OTLP/HTTP receiver (an in-process collector stub built on
opentelemetry-proto) gets each task's spans while the System runs, with one
``gen_ai.evaluation.result`` event per verdict."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

import artoo
from artoo.schemas import (
    Config,
    CorrectionSignal,
    FinalResult,
    OutcomeSummary,
    ReplanRequest,
    SubTaskOutcome,
)

from .helpers import DATA, all_events


class Collector:
    """An OTLP/HTTP traces receiver on 127.0.0.1: every span it was sent."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, object]] = []  # (trace id hex, Span)
        self.got = threading.Condition()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                with collector.got:
                    for rs in request.resource_spans:
                        for ss in rs.scope_spans:
                            collector.spans += [(s.trace_id.hex(), s) for s in ss.spans]
                    collector.got.notify_all()
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, traces: int, timeout: float = 20.0) -> bool:
        with self.got:
            return self.got.wait_for(
                lambda: len({t for t, _ in self.spans}) >= traces, timeout=timeout
            )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


def test_the_demo_tasks_spans_arrive_live_with_one_evaluation_event_per_verdict(
    tmp_path: Path, workspace: Path, collector: Collector
) -> None:
    from artoo._otlp import trace_id

    config = Config(
        durability="none",
        max_parallel=2,
        telemetry={"otlp_endpoint": collector.endpoint, "export_interval_s": 0.05},
    )
    store = tmp_path / "store"
    scenarios = [("1_success", "count the python files under src"),
                 ("2_change_path", "report the total of this year's sales figures")]  # fmt: skip
    ids = []
    for name, text in scenarios:
        model = f"scripted:{DATA / 'scenarios' / f'{name}.toml'}"
        with artoo.System.open(store, model=model, config=config, workspace=workspace) as s:
            handle = s.submit(text, timeout=60)
            handle.result(60)
            ids.append(handle.task_id)
            assert collector.wait_for(len(ids))  # live: before the System is closed
    events = all_events(store)
    verdicts = 0
    for env in events:
        body = env.body
        if isinstance(body, CorrectionSignal | SubTaskOutcome):
            verdicts += len(body.verdicts)
        elif isinstance(body, OutcomeSummary | ReplanRequest):
            verdicts += len(body.task_verdicts)
    assert verdicts > 0
    with collector.got:
        spans = list(collector.spans)
    assert {t for t, _ in spans} == {trace_id(i).hex() for i in ids}
    names = {s.name for _, s in spans}  # type: ignore[attr-defined]
    assert {"task", "round 0", "subtask"} <= names
    assert any(n.startswith("chat ") for n in names)
    assert any(n.startswith("execute_tool ") for n in names)
    evaluations = [
        e
        for _, s in spans
        for e in s.events
        if e.name == "gen_ai.evaluation.result"  # type: ignore[attr-defined]
    ]
    assert len(evaluations) == verdicts
    keys = {kv.key for e in evaluations for kv in e.attributes}
    assert {
        "gen_ai.evaluation.name",
        "gen_ai.evaluation.score.value",
        "gen_ai.evaluation.score.label",
        "gen_ai.evaluation.explanation",
    } <= keys
    labels = {
        kv.value.string_value
        for e in evaluations
        for kv in e.attributes
        if kv.key == "gen_ai.evaluation.score.label"
    }
    assert labels == {"pass", "fail"}  # scenario 2 fails round 0, passes round 1
    ends = [e.body for e in events if isinstance(e.body, FinalResult)]
    assert [r.status for r in ends] == ["accept", "accept"]
