"""Audit reports an operator reads (``artoo audit``): Markdown, JSON and one
self-contained HTML page, all rendered from one :class:`AuditDocument` built from the
event log.

Sections, in order: summary, attention first (convergence failures, denied actions,
escalations, role crashes), tasks (each with its timeline), roles, tools, memory, windows,
glossary. The same store and options give byte-identical output.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Literal

import msgspec

from ._compute import build_report, quantile
from ._html import render_html
from ._markdown import render_markdown
from ._model import AuditDocument, report_schema

if TYPE_CHECKING:
    from artoo._store import StoreArg, StoreSpec
    from artoo.eventstore import AuditLogReader
    from artoo.schemas import AuditReport

__all__ = [
    "AuditDocument",
    "audit_report",
    "build_report",
    "parse_time",
    "quantile",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "report_schema",
]

Format = Literal["md", "json", "html"]


def render_json(doc: AuditDocument) -> str:
    """The report as indented JSON (the schema is :func:`report_schema`)."""
    return msgspec.json.format(msgspec.json.encode(doc), indent=2).decode() + "\n"


def render(doc: AuditDocument, fmt: Format = "md") -> str:
    """The report in ``fmt`` (``md``, ``json`` or ``html``)."""
    if fmt == "md":
        return render_markdown(doc)
    if fmt == "json":
        return render_json(doc)
    if fmt == "html":
        return render_html(doc)
    raise ValueError(f"unknown report format {fmt!r} (md, json or html)")


def parse_time(value: str) -> float:
    """``--since``/``--until``: epoch seconds, or an ISO-8601 date or time (UTC unless it
    says otherwise). ValueError in one line for anything else."""
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"not a time: {value!r} (give epoch seconds or ISO 8601, e.g. 2026-11-22T18:00)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.timestamp()


def audit_report(
    store: StoreArg,
    *,
    since: float | None = None,
    until: float | None = None,
    task_id: str | None = None,
    fmt: Format = "md",
    window_s: float = 300.0,
) -> str:
    """The audit report of ``store`` as text in ``fmt``. Reads the event log (the store
    must not be open in another process)."""
    from artoo._store import parse_store, read_audit, read_log

    spec = parse_store(store)
    with read_log(spec) as log:
        audit = read_audit(spec)
        try:
            chain, reports = _audit_log(audit)
        finally:
            if audit is not None:
                audit.close()
        doc = build_report(
            log.read(),
            since=since,
            until=until,
            task_id=task_id,
            window_s=window_s,
            store=spec.name,
            audit_chain=chain,
            audit_reports=reports,
        )
    if task_id is None and until is None and spec.has_memory:
        doc = _with_memory_pairs(doc, spec)
    return render(doc, fmt)


def _with_memory_pairs(doc: AuditDocument, store: StoreSpec) -> AuditDocument:
    """The strongest Avoid and Exploit pairs as ``artoo memory`` shows them: memory's
    potentials (the projection of the log) at the report's last envelope, not only the
    pairs some recall happened to report."""
    from artoo.memoryview import memory_rows

    from ._compute import TOP_PAIRS
    from ._model import PairRow

    if doc.period.end is None:
        return doc
    rows, _ = memory_rows(store, doc.period.end)
    pairs = [
        PairRow(
            space=r.space,
            entity=r.entity,
            attention=r.attention,
            decision=r.decision,
            action=r.action,
            seq=0,
        )
        for r in sorted(rows, key=lambda r: (r.decision, r.space, r.entity))
    ]
    memory = msgspec.structs.replace(
        doc.memory,
        strongest_avoid=[p for p in pairs if p.action == "avoid"][:TOP_PAIRS],
        strongest_exploit=[p for p in reversed(pairs) if p.action == "exploit"][:TOP_PAIRS],
    )
    return msgspec.structs.replace(doc, memory=memory)


def _audit_log(reader: AuditLogReader | None) -> tuple[str, list[AuditReport]]:
    """The audit log's verdict for the summary, and its reports (those before the first
    bad record when the chain is broken)."""
    if reader is None:
        return "no audit log in this store", []
    check = reader.verify()
    try:
        reports = reader.reports()
    except (msgspec.DecodeError, msgspec.ValidationError):
        reports = []
    if check.ok:
        return f"intact: {check.records} records, each linked to the one before", reports
    good = reports[: check.records]
    return (
        f"BROKEN at record {check.bad_record}: {check.reason} "
        f"({check.records} good records before it; reports from the bad one on are not used)",
        good,
    )
