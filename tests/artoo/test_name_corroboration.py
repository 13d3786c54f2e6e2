"""End to end: a question that asks for a name, answered with a plain name after one read
of the file, is asked for a second derivation of that name; the fresh conversation reads
the file again, and the task ends ``accept`` when it states the same name — not when it
states another (each then read once). Before, a plain name was no value: such a task
ended ``success``, however right. Run on a workspace of the test's own; its store passes
``replay --verify`` (the replayed proof and ask agree with the live ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.schemas import CorrectionSignal, FinalResult, ToolCallEnded

from .helpers import CONFIG, all_events, run_verified

SOLIDS = '''"""Solids."""


class Solid:
    def volume(self) -> float:
        raise NotImplementedError


class Cube(Solid):
    def __init__(self, edge: float) -> None:
        self.edge = edge


class Sphere(Solid):
    def __init__(self, radius: float) -> None:
        self.radius = radius
'''
QUESTION = "what is the name of the class in geo/solids.py that has a radius?"
READ = {"name": "read_file", "arguments": {"path": "geo/solids.py"}}


def _answers(*names: str) -> list[dict[str, Any]]:
    """A name question with no criteria, its plan, and the Executor's attempts: a read of
    the file, then an answer naming each of ``names`` in turn."""
    executor: list[dict[str, Any]] = []
    for name in names:
        executor += [
            {"role": "executor", "tool_calls": [READ]},
            {"role": "executor", "content": f"The class in geo/solids.py with a radius is {name}."},
        ]
    perceive = {"intent": "name the class", "kind": "question", "answer": "name", "criteria": []}
    plan = {"role": "planner", "content": {"subtasks": [{"instruction": QUESTION}]}}
    return [{"role": "perceiver", "content": perceive}, plan, *executor]


def _run(tmp: Path, entries: list[dict[str, Any]]) -> tuple[FinalResult, list[Any]]:
    (tmp / "workspace" / "geo").mkdir(parents=True)
    (tmp / "workspace" / "geo" / "solids.py").write_text(SOLIDS)
    result, store = run_verified(tmp, entries, QUESTION, CONFIG)
    return result, [e.body for e in all_events(store)]


def test_a_name_read_again_in_a_fresh_conversation_is_accepted(tmp_path: Path) -> None:
    result, bodies = _run(tmp_path, _answers("Sphere", "Sphere"))
    (signal,) = [b for b in bodies if isinstance(b, CorrectionSignal)]
    assert signal.corroborate == "Sphere"
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert [(c.tool, c.conversation) for c in ended] == [("read_file", 0), ("read_file", 1)]
    assert (result.status, result.established) == ("accept", "code")


def test_a_fresh_conversation_naming_another_class_is_not_accepted(tmp_path: Path) -> None:
    # the fresh conversation names another class: that one is asked about in turn
    # (Config.corroborate_asks), and a third that names the first again proves neither
    result, bodies = _run(tmp_path, _answers("Sphere", "Cube", "Sphere"))
    signals = [b.corroborate for b in bodies if isinstance(b, CorrectionSignal)]
    assert signals == ["Sphere", "Cube"]
    assert result.status != "accept" and result.established == "model"
