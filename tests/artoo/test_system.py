"""End-to-end: the whole actor system on the scripted backend, real threads, real LevelDB."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import artoo
from artoo.actors.llm import ModelNotConfigured
from artoo.actors.verification.request import request_tag
from artoo.demo import SCENARIOS, run_scenario
from artoo.eventstore import EventLog
from artoo.schemas import (
    Config,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    GGSDecision,
    LLMCall,
    RoleFailed,
    SubTask,
)
from artoo.testing import write_script

from .helpers import (
    CONFIG,
    PERCEIVE,
    rm_script_entries,
    task_events,
)


# --------------------------------------------------------------------------- the scenarios
def test_every_demo_scenario_takes_its_exact_macro_states(tmp_path: Path, workspace: Path) -> None:
    store = tmp_path / "store"
    for scenario in SCENARIOS:
        run = run_scenario(scenario, store, workspace)
        assert run.states == list(scenario.expect_states), scenario.title
        assert run.result.status == scenario.expect_status, run.result.summary
        assert scenario.expect_in_summary in run.result.summary
        assert run.final_results == 1
        assert run.result.task_id == run.task_id
        # every model call is in the log, each carrying a response or an error
        calls = [e.body for e in task_events(store, run.task_id) if isinstance(e.body, LLMCall)]
        assert len(calls) == run.result.cost.model_calls > 0
        assert all(c.response is not None or c.tool_calls or c.error for c in calls)
    # scenario 4 was denied: the file is still there
    assert (workspace / "archive" / "old.log").exists()


def test_scenario_5_plans_from_memory(tmp_path: Path, workspace: Path) -> None:
    store = tmp_path / "store"
    by_key = {s.key: s for s in SCENARIOS}
    first = run_scenario(by_key["2"], store, workspace)
    assert first.states == ["change_path", "accept"]
    assert first.calibration[0] == "(no memory lines)"
    again = run_scenario(by_key["5"], store, workspace)
    assert again.states == ["accept"]
    assert any(line.startswith("SHOULD PREFER") for line in again.calibration[0].split(" | "))


def test_scenario_2_blocks_the_dead_end_by_structured_target(
    tmp_path: Path, workspace: Path
) -> None:
    store = tmp_path / "store"
    run = run_scenario(SCENARIOS[1], store, workspace)
    events = task_events(store, run.task_id)
    decision = next(e.body for e in events if isinstance(e.body, GGSDecision))
    assert decision.directive == "change_path"
    assert decision.blocked_targets == ["data/sales_2024.csv"]
    assert decision.replans == 0
    round1 = [e.body for e in events if isinstance(e.body, SubTask) and e.body.round == 1]
    assert round1 and round1[0].blocked_targets == ["data/sales_2024.csv"]


# --------------------------------------------------------------------------- concurrency
def test_sixteen_parallel_subtasks(tmp_path: Path, workspace: Path) -> None:
    """Round 0 (the request itself) claims the parts without writing any: no effect, so
    its change fails and the Planner plans round 1 — sixteen parts in one group, run at
    once, each writing its file into parts/ (the reading's directory to create in)."""
    n = 16
    (workspace / "parts").mkdir()
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "sixteen parts",
                "kind": "creation",
                "targets": [{"path": "parts/", "role": "create"}],
            },
        },
        {"role": "executor", "match": "Subtask: write sixteen parts", "content": "All written."},
        {
            "role": "planner",
            "content": {
                "subtasks": [
                    {"instruction": f"Write part {i:02d}", "sequence": 1} for i in range(n)
                ]
            },
        },
    ]
    for i in range(n):
        write = {"path": f"parts/part{i:02d}.txt", "content": f"part {i:02d}"}
        entries += [
            {
                "role": "executor",
                "match": f"Subtask: Write part {i:02d}",
                "tool_calls": [{"name": "write_file", "arguments": write}],
                "delay_ms": 50,
            },
            {
                "role": "executor",
                "match": f"Subtask: Write part {i:02d}",
                "content": f"this is part {i:02d}",
            },
        ]
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(durability="none", max_parallel=n, max_retries=0)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=config
    ) as s:
        handle = s.submit("write sixteen parts into parts/")
        result = handle.result(60)
    # the parts were made, but no value of the request's reads back: success, not accept
    assert result.status == "success", result.summary
    for i in range(n):
        assert f"this is part {i:02d}" in result.output
        assert (workspace / "parts" / f"part{i:02d}.txt").read_text() == f"part {i:02d}"
    # perceiver, round 0's executor, planner, then two calls for each of the sixteen parts
    assert result.cost.model_calls == 3 + 2 * n
    # parallel subtasks do not add to the sequential chain: the group counts as one part's
    assert result.cost.sequential_calls == 3 + 2


def test_many_tasks_at_once_each_end_in_exactly_one_final_result(
    tmp_path: Path, workspace: Path
) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=CONFIG
    ) as s:
        handles = [s.submit(f"say hello {i}") for i in range(12)]
        results = [h.result(60) for h in handles]
    assert [r.status for r in results] == ["success"] * 12
    with EventLog.open(tmp_path / "store" / "events", durability="none") as log:
        finals = [e.body.task_id for e in log.read() if isinstance(e.body, FinalResult)]
    assert sorted(finals) == sorted(h.task_id for h in handles)


# --------------------------------------------------------------------------- failure paths
def test_a_role_that_raises_ends_its_task_and_the_next_task_succeeds(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import artoo.actors.roles.meta_validator as mv

    real = mv.merge_outputs
    calls = {"n": 0}

    def flaky(order, outcomes):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("boom in the meta-validator")
        return real(order, outcomes)

    monkeypatch.setattr(mv, "merge_outputs", flaky)
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=CONFIG
    ) as s:
        first = s.run("say hello", timeout=30)
        second = s.run("say hello again", timeout=30)
    assert first.status == "abandon"
    assert "boom in the meta-validator" in first.summary
    assert "meta_validator" in first.summary
    assert second.status == "success", second.summary
    with EventLog.open(tmp_path / "store" / "events", durability="none") as log:
        everything = list(log.read())
    failed = [e.body for e in everything if isinstance(e.body, RoleFailed)]
    assert [f.role for f in failed] == ["meta_validator"]
    assert failed[0].task_ids == [first.task_id]
    finals = [e.body for e in everything if isinstance(e.body, FinalResult)]
    assert sorted(f.task_id for f in finals) == sorted([first.task_id, second.task_id])


def test_deadline_expiry_abandons(tmp_path: Path, workspace: Path) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello", "delay_ms": 1500}]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=CONFIG
    ) as s:
        result = s.submit("say hello", timeout=0.3).result(30)
        s.flush(5)
    assert result.status == "abandon"
    assert "deadline" in result.summary
    events = task_events(tmp_path / "store", result.task_id)
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1


def test_cancel_ends_the_task_once(tmp_path: Path, workspace: Path) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello", "delay_ms": 1000}]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=CONFIG
    ) as s:
        handle = s.submit("say hello")
        handle.cancel("changed my mind")
        result = handle.result(30)
        s.flush(5)
    assert result.status == "abandon"
    assert "changed my mind" in result.summary
    events = task_events(tmp_path / "store", handle.task_id)
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1


def test_model_failure_is_a_clean_abandon(tmp_path: Path, workspace: Path) -> None:
    # the perceiver's answer is never valid: one repair, then a clean failure (Law 0)
    entries = [{"role": "perceiver", "times": 0, "content": "not json at all"}]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=workspace, config=CONFIG
    ) as s:
        result = s.run("say hello", timeout=30)
    assert result.status == "abandon" and result.reason == "step_failed"
    assert "could not be read" in result.summary
    assert result.cost.model_calls == 2  # the answer and its one repair


def test_two_systems_in_one_process(tmp_path: Path, workspace: Path) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    model = write_script(tmp_path / "s.toml", entries)
    a = artoo.System.open(tmp_path / "a", model=model, workspace=workspace, config=CONFIG)
    b = artoo.System.open(tmp_path / "b", model=model, workspace=workspace, config=CONFIG)
    try:
        ha, hb = a.submit("say hello"), b.submit("say hello")
        ra, rb = ha.result(30), hb.result(30)
    finally:
        a.close()
        b.close()
    assert ra.status == rb.status == "success"
    assert task_events(tmp_path / "a", ha.task_id) and not task_events(tmp_path / "a", hb.task_id)


def test_async_twins(tmp_path: Path, workspace: Path) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    model = write_script(tmp_path / "s.toml", entries)

    async def main() -> str:
        with artoo.System.open(
            tmp_path / "s", model=model, workspace=workspace, config=CONFIG
        ) as s:
            handle = await s.asubmit("say hello")
            first = await handle.aresult(30)
            second = await s.arun("say hello again", timeout=30)
            return first.status + second.status

    assert asyncio.run(main()) == "successsuccess"


def test_missing_model_opens_for_reading_and_submit_says_how_to_set_one(
    tmp_path: Path, demo_store: Path
) -> None:
    import shutil

    shutil.copytree(demo_store, tmp_path / "s")
    with artoo.System.open(tmp_path / "s", env={}) as system:  # no model: reading works
        assert system.audit().complete is False
        assert system.flush(10)
        with pytest.raises(ModelNotConfigured, match="ARTOO_MODEL"):
            system.submit("say hello")


def test_subscribe_sees_every_envelope_of_a_task(tmp_path: Path, workspace: Path) -> None:
    entries = [PERCEIVE, {"role": "executor", "times": 0, "content": "hello"}]
    model = write_script(tmp_path / "s.toml", entries)
    seen: list[int] = []
    done = threading.Event()

    def listener(env) -> None:  # type: ignore[no-untyped-def]
        seen.append(env.seq)
        if isinstance(env.body, FinalResult):
            done.set()

    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=CONFIG) as s:
        s.subscribe(listener)
        result = s.run("say hello", timeout=30)
        assert done.wait(10)
    assert result.status == "success"
    assert seen == sorted(seen) and seen == list(range(seen[0], seen[0] + len(seen)))


# --------------------------------------------------------------------------- Law 1
def _rm_script(tmp_path: Path) -> str:
    return write_script(tmp_path / "rm.toml", rm_script_entries())


def test_law1_operator_approves(tmp_path: Path, workspace: Path) -> None:
    asked: list[ConfirmationRequest] = []

    def operator(request: ConfirmationRequest) -> bool:
        asked.append(request)
        return True

    with artoo.System.open(
        tmp_path / "s",
        model=_rm_script(tmp_path),
        workspace=workspace,
        config=CONFIG,
        operator=operator,
    ) as s:
        result = s.run("delete the old log", timeout=30)
    assert result.status == "success", result.summary
    assert len(asked) == 1 and asked[0].tool == "shell"
    assert "rm" in asked[0].action or "rm" in str(asked[0].args)
    assert not (workspace / "archive" / "old.log").exists()
    assert "[LAW1]" not in result.summary


def test_law1_operator_that_never_answers_is_a_denial(tmp_path: Path, workspace: Path) -> None:
    never = threading.Event()

    def operator(request: ConfirmationRequest) -> bool:
        never.wait(30)
        return True

    config = Config(durability="none", max_parallel=1, confirmation_timeout_s=0.5)
    try:
        with artoo.System.open(
            tmp_path / "s",
            model=_rm_script(tmp_path),
            workspace=workspace,
            config=config,
            operator=operator,
        ) as s:
            result = s.run("delete the old log", timeout=30)
    finally:
        never.set()
    assert result.status == "abandon"
    assert result.summary.startswith("[LAW1]")
    assert (workspace / "archive" / "old.log").exists()
    events = task_events(tmp_path / "s", result.task_id)
    decisions = [e.body for e in events if type(e.body).__name__ == "ConfirmationDecision"]
    assert [d.approved for d in decisions] == [False]
    assert "no answer within" in decisions[0].reason


# --------------------------------------------------------------------------- the Dreamer
COUNT = "how many lines are in notes/todo.txt?"


def _accept_entries() -> list[dict]:
    """A task proven by code, so it ends ``accept``: a count question (its kind, unit and
    file read), code's ``count_matches`` check, ``wc -l`` run, and the answer stating its
    number."""
    return [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "count the lines of notes/todo.txt",
                "kind": "question",
                "answer": "number",
                "count": "lines",
                "targets": [{"path": "notes/todo.txt", "role": "read"}],
            },
        },
        {"role": "executor", "times": 0, "match": r"7 notes/todo\.txt", "content": "7 lines."},
        {
            "role": "executor",
            "times": 0,
            "tool_calls": [{"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}}],
        },
    ]


def test_dreamer_distils_six_accepts_into_one_sop_with_the_model(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artoo.actors.llm._scripted import ScriptedBackend

    caps: set[int | None] = set()
    complete = ScriptedBackend.complete

    def recording(self: ScriptedBackend, request: Any) -> Any:
        if request.role == "dreamer":
            caps.add(request.max_output_tokens)
        return complete(self, request)

    monkeypatch.setattr(ScriptedBackend, "complete", recording)
    rule = "Count lines with wc -l."
    entries = [*_accept_entries(), {"role": "dreamer", "content": {"rule": rule}}]
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(durability="none", dream_interval_s=3600)
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=config) as s:
        for _ in range(5):  # one request, one memory tag (code's, from the request)
            assert s.run(COUNT, timeout=30).status == "accept"
        assert s.dream() == 0  # five accepts: attention 4.5 < 5
        s.run("How many lines are in notes/todo.txt", timeout=30)  # a light paraphrase
        assert s.dream() == 1  # six: 5.4 ≥ 5 and decision 5.4 ≥ 3
        assert s.dream() == 0  # never promoted twice
        sops = s.megrams.query_c(f"intent:{request_tag(COUNT)}", "env:local")
    assert [m.content for m in sops] == [rule]
    assert sops[0].level == "C" and sops[0].k == 0.0 and sops[0].sigma > 0
    assert caps == {256}  # an SOP rule is short: Config.output_caps.dreamer


def test_flush_returns_once_memory_applied_what_was_published(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artoo.actors.roles.memory import Memory

    def slow_apply(self: Memory, env: Envelope) -> None:
        time.sleep(0.2)  # a Memory role that lags behind the bus
        self.megrams.apply(env.body, seq=env.seq)

    monkeypatch.setattr(Memory, "on_memory_event", slow_apply)
    model = write_script(tmp_path / "s.toml", _accept_entries())
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=CONFIG) as s:
        for i in range(3):
            s.run(f"{COUNT} ({i})", timeout=30)
            assert s.flush(10)
            # no wait: the task's megram is in the store once flush returned
            assert len(s.megrams) == i + 1
    assert s.flush(1)  # after close: nothing left to wait for


def test_dreamer_passes_by_itself_shortly_after_a_final_result(
    tmp_path: Path, workspace: Path
) -> None:
    from artoo.schemas import SOPPromoted

    model = write_script(tmp_path / "s.toml", _accept_entries())  # no dreamer entry: fallback
    config = Config(durability="none", dream_interval_s=3600)
    promoted = threading.Event()
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=config) as s:
        s.subscribe(lambda env: isinstance(env.body, SOPPromoted) and promoted.set())
        for _ in range(6):
            assert s.run(COUNT, timeout=30).status == "accept"
        assert promoted.wait(10), "no debounced pass after the sixth FinalResult"
        s.flush(5)
        sops = s.megrams.query_c(f"intent:{request_tag(COUNT)}", "env:local")
    assert len(sops) == 1 and sops[0].content  # a deterministic fallback rule


@pytest.mark.slow
def test_the_litellm_path_end_to_end_with_mock_response(tmp_path: Path, workspace: Path) -> None:
    # one mock answer for every call: a valid Perceiver reading (a question answered in
    # free text), and for the Executor a plain final answer — the whole loop on litellm
    answer = msgspec.json.encode({"intent": "say hello", "kind": "question", "answer": "text"})
    answer = answer.decode()
    with artoo.System.open(
        tmp_path / "s",
        model="openai/gpt-4o-mini",
        workspace=workspace,
        config=CONFIG,
        model_options={"mock_response": answer, "api_key": "sk-test-not-used"},
    ) as s:
        result = s.run("say hello", timeout=60)
    # free text is never proven: success, not accept
    assert (result.status, result.established) == ("success", "model"), result.summary
    calls = [
        e.body for e in task_events(tmp_path / "s", result.task_id) if isinstance(e.body, LLMCall)
    ]
    assert [c.role for c in calls] == ["perceiver", "executor"]  # round 0: the request itself
    assert all(c.model == "openai/gpt-4o-mini" and c.error is None for c in calls)
    assert result.cost.tokens_in > 0 and result.cost.tokens_out > 0


# --------------------------------------------------------------------------- the Dispatcher
WORD = "write the word into notes/word.txt"


def _two_groups(use: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A creation whose round 0 (the request itself) writes nothing (its change fails),
    then the Planner's two groups: find the word, then use it; ``use``: the second group's
    Executor entries."""
    return [
        {
            "role": "perceiver",
            "content": {
                "intent": "write the word",
                "kind": "creation",
                "targets": [{"path": "notes/word.txt", "role": "create"}],
            },
        },
        {"role": "executor", "match": f"Subtask: {WORD}", "content": "I need the word first."},
        {
            "role": "planner",
            "times": 0,
            "content": {
                "subtasks": [
                    {"instruction": "Find the word", "sequence": 1},
                    {"instruction": "Use the word", "sequence": 2, "tools": ["write_file"]},
                ]
            },
        },
        *use,
    ]


def test_a_group_sees_the_outputs_of_the_group_before(tmp_path: Path, workspace: Path) -> None:
    previous = r"Outputs of the previous step:\n- Find the word: the word is alpha"
    write = {"path": "notes/word.txt", "content": "alpha"}
    entries = _two_groups(
        [
            {"role": "executor", "match": "Subtask: Find the word", "content": "the word is alpha"},
            {
                "role": "executor",
                "match": previous,
                "tool_calls": [{"name": "write_file", "arguments": write}],
            },
            {"role": "executor", "match": previous, "content": "I used alpha"},
        ]
    )
    model = write_script(tmp_path / "s.toml", entries)
    config = CONFIG.model_copy(update={"max_retries": 0})
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=config) as s:
        result = s.run(WORD, timeout=30)
    assert result.status == "success", result.summary
    assert result.output == "the word is alpha\n\nI used alpha"
    assert (workspace / "notes" / "word.txt").read_text() == "alpha"
    # perceiver, round 0's executor, planner, then one call for the first group and two
    # for the second
    assert result.cost.sequential_calls == 6


def test_later_groups_are_skipped_after_a_failed_group(tmp_path: Path, workspace: Path) -> None:
    glob = {"name": "glob", "arguments": {"pattern": "*.md"}}
    entries = _two_groups(  # the first group can never pass: the same call, a doom loop
        [{"role": "executor", "times": 0, "match": "Subtask: Find the word", "tool_calls": [glob]}]
    )
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(durability="none", max_retries=0, ggs={"max_replans": 1})
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=config) as s:
        result = s.run(WORD, timeout=30)
    assert result.status == "abandon"
    events = task_events(tmp_path / "s", result.task_id)
    outcomes = {
        e.body.subtask_id: e.body.status
        for e in events
        if type(e.body).__name__ == "SubTaskOutcome" and e.body.round == 1
    }
    assert sorted(outcomes.values()) == ["failed", "skipped"]
    executed = [
        e.body for e in events if type(e.body).__name__ == "ExecutionResult" and e.body.round == 1
    ]
    assert len(executed) == 1  # the second group never ran
    assert not (workspace / "notes" / "word.txt").exists()


def test_the_same_call_three_times_ends_the_attempt_as_a_doom_loop(
    tmp_path: Path, workspace: Path
) -> None:
    entries = [
        PERCEIVE,
        {
            "role": "executor",
            "times": 0,
            "tool_calls": [{"name": "glob", "arguments": {"pattern": "*.md"}}],
        },
    ]
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(durability="none", max_retries=0, ggs={"max_replans": 0})
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace, config=config) as s:
        result = s.run("loop", timeout=30)
    assert result.status == "abandon"
    events = task_events(tmp_path / "s", result.task_id)
    execution = next(e.body for e in events if type(e.body).__name__ == "ExecutionResult")
    assert not execution.ok and execution.error.startswith("doom loop")
    assert len(execution.tool_calls) == 3
    decision = next(e.body for e in events if isinstance(e.body, GGSDecision))
    assert decision.p == 1.0  # a doom loop is a logical failure


def test_every_litellm_backend_gets_the_output_token_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import artoo.system as system_module

    built: list[dict[str, object]] = []
    real = system_module.resolve_backend

    def spy(name: str, **kwargs: object) -> object:
        built.append(kwargs)
        return real(name, **kwargs)

    monkeypatch.setattr(system_module, "resolve_backend", spy)
    cases: list[tuple[dict[str, object], dict[str, object], object]] = [
        ({}, {}, 1024),
        ({"max_output_tokens": 64}, {}, 64),
        ({}, {"max_tokens": 50}, 50),  # the host's own option wins
        ({"max_output_tokens": None}, {}, None),
    ]
    for i, (config, options, expected) in enumerate(cases):
        with artoo.System.open(
            tmp_path / f"s{i}",
            model="openai/local-model",
            config=config,
            workspace=tmp_path,
            model_options=options,
        ):
            pass
        assert built[-1].get("max_tokens") == expected, (config, options)
