"""End to end: the Executor offers ``load_data`` only once a result of its conversation
was spilled — and a fresh conversation (a second derivation) has spilled nothing. The
offered tools are part of every logged model request, which ``replay --rerun`` compares:
the log reruns as it ran (the spill is the served ToolCall's ``spill_ref``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.replay import rerun, verify
from artoo.schemas import Config, LLMCall, ToolsConfig

from .helpers import CONFIG, all_events, run_verified

COUNT = "how many numbers does seq 1 2000 print?"
SMALL = CONFIG.model_copy(
    update={"tools": ToolsConfig(sandbox="off", context_limit=256, spill_limit=1024)}
)


def _entries() -> list[dict[str, Any]]:
    """A glob (a short result), a command whose result spills, the answer; then, asked
    for a second derivation afresh, another command (a short result) and the answer."""
    perceive = {"intent": "count the numbers", "kind": "question", "answer": "number"}
    afresh = "another method"
    return [
        {"role": "perceiver", "content": perceive},
        {**_call("shell", command="seq 2000 | wc -l"), "match": afresh},
        {"role": "executor", "match": afresh, "content": "2000"},
        _call("glob", pattern="*"),
        _call("shell", command="seq 1 2000 | wc -l; seq 1 2000"),
        {"role": "executor", "content": "2000"},
    ]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "executor", "tool_calls": [{"name": name, "arguments": arguments}]}


def _offered(store: Path) -> list[bool]:
    return [
        "load_data" in [t["name"] for t in e.body.request["tools"]]
        for e in all_events(store)
        if isinstance(e.body, LLMCall) and e.body.role == "executor"
    ]


def _run(tmp: Path, config: Config) -> Path:
    result, store = run_verified(tmp, _entries(), COUNT, config)
    assert (result.status, result.established) == ("accept", "code"), result.summary
    return store


def test_load_data_is_offered_after_a_spill_and_the_log_reruns_as_it_ran(tmp_path: Path) -> None:
    store = _run(tmp_path, SMALL)
    offered = _offered(store)
    # from the model call after the spill; the fresh conversation spilled nothing
    assert offered == [False, False, True, False, False]
    assert verify(store).ok
    reran = rerun(store)
    assert reran.ok and not reran.unanswered, (reran.unanswered, reran.divergence)
