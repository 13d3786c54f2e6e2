"""End to end: a question about a CSV file named in it gets a ``table_value`` check written
by code (``Config.code_table_check``). Code computes the value from the file; an answer
that states another — a number printed by a wrong command (``awk`` summing a column that
does not exist prints 0) — fails with what code computed, and the answer that states it is
proven by code (``accept``). A question code cannot read (a word that names no column)
proves nothing by it: the answer is held to its derivations. ``replay --verify`` recomputes
every verdict from the logged observation; a log from before the field replays as it ran.
The file and requests are the tests' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artoo.replay import rerun
from artoo.schemas import (
    Config,
    CorrectionSignal,
    FinalResult,
    SubTaskOutcome,
    Target,
    TaskSpec,
    ToolCall,
    ToolCallEnded,
)

from .helpers import (
    CONFIG,
    all_events,
    read_with_targets,
    replays_as_before,
    run_verified,
    simple_plan,
)

ORDERS = "customer,city,cost\nada,paris,25\nbo,lyon,10\nci,paris,40\ndee,nice,5\n"
TOTAL = "what is the total of the cost column in shop/orders.csv?"
WRONG = {
    "name": "shell",
    "arguments": {"command": "awk -F, '{s+=$4} END {print s+0}' shop/orders.csv"},
}


def _entries(*answers: str) -> list[Any]:
    perceiver = {
        "role": "perceiver",
        "content": {"intent": "the total cost", "kind": "question", "answer": "number"},
    }
    first, *more = answers
    return [
        perceiver,
        {"role": "executor", "tool_calls": [WRONG]},
        {"role": "executor", "content": first},
        *({"role": "executor", "content": a} for a in more),
    ]


def _run(
    tmp: Path, entries: list[Any], text: str = TOTAL, config: Config = CONFIG
) -> tuple[FinalResult, Path]:
    return run_verified(tmp, entries, text, config, files={"shop/orders.csv": ORDERS})


def test_a_wrong_commands_number_fails_and_the_computed_value_is_proven(tmp_path: Path) -> None:
    result, store = _run(tmp_path, _entries("The total is 0.", "The total of cost is 80."))
    events = all_events(store)
    (spec,) = [e.body for e in events if isinstance(e.body, TaskSpec)]
    (check,) = [c.check for c in spec.criteria if c.check is not None]
    assert (check.kind, check.path, check.value) == ("table_value", "shop/orders.csv", TOTAL)
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert "code computed the total of cost over 4 row(s): 80; the output states 0" in (
        signal.feedback
    )
    # what a tool prints, a small model states: the retry runs code's command first
    assert signal.run.startswith("python3 -c 'import csv") and "shop/orders.csv" in signal.run
    ran = [e.body.call for e in events if isinstance(e.body, ToolCallEnded)]
    assert [c.args.get("command") for c in ran] == [WRONG["arguments"]["command"], signal.run]
    assert (ran[1].stdout or "").strip() == "80"
    assert (result.status, result.established, result.output) == (
        "accept",
        "code",
        "The total of cost is 80.",
    )
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_the_wrong_number_repeated_is_never_accepted(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, _entries(*["The total is 0."] * 6))
    assert result.status != "accept"


def test_a_question_code_cannot_read_proves_nothing_by_it(tmp_path: Path) -> None:
    """ "the dearest order": no column is named "dearest" — code computes nothing, the check
    passes with no proof either way, and one derivation (the wrong sum's 0 is no longer
    read; ``cat`` prints the file) does not make an ``accept``."""
    ask = "which customer placed the dearest order in shop/orders.csv?"
    cat = {"name": "shell", "arguments": {"command": "cat shop/orders.csv"}}
    entries = [
        {
            "role": "perceiver",
            "content": {"intent": "the dearest order", "kind": "question", "answer": "name"},
        },
        {"role": "executor", "tool_calls": [cat]},
        {"role": "executor", "content": "ci placed the dearest order."},
    ]
    result, store = _run(tmp_path, entries, ask)
    outcomes = [e.body for e in all_events(store) if isinstance(e.body, SubTaskOutcome)]
    table = [v for o in outcomes for v in [*o.verdicts, *o.history] if "unresolved" in v.observed]
    assert table and all(v.passed for v in table)
    assert "no proof either way" in table[0].evidence
    assert result.status != "accept"


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    off = CONFIG.model_copy(update={"code_table_check": False})
    result, store = _run(tmp_path, _entries(*["The total is 0."] * 6), config=off)
    (spec,) = [e.body for e in all_events(store) if isinstance(e.body, TaskSpec)]
    assert not any(c.check is not None for c in spec.criteria)
    assert result.status != "accept"
    assert replays_as_before(store, "code_table_check") is not None


def _writes(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def test_a_value_written_to_a_file_is_computed_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "… and write its name to top.txt": code computes the name and judges the file —
    the model's first write is wrong and its "Done." no proof; told what code found, it
    writes it, and the file read back by the check proves the change (``accept``). The
    rewrite of the file the reading creates is reversible: it goes ahead unasked."""
    read_with_targets(monkeypatch, [Target(path="top.txt", role="create")])
    ask = "find the customer with the largest cost in shop/orders.csv and write its name to top.txt"
    entries = [
        {"role": "perceiver", "content": {"intent": "write the top customer", "kind": "creation"}},
        simple_plan(ask),
        {"role": "executor", "tool_calls": [_writes("top.txt", "ada\n")]},
        {"role": "executor", "content": "Done. I wrote the customer to top.txt."},
        {"role": "executor", "content": "Done."},
    ]
    result, store = _run(tmp_path, entries, ask)
    (signal,) = [e.body for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    assert "code found the customer with the largest cost: ci (40)" in signal.feedback
    assert "'top.txt' does not state it" in signal.feedback
    # told the value, a small model stated it and wrote nothing: code's command writes it
    assert 'open("top.txt", "w")' in signal.run
    assert (result.status, result.established) == ("accept", "code")
    assert (tmp_path / "workspace" / "top.txt").read_text() == "ci\n"
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_count_written_to_a_file_is_measured_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [Target(path="todo.txt", role="create")])
    ask = "count the TODO lines in shop/notes.txt and write the count to todo.txt"
    entries = [
        {"role": "perceiver", "content": {"intent": "write the TODO count", "kind": "creation"}},
        simple_plan(ask),
        {"role": "executor", "tool_calls": [_writes("todo.txt", "3\n")]},
        {"role": "executor", "content": "Done: 2 lines."},  # the answer says 2, the file 3
        {"role": "executor", "tool_calls": [_writes("todo.txt", "2\n")]},
        {"role": "executor", "content": "Done."},
    ]
    notes = {"shop/notes.txt": "TODO call ada\nship\nTODO bill bo\n"}
    result, store = run_verified(tmp_path, entries, ask, CONFIG, files=notes)
    (spec,) = [e.body for e in all_events(store) if isinstance(e.body, TaskSpec)]
    checks = [c.check for c in spec.criteria if c.check is not None]
    assert [(c.kind, c.path, c.value, c.into) for c in checks] == [
        ("count_matches", "shop/notes.txt", "lines containing TODO", "todo.txt")
    ]
    assert (result.status, result.established) == ("accept", "code")
    assert (tmp_path / "workspace" / "todo.txt").read_text() == "2\n"


def test_after_an_attempt_that_failed_the_retry_prints_the_value(tmp_path: Path) -> None:
    """An attempt that ends in a doom loop (a file read under the wrong path, again and
    again) states nothing; the failed verdict of the table check still carries what code
    computes, and the retry's first call prints it."""
    missing = {"name": "read_file", "arguments": {"path": "orders.csv"}}
    entries = [
        {
            "role": "perceiver",
            "content": {"intent": "the total cost", "kind": "question", "answer": "number"},
        },
        *[{"role": "executor", "tool_calls": [missing]} for _ in range(4)],
        {"role": "executor", "content": "The total cost is 80."},
    ]
    result, store = _run(tmp_path, entries)
    events = all_events(store)
    signals = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert signals and signals[0].run.startswith("python3 -c 'import csv")
    assert "doom loop" in signals[0].feedback
    assert (result.status, result.established) == ("accept", "code")
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def _read_wrong_then_right(
    tmp: Path, ask: str, file: tuple[str, str], wrong: str, right: str
) -> tuple[FinalResult, Path, CorrectionSignal, ToolCall]:
    """``ask`` (a question) over ``file`` (path, content): the model reads the file and
    answers ``wrong``, then, retried, ``right``; the result, the store, the one
    CorrectionSignal and the last tool call made."""
    path, content = file
    read = {"name": "read_file", "arguments": {"path": path}}
    entries = [
        {"role": "perceiver", "content": {"intent": "the value", "kind": "question"}},
        {"role": "executor", "tool_calls": [read]},
        {"role": "executor", "content": wrong},
        {"role": "executor", "content": right},
    ]
    result, store = run_verified(tmp, entries, ask, CONFIG, files={path: content})
    events = all_events(store)
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    ran = [e.body.call for e in events if isinstance(e.body, ToolCallEnded)]
    return result, store, signal, ran[-1]


def test_a_constant_misread_is_looked_up_and_the_retry_shows_it(tmp_path: Path) -> None:
    """``code_value`` (``Config.code_lookup_check``): "what is the value of VERSION …?"
    answered 2 off a page of the file; Python's parser reads VERSION = "4.0.2", the retry
    first runs code's ``grep`` of the assignment, and the answer stating it is accepted."""
    source = 'VERSION = "4.0.2"\n\n\ndef even(n):\n    return n % 2 == 0\n'
    result, store, signal, last = _read_wrong_then_right(
        tmp_path,
        "what is the value of VERSION in app/meta.py?",
        ("app/meta.py", source),
        "The value of VERSION is 2.",
        "The value of VERSION is 4.0.2.",
    )
    assert "code read VERSION = '4.0.2' in app/meta.py" in signal.feedback
    assert signal.run == "grep -nE '^VERSION[ :=]' app/meta.py"
    assert (last.stdout or "").strip() == '1:VERSION = "4.0.2"'
    assert (result.status, result.established) == ("accept", "code")
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_wrong_count_is_followed_by_the_counting_command(tmp_path: Path) -> None:
    """Real-model bench: "How many ERROR lines does logs/app.log have?" answered 20 off
    the file; told "3 lines containing 'ERROR'; the output states 20", the model read the
    file again and again. The count check logs the command that prints the count, and the
    retry runs it first."""
    result, store, signal, last = _read_wrong_then_right(
        tmp_path,
        "How many ERROR lines does shop/app.log have?",
        ("shop/app.log", "INFO up\nERROR disk\nERROR net\nINFO ok\n"),
        "There are 4 ERROR lines.",
        "There are 2 ERROR lines.",
    )
    assert signal.run == "grep -c -F 'ERROR' shop/app.log"
    assert (last.stdout or "").strip() == "2"
    assert (result.status, result.established) == ("accept", "code")
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_question_read_as_a_creation_is_proven_by_what_code_looked_up(tmp_path: Path) -> None:
    """Real-model bench: "what is the parent class of Square …?" read as a creation with no
    answer shape: the code_value check passed on "Shape", yet the proof asked for two
    derivations and ended ``success``. A value code computed is the question's answer,
    whatever the reading's shape: one attempt, ``accept``."""
    ask = "what is the parent class of Dog in zoo/animals.py?"
    source = "class Animal:\n    pass\n\n\nclass Dog(Animal):\n    pass\n"
    read = {"name": "read_file", "arguments": {"path": "zoo/animals.py"}}
    entries = [
        {"role": "perceiver", "content": {"intent": "the type of a class", "kind": "creation"}},
        {"role": "executor", "tool_calls": [read]},
        {"role": "executor", "content": "The parent class of Dog is `Animal`."},
    ]
    files = {"zoo/animals.py": source}
    result, store = run_verified(tmp_path, entries, ask, CONFIG, files=files)
    assert not [e for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    assert (result.status, result.established) == ("accept", "code")
