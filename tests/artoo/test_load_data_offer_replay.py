"""End to end: the Executor offers ``load_data`` only once a result of its conversation
was spilled (``Config.offer_load_data_on_spill``). The offered tools are part of every
logged model request, which ``replay --rerun`` compares: a log recorded with the field on
reruns as it ran (the spill is the served ToolCall's ``spill_ref``), and a log from before
the field replays with it off — ``load_data`` at every call, as it ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.replay import rerun, verify
from artoo.schemas import Config, LLMCall, ToolsConfig

from .helpers import CONFIG, all_events, replays_as_before, run_verified

COUNT = "how many numbers does seq 1 2000 print?"
SMALL = CONFIG.model_copy(
    update={"tools": ToolsConfig(sandbox="off", context_limit=256, spill_limit=1024)}
)


def _entries() -> list[dict[str, Any]]:
    """A glob (a short result), a command whose result spills, the answer."""
    perceive = {"intent": "count the numbers", "kind": "question", "answer": "number"}
    return [
        {"role": "perceiver", "content": {**perceive, "criteria": []}},
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
    _result, store = run_verified(tmp, _entries(), COUNT, config)
    return store


def test_a_log_with_the_field_on_reruns_as_it_ran(tmp_path: Path) -> None:
    store = _run(tmp_path, SMALL)
    offered = _offered(store)
    assert offered == [False, False, True]  # from the model call after the spill
    assert verify(store).ok
    reran = rerun(store)
    assert reran.ok and not reran.unanswered, (reran.unanswered, reran.divergence)


def test_a_log_from_before_the_field_replays_with_it_off(tmp_path: Path) -> None:
    store = _run(tmp_path, SMALL.model_copy(update={"offer_load_data_on_spill": False}))
    assert all(_offered(store))
    changed = replays_as_before(store, "offer_load_data_on_spill")
    assert changed is not None and changed.kind == "LLMCall"  # read on, load_data is not offered
