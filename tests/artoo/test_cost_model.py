"""The paper's cost model (§10) under policy 1: code writes every criterion from the
reading and decides it, so a task spends no validation call — a one-subtask question is a
sequential chain of the Perceiver's call and the Executor's turns (round 0 is the request
itself: no Planner call), two turns more when its value is derived again in a fresh
conversation. The model rung, kept for a criterion with no check, judges several criteria
in one call and fails closed on one its answer leaves out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.llm import LLMRequest, ScriptedBackend
from artoo.actors.verification.ladder import model_verdicts
from artoo.schemas import Criterion, LLMCall

from .helpers import run_verified, task_events


def _shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def _roles(store: Path, task_id: str) -> list[str]:
    return [e.body.role for e in task_events(store, task_id) if isinstance(e.body, LLMCall)]


def test_a_question_code_derives_is_a_chain_of_three_with_no_validation_call(
    tmp_path: Path,
) -> None:
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "count the lines of the notes",
                "kind": "question",
                "answer": "number",
                "count": "lines",
                "targets": [{"path": "notes/todo.txt", "role": "read"}],
            },
        },
        {"role": "executor", "tool_calls": [_shell("wc -l notes/todo.txt")]},
        {"role": "executor", "content": "notes/todo.txt has 7 lines."},
    ]
    result, store = run_verified(tmp_path, entries, "how many lines does notes/todo.txt have?")
    assert (result.status, result.established) == ("accept", "code"), result.summary
    assert (result.cost.model_calls, result.cost.sequential_calls) == (3, 3)
    assert _roles(store, result.task_id) == ["perceiver", "executor", "executor"]


def test_a_value_derived_again_afresh_costs_two_calls_more_a_chain_of_five(
    tmp_path: Path,
) -> None:
    awk = "awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv"
    python = (
        "python3 -c \"import csv; print(sum(int(r['amount']) "
        "for r in csv.DictReader(open('data/sales.csv'))))\""
    )
    entries = [
        {
            "role": "perceiver",
            "content": {"intent": "total the sales", "kind": "question", "answer": "number"},
        },
        {"role": "executor", "match": "another method", "tool_calls": [_shell(python)]},
        {"role": "executor", "match": "another method", "content": "4250"},
        {"role": "executor", "tool_calls": [_shell(awk)]},
        {"role": "executor", "content": "The total is 4250."},
    ]
    result, store = run_verified(
        tmp_path, entries, "what is the total of the amount column of data/sales.csv?"
    )
    assert (result.status, result.established) == ("accept", "code"), result.summary
    assert (result.cost.model_calls, result.cost.sequential_calls) == (5, 5)
    assert _roles(store, result.task_id) == ["perceiver"] + ["executor"] * 4


def test_a_criterion_the_batched_answer_leaves_out_fails_closed() -> None:
    criteria = [
        Criterion(id="s1c1", text="is polite"),
        Criterion(id="s1c2", text="is short"),
    ]
    gateway = ScriptedBackend.from_entries(
        [
            {
                "role": "agent_validator",
                "content": {"verdicts": [{"criterion": "s1c1", "passed": True, "confidence": 0.9}]},
            }
        ]
    )
    request = LLMRequest(
        role="agent_validator",
        tier="tool",
        messages=[{"role": "user", "content": "Output:\nHello!"}],
    )
    (polite, _), (short, none) = model_verdicts(gateway, request, criteria, threshold=0.7)
    assert polite.passed and polite.criterion_id == "s1c1"
    assert not short.passed and short.criterion_id == "s1c2" and none is None
    assert "fails closed" in short.evidence and short.signal == "llm"
    assert gateway.unused() == []  # ONE model call judged both
