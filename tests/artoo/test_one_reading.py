"""One reading of the log: on one store holding a call refused by the budget, a Law 2 end, a
replan-budget end and a Law 1 denial, every face that shows a per-task figure shows the same
one — the FinalResult, the ledger's projection, replay's table, the audit report, the
Auditor's window and the export."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import artoo
from artoo._otlp import trace_id
from artoo.actors.roles.auditor import recompute_reports
from artoo.actors.roles.roster import CONTRACTS
from artoo.actors.runtime.ledger import CONVERGENCE_ENDS, task_figures
from artoo.export import export_jsonl, export_otlp, read_jsonl
from artoo.replay import read_store, task_table
from artoo.report import build_report
from artoo.schemas import Config, FinalResult, GGSConfig, LLMCall
from artoo.testing import write_script

from .helpers import DATA

SCRIPT = [
    {
        "role": "perceiver",
        "match": "delete",
        "content": {
            "intent": "delete old log",
            "kind": "change",
            "targets": [{"path": "archive/old.log", "role": "delete"}],
        },
    },
    {
        "role": "planner",
        "match": "delete",
        "times": 0,
        "content": {"subtasks": [{"instruction": "Delete archive/old.log with rm", "sequence": 1}]},
    },
    {
        "role": "executor",
        "match": "(?i)delete",  # round 0 is the request itself, "delete the old log"
        "tool_calls": [{"name": "shell", "arguments": {"command": "rm archive/old.log"}}],
    },
    {"role": "executor", "match": "(?i)delete", "times": 0, "content": "done"},
    {
        "role": "perceiver",
        "match": "greet",
        "content": {"intent": "greet", "kind": "question", "answer": "text"},
    },
    {
        # the magic word is a value no tool result shows: every round's answer fails
        "role": "perceiver",
        "match": "magic",
        "content": {"intent": "say the magic word", "kind": "question", "answer": "value"},
    },
    {
        "role": "planner",
        "match": "magic",
        "times": 0,
        "content": {"subtasks": [{"instruction": "Say the magic word", "sequence": 1}]},
    },
    {"role": "executor", "match": "magic", "times": 0, "content": "no"},
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, FinalResult]]:
    tmp = tmp_path_factory.mktemp("one-reading")
    workspace = tmp / "ws"
    shutil.copytree(DATA / "workspace", workspace)
    model = write_script(tmp / "s.toml", SCRIPT)
    config = Config(durability="none", max_parallel=1)
    finals: dict[str, FinalResult] = {}
    with artoo.System.open(
        tmp / "store", model=model, workspace=workspace, operator=lambda _: False, config=config
    ) as system:
        for result in (
            system.run("delete the old log", timeout=60),  # Law 1 denied, replan budget
            system.run("greet the user", timeout=60, max_model_calls=1),  # a refused call
        ):
            finals[result.task_id] = result
    # λ high, β off: each failed round costs more than the last, so Law 2 fires
    config = config.model_copy(update={"ggs": GGSConfig(lam=1.0, beta=0.0, epsilon=0.05)})
    with artoo.System.open(tmp / "store", model=model, workspace=workspace, config=config) as s:
        result = s.run("say the magic word", timeout=60)
        finals[result.task_id] = result
    return tmp / "store", finals


def test_the_store_holds_each_kind_of_end(store: tuple[Path, dict[str, FinalResult]]) -> None:
    _, finals = store
    assert sorted((f.reason or "", f.law1_denied) for f in finals.values()) == [
        ("budget", False),
        ("law2", False),
        ("replan_budget", True),
    ]


def test_every_face_agrees_on_every_per_task_figure(
    store: tuple[Path, dict[str, FinalResult]],
) -> None:
    path, finals = store
    envelopes, tasks = read_store(path)
    figures = {t.task_id: task_figures(e.body for e in t.envelopes) for t in tasks}
    refused = {
        t.task_id: sum(
            isinstance(e.body, LLMCall) and e.body.refused is not None for e in t.envelopes
        )
        for t in tasks
    }
    assert sum(refused.values()) == 1
    rows = {r.task_id: r for r in task_table(path)}
    document = build_report(envelopes)
    report_rows = {t.task_id: t for t in document.tasks}
    jsonl = io.BytesIO()
    export_jsonl(path, jsonl)
    exported = list(read_jsonl(jsonl.getvalue().splitlines()))
    otlp = io.BytesIO()
    export_otlp(path, otlp)
    chats: dict[str, int] = {}  # trace id (one trace per task) -> model-call spans
    for line in otlp.getvalue().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    attrs = {a["key"]: a["value"] for a in span.get("attributes", [])}
                    kind = attrs.get("error.type", {}).get("stringValue")
                    if span["name"].startswith("chat ") and kind != "budget_refused":
                        chats[span["traceId"]] = chats.get(span["traceId"], 0) + 1

    for task_id, final in finals.items():
        f = figures[task_id]
        made = final.cost.model_calls
        assert f.model_calls == made and f.refused_calls == refused[task_id]
        assert (f.status, f.reason, f.law1_denied) == (
            final.status,
            final.reason,
            final.law1_denied,
        )
        assert f.tokens_in == final.cost.tokens_in and f.tokens_out == final.cost.tokens_out
        row = rows[task_id]
        assert (row.model_calls, row.refused_calls, row.rounds) == (made, f.refused_calls, f.rounds)
        assert (row.status, row.reason, row.states) == (final.status, final.reason, f.path)
        assert (row.tokens_in, row.tokens_out) == (final.cost.tokens_in, final.cost.tokens_out)
        report = report_rows[task_id]
        assert (report.model_calls, report.tokens) == (made, f.tokens)
        assert (report.status, report.reason, report.rounds) == (
            final.status,
            final.reason,
            f.rounds,
        )
        assert report.law1_denied == final.law1_denied
        assert chats.get(trace_id(task_id).hex(), 0) == made
        assert made == sum(
            isinstance(e.body, LLMCall) and e.body.refused is None
            for e in exported
            if e.task_id == task_id
        )

    # the Auditor: one figure per window, summed over the tasks it saw
    reports = recompute_reports(envelopes, CONTRACTS, open_window=True)
    assert sum(r.model_calls for w in reports for r in w.roles) == sum(
        f.model_calls for f in figures.values()
    )
    ended: dict[str, int] = {}
    for w in reports:
        for status, n in w.tasks_ended.items():
            ended[status] = ended.get(status, 0) + n
    assert ended == {"abandon": 3}
    failing = {
        c.task_id for w in reports for c in w.convergence_failures if c.rule != "loss_not_improving"
    }
    assert failing == {t for t, f in figures.items() if f.convergence_failure}
    assert failing == {t for t, fin in finals.items() if fin.reason in CONVERGENCE_ENDS}
    attention = {a.task_id for a in document.attention if a.kind == "convergence_failure"}
    assert attention == failing
