"""The scripted: backend — TOML scripts answering by role, match and use count."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import artoo.actors.llm as llm
from artoo.actors.llm import (
    LLMError,
    ScriptedBackend,
    ScriptError,
    assistant_message,
    tool_message,
)

from .llm_helpers import (
    DATA,
    req,
)


# --------------------------------------------------------------------------- scripted
def test_scripted_serves_in_file_order_per_role_then_reports_exhaustion() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {"role": "executor", "content": "first"},
            {"role": "planner", "content": "plan"},
            {"role": "executor", "content": "second"},
        ]
    )
    assert backend.complete(req()).content == "first"
    assert backend.complete(req()).content == "second"
    with pytest.raises(LLMError) as info:
        backend.complete(req("please   count the\nfiles"))
    assert "script exhausted for role executor" in str(info.value)
    assert "please count the files" in str(info.value)
    assert backend.complete(req(role="planner", tier="brain")).content == "plan"


def test_scripted_match_selects_the_first_matching_entry_and_sees_tool_results() -> None:
    backend = ScriptedBackend.from_text(
        textwrap.dedent(
            """
            [[response]]
            role = "executor"
            match = "(?m)^12$"
            content = "twelve"

            [[response]]
            role = "executor"
            match = "count .*python"
            tool_calls = [{ name = "shell", arguments = { command = "ls" } }]

            [[response]]
            role = "executor"
            content = "fallback"
            """
        )
    )
    first = req("count the python files")
    assert backend.complete(req("something else")).content == "fallback"
    answer = backend.complete(first)
    assert answer.content is None and [c.name for c in answer.tool_calls] == ["shell"]
    follow = msgspec.structs.replace(
        first, messages=[*first.messages, assistant_message(answer), tool_message("c", "12\n")]
    )
    assert backend.complete(follow).content == "twelve"


def test_scripted_times_counts_uses_and_zero_is_unlimited() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {"role": "executor", "content": "twice", "times": 2},
            {"role": "executor", "content": "always", "times": 0},
            {"role": "executor", "content": "never reached"},
        ]
    )
    answers = [backend.complete(req()).content for _ in range(50)]
    assert answers[:2] == ["twice", "twice"]
    assert set(answers[2:]) == {"always"}
    assert [e.content for e in backend.unused()] == ["never reached"]


def test_scripted_tool_calls_content_tables_and_ids_are_deterministic() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {"role": "perceiver", "content": {"intent": "count", "n": [1, 2]}},
            {
                "role": "executor",
                "times": 2,
                "tool_calls": [
                    {"name": "shell", "arguments": {"command": "ls"}},
                    {"name": "read_file", "arguments": {"path": "a.txt"}, "id": "mine"},
                ],
            },
        ]
    )
    assert json.loads(backend.complete(req(role="perceiver")).content or "") == {
        "intent": "count",
        "n": [1, 2],
    }
    for use in (1, 2):
        answer = backend.complete(req())
        assert answer.content is None
        assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
            (f"call_2_{use}_1", "shell", {"command": "ls"}),
            ("mine", "read_file", {"path": "a.txt"}),
        ]


def test_scripted_usage_defaults_to_rough_counts_or_the_scripted_figures() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {"role": "executor", "content": "x" * 40, "times": 2},
            {
                "role": "executor",
                "content": "y",
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            },
        ]
    )
    short = backend.complete(req("a" * 8)).usage
    long = backend.complete(req("a" * 800)).usage
    assert short == {"prompt_tokens": 2, "completion_tokens": 10}
    assert long == {"prompt_tokens": 200, "completion_tokens": 10}
    assert backend.complete(req()).usage == {"prompt_tokens": 7, "completion_tokens": 3}


def test_scripted_latency_uses_entry_delay_or_the_backend_default() -> None:
    slept: list[float] = []
    backend = ScriptedBackend.from_entries(
        [
            {"role": "executor", "content": "a", "delay_ms": 50},
            {"role": "executor", "content": "b"},
            {"role": "executor", "content": "c", "delay_ms": 0},
        ],
        latency_ms=200,
        sleep=slept.append,
    )
    latencies = [backend.complete(req()).latency_ms for _ in range(3)]
    assert slept == [0.05, 0.2]
    assert latencies == [50, 200, 0]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[[response]]\nrole = "executor"\ncontent = "a"\nmach = "x"', r"response #1: .*mach"),
        ('[[response]]\ncontent = "a"', r"response #1: .*role"),
        (
            '[[response]]\nrole = "planner"\ncontent = "x"\n[[response]]\nrole = "executor"',
            r"#2: needs content",
        ),
        ('[[response]]\nrole = "planner"\ncontent = "x"\nmatch = "("', r"#1: bad match pattern"),
        ('[[response]]\nrole = "planner"\ncontent = "x"\ntimes = -1', r"#1: times must be >= 0"),
        (
            '[[response]]\nrole = "planner"\ncontent = "x"\ndelay_ms = -5',
            r"#1: delay_ms must be >= 0",
        ),
        (
            '[[response]]\nrole = "planer"\ncontent = "x"',
            r"#1: no role 'planer' asks a model \(roles: agent_validator, dreamer, executor",
        ),
        ('[[responses]]\nrole = "a"\ncontent = "x"', r"only \[\[response\]\] entries"),
        ("role = ", r"not valid TOML"),
    ],
)
def test_malformed_scripts_are_rejected_with_the_entry_named(text: str, problem: str) -> None:
    with pytest.raises(ScriptError, match=problem):
        ScriptedBackend.from_text(text)


def test_missing_script_file_is_a_script_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read script"):
        ScriptedBackend(tmp_path / "absent.toml")


def test_scripted_is_deterministic_under_16_concurrent_threads() -> None:
    n, rounds = 16, 5
    entries = [
        # reversed file order and one unrelated role, so file position alone cannot help
        {
            "role": "executor",
            "match": rf"\bsubtask-{i:02d}\b",
            "content": f"answer {i}",
            "times": rounds,
        }
        for i in reversed(range(n))
    ]
    entries.insert(5, {"role": "planner", "content": "plan", "times": 0})
    backend = ScriptedBackend.from_entries(entries, latency_ms=1)
    barrier = threading.Barrier(n)
    got: dict[int, list[str | None]] = {}

    def worker(i: int) -> None:
        barrier.wait()
        got[i] = [backend.complete(req(f"do subtask-{i:02d} now")).content for _ in range(rounds)]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {i: [f"answer {i}"] * rounds for i in range(n)}
    assert backend.unused() == []


@settings(max_examples=60)
@given(
    times=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    planner_times=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    order=st.randoms(use_true_random=False),
)
def test_each_roles_answers_do_not_depend_on_how_roles_interleave(
    times: list[int], planner_times: list[int], order: Any
) -> None:
    entries = [{"role": "executor", "content": f"e{i}", "times": t} for i, t in enumerate(times)]
    entries += [
        {"role": "planner", "content": f"p{i}", "times": t} for i, t in enumerate(planner_times)
    ]
    order.shuffle(entries)  # the two roles' entries mixed in the file
    calls = ["executor"] * (sum(times) + 1) + ["planner"] * (sum(planner_times) + 1)
    order.shuffle(calls)
    backend = ScriptedBackend.from_entries(entries)
    got: dict[str, list[str | None]] = {"executor": [], "planner": []}
    for role in calls:
        try:
            got[role].append(backend.complete(req(role=role)).content)
        except LLMError:
            got[role].append(None)

    def expected(role: str) -> list[str | None]:
        mine = [e for e in entries if e["role"] == role]
        return [e["content"] for e in mine for _ in range(e["times"])] + [None]

    assert got == {"executor": expected("executor"), "planner": expected("planner")}


def test_the_documented_script_example_plays_out_as_described() -> None:
    doc = llm.__doc__ or ""
    block = doc.split("entries::\n", 1)[1].split("Keys of an entry:", 1)[0]
    slept: list[float] = []
    backend = ScriptedBackend.from_text(textwrap.dedent(block), sleep=slept.append)
    spec = json.loads(
        backend.complete(req("count the python files", role="perceiver")).content or ""
    )
    assert spec == {"intent": "count the python files", "slug": "count-python-files"}
    first = req("count the python files under src")
    answer = backend.complete(first)
    assert answer.tool_calls[0].arguments == {"command": "ls src/*.py | wc -l"}
    follow = msgspec.structs.replace(
        first,
        messages=[*first.messages, assistant_message(answer), tool_message("call_2_1_1", "12\n")],
    )
    final = backend.complete(follow)
    assert final.content == "There are 12 python files."
    assert final.usage == {"prompt_tokens": 10, "completion_tokens": 5}
    assert slept == [0.2]


def test_script_file_path_constructor_names_the_model() -> None:
    path = DATA / "script.toml"
    backend = ScriptedBackend(path)
    assert backend.model == f"scripted:{path}"
    assert len(backend.unused()) == 3
