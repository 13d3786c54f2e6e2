"""The audit report as Markdown (the default of ``artoo audit``)."""

from __future__ import annotations

from artoo.actors.verification.proof import how_established

from . import _tables as tables
from ._format import GLOSSARY, escalation_line, num, pct, when
from ._model import AuditDocument


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
    short = {t.task_id: t.short_id for t in doc.tasks if t.short_id}
    for a in doc.attention:
        seqs = ", ".join(str(x) for x in a.seqs)
        task = short.get(a.task_id or "", a.task_id or "-")
        out.append(f"- **{a.kind}** task `{task}` (seqs {seqs}): {a.line}")
    out += ["", "## Tasks", ""]
    out += _table(
        ["task", "request", "status", "path", "rounds", "calls", "tokens", "time s", "summary"],
        [
            [
                t.short_id or t.task_id,
                t.text,
                t.status
                + (f" ({t.reason})" if t.reason else "")
                + (f", {t.established}" if t.established else ""),
                " → ".join(t.path) or "-",
                str(t.rounds),
                str(t.model_calls),
                f"{t.tokens:,}",
                num(t.time_s, 2),
                t.summary,
            ]
            for t in doc.tasks
        ],
    )
    answered = [t for t in doc.tasks if t.answer]
    if answered:
        out += ["", "Answers:", ""]
        out += [
            f"- `{t.short_id or t.task_id}`: {' '.join(t.answer.split())}"
            + (f" ({how_established(t.established, t.established_by)})" if t.established else "")
            for t in answered
        ]
    out += ["", "## Roles", ""]
    out += _table(*tables.roles(doc)[:2])
    if doc.role_windows:
        out += ["", "By window (the Auditor's; drift: a metric beyond its robust limit):", ""]
        out += _table(*tables.role_windows(doc)[:2])
    out += ["", "## Tools", ""]
    out += _table(*tables.tools(doc)[:2])
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
        out += _table(*tables.pairs(rows)[:2]) if rows else ["none"]
    out += ["", f"## Windows ({doc.window_s:g} s)", ""]
    if doc.windows and doc.windows[0].source == "auditor":
        out += [
            "The Auditor's reports, from the audit log; a partial one was written at a close.",
            "",
        ]
    out += _table(*tables.windows(doc)[:2])
    out += ["", "## Glossary", ""]
    out += [f"- **{k}**: {v}" for k, v in GLOSSARY]
    return "\n".join(out) + "\n"
