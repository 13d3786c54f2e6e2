"""The audit report an operator reads: one row per window, the figures of one table
agreeing with another's, the request and the answer of each task, memory as it is."""

from __future__ import annotations

import re
from pathlib import Path

import artoo
from artoo.report import audit_report
from artoo.testing import ManualClock

from .helpers import CONFIG, DATA


def _reopened_five_times(tmp_path: Path, workspace: Path) -> Path:
    store = tmp_path / "store"
    model = f"scripted:{DATA / 'scenarios' / '1_success.toml'}"
    clock = ManualClock(start=1_800_000_000.0)  # every open inside one 300 s window
    for _ in range(5):
        with artoo.System.open(
            store, model=model, workspace=workspace, config=CONFIG, clock=clock
        ) as system:
            assert system.run("count the python files under src", timeout=60).status == "accept"
        clock.advance(1.0)
    return store


def _section(text: str, title: str) -> list[str]:
    part = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("| ") and "---" not in line]


def test_a_store_reopened_five_times_shows_each_window_once(
    tmp_path: Path, workspace: Path
) -> None:
    store = _reopened_five_times(tmp_path, workspace)
    text = audit_report(store)
    windows = _section(text, "Windows (300 s)")[1:]
    assert len(windows) == 1, windows
    cells = [c.strip() for c in windows[0].strip("|").split("|")]
    # started, ended, statuses, calls: no run asks the planner (round 0 is the request
    # itself); run 1 asks the perceiver once and the executor twice (glob, then the
    # answer); runs 2–5 reuse run 1's accepted reading (no perceiver call): 3 + 4 × 2
    assert cells[1:5] == ["5", "5", "accept 5", "11"]
    roles = _section(text, "Roles")
    by_role = {c[0]: c for c in ([x.strip() for x in r.strip("|").split("|")] for r in roles)}
    assert "planner" not in by_role
    assert [by_role[r][1] for r in ("executor", "perceiver")] == ["10", "1"]
    p95s = [float(by_role[r][3]) for r in ("executor", "perceiver")]
    assert float(cells[5]) == max(p95s)  # the Windows p95 is the Roles table's
    by_window = text.split("By window", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in by_window.splitlines() if line.startswith("| 20")]
    assert sorted(r.split("|")[2].strip() for r in rows) == ["executor", "perceiver"]


def test_a_windows_latency_below_a_millisecond_is_not_shown_as_zero() -> None:
    from artoo.report import build_report, render_markdown
    from artoo.schemas import AuditReport, RoleStats

    stats = RoleStats(role="executor", model_calls=2, latency_p95_ms=0.05)
    report = AuditReport(window_start=0.0, window_end=300.0, roles=[stats])
    text = render_markdown(build_report([], audit_reports=[report]))
    (row,) = _section(text, "Windows (300 s)")[1:]
    assert row.split("|")[6].strip() == "0.05"


def test_each_task_shows_its_request_and_answer_and_plots_name_tasks(
    demo_store: Path,
) -> None:
    text = audit_report(demo_store)
    tasks = _section(text, "Tasks")
    assert tasks[0].startswith("| task | request |")
    assert any("how many TODO items are in notes/todo.txt?" in row for row in tasks)
    # an answer, and what established it
    assert "There are 4 TODO items. (established by code: 'notes/todo.txt': 4 lines" in text
    ids = re.findall(r"^\| (01\w+) \|", "\n".join(tasks), re.MULTILINE)
    assert ids and all(8 <= len(i) < 26 for i in ids)  # short ids, each a unique prefix
    html = audit_report(demo_store, fmt="html")
    assert f"{ids[0]} " in html and "request:" in html and "answer:" in html


def test_the_strongest_avoid_is_what_artoo_memory_shows(demo_store: Path, capsys: object) -> None:
    import time

    from artoo.memoryview import memory_rows

    rows, _ = memory_rows(demo_store, time.time())
    avoids = [(r.space, r.entity) for r in rows if r.action == "avoid"]
    assert avoids  # scenario 4's denied delete
    memory = audit_report(demo_store).split("Strongest Avoid:", 1)[1].split("Strongest Exploit")[0]
    for space, entity in avoids:
        assert f"| {space} | {entity} |" in memory
