"""The report's tables as plain text cells, shared by the Markdown and HTML renderers:
``(head, rows, numeric columns)``."""

from __future__ import annotations

from ._format import ms, num, pct, q3, when
from ._model import AuditDocument, PairRow

Table = tuple[list[str], list[list[str]], set[int]]


def roles(doc: AuditDocument) -> Table:
    """Per role: model latency, tokens, failures, retries, step failures, crashes."""
    head = ["role", "calls", "latency p50 ms", "p95", "p99", "tokens/call", "failures",
            "retries", "step failures", "crashes"]  # fmt: skip
    rows = [
        [r.role, str(r.calls), *q3(r.latency_ms), num(r.tokens_per_call), pct(r.failure_rate),
         num(r.retry_rate, 2), str(r.step_failures), str(r.crashes)]
        for r in doc.roles
    ]  # fmt: skip
    return head, rows, set(range(1, 10))


def role_windows(doc: AuditDocument) -> Table:
    """Per role per Auditor window, with its drift flags."""
    head = ["window", "role", "calls", "failures", "latency p95 ms", "tokens/call", "retries",
            "drift"]  # fmt: skip
    rows = [
        [when(r.start), r.role, str(r.model_calls), pct(r.failure_rate), ms(r.latency_p95_ms),
         num(r.tokens_per_call), num(r.retries_per_subtask, 2), ", ".join(r.drift) or "-"]
        for r in doc.role_windows
    ]  # fmt: skip
    return head, rows, {2, 3, 4, 5, 6}


def tools(doc: AuditDocument) -> Table:
    """Per tool: calls, errors, median time, refusals by reason."""
    head = ["tool", "calls", "errors", "error rate", "median ms", "refusals"]
    rows = [
        [t.tool, str(t.calls), str(t.errors), pct(t.error_rate), num(t.median_ms),
         ", ".join(f"{k} {v}" for k, v in t.refusals.items()) or "-"]
        for t in doc.tools
    ]  # fmt: skip
    return head, rows, {1, 2, 3, 4}


def pairs(rows_in: list[PairRow]) -> Table:
    """Tag pairs with their potentials."""
    head = ["space", "entity", "attention", "decision", "seq"]
    rows = [[r.space, r.entity, num(r.attention, 3), num(r.decision, 3), str(r.seq)]
            for r in rows_in]  # fmt: skip
    return head, rows, {2, 3, 4}


def windows(doc: AuditDocument) -> Table:
    """The windows: the Auditor's reports, or computed from the log."""
    head = ["start (UTC)", "started", "ended", "statuses", "model calls", "latency p95 ms",
            "tokens", "replans", "tool errors", "boundary violations", "drift alerts"]  # fmt: skip
    rows = [
        [when(w.start) + ("" if w.complete else " (partial)"), str(w.tasks_started),
         str(w.tasks_ended), ", ".join(f"{k} {v}" for k, v in w.by_status.items()) or "-",
         str(w.model_calls), ms(w.latency_p95_ms), f"{w.tokens:,}", str(w.replans),
         str(w.tool_errors), str(w.boundary_violations), str(w.drift_alerts)]
        for w in doc.windows
    ]  # fmt: skip
    return head, rows, {1, 2, 4, 5, 6, 7, 8, 9, 10}
