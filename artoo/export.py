"""Exporting an event log: one envelope per line as JSON (``artoo export --format jsonl``),
or OpenTelemetry traces (``--format otlp`` / ``otlp-proto``, see :func:`export_otlp`).

Each line is a JSON object ``{"seq", "ts", "task_id", "sender", "to", "cause", "body"}``
whose ``body`` is the message as msgspec encodes it to JSON, its kind in ``"type"``. A body
whose tag this version does not know keeps its original msgpack bytes (base64, under
``"raw"``). :func:`read_jsonl` decodes the lines back into the very same Envelopes.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

import msgspec

from artoo.schemas import AnyMessage, Envelope, UnknownMessage

from ._otlp import otlp_traces, read_otlp_json, span_id, to_otlp_json, to_otlp_proto, trace_id

if TYPE_CHECKING:
    from artoo._store import StoreArg

__all__ = [
    "export_jsonl",
    "export_otlp",
    "otlp_traces",
    "read_jsonl",
    "read_otlp_json",
    "span_id",
    "trace_id",
]

_encoder = msgspec.json.Encoder()


def _line(env: Envelope) -> bytes:
    body: Any
    if isinstance(env.body, UnknownMessage):
        body = {"type": env.body.tag, "raw": base64.b64encode(env.body.raw).decode()}
    else:
        body = env.body
    return _encoder.encode(
        {
            "seq": env.seq,
            "ts": env.ts,
            "task_id": env.task_id,
            "sender": env.sender,
            "to": env.to,
            "cause": env.cause,
            "body": body,
        }
    )


def export_jsonl(store: StoreArg, out: IO[bytes], *, task_id: str | None = None) -> int:
    """Write ``store``'s envelopes (one task's with ``task_id``) to ``out`` as JSON lines,
    in seq order; returns how many. The store must not be open in another process."""
    from artoo._store import read_log

    count = 0
    with read_log(store) as log:
        envelopes = log.read_task(task_id) if task_id is not None else log.read()
        for env in envelopes:
            out.write(_line(env))
            out.write(b"\n")
            count += 1
    return count


def export_otlp(
    store: StoreArg,
    out: IO[bytes],
    *,
    task_id: str | None = None,
    binary: bool = False,
    include_content: bool = False,
) -> int:
    """Write ``store``'s tasks (or ``task_id`` only) to ``out`` as OpenTelemetry traces, one
    trace per task; returns how many spans.

    By default OTLP JSON lines, one ``TracesData`` per task (the OTLP file-exporter format,
    read back with :func:`read_otlp_json`); with ``binary`` one protobuf
    ``ExportTraceServiceRequest`` holding every task. Prompts and completions are left out
    unless ``include_content``. The same log always gives the same bytes; the span layout is
    in ``artoo._otlp``.
    """
    from .replay import read_store

    _, tasks = read_store(store, task_id)
    traces = otlp_traces(tasks, include_content=include_content)
    if binary:
        out.write(to_otlp_proto(traces))
    else:
        for data in traces:
            out.write(to_otlp_json(data).encode())
            out.write(b"\n")
    return sum(len(ss.spans) for t in traces for rs in t.resource_spans for ss in rs.scope_spans)


class _Line(msgspec.Struct):
    seq: int
    ts: float
    task_id: str | None
    sender: str
    to: str | None
    cause: int | None
    body: msgspec.Raw


class _Unknown(msgspec.Struct):
    type: str
    raw: str


def read_jsonl(lines: Iterable[bytes | str]) -> Iterator[Envelope]:
    """The Envelopes of exported JSON lines (blank lines skipped)."""
    decode_line = msgspec.json.Decoder(_Line).decode
    decode_body = msgspec.json.Decoder(AnyMessage).decode
    for raw in lines:
        if not raw.strip():
            continue
        line = decode_line(raw)
        try:
            body: Any = decode_body(line.body)
        except msgspec.ValidationError:
            unknown = msgspec.json.decode(line.body, type=_Unknown)
            body = UnknownMessage(unknown.type, base64.b64decode(unknown.raw))
        yield Envelope(line.seq, line.ts, line.task_id, line.sender, line.to, line.cause, body)
