"""`artoo diff`: two runs aligned by message kind and role; where they part; what was saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artoo.cli import main
from artoo.replay import diff_runs, read_store, render_diff
from artoo.schemas import DispatchManifest, LLMCall


def _sales_runs(store: Path) -> tuple[str, str]:
    _, tasks = read_store(store)
    sales = [t for t in tasks if "sales" in t.text]
    assert len(sales) == 2  # scenario 2, then scenario 5 with memory
    return sales[0].task_id, sales[1].task_id


def test_scenario_5_against_2_shows_the_plan_that_avoided_the_dead_end(demo_store: Path) -> None:
    first, again = _sales_runs(demo_store)
    _, [a] = read_store(demo_store, first)
    _, [b] = read_store(demo_store, again)
    d = diff_runs(a, b)
    assert (d.a.path, d.b.path) == (["change_path", "accept"], ["accept"])
    calls = [sum(isinstance(e.body, LLMCall) for e in t.envelopes) for t in (a, b)]
    assert (d.a.model_calls, d.b.model_calls) == tuple(calls)
    assert d.saved["model_calls"] == calls[0] - calls[1] > 0
    assert d.parted_a is not None  # A's dead end has no counterpart in B
    plans = [(x.body, y.body) for x, y in d.changed if isinstance(x.body, DispatchManifest)]
    assert plans, "the plans differ"
    plan_a, plan_b = plans[0]
    assert plan_b.should_prefer and not plan_a.should_prefer  # B planned from memory
    text = render_diff(d)
    assert "SHOULD PREFER" in text and f"B made {calls[0] - calls[1]} fewer model calls" in text


def test_a_run_against_itself_does_not_part(demo_store: Path) -> None:
    first, _ = _sales_runs(demo_store)
    _, [a] = read_store(demo_store, first)
    d = diff_runs(a, a)
    assert d.common == len(a.envelopes)
    assert (d.parted_a, d.parted_b, d.changed) == (None, None, [])
    assert all(v == 0 for v in d.saved.values())


def test_the_cli_prints_json_and_needs_a_task_for_a_store_of_many(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, again = _sales_runs(demo_store)
    assert main(["diff", f"{demo_store}:{first}", f"{demo_store}:{again}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["saved"]["model_calls"] > 0 and out["changed"]
    assert main(["diff", str(demo_store), f"{demo_store}:{again}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds 5 tasks: name one as" in err
