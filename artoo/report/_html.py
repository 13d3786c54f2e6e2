"""The audit report as one self-contained HTML page: inline CSS, plots as inline SVG made
with matplotlib, no script, no external URL; byte-identical for the same report."""

from __future__ import annotations

import io
import re
from collections import Counter
from html import escape
from typing import Any

from artoo.actors.verification.proof import how_established

from . import _tables as tables
from ._format import GLOSSARY, escalation_line, num, pct, when
from ._model import AuditDocument, TaskRow

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232b;
max-width:1100px;margin:24px auto;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:1px solid #ccd;
padding-bottom:3px;margin-top:28px}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border:1px solid #dde;
padding:3px 6px;text-align:left;vertical-align:top}th{background:#f2f4f8}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#5b6572}.bad{color:#a0161b;font-weight:600}.good{color:#196c2e;font-weight:600}
figure{margin:12px 0;page-break-inside:avoid}figcaption{color:#4a5563;font-size:13px}
figure svg{max-width:100%;height:auto}
details{margin:2px 0}summary{cursor:pointer}
.plots{display:grid;grid-template-columns:1fr 1fr;gap:8px}
code{background:#f2f4f8;padding:0 3px}
@media print{body{margin:0;max-width:none}.plots{display:block}details>*{display:block}}
"""

MAX_LINES = 20
"""Tasks drawn in the loss plot (the latest that replanned)."""
MAX_BARS = 60
"""Above this many tasks the tokens plot is a histogram."""
MAX_TIMELINES = 200
"""Task timelines in the HTML page (those needing attention first, then the latest)."""

_PALETTE = {
    "accept": "#2e7d32",
    "success": "#1565c0",
    "abandon": "#c62828",
    "running": "#9e9e9e",
}


def _label(t: TaskRow) -> str:
    """A task in a plot: its short id and the start of its request."""
    text = " ".join(t.text.split())
    return f"{t.short_id or t.task_id[:8]} {text[:24]}{'…' if len(text) > 24 else ''}"


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<!--.*?-->\n?", "", text, flags=re.S)
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    # inline SVG in HTML needs no namespace declarations: no URL left in the page
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)


def _figure(width: float = 5.2, height: float = 2.8) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=72, layout="constrained")
    return fig, fig.add_subplot()


def _plots(doc: AuditDocument) -> list[tuple[str, str, str]]:
    """(id, caption, svg) for each plot."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    plots: list[tuple[str, str, str]] = []
    # a fixed salt for SVG ids, text as text (no glyph paths), no date: byte-identical files
    with matplotlib.rc_context({"svg.hashsalt": "artoo", "svg.fonttype": "none", "font.size": 9}):
        # tasks over time by status
        fig, ax = _figure()
        labels = [when(w.start)[11:16] for w in doc.windows]
        bottom = [0] * len(doc.windows)
        for status in ("accept", "success", "abandon"):
            values = [w.by_status.get(status, 0) for w in doc.windows]
            ax.bar(range(len(values)), values, bottom=bottom, color=_PALETTE[status], label=status)
            bottom = [a + b for a, b in zip(bottom, values, strict=True)]
        step = max(1, len(labels) // 10)  # at most about ten labels
        ax.set_xticks(range(0, len(labels), step), labels[::step])
        ax.set_ylabel("tasks ended")
        ax.set_xlabel(f"window start (UTC, {doc.window_s:g} s windows)")
        ax.legend(frameon=False)
        plots.append(("plot-tasks", "Tasks ended in each window, by final status.", _svg(fig)))
        # loss per round for tasks that replanned
        fig, ax = _figure()
        shown = 0
        replanned = [t for t in doc.tasks if len(t.decisions) >= 2]
        for t in replanned[-MAX_LINES:]:
            ax.plot(
                [d.round for d in t.decisions],
                [d.loss for d in t.decisions],
                marker="o",
                label=_label(t),
            )
            shown += 1
        ax.set_xlabel("round")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("L (lower is better)")
        if 0 < shown <= 8:
            ax.legend(frameon=False, title="task", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no task replanned", ha="center", va="center", transform=ax.transAxes)
        plots.append(
            (
                "plot-loss",
                "The loss L after each round, for every task that needed more than one "
                "round: a falling line is a task converging."
                + (
                    f" The latest {MAX_LINES} of {len(replanned):,} are drawn."
                    if len(replanned) > MAX_LINES
                    else ""
                ),
                _svg(fig),
            )
        )
        # model latency per role
        fig, ax = _figure()
        roles = [r for r in doc.roles if r.calls]
        data = [
            [t.latency_ms.p50 or 0, t.latency_ms.p95 or 0, t.latency_ms.p99 or 0] for t in roles
        ]
        for i, (name, color) in enumerate(
            (("p50", "#90a4ae"), ("p95", "#546e7a"), ("p99", "#263238"))
        ):
            ax.bar(
                [k + i * 0.27 for k in range(len(roles))],
                [d[i] for d in data],
                width=0.27,
                color=color,
                label=name,
            )
        ax.set_xticks([k + 0.27 for k in range(len(roles))], [r.role for r in roles], rotation=20)
        ax.set_ylabel("model latency, ms")
        ax.legend(frameon=False)
        plots.append(
            (
                "plot-latency",
                "How long each role's model calls took: the median "
                "(p50) and the slow tail (p95, p99).",
                _svg(fig),
            )
        )
        # tokens per task (a histogram when there are too many tasks for a bar each)
        fig, ax = _figure()
        if len(doc.tasks) <= MAX_BARS:
            ax.bar(
                range(len(doc.tasks)),
                [t.tokens for t in doc.tasks],
                color=[_PALETTE.get(t.status, "#9e9e9e") for t in doc.tasks],
            )
            ax.set_xticks(range(len(doc.tasks)), [_label(t) for t in doc.tasks], rotation=30)
            ax.set_ylabel("tokens (in + out)")
            caption = "Tokens each task used, coloured by its final status."
        else:
            ax.hist([t.tokens for t in doc.tasks], bins=30, color="#5c6bc0")
            ax.set_xlabel("tokens (in + out) per task")
            ax.set_ylabel("tasks")
            caption = f"How many tokens the {len(doc.tasks):,} tasks used (a histogram)."
        plots.append(("plot-tokens", caption, _svg(fig)))
        # macro-state counts
        fig, ax = _figure()
        counts = Counter(d for t in doc.tasks for d in t.path)
        names = sorted(counts)
        ax.barh(names, [counts[n] for n in names], color="#5c6bc0")
        ax.set_xlabel("decisions")
        plots.append(
            ("plot-states", "How often the loop took each decision (see the glossary).", _svg(fig))
        )
    return plots


def _table(head: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    out = ["<table>"]
    if any(head):
        out += ["<thead><tr>", *(f"<th>{escape(h)}</th>" for h in head), "</tr></thead>"]
    out.append("<tbody>")
    for row in rows:
        cells = (
            f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _plain(table: tables.Table) -> str:
    """A table of plain-text cells (escaped here)."""
    head, rows, numeric = table
    return _table(head, [[escape(c) for c in row] for row in rows], numeric)


def render_html(doc: AuditDocument) -> str:
    """The report as one HTML page (see the module docstring)."""
    e = escape
    s, p = doc.summary, doc.period
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>artoo audit report — {e(doc.store or 'store')}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>artoo audit report — {e(doc.store or 'store')}</h1>",
        f'<p class="muted">Period {e(when(p.start))} to {e(when(p.end))}, seqs '
        f"{e(num(p.first_seq))}–{e(num(p.last_seq))} ({p.envelopes:,} envelopes)"
        + (
            f"; filters {e(', '.join(f'{k}={v}' for k, v in doc.filters.items()))}"
            if doc.filters
            else ""
        )
        + ".</p>",
        '<section id="summary"><h2>Summary</h2>',
    ]
    statuses = ", ".join(f"{k} {v}" for k, v in s.by_status.items()) or "none"
    chain_ok = s.audit_chain.startswith("intact")
    chain_class = "good" if chain_ok else "bad" if s.audit_chain.startswith("BROKEN") else "muted"
    parts.append(
        _table(
            ["", ""],
            [
                ["tasks", e(f"{s.tasks} ({statuses})")],
                ["success rate", e(pct(s.success_rate))],
                [
                    "task time p50 / p95",
                    e(f"{num(s.task_time_p50_s, 2)} s / {num(s.task_time_p95_s, 2)} s"),
                ],
                ["model calls", e(f"{s.model_calls:,} ({s.model_errors:,} failed)")],
                ["tokens in / out", e(f"{s.tokens_in:,} / {s.tokens_out:,}")],
                ["cost", e(s.cost)],
                [
                    "escalations",
                    e(escalation_line(s)),
                ],
                [
                    "Law 1 confirmations",
                    e(f"{s.law1_asked} asked, {s.law1_approved} approved, {s.law1_denied} denied"),
                ],
                [
                    "audit log",
                    f'<span class="{chain_class}">{e(s.audit_chain)}</span>',
                ],
            ],
        )
    )
    parts.append("</section>")
    parts.append('<section id="attention"><h2>Attention first</h2>')
    if not doc.attention:
        parts.append("<p>Nothing needs attention.</p>")
    else:
        parts.append("<ul>")
        short = {t.task_id: t.short_id for t in doc.tasks if t.short_id}
        for a in doc.attention:
            seqs = ", ".join(str(x) for x in a.seqs)
            task = short.get(a.task_id or "", a.task_id or "-")
            parts.append(
                f'<li><span class="bad">{e(a.kind)}</span> task <code>{e(task)}</code> '
                f"(seqs {e(seqs)}): {e(a.line)}</li>"
            )
        parts.append("</ul>")
    parts.append("</section>")
    parts.append('<section id="plots"><h2>At a glance</h2><div class="plots">')
    for pid, caption, svg in _plots(doc):
        parts.append(f'<figure id="{pid}">{svg}<figcaption>{e(caption)}</figcaption></figure>')
    parts.append("</div></section>")
    parts.append(
        '<section id="tasks"><h2>Tasks</h2><p class="muted">Open a task to read its '
        "timeline: rounds, subtasks, attempts, tool calls and the loop's decisions.</p>"
    )
    flagged = {a.task_id for a in doc.attention}
    detailed = [t for t in doc.tasks if t.task_id in flagged]
    detailed += [t for t in doc.tasks if t.task_id not in flagged][
        -(MAX_TIMELINES - len(detailed)) :
    ]
    keep = {t.task_id for t in detailed}
    if len(doc.tasks) > len(keep):
        parts.append(
            f'<p class="muted">{len(doc.tasks):,} tasks: the timelines of those needing attention '
            f"and of the latest {MAX_TIMELINES} are shown; the Markdown and JSON reports list "
            "every task (or narrow this one with --since, --until or --task).</p>"
        )
    for t in doc.tasks:
        if t.task_id not in keep:
            continue
        colour = (
            "good"
            if t.status in ("accept", "success")
            else "bad"
            if t.status == "abandon"
            else "muted"
        )
        head = (
            f'<summary><code>{e(t.task_id)}</code> <span class="{colour}">{e(t.status)}</span> '
            f"{e(' → '.join(t.path) or '-')} · {t.rounds} round(s) · {t.model_calls} calls · "
            f"{t.tokens:,} tokens · {e(num(t.time_s, 2))} s — {e(t.text)}</summary>"
        )
        rows = [
            [
                str(st.seq),
                num(st.t_s, 3),
                "-" if st.round is None else str(st.round),
                e(st.kind),
                e(st.text),
            ]
            for st in t.timeline
        ]
        decisions = [
            [
                str(d.seq),
                str(d.round),
                e(d.directive),
                num(d.d, 3),
                num(d.p, 3),
                num(d.omega, 3),
                num(d.loss, 3),
                num(d.grad, 3),
                e(d.rationale),
            ]
            for d in t.decisions
        ]
        answer = f"<p><b>answer:</b> {e(t.answer)}</p>" if t.answer else ""
        if t.established:
            how = how_established(t.established, t.established_by)
            answer += f"<p><b>established:</b> {e(how)}</p>"
        parts.append(
            f"<details>{head}<p><b>request:</b> {e(t.text)}</p>{answer}"
            f"<p><b>summary:</b> {e(t.summary)}</p>"
            + (
                _table(
                    ["seq", "round", "decision", "D", "P", "Ω", "L", "∇L", "why"],
                    decisions,
                    {0, 1, 3, 4, 5, 6, 7},
                )
                if decisions
                else ""
            )
            + _table(["seq", "t (s)", "round", "what", "detail"], rows, {0, 1})
            + "</details>"
        )
    parts.append("</section>")
    parts.append('<section id="roles"><h2>Roles</h2>')
    parts.append(_plain(tables.roles(doc)))
    if doc.role_windows:
        parts.append(
            '<h3>By window</h3><p class="muted">The Auditor\'s figures per window; '
            "drift marks a metric beyond median + 3 MAD of the role's earlier "
            "windows.</p>"
        )
        parts.append(_plain(tables.role_windows(doc)))
    parts.append("</section>")
    parts.append('<section id="tools"><h2>Tools</h2>')
    parts.append(_plain(tables.tools(doc)))
    parts.append("</section>")
    m = doc.memory
    parts.append('<section id="memory"><h2>Memory</h2>')
    parts.append(
        f"<p>{m.megrams_written} megrams written, {m.sops_promoted} SOPs and "
        f"{m.constraints_promoted} constraints promoted, {m.demotions} demoted, "
        f"{m.forgets} forgotten.</p>"
    )
    for title, pairs in (
        ("Strongest Avoid", m.strongest_avoid),
        ("Strongest Exploit", m.strongest_exploit),
    ):
        parts.append(f"<h3>{title}</h3>")
        parts.append(_plain(tables.pairs(pairs)) if pairs else "<p>none</p>")
    parts.append("</section>")
    parts.append(f'<section id="windows"><h2>Windows ({doc.window_s:g} s)</h2>')
    if doc.windows and doc.windows[0].source == "auditor":
        parts.append(
            '<p class="muted">The Auditor\'s reports, from the audit log; a partial one was '
            "written at a close.</p>"
        )
    parts.append(_plain(tables.windows(doc)))
    parts.append("</section>")
    parts.append('<section id="glossary"><h2>Glossary</h2><dl>')
    parts += [f"<dt><b>{e(k)}</b></dt><dd>{e(v)}</dd>" for k, v in GLOSSARY]
    parts.append("</dl></section></body></html>")
    return "\n".join(parts) + "\n"
