"""`artoo audit`: the report over the demo store and a synthetic store, in Markdown, JSON
and HTML; deterministic; self-contained; rendered in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.cli import main
from artoo.eventstore import AuditLog, EventLog
from artoo.report import (
    AuditDocument,
    audit_report,
    build_report,
    parse_time,
    quantile,
    render_html,
    report_schema,
)
from artoo.schemas import (
    AuditReport,
    BoundaryViolation,
    ConfirmationDecision,
    ConfirmationRequest,
    Cost,
    DriftAlert,
    Envelope,
    EscalationTicket,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    RoleFailed,
    RoleStats,
    ToolCall,
    UserRequest,
)

SECTIONS = [
    "summary",
    "attention",
    "plots",
    "tasks",
    "roles",
    "tools",
    "memory",
    "windows",
    "glossary",
]
PLOTS = ["plot-tasks", "plot-loss", "plot-latency", "plot-tokens", "plot-states"]


T0 = 1_790_000_000.0


def _env(seq: int, ts: float, task: str | None, sender: str, body: object) -> Envelope:
    return Envelope(seq=seq, ts=ts, task_id=task, sender=sender, to=None, cause=None, body=body)


def synthetic(store: Path) -> list[Envelope]:
    """Two tasks: one accepted after a replan, one abandoned with a denied deletion, an
    escalation and a crashed role; model calls with errors; tools with a refusal."""
    bodies: list[tuple[float, str | None, str, object]] = [
        (0.0, "t1", "user", UserRequest(text="count the lines")),
        (
            0.5,
            "t1",
            "executor",
            LLMCall(
                call_id="c1",
                role="executor",
                tier="tool",
                model="m",
                usage={"prompt_tokens": 100, "completion_tokens": 10},
                latency_ms=400.0,
            ),
        ),
        (
            1.0,
            "t1",
            "executor",
            ExecutionResult(
                subtask_id="s1",
                tool_calls=[
                    ToolCall(tool="shell", args={"command": "wc -l f"}, elapsed_ms=40.0),
                    ToolCall(tool="read_file", ok=False, error="no such file", elapsed_ms=2.0),
                ],
            ),
        ),
        (
            2.0,
            "t1",
            "ggs",
            GGSDecision(
                round=0, d=1.0, p=0.5, omega=0.1, loss=0.8, grad=0.3, directive="change_path"
            ),
        ),
        (
            3.0,
            "t1",
            "executor",
            LLMCall(
                call_id="c2",
                role="executor",
                tier="tool",
                model="m",
                usage={"prompt_tokens": 120, "completion_tokens": 12},
                latency_ms=600.0,
                error="timeout",
            ),
        ),
        (
            4.0,
            "t1",
            "ggs",
            GGSDecision(round=1, d=0.0, p=0.0, omega=0.2, loss=0.08, grad=-0.7, directive="accept"),
        ),
        (
            5.0,
            "t1",
            "ggs",
            FinalResult(
                task_id="t1",
                status="accept",
                summary="7 lines",
                reason="criteria_met",
                cost=Cost(model_calls=2),
            ),
        ),
        (10.0, "t2", "user", UserRequest(text="remove the old log")),
        (
            11.0,
            "t2",
            "executor",
            ConfirmationRequest(
                request_id="r1", action="rm old.log", reason="would delete old.log (40 bytes)"
            ),
        ),
        (
            12.0,
            "t2",
            "queen",
            ConfirmationDecision(request_id="r1", approved=False, by="operator", reason="keep it"),
        ),
        (
            12.5,
            "t2",
            "executor",
            ExecutionResult(
                subtask_id="s2",
                tool_calls=[
                    ToolCall(tool="shell", ok=False, refusal="law1_denied", error="[LAW1] denied")
                ],
            ),
        ),
        (
            13.0,
            None,
            "judge",
            EscalationTicket(
                ticket_id="k1",
                severity="critical",
                kind="stall",
                summary="no progress for 5 minutes",
                evidence=[9],
            ),
        ),
        (14.0, "t2", "supervisor", RoleFailed(role="planner", error="boom", task_ids=["t2"])),
        (
            400.0,
            "t2",
            "ggs",
            GGSDecision(round=0, d=1.0, p=1.0, omega=0.6, loss=0.96, grad=0.0, directive="abandon"),
        ),
        (
            401.0,
            "t2",
            "ggs",
            FinalResult(
                task_id="t2",
                status="abandon",
                reason="replan_budget",
                summary="[LAW1] the only way was denied",
                law1_denied=True,
            ),
        ),
    ]
    envelopes = [
        _env(i, T0 + dt, task, sender, body)
        for i, (dt, task, sender, body) in enumerate(bodies, start=1)
    ]
    with EventLog.open(store / "events", durability="none") as log:
        log.append(envelopes)
    return envelopes


# --------------------------------------------------------------------------- content
def test_the_demo_report_says_what_the_demo_did(demo_store: Path) -> None:
    doc = msgspec.json.decode(audit_report(demo_store, fmt="json"), type=AuditDocument)
    assert doc.summary.tasks == 5
    assert doc.summary.by_status == {"abandon": 1, "accept": 4}
    assert doc.summary.success_rate == 0.8
    assert (doc.summary.law1_asked, doc.summary.law1_denied) == (1, 1)
    [abandoned] = [t for t in doc.tasks if t.status == "abandon"]
    assert abandoned.path == ["change_path", "change_approach", "break_symmetry", "abandon"]
    assert abandoned.law1_denied and abandoned.reason == "replan_budget"
    with EventLog.open(demo_store / "events", durability="none") as log:
        logged = list(log.read())
    tickets = [e for e in logged if isinstance(e.body, EscalationTicket)]
    made = [e for e in logged if isinstance(e.body, LLMCall) and e.body.refused is None]
    kinds = [a.kind for a in doc.attention]
    assert kinds == ["escalation"] * len(tickets) + ["convergence_failure", "denied_action"]
    assert doc.summary.escalations == len(tickets)
    assert all(a.task_id == abandoned.task_id for a in doc.attention[len(tickets) :])
    shell = next(t for t in doc.tools if t.tool == "shell")
    assert shell.refusals == {"law1_denied": 1}
    # every model call the log holds, counted once per role and once in the summary
    assert sum(r.calls for r in doc.roles) == doc.summary.model_calls == len(made) > 0
    assert {r.role for r in doc.roles} >= {"perceiver", "planner", "executor"}
    # every envelope read, every decision with its seq in the log
    with EventLog.open(demo_store / "events", durability="none") as log:
        envelopes = list(log.read())
    assert doc.period.envelopes == len(envelopes)
    seqs = {e.seq: e for e in envelopes}
    assert all(isinstance(seqs[d.seq].body, GGSDecision) for t in doc.tasks for d in t.decisions)


def test_a_synthetic_store_puts_escalations_denials_and_crashes_first(tmp_path: Path) -> None:
    synthetic(tmp_path)
    doc = msgspec.json.decode(audit_report(tmp_path, fmt="json"), type=AuditDocument)
    assert [a.kind for a in doc.attention] == [
        "escalation",
        "convergence_failure",
        "role_failure",
        "denied_action",
    ]
    assert doc.attention[0].seqs == [12, 9]
    assert doc.attention[3].seqs == [9, 10] and "keep it" in doc.attention[3].line
    s = doc.summary
    assert (s.escalations, s.escalations_by_severity) == (1, {"critical": 1})
    assert s.escalations_ended == {"open": 1}
    assert (s.law1_asked, s.law1_approved, s.law1_denied) == (1, 0, 1)
    assert (s.model_calls, s.model_errors, s.tokens_in, s.tokens_out) == (2, 1, 220, 22)
    assert s.task_time_p50_s == pytest.approx(quantile([5.0, 391.0], 0.5))
    [executor] = doc.roles[:1]
    assert executor.role == "executor" and executor.failure_rate == 0.5
    assert executor.latency_ms.p50 == 500.0
    tools = {t.tool: t for t in doc.tools}
    assert (tools["read_file"].errors, tools["shell"].refusals) == (1, {"law1_denied": 1})
    assert [t.path for t in doc.tasks] == [["change_path", "accept"], ["abandon"]]
    # windows of 300 s: the first holds both starts and t1's end, the second t2's end
    assert [(w.tasks_started, w.tasks_ended) for w in doc.windows] == [(2, 1), (0, 1)]


def test_filters_by_time_and_task(tmp_path: Path) -> None:
    envelopes = synthetic(tmp_path)
    only_t1 = build_report(envelopes, task_id="t1")
    assert [t.task_id for t in only_t1.tasks] == ["t1"]
    early = build_report(envelopes, until=T0 + 100)
    assert early.summary.by_status == {"accept": 1, "running": 1}
    late = build_report(envelopes, since=T0 + 399)
    assert late.period.first_seq == 14 and late.summary.tasks == 1


def test_the_json_follows_its_published_schema(demo_store: Path) -> None:
    data = json.loads(audit_report(demo_store, fmt="json"))
    schema = report_schema()
    top = schema["$defs"]["AuditDocument"]["properties"]
    assert set(data) == set(top)
    assert msgspec.convert(data, AuditDocument).summary.tasks == 5


# --------------------------------------------------------------------------- rendering
def test_two_runs_give_byte_identical_files(demo_store: Path, tmp_path: Path) -> None:
    for fmt in ("md", "json", "html"):
        a, b = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
        for out in (a, b):
            assert main(["audit", str(demo_store), "--format", fmt, "-o", str(out)]) == 0
        assert a.read_bytes() == b.read_bytes(), fmt


def test_the_html_is_self_contained(demo_store: Path) -> None:
    html = audit_report(demo_store, fmt="html")
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)
    assert re.findall(r"https?://", re.sub(r">[^<]*<", "><", html)) == []  # only in text
    assert html.count("<svg") == len(PLOTS)
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert "Glossary" in html and "distance to the goal" in html


def test_text_from_the_log_is_escaped_not_markup(tmp_path: Path) -> None:
    envelopes = synthetic(tmp_path)
    hostile = _env(
        99, T0 + 402, "t3", "user", UserRequest(text="<script>alert(1)</script> https://x.example")
    )
    html = render_html(build_report([*envelopes, hostile]))
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html
    assert 'href="https://x.example' not in html


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "nope")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not an artoo store" in err
    with pytest.raises(ValueError, match="not a time"):
        parse_time("yesterday")
    assert parse_time("2026-11-22T18:00") == parse_time("2026-11-22T18:00+00:00")
    assert parse_time("1790000000.5") == 1790000000.5


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=50), st.floats(0, 1))
def test_quantile_is_numpys_linear_quantile(values: list[float], q: float) -> None:
    got = quantile(values, q)
    assert got is not None
    assert got == pytest.approx(float(np.quantile(values, q)), rel=1e-9, abs=1e-9)
    assert min(values) <= got <= max(values)


# --------------------------------------------------------------------------- a browser
CHECK = """<script>
addEventListener('load', () => {
  const out = {sections: [...document.querySelectorAll('section')].map(s => s.id),
    svgs: [...document.querySelectorAll('figure svg')].map(s => {
      const r = s.getBoundingClientRect();
      return {id: s.parentElement.id, w: r.width, h: r.height};
    }),
    resources: performance.getEntriesByType('resource').map(r => r.name)};
  const pre = document.createElement('pre');
  pre.id = 'artoo-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str | None:
    return next((p for p in ("chromium", "chromium-browser") if shutil.which(p)), None)


@pytest.mark.slow
@pytest.mark.skipif(
    _chromium() is None,
    reason="headless Chromium is not installed (apt-get install chromium; .ci/run does)",
)
def test_the_page_renders_in_headless_chromium_with_no_network(
    demo_store: Path, tmp_path: Path
) -> None:
    html = audit_report(demo_store, fmt="html")
    page = tmp_path / "report.html"
    page.write_text(html)
    probe = tmp_path / "probe.html"  # the same page plus a script reading the DOM back
    probe.write_text(html.replace("</body>", CHECK + "</body>"))
    browser = _chromium()
    assert browser is not None
    offline = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--proxy-server=127.0.0.1:9",  # any network request fails
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]
    dom = subprocess.run(
        [browser, *offline, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="artoo-check">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stderr[-2000:]
    seen = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert seen["sections"] == SECTIONS
    assert [s["id"] for s in seen["svgs"]] == PLOTS
    assert all(s["w"] > 0 and s["h"] > 0 for s in seen["svgs"])
    assert seen["resources"] == []  # nothing fetched: no network needed
    shot = tmp_path / "report.png"
    subprocess.run(
        [browser, *offline, "--window-size=1200,2000", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_module_runs_without_a_display() -> None:
    code = "import artoo.report._html as h, sys; print('matplotlib.pyplot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # never pyplot: no global figure state, no GUI


def _audit_reports() -> list[AuditReport]:
    return [
        AuditReport(window_start=T0, window_end=T0 + 300, first_seq=1, last_seq=13,
                    tasks_started=2, tasks_ended={"accept": 1}, replans=1,
                    roles=[RoleStats(role="executor", model_calls=2, latency_p95_ms=590.0,
                                     tokens_per_call=121.0)]),
        AuditReport(window_start=T0 + 300, window_end=T0 + 600, first_seq=14, last_seq=15,
                    tasks_ended={"abandon": 1},
                    boundary_violations=[BoundaryViolation(seq=14, sender="executor",
                                                           kind="GGSDecision", task_id="t2",
                                                           rule="outside_contract")],
                    drift=[DriftAlert(role="executor", metric="latency_p95_ms", value=9000.0,
                                      median=500.0, mad=50.0, limit=650.0, history=6)]),
    ]  # fmt: skip


def test_the_auditors_findings_join_the_report_and_a_tampered_log_is_named(
    tmp_path: Path,
) -> None:
    synthetic(tmp_path)
    log = AuditLog(tmp_path / "audit")
    for report in _audit_reports():
        log.append(report)
    log.close()
    doc = msgspec.json.decode(audit_report(tmp_path, fmt="json"), type=AuditDocument)
    assert doc.summary.audit_chain == "intact: 2 records, each linked to the one before"
    kinds = [a.kind for a in doc.attention]
    assert kinds[:3] == ["escalation", "convergence_failure", "boundary_violation"]
    assert "drift" in kinds
    violation = doc.attention[2]
    assert (violation.task_id, violation.seqs) == ("t2", [14])
    assert "executor published GGSDecision (outside contract)" in violation.line
    [executor] = [r for r in doc.roles if r.role == "executor"]
    assert executor.drift == ["latency_p95_ms at 14:18:20Z"]
    assert [w.source for w in doc.windows] == ["auditor", "auditor"]
    assert [(r.role, r.latency_p95_ms) for r in doc.role_windows] == [("executor", 590.0)]
    assert [(w.boundary_violations, w.drift_alerts) for w in doc.windows] == [(0, 0), (1, 1)]
    # someone edits the first record's report: the summary says the chain is broken, where
    path = tmp_path / "audit" / "reports.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b"accept", b"abandon", 1)
    path.write_bytes(b"\n".join(lines))
    md = audit_report(tmp_path)
    assert "| audit log | BROKEN at record 1: its hash does not match (0 good records" in md
    doc = msgspec.json.decode(audit_report(tmp_path, fmt="json"), type=AuditDocument)
    assert doc.summary.audit_chain.startswith("BROKEN at record 1")
    assert "boundary_violation" not in [a.kind for a in doc.attention]  # not trusted
    html = audit_report(tmp_path, fmt="html")
    assert '<span class="bad">BROKEN at record 1' in html
