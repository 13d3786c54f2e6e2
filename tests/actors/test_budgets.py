"""Per-task budgets: reserved before each call, from many threads at once."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.llm import BudgetSpent, TaskBudgets


def test_exactly_the_budgeted_calls_pass_from_eight_threads() -> None:
    budgets = TaskBudgets()
    budgets.open("t", 50, None)
    passed: list[int] = []
    refused: list[BudgetSpent] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(20):
            try:
                budgets.reserve("t")
            except BudgetSpent as spent:
                with lock:
                    refused.append(spent)
            else:
                with lock:
                    passed.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passed) == 50 and len(refused) == 110
    assert {(s.budget, s.limit, s.calls) for s in refused} == {("max_model_calls", 50, 50)}


@given(st.integers(1, 10_000), st.lists(st.integers(0, 5_000), max_size=50))
def test_a_token_budget_is_overrun_by_at_most_one_sequential_call(
    limit: int, usages: list[int]
) -> None:
    budgets = TaskBudgets()
    budgets.open("t", None, limit)
    made = []
    for tokens in usages:
        try:
            budgets.reserve("t")
        except BudgetSpent as spent:
            assert spent.budget == "max_tokens" and spent.tokens >= limit
            break
        budgets.commit("t", tokens)
        made.append(tokens)
    used = sum(made)
    assert used < limit + (made[-1] if made else 0) or used == 0
    if len(made) < len(usages):  # refused: the budget was reached first
        assert used >= limit


def test_an_unknown_or_closed_task_is_not_limited() -> None:
    budgets = TaskBudgets()
    budgets.reserve("nobody")
    budgets.open("t", 1, None)
    budgets.reserve("t")
    with pytest.raises(BudgetSpent):
        budgets.reserve("t")
    budgets.close("t")
    budgets.reserve("t")
    assert budgets.used("t") == (0, 0)
