"""The audit report as Markdown (the default of ``artoo audit``)."""

from __future__ import annotations

import datetime as dt

from ._model import AuditDocument, Quantiles, Summary

GLOSSARY = [
    ("D", "distance to the goal: how much of what was asked is still failing (0 = done)"),
    ("P", "penalty: how far the last round moved the wrong way (worse results, waste)"),
    ("Ω", "cost: the share of the time and call budget the task has used"),
    ("L", "loss, the one number the loop drives down: a weighted sum of D, P and Ω"),
    ("∇L", "how fast L is changing between rounds (near 0 = stuck)"),
    ("accept", "every criterion passed; the result is kept"),
    ("success", "the goal was reached (a task-level end)"),
    ("refine", "close to done: try the same approach again with the feedback"),
    ("change_path", "same goal and approach, but another way around an obstacle"),
    ("change_approach", "the approach itself is wrong: plan differently"),
    ("break_symmetry", "stuck between equal options: force a different choice"),
    ("abandon", "stop: the budget is spent or going on cannot help"),
]
"""Plain-language meanings of the symbols and macro-states used in the report."""


def when(ts: float | None) -> str:
    """A clock time as UTC, to the second (``-`` for none)."""
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def num(x: float | int | None, digits: int = 1) -> str:
    """A number for a table: fixed decimals, ``-`` for none."""
    if x is None:
        return "-"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{digits}f}"


def pct(x: float | None) -> str:
    """A rate as a percentage (``-`` for none)."""
    return "-" if x is None else f"{100 * x:.1f}%"


def ms(x: float | None) -> str:
    """Milliseconds for a table: whole above 100, one decimal above 1, else two."""
    if x is None:
        return "-"
    return num(x, 0 if x >= 100 else 1 if x >= 1 else 2)


def q3(q: Quantiles) -> tuple[str, str, str]:
    """p50, p95, p99 for a table."""
    return ms(q.p50), ms(q.p95), ms(q.p99)


def escalation_line(s: Summary) -> str:
    """``"3 (high 1, low 2); ended: task_ended 2, open 1"`` or ``"0"``."""
    if not s.escalations:
        return "0"
    severities = ", ".join(f"{k} {v}" for k, v in s.escalations_by_severity.items())
    ended = ", ".join(f"{k} {v}" for k, v in s.escalations_ended.items())
    return f"{s.escalations} ({severities}); ended: {ended}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def render_markdown(doc: AuditDocument) -> str:
    """The report as Markdown, sections in the order of :class:`AuditDocument`."""
    s, p = doc.summary, doc.period
    out = [f"# artoo audit report — {doc.store or 'store'}", ""]
    out.append(
        f"Period {when(p.start)} to {when(p.end)}, seqs {num(p.first_seq)}–{num(p.last_seq)} "
        f"({p.envelopes:,} envelopes)."
        + (
            f" Filters: {', '.join(f'{k}={v}' for k, v in doc.filters.items())}."
            if doc.filters
            else ""
        )
    )
    out += ["", "## Summary", ""]
    statuses = ", ".join(f"{k} {v}" for k, v in s.by_status.items()) or "none"
    out += _table(
        ["", "value"],
        [
            ["tasks", f"{s.tasks} ({statuses})"],
            ["success rate", pct(s.success_rate)],
            [
                "task time p50 / p95",
                f"{num(s.task_time_p50_s, 2)} s / {num(s.task_time_p95_s, 2)} s",
            ],
            ["model calls", f"{s.model_calls:,} ({s.model_errors:,} failed)"],
            ["tokens in / out", f"{s.tokens_in:,} / {s.tokens_out:,}"],
            ["cost", s.cost],
            [
                "escalations",
                escalation_line(s),
            ],
            [
                "Law 1 confirmations",
                f"{s.law1_asked} asked, {s.law1_approved} approved, {s.law1_denied} denied",
            ],
            ["audit log", s.audit_chain],
        ],
    )
    out += ["", "## Attention first", ""]
    if not doc.attention:
        out.append("Nothing needs attention.")
    for a in doc.attention:
        seqs = ", ".join(str(x) for x in a.seqs)
        out.append(f"- **{a.kind}** task `{a.task_id or '-'}` (seqs {seqs}): {a.line}")
    out += ["", "## Tasks", ""]
    out += _table(
        ["task", "status", "path", "rounds", "calls", "tokens", "time s", "summary"],
        [
            [
                t.task_id,
                t.status + (f" ({t.reason})" if t.reason else ""),
                " → ".join(t.path) or "-",
                str(t.rounds),
                str(t.model_calls),
                f"{t.tokens:,}",
                num(t.time_s, 2),
                t.summary or t.text,
            ]
            for t in doc.tasks
        ],
    )
    out += ["", "## Roles", ""]
    out += _table(
        [
            "role",
            "calls",
            "latency p50 ms",
            "p95",
            "p99",
            "tokens/call",
            "failures",
            "retries",
            "step failures",
            "crashes",
        ],
        [
            [
                r.role,
                str(r.calls),
                *q3(r.latency_ms),
                num(r.tokens_per_call),
                pct(r.failure_rate),
                num(r.retry_rate, 2),
                str(r.step_failures),
                str(r.crashes),
            ]
            for r in doc.roles
        ],
    )
    if doc.role_windows:
        out += ["", "By window (the Auditor's; drift: a metric beyond its robust limit):", ""]
        out += _table(
            [
                "window",
                "role",
                "calls",
                "failures",
                "latency p95 ms",
                "tokens/call",
                "retries",
                "drift",
            ],
            [
                [
                    when(r.start),
                    r.role,
                    str(r.model_calls),
                    pct(r.failure_rate),
                    ms(r.latency_p95_ms),
                    num(r.tokens_per_call),
                    num(r.retries_per_subtask, 2),
                    ", ".join(r.drift) or "-",
                ]
                for r in doc.role_windows
            ],
        )
    out += ["", "## Tools", ""]
    out += _table(
        ["tool", "calls", "errors", "error rate", "median ms", "refusals"],
        [
            [
                t.tool,
                str(t.calls),
                str(t.errors),
                pct(t.error_rate),
                num(t.median_ms),
                ", ".join(f"{k} {v}" for k, v in t.refusals.items()) or "-",
            ]
            for t in doc.tools
        ],
    )
    m = doc.memory
    out += ["", "## Memory", ""]
    out.append(
        f"{m.megrams_written} megrams written, {m.sops_promoted} SOPs and "
        f"{m.constraints_promoted} constraints promoted, {m.demotions} demoted, "
        f"{m.forgets} forgotten."
    )
    for title, rows in (
        ("Strongest Avoid", m.strongest_avoid),
        ("Strongest Exploit", m.strongest_exploit),
    ):
        out += ["", f"{title}:", ""]
        out += (
            _table(
                ["space", "entity", "attention", "decision", "seq"],
                [
                    [r.space, r.entity, num(r.attention, 3), num(r.decision, 3), str(r.seq)]
                    for r in rows
                ],
            )
            if rows
            else ["none"]
        )
    out += ["", f"## Windows ({doc.window_s:g} s)", ""]
    if doc.windows and doc.windows[0].source == "auditor":
        out += [
            "The Auditor's reports, from the audit log; a partial one was written at a close.",
            "",
        ]
    out += _table(
        [
            "start",
            "started",
            "ended",
            "statuses",
            "model calls",
            "latency p95 ms",
            "tokens",
            "replans",
            "tool errors",
            "boundary violations",
            "drift alerts",
        ],
        [
            [
                when(w.start) + ("" if w.complete else " (partial)"),
                str(w.tasks_started),
                str(w.tasks_ended),
                ", ".join(f"{k} {v}" for k, v in w.by_status.items()) or "-",
                str(w.model_calls),
                num(w.latency_p95_ms, 0),
                f"{w.tokens:,}",
                str(w.replans),
                str(w.tool_errors),
                str(w.boundary_violations),
                str(w.drift_alerts),
            ]
            for w in doc.windows
        ],
    )
    out += ["", "## Glossary", ""]
    out += [f"- **{k}**: {v}" for k, v in GLOSSARY]
    return "\n".join(out) + "\n"
