"""``artoo replay``: the timeline of a store and ``--verify`` over the demo's real logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

import artoo
import artoo.demo
from artoo.cli import main
from artoo.demo import SCENARIOS
from artoo.eventstore import EventLog
from artoo.replay import rerun, task_table, timeline, verify
from artoo.schemas import (
    Config,
    CorrectionSignal,
    Envelope,
    FinalResult,
    GGSConfig,
    GGSDecision,
    LLMCall,
    MegramRecorded,
    OutcomeSummary,
    SubTaskOutcome,
    TaskRequest,
)
from artoo.testing import write_script

from .helpers import CONFIG, PERCEIVE
from .helpers import rewrite_event as _rewrite

GOLDEN = Path(__file__).parent.parent / "data" / "golden_demo_0_1"


def _logged(store: Path) -> list[Envelope]:
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read())


# --------------------------------------------------------------------------- timeline
def test_the_task_table_has_one_row_per_demo_scenario_with_its_states_and_cost(
    demo_store: Path,
) -> None:
    rows = task_table(demo_store)
    assert [r.text for r in rows] == [s.text for s in SCENARIOS]
    assert [tuple(r.states) for r in rows] == [s.expect_states for s in SCENARIOS]
    assert [r.status for r in rows] == [s.expect_status for s in SCENARIOS]
    finals = {e.task_id: e.body for e in _logged(demo_store) if isinstance(e.body, FinalResult)}
    for r in rows:
        assert r.model_calls == finals[r.task_id].cost.model_calls
        assert r.tokens_in == finals[r.task_id].cost.tokens_in


def test_a_timeline_tells_every_envelope_of_the_task_in_seq_order(demo_store: Path) -> None:
    rows = task_table(demo_store)
    denied = rows[3]  # scenario 4: the Law 1 action denied
    (task,) = timeline(demo_store, denied.task_id)
    seqs = [e.seq for e in task.entries]
    assert seqs == [e.seq for e in _logged(demo_store) if e.task_id == denied.task_id]
    kinds = [e.kind for e in task.entries]
    assert kinds[0] == "UserRequest" and kinds.count("FinalResult") == 1
    lines = [e.text for e in task.entries]
    details = [d for e in task.entries for d in e.detail]
    assert any(t.startswith("confirmation DENIED") for t in lines)
    assert any("REFUSED (law1_denied)" in d for d in details)
    decisions = [t for t, k in zip(lines, kinds, strict=True) if k == "GGSDecision"]
    assert [d.split("→ ")[1].split(" ")[0] for d in decisions] == [
        s.upper() for s in SCENARIOS[3].expect_states
    ]
    assert task.status == "abandon" and task.reason == "replan_budget"
    (spec,) = [t for t, k in zip(lines, kinds, strict=True) if k == "TaskSpec"]
    assert "(kind change," in spec  # how the request was read: what its proof is held to
    (first,) = timeline(demo_store, rows[0].task_id)
    assert any("(kind question, answer number," in e.text for e in first.entries)


def test_the_cli_prints_the_table_and_a_task_as_json(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(demo_store), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(SCENARIOS)
    task_id = rows[1]["task_id"]
    assert main(["replay", str(demo_store), "--task", task_id, "--json"]) == 0
    task = json.loads(capsys.readouterr().out)
    assert task["task_id"] == task_id and task["status"] == "accept"
    calls = sum(
        1 for e in _logged(demo_store) if e.task_id == task_id and isinstance(e.body, LLMCall)
    )
    assert sum(1 for e in task["entries"] if e["kind"] == "LLMCall") == calls
    assert main(["replay", str(demo_store), "--task", task_id]) == 0
    text = capsys.readouterr().out
    assert "CHANGE_PATH" in text and "FINAL ACCEPT" in text


def test_an_unknown_task_is_a_one_line_error(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(demo_store), "--task", "nope"]) == 2
    assert "no task 'nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- verify
def test_every_decision_of_the_demo_verifies(demo_store: Path) -> None:
    report = verify(demo_store)
    assert report.ok, [str(m) for m in report.mismatches]
    decisions = sum(1 for e in _logged(demo_store) if isinstance(e.body, GGSDecision))
    assert report.checked["ggs"] == decisions
    assert report.checked["quantization"] == sum(
        1 for e in _logged(demo_store) if isinstance(e.body, MegramRecorded)
    )
    assert report.checked["calibration"] >= len(SCENARIOS)
    assert report.checked["rule_verdict"] > 0 and report.checked["memory"] == 1
    # policy 1: every proof decision recomputed (none taken as logged), every reading
    # checked again — the model's four, and scenario 5's from memory
    assert not report.retired and not report.skipped
    assert report.checked["reading"] == len(SCENARIOS)
    asks = [
        e
        for e in _logged(demo_store)
        if isinstance(e.body, CorrectionSignal) and e.body.corroborate
    ]
    assert len(asks) == 2  # scenarios 2 and 5 derive the total a second time, afresh
    assert report.checked["corroborate"] >= 2 * len(asks)  # each ask, and what followed


def test_the_cli_verify_exits_0_on_the_demo(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(demo_store), "--verify"]) == 0
    assert "every decision agrees with the log" in capsys.readouterr().out


def test_an_edited_loss_is_named_by_its_seq(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = next(e for e in _logged(store) if isinstance(e.body, GGSDecision))
    _rewrite(store, msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, loss=0.5)))
    report = verify(store)
    assert [(m.seq, m.kind, m.field) for m in report.mismatches] == [
        (env.seq, "GGSDecision", "loss")
    ]
    assert report.mismatches[0].logged == 0.5
    assert report.mismatches[0].recomputed == env.body.loss
    assert main(["replay", str(store), "--verify", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert not out["ok"] and out["mismatches"][0]["seq"] == env.seq


def test_an_edited_must_not_set_and_quantization_are_mismatches(store: Path) -> None:
    logged = _logged(store)
    decision = next(e for e in logged if isinstance(e.body, GGSDecision) and e.body.blocked_targets)
    _rewrite(
        store,
        msgspec.structs.replace(
            decision, body=msgspec.structs.replace(decision.body, blocked_targets=[])
        ),
    )
    megram = next(e for e in logged if isinstance(e.body, MegramRecorded))
    m = msgspec.structs.replace(megram.body.megram, f=0.123)
    _rewrite(store, msgspec.structs.replace(megram, body=MegramRecorded(megram=m)))
    found = {(x.seq, x.kind, x.field) for x in verify(store).mismatches}
    assert (decision.seq, "GGSDecision", "blocked_targets") in found
    assert (megram.seq, "MegramRecorded", "f") in found  # the matrix says otherwise
    # the store's memory applied the logged f; a rebuild from the edited log differs
    assert (megram.body.megram.id,) == tuple(x[2] for x in found if x[1] == "memory")


def test_an_edited_rule_verdict_is_a_mismatch(store: Path) -> None:
    env = next(
        e
        for e in _logged(store)
        if isinstance(e.body, SubTaskOutcome)
        and e.body.verdicts
        and e.body.verdicts[0].signal == "rule"
        and e.body.verdicts[0].passed
    )
    flipped = [msgspec.structs.replace(env.body.verdicts[0], passed=False), *env.body.verdicts[1:]]
    _rewrite(
        store,
        msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, verdicts=flipped)),
    )
    mismatches = verify(store, env.task_id).mismatches
    assert [(m.seq, m.kind) for m in mismatches] == [(env.seq, "SubTaskOutcome")]


def test_workspace_checks_are_recomputed_from_what_they_read(store: Path) -> None:
    """A check that reads the workspace logs what it read (Verdict.observed): verify
    decides it again from that — and an edited observation is a mismatch at its seq."""
    report = verify(store)
    assert report.ok and report.skipped.get("rule_verdict", 0) == 0
    env = next(
        e
        for e in _logged(store)
        if isinstance(e.body, OutcomeSummary)
        and any(v.passed and "counts" in v.observed for v in e.body.task_verdicts)
    )
    verdicts = [
        msgspec.structs.replace(v, observed={**v.observed, "counts": [987654]})
        if "counts" in v.observed
        else v
        for v in env.body.task_verdicts
    ]
    _rewrite(
        store,
        msgspec.structs.replace(
            env, body=msgspec.structs.replace(env.body, task_verdicts=verdicts)
        ),
    )
    mismatches = verify(store, env.task_id).mismatches
    assert {(m.seq, m.kind) for m in mismatches} == {(env.seq, "OutcomeSummary")}
    [m] = mismatches  # the verdict (by criterion id): logged passed, recomputed failed
    assert (m.logged["passed"], m.recomputed["passed"]) == (True, False)
    assert "the answer states 3" in m.recomputed["evidence"]


def test_the_golden_0_1_log_verifies_with_its_retired_proof_taken_as_logged(
    tmp_path: Path,
) -> None:
    # artoo 0.1 ran under policy 0 (its TaskRequests log no policy): its proof decisions —
    # the validators' rule verdicts (11 Agent-Validator answers, 7 Meta-Validator fan-ins)
    # and how each GGS decision's round was established (7) — are counted as retired, not
    # recomputed; the GGS math, calibration, dispatch and quantization are recomputed and
    # agree. Its ToolCalls log no Law 1 decision (4 calls), and the store keeps no memory.
    shutil.copytree(GOLDEN, tmp_path / "golden")
    report = verify(tmp_path / "golden")
    assert report.ok, [str(m) for m in report.mismatches]
    assert dict(report.retired) == {"rule_verdict": 18, "proof": 7}
    assert dict(report.checked) == {"ggs": 7, "calibration": 7, "dispatch": 14, "quantization": 6}
    assert dict(report.skipped) == {"law1": 4, "memory": 1}  # the store keeps only its log


@pytest.mark.parametrize(
    ("name", "status", "established"),
    [
        ("golden_policy1_sql_cfg_1", "success", "none"),
        ("golden_policy1_sql_ini_1", "accept", "code"),
    ],
)
def test_a_policy_1_log_verifies_in_full_under_a_later_policy(
    tmp_path: Path, name: str, status: str, established: str
) -> None:
    # two tasks of the issue-40 holdout run (artoo eec54e6, policy 1, the local model): a
    # config edit that ended success at D = 0.2 with a criterion failed (policy 2 refines
    # it), and an accepted lookup whose episode records its reading under policy 1
    shutil.copytree(GOLDEN.parent / name, tmp_path / name)
    report = verify(tmp_path / name)
    assert report.ok, [str(m) for m in report.mismatches]
    assert not report.retired  # policy 1's proof is recomputed, not taken as logged
    assert report.checked["ggs"] >= 1 and report.checked["reading"] == 1
    final = next(e.body for e in _logged(tmp_path / name) if isinstance(e.body, FinalResult))
    request = next(e.body for e in _logged(tmp_path / name) if isinstance(e.body, TaskRequest))
    assert (request.policy, final.status, final.established) == (1, status, established)


def test_a_decision_is_recomputed_under_the_ggs_parameters_it_logged(store: Path) -> None:
    env = next(e for e in _logged(store) if isinstance(e.body, GGSDecision))
    assert env.body.params["theta"] == 0.8  # the runtime logs its GGSConfig
    params = {**env.body.params, "theta": 1e-9}  # under this θ the cascade abandons at once
    _rewrite(
        store, msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, params=params))
    )
    fields = {m.field for m in verify(store, env.task_id).mismatches if m.seq == env.seq}
    assert "directive" in fields


# --------------------------------------------------------------------------- rerun
def test_every_demo_scenario_reruns_with_zero_divergence(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = rerun(demo_store)
    assert report.ok, str(report.divergence)
    assert len(report.tasks) == len(SCENARIOS) and not report.unanswered
    assert report.compared == sum(1 for e in _logged(demo_store) if e.task_id)
    assert main(["replay", str(demo_store), "--rerun"]) == 0
    assert "zero divergence" in capsys.readouterr().out


def test_one_task_reruns_on_the_memory_it_saw(demo_store: Path) -> None:
    remembered = task_table(demo_store)[4]  # scenario 5 plans from scenario 2's memory
    report = rerun(demo_store, remembered.task_id)
    assert report.ok, str(report.divergence)
    assert report.tasks == [remembered.task_id]


def test_an_edited_model_answer_diverges_at_the_message_it_caused(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = _logged(store)
    # the last task that asked the model for a plan (scenario 5 reuses scenario 2's plan)
    call = next(
        e
        for e in reversed(logged)
        if isinstance(e.body, LLMCall)
        and e.body.role == "planner"
        and "data/sales.csv" in (e.body.response or "")
    )
    answer = (call.body.response or "").replace("data/sales.csv", "data/other.csv", 1)
    _rewrite(
        store,
        msgspec.structs.replace(call, body=msgspec.structs.replace(call.body, response=answer)),
    )
    manifest = next(
        e for e in logged if e.seq > call.seq and type(e.body).__name__ == "DispatchManifest"
    )
    report = rerun(store)
    d = report.divergence
    assert d is not None and (d.seq, d.role, d.kind) == (
        manifest.seq,
        "planner",
        "DispatchManifest",
    )
    assert any(
        logged_v == recomputed_v.replace("data/other.csv", "data/sales.csv") != recomputed_v
        for _, logged_v, recomputed_v in d.diff
    )
    assert main(["replay", str(store), "--rerun", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["divergence"]["seq"] == manifest.seq


def test_a_model_call_the_log_cannot_answer_is_named(store: Path) -> None:
    logged = _logged(store)
    first = logged[0].task_id
    # drop the recorded Perceiver call of the first task: its rerun asks and gets no answer
    call = next(e for e in logged if e.task_id == first and isinstance(e.body, LLMCall))
    replaced = msgspec.structs.replace(call, body=msgspec.structs.replace(call.body, role="nobody"))
    _rewrite(store, replaced)
    report = rerun(store, first)
    assert not report.ok
    assert report.unanswered and "model call of perceiver" in report.unanswered[0]
    assert report.divergence is not None and report.divergence.seq == call.seq


def test_a_rerun_runs_each_task_under_the_config_it_logged(tmp_path: Path, workspace: Path) -> None:
    """A task run under a non-default Config (one attempt per subtask, not three) reruns
    with zero divergence: its TaskRequest logged the Config, and the rerun uses it."""
    script = Path(artoo.demo.__file__).parent / "demo_data" / "scenarios" / "2_change_path.toml"
    config = Config(max_retries=0, ggs=GGSConfig(max_replans=5))
    store = tmp_path / "store"
    with artoo.System.open(
        store, model=f"scripted:{script}", workspace=workspace, config=config
    ) as system:
        assert system.run("report the total of this year's sales figures").status == "accept"
    [request] = [e.body for e in _logged(store) if isinstance(e.body, TaskRequest)]
    assert request.config["max_retries"] == 0 and request.config["ggs"]["max_replans"] == 5
    report = rerun(store)
    assert report.ok, str(report.divergence)
    # and under the default Config the second attempt has no recorded answer
    default = rerun(store, config=Config())
    assert not default.ok


def test_a_rerun_takes_the_task_age_from_the_record(tmp_path: Path, workspace: Path) -> None:
    """Ω (and so L) grows with the task's age: a task whose model took 1.5 s reruns with
    the same Ω, because the rerun's clock follows the recorded answers' times."""
    model = write_script(
        tmp_path / "slow.toml",
        [PERCEIVE, {"role": "executor", "content": "hello", "delay_ms": 1500}],
    )
    store = tmp_path / "store"
    with artoo.System.open(store, model=model, workspace=workspace, config=CONFIG) as system:
        assert system.run("say hello").status == "success"
    [decision] = [e.body for e in _logged(store) if isinstance(e.body, GGSDecision)]
    assert decision.omega > 0.0015  # 0.4 × 1.5 s / 300 s: past the comparison's 10⁻³
    report = rerun(store)
    assert report.ok, str(report.divergence)


def test_a_figure_printed_in_a_text_agrees_within_the_tolerance_and_its_rounding() -> None:
    """Ω grows with the task's age: a rerun's summary may print Ω=0.201 where the record
    printed Ω=0.200 (the age crossed a last digit) — no divergence; a decimal further off,
    or any other integer or word, is one."""
    from artoo.replay._rerun import _diff

    def summary(omega: str, failed: int = 0) -> dict[str, str]:
        return {"content": f"accept: D=0.000, Ω={omega}, L=0.080, {failed} of 2 criteria failed"}

    assert _diff(summary("0.200"), summary("0.201"), "") == []
    assert _diff(summary("0.200"), summary("0.203"), "") == [
        ("content", summary("0.200")["content"], summary("0.203")["content"])
    ]
    assert _diff(summary("0.200"), summary("0.200", failed=1), "") != []
    assert _diff({"x": "accept"}, {"x": "success"}, "") != []
