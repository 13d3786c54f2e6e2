"""The pure parts of bench/memory_effect.py: the answers it expects, how it reads an
output, how it sums a pass (the run itself needs a real model)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_effect", ROOT / "bench/memory_effect.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_effect"] = module
    spec.loader.exec_module(module)
    return module


def test_the_families_are_three_by_four_with_answers_from_the_workspace() -> None:
    bench = _bench()
    families: dict[str, int] = {}
    for family, _, kind, path in bench.FAMILIES:
        families[family] = families.get(family, 0) + 1
        assert bench.expected(kind, path, bench.WORKSPACE) >= 1
    assert sorted(families.values()) == [4, 4, 4]
    todo = (bench.WORKSPACE / "notes/todo.txt").read_text()
    assert bench.expected("lines", "notes/todo.txt", bench.WORKSPACE) == todo.count("\n")
    assert bench.expected("pyfiles", "src", bench.WORKSPACE) == 3


def test_an_output_is_right_by_its_first_whole_number() -> None:
    bench = _bench()
    assert bench.right("There are 7 lines in notes/todo.txt", 7)
    assert not bench.right("notes/todo2.txt has 8 lines", 7)
    assert not bench.right("about 7.5", 7) and not bench.right("", 7)


def test_a_quoted_command_an_option_or_an_exit_code_is_no_stated_number() -> None:
    bench = _bench()
    # two answers of the session-14 run, judged wrong for the 0 of -maxdepth 0
    quoted = (
        'The answer to "Count the Python files under the `src` directory using the `wc -l` '
        "command. A command that prints the count: find src/**/*.py -maxdepth 0 -type f | "
        'wc -l" is:\n\n```\n3\n```\n\nThe tool provided output correctly answered.'
    )
    assert bench.right(quoted, 3) and not bench.right(quoted, 0)
    nested = (
        'The subtask "how many python files does the src directory hold?" is answered by the '
        '`shell` tool with the result "error: you already made this call (shell {"command": '
        '"find src/**/*.py -maxdepth 0 -type f | wc -l"}) and its result is above". The final '
        "answer is:\n\nThe number of Python files in the `src` directory is 3."
    )
    assert bench.right(nested, 3)
    assert bench.right("wc -l ran with exit code 0: notes/todo.txt has 7 lines", 7)
    assert bench.right('It printed "7"', 7)  # a quoted number alone is a stated one
    assert not bench.right("The command ran with exit status 0.", 0)


def test_a_pass_sums_calls_replans_precision_and_names_what_memory_misled() -> None:
    bench = _bench()

    def run(label: str, ok: bool, calls: int, plan_from: str = "fresh") -> object:
        return bench.Run(label, "f", f"{label} {calls}", ok, calls, 1, 2.0, "accept", [], plan_from)

    summary = bench.summarize(
        [run("pass1", True, 10), run("pass1", False, 6), run("pass3", False, 2, "reused")]
    )
    assert summary["pass1"] == {
        "requests": 2,
        "calls": 16,
        "wall_s": 4.0,
        "replans": 2,
        "right": 1,
        "misled": [],
        "precision": 0.5,
    }
    assert summary["pass3"]["misled"] == ["pass3 2"]
