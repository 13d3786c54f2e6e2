"""``replay --rerun`` of a log holding a refusal the Executor makes itself (a blocked tool,
a repeated failure, a repeated call, a Caution denial): such a call never reaches the tool
runner, so the rerun's Executor makes it again and the call after it is served — not met
by the refused record standing in its place ("not in the log")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.replay import rerun
from artoo.schemas import ExecutionResult

from .helpers import CONFIG, all_events, run_verified

LINES = "how many lines are in notes/todo.txt?"
PERCEIVE = {
    "role": "perceiver",
    "content": {
        "intent": "count the lines of notes/todo.txt",
        "kind": "question",
        "answer": "number",
    },
}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "executor", "tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_rerun_serves_the_call_after_a_repeated_failure(tmp_path: Path) -> None:
    """The third ``load_data`` of a kind that failed twice is refused; the ``wc`` after it
    is served, and the rerun agrees with the log."""
    answer = {"role": "executor", "content": "7 lines."}
    entries = [
        PERCEIVE,
        *(_call("load_data", filename=name) for name in ("a.txt", "b.txt", "c.txt")),
        _call("shell", command="wc -l notes/todo.txt"),
        answer,
        _call("shell", command="grep -c '' notes/todo.txt"),
        answer,
    ]
    result, store = run_verified(tmp_path, entries, LINES, CONFIG)
    results = [e.body for e in all_events(store) if isinstance(e.body, ExecutionResult)]
    assert [c.refusal for c in results[0].tool_calls] == [None, None, "repeated_failure", None]
    assert result.status == "accept"
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)
