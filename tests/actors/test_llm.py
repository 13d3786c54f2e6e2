"""Tests of the LLM gateway (artoo.actors.llm): the seam, its three backends, tiers and
structured answers. Never the network, never an API key: litellm runs on ``mock_response``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
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
    LitellmBackend,
    LLMError,
    LLMGateway,
    LLMRequest,
    LLMResponse,
    ModelNotConfigured,
    ReplayBackend,
    ScriptedBackend,
    ScriptError,
    ToolCallRequest,
    UsageTotals,
    ask_structured,
    assistant_message,
    json_objects,
    request_text,
    resolve_backend,
    resolve_models,
    schema_instruction,
    tool_message,
)
from artoo.schemas import (
    Config,
    Envelope,
    LLMCall,
    ToolSpec,
    decode_envelope,
    encode_envelope,
)

DATA = Path(__file__).parent / "data"
MOCK_MODEL = "openai/gpt-4o-mini"


# --------------------------------------------------------------------------- helpers
def req(text: str = "hi", role: str = "executor", tier: str = "tool", **kw: Any) -> LLMRequest:
    return LLMRequest(role=role, tier=tier, messages=[{"role": "user", "content": text}], **kw)


class StepClock:
    """A manual clock whose monotonic time advances by ``step`` seconds on every read."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.t = 100.0

    def now(self) -> float:
        return 1_700_000_000.0

    def monotonic(self) -> float:
        self.t += self.step
        return self.t


class Sequence:
    """A backend that hands the n-th request to the n-th backend (one each)."""

    def __init__(self, *backends: Any) -> None:
        self.backends = list(backends)

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self.backends.pop(0).complete(request)


class Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise self.exc


def counter_ids() -> Any:
    n = iter(range(1, 10_000))
    return lambda: f"id{next(n)}"


class Recorder(list[LLMCall]):
    """A gateway recorder keeping every LLMCall and the task id it came with."""

    def __init__(self) -> None:
        super().__init__()
        self.task_ids: list[str | None] = []

    def __call__(self, call: LLMCall, task_id: str | None) -> None:
        self.append(call)
        self.task_ids.append(task_id)


def gateway(backend: Any, calls: Recorder, **kw: Any) -> LLMGateway:
    return LLMGateway(
        {"brain": backend, "tool": backend},
        {"brain": "brain-model", "tool": "tool-model"},
        record=calls,
        new_id=counter_ids(),
        **kw,
    )


class Answer(msgspec.Struct, frozen=True):
    count: int
    note: str = ""


class Inner(msgspec.Struct, frozen=True):
    name: str


class Outer(msgspec.Struct, frozen=True):
    items: list[Inner]


# --------------------------------------------------------------------------- pure helpers
def test_request_text_joins_every_content_including_tool_results() -> None:
    request = LLMRequest(
        role="executor",
        tier="tool",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "count files"}]},
            {"role": "assistant", "content": None, "tool_calls": []},
            tool_message("c1", "42\n"),
        ],
    )
    assert request_text(request) == "be brief\ncount files\n\n42\n"


def test_assistant_message_round_trips_tool_calls_in_openai_format() -> None:
    response = LLMResponse(
        content=None,
        tool_calls=[ToolCallRequest(id="c1", name="shell", arguments={"command": "ls -l"})],
    )
    message = assistant_message(response)
    assert message["role"] == "assistant" and message["content"] is None
    (call,) = message["tool_calls"]
    assert call["id"] == "c1" and call["type"] == "function"
    assert call["function"]["name"] == "shell"
    assert json.loads(call["function"]["arguments"]) == {"command": "ls -l"}
    assert "tool_calls" not in assistant_message(LLMResponse(content="done"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
prose = st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=40)


@given(
    obj=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    before=prose,
    after=prose,
    fenced=st.booleans(),
)
def test_json_objects_finds_an_object_wrapped_in_prose_and_fences(
    obj: dict[str, Any], before: str, after: str, fenced: bool
) -> None:
    body = json.dumps(obj, indent=2 if fenced else None)
    text = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before}{body}{after}"
    assert json_objects(text)[0] == obj


def test_json_objects_skips_braces_that_are_not_json_and_keeps_order() -> None:
    text = 'use {x} here; first {"a": 1} then [1] and {"b": {"c": 2}} end {'
    assert json_objects(text) == [{"a": 1}, {"b": {"c": 2}}]
    assert json_objects("no object at all [1, 2]") == []


# --------------------------------------------------------------------------- tiers
@pytest.mark.parametrize(
    ("config", "env", "expected"),
    [
        (Config(model="m"), {}, {"brain": "m", "tool": "m"}),
        (Config(model="m", brain_model="b"), {}, {"brain": "b", "tool": "m"}),
        (
            Config(tool_model="t", model="m"),
            {"ARTOO_TOOL_MODEL": "et"},
            {"brain": "m", "tool": "t"},
        ),
        # explicit config beats the environment, also a tier-specific variable
        (
            Config(model="m"),
            {"ARTOO_BRAIN_MODEL": "eb", "ARTOO_MODEL": "e"},
            {"brain": "m", "tool": "m"},
        ),
        (None, {"ARTOO_MODEL": "e"}, {"brain": "e", "tool": "e"}),
        (None, {"ARTOO_MODEL": "e", "ARTOO_BRAIN_MODEL": "eb"}, {"brain": "eb", "tool": "e"}),
        (Config(brain_model="b"), {"ARTOO_MODEL": "e"}, {"brain": "b", "tool": "e"}),
        # empty strings count as unset
        (
            Config(model=""),
            {"ARTOO_MODEL": "e", "ARTOO_TOOL_MODEL": " "},
            {"brain": "e", "tool": "e"},
        ),
    ],
)
def test_resolve_models_precedence(
    config: Config | None, env: dict[str, str], expected: dict[str, str]
) -> None:
    assert resolve_models(config, env) == expected


optional_model = st.none() | st.sampled_from(["", "a/x", "b/y", "scripted:s.toml"])


@given(
    brain=optional_model,
    tool=optional_model,
    model=optional_model,
    env=st.dictionaries(
        st.sampled_from(["ARTOO_MODEL", "ARTOO_BRAIN_MODEL", "ARTOO_TOOL_MODEL"]),
        st.sampled_from(["", "e/1", "e/2"]),
    ),
)
def test_resolve_models_config_always_beats_env(
    brain: str | None, tool: str | None, model: str | None, env: dict[str, str]
) -> None:
    config = Config(brain_model=brain, tool_model=tool, model=model)
    try:
        models = resolve_models(config, env)
    except ModelNotConfigured:
        return
    for tier, specific in (("brain", brain), ("tool", tool)):
        if specific:
            assert models[tier] == specific
        elif model:
            assert models[tier] == model
        else:  # only the environment is left: specific variable first
            assert models[tier] in (env.get(f"ARTOO_{tier.upper()}_MODEL"), env.get("ARTOO_MODEL"))
            assert models[tier] == (env.get(f"ARTOO_{tier.upper()}_MODEL") or env["ARTOO_MODEL"])


def test_no_model_at_all_says_how_to_set_one() -> None:
    with pytest.raises(ModelNotConfigured) as info:
        resolve_models(None, {})
    message = str(info.value)
    for hint in ("brain and tool", "System.open(", "--model", "ARTOO_MODEL", "scripted:"):
        assert hint in message
    with pytest.raises(ModelNotConfigured, match="for the tool tier"):
        resolve_models(Config(brain_model="b"), {})


def test_resolve_backend_picks_scripted_or_litellm() -> None:
    scripted = resolve_backend(f"scripted:{DATA / 'script.toml'}", latency_ms=0)
    assert isinstance(scripted, ScriptedBackend)
    assert scripted.complete(req(role="perceiver")).content is not None
    lite = resolve_backend(MOCK_MODEL, timeout=3)
    assert isinstance(lite, LitellmBackend)
    assert (lite.model, lite.kwargs) == (MOCK_MODEL, {"timeout": 3})
    with pytest.raises(ScriptError, match="needs a script path"):
        resolve_backend("scripted:")


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
        ('[[response]]\nrole = "a"\ncontent = "x"\n[[response]]\nrole = "b"', r"#2: needs content"),
        ('[[response]]\nrole = "a"\ncontent = "x"\nmatch = "("', r"#1: bad match pattern"),
        ('[[response]]\nrole = "a"\ncontent = "x"\ntimes = -1', r"#1: times must be >= 0"),
        ('[[response]]\nrole = "a"\ncontent = "x"\ndelay_ms = -5', r"#1: delay_ms must be >= 0"),
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


# --------------------------------------------------------------------------- replay
def test_replay_serves_recorded_calls_in_order_per_role_and_subtask() -> None:
    script = ScriptedBackend.from_entries(
        [
            {"role": "executor", "match": "s1", "content": "s1-a"},
            {"role": "executor", "match": "s2", "content": "s2-a"},
            {
                "role": "executor",
                "match": "s1",
                "tool_calls": [{"name": "shell", "arguments": {"c": 1}}],
            },
            {"role": "executor", "match": "s2", "content": "s2-b"},
            {"role": "planner", "content": "plan"},
        ]
    )
    recorded = Recorder()
    gw = gateway(script, recorded)
    s1, s2 = req("s1", subtask_id="s1"), req("s2", subtask_id="s2")
    planner = req("p", role="planner", tier="brain")
    originals = [gw.complete(r) for r in (s1, s2, s1, s2, planner)]

    replay = ReplayBackend(recorded)
    assert replay.remaining() == 5
    # a different interleaving of subtasks still gets each subtask's answers in order
    again = {key: replay.complete(r) for key, r in [("p", planner), ("s2a", s2), ("s2b", s2)]}
    again |= {key: replay.complete(r) for key, r in [("s1a", s1), ("s1b", s1)]}
    assert again["s1a"].content == originals[0].content == "s1-a"
    assert again["s2a"].content == "s2-a" and again["s2b"].content == "s2-b"
    assert again["s1b"].tool_calls == originals[2].tool_calls
    assert again["p"].content == "plan" and again["p"].usage == originals[4].usage
    assert replay.remaining() == 0
    with pytest.raises(LLMError, match="no recorded call for role executor subtask 's1'"):
        replay.complete(s1)


def test_replay_raises_a_recorded_failure_again() -> None:
    call = LLMCall(call_id="1", role="executor", tier="tool", model="m", error="rate limited")
    with pytest.raises(LLMError, match="rate limited"):
        ReplayBackend([call]).complete(req())


# --------------------------------------------------------------------------- gateway
def test_gateway_records_a_successful_call_with_everything_needed_to_replay() -> None:
    recorded = Recorder()
    script = ScriptedBackend.from_entries(
        [{"role": "executor", "tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]}]
    )
    gw = gateway(script, recorded, clock=StepClock(0.25))
    request = req("list", task_id="t1", subtask_id="s9", tools=[ToolSpec(name="shell")])
    response = gw.complete(request)
    assert response.latency_ms == 250.0  # the gateway's clock, not the backend's figure
    (call,) = recorded
    assert (call.call_id, call.role, call.tier, call.model) == (
        "id1",
        "executor",
        "tool",
        "tool-model",
    )
    assert call.subtask_id == "s9" and call.error is None and call.response is None
    assert call.tool_calls == [
        {"id": "call_1_1_1", "name": "shell", "arguments": {"command": "ls"}}
    ]
    assert call.usage == response.usage and call.latency_ms == 250.0
    assert msgspec.convert(call.request, LLMRequest) == request
    envelope = Envelope(1, 0.0, "t1", "executor", None, None, call)
    assert decode_envelope(encode_envelope(envelope)).body == call


@pytest.mark.parametrize(
    ("backend", "tier", "message"),
    [
        (Raising(LLMError("provider down")), "tool", "provider down"),
        (Raising(RuntimeError("bug")), "tool", "RuntimeError: bug"),
        (Raising(LLMError("unused")), "nope", "no backend for tier 'nope'"),
    ],
)
def test_gateway_records_every_failed_call_then_raises(
    backend: Any, tier: str, message: str
) -> None:
    recorded = Recorder()
    gw = gateway(backend, recorded)
    with pytest.raises(LLMError, match=re.escape(message)):
        gw.complete(req(tier=tier, task_id="t"))
    (call,) = recorded
    assert recorded.task_ids == ["t"]
    assert call.error is not None and message in call.error
    assert call.response is None and call.usage == {}
    assert gw.usage_for("t") == UsageTotals(calls=1, errors=1, latency_ms=call.latency_ms)


def test_gateway_keeps_usage_per_task_across_threads() -> None:
    backend = ScriptedBackend.from_entries(
        [
            {
                "role": "executor",
                "content": "ok",
                "times": 0,
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            }
        ]
    )
    recorded = Recorder()
    gw = gateway(backend, recorded)

    def worker(task: str) -> None:
        for _ in range(25):
            gw.complete(req(task_id=task))

    threads = [threading.Thread(target=worker, args=(f"t{i % 2}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for task in ("t0", "t1"):
        usage = gw.usage_for(task)
        assert (usage.calls, usage.errors, usage.tokens_in, usage.tokens_out) == (100, 0, 300, 200)
    assert len(recorded) == 200 and len({c.call_id for c in recorded}) == 200
    assert gw.forget("t0").calls == 100
    assert gw.usage_for("t0") == UsageTotals()


def test_from_models_shares_one_backend_between_tiers_with_the_same_model() -> None:
    model = f"scripted:{DATA / 'script.toml'}"
    recorded = Recorder()
    gw = LLMGateway.from_models({"brain": model, "tool": model}, record=recorded)
    assert gw.models == {"brain": model, "tool": model}
    gw.complete(req(role="perceiver", tier="brain"))
    with pytest.raises(LLMError, match="script exhausted for role perceiver"):
        gw.complete(req(role="perceiver", tier="tool"))
    assert [c.tier for c in recorded] == ["brain", "tool"]


# --------------------------------------------------------------------------- structured
def structured_script(*contents: str) -> ScriptedBackend:
    return ScriptedBackend.from_entries([{"role": "planner", "content": c} for c in contents])


def ask(backend: Any, recorded: Recorder, schema: type = Answer) -> Any:
    request = LLMRequest(
        role="planner",
        tier="brain",
        messages=[
            {"role": "system", "content": "You plan."},
            {"role": "user", "content": "how many?"},
        ],
    )
    return ask_structured(gateway(backend, recorded), request, schema)


def test_structured_answer_puts_the_schema_in_the_request_and_system_prompt() -> None:
    recorded = Recorder()
    result = ask(structured_script('Sure!\n```json\n{"count": 3}\n```'), recorded)
    assert (result.ok, result.value, result.attempts, result.error) == (
        True,
        Answer(count=3),
        1,
        None,
    )
    sent = msgspec.convert(recorded[0].request, LLMRequest)
    assert sent.response_schema is not None and sent.response_schema["type"] == "object"
    assert sent.response_schema["required"] == ["count"]
    system = sent.messages[0]
    assert system["role"] == "system" and system["content"].startswith("You plan.\n\n")
    assert schema_instruction(sent.response_schema) in system["content"]
    assert len(sent.messages) == 2


def test_structured_schema_of_nested_structs_keeps_its_definitions() -> None:
    recorded = Recorder()
    result = ask(structured_script('{"items": [{"name": "a"}]}'), recorded, Outer)
    assert result.value == Outer(items=[Inner(name="a")])
    schema = recorded[0].request["response_schema"]
    assert schema["type"] == "object" and "Inner" in schema["$defs"]


def test_structured_answer_is_repaired_once_with_the_error_quoted() -> None:
    recorded = Recorder()
    result = ask(structured_script('{"count": "three"}', 'ok: {"count": 3, "note": "n"}'), recorded)
    assert (result.ok, result.value, result.attempts) == (True, Answer(count=3, note="n"), 2)
    assert len(recorded) == 2
    repair = recorded[1].request["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"count": "three"}'}
    assert "Expected `int`, got `str`" in repair[-1]["content"]


def test_structured_answer_never_repaired_fails_cleanly() -> None:
    recorded = Recorder()
    result = ask(structured_script("I think about three.", '{"total": 3}'), recorded)
    assert (result.ok, result.value, result.attempts) == (False, None, 2)
    assert "no valid answer after one repair" in (result.error or "")
    assert "count" in (result.error or "") and result.raw == '{"total": 3}'
    assert "contains no JSON object" in recorded[1].request["messages"][-1]["content"]
    assert len(recorded) == 2


def test_structured_answer_on_model_failure_is_a_clean_failure() -> None:
    recorded = Recorder()
    result = ask(Raising(LLMError("timeout")), recorded)
    assert (result.ok, result.value, result.attempts) == (False, None, 1)
    assert "timeout" in (result.error or "")
    assert [c.error for c in recorded] == ["timeout"]
    recorded.clear()
    result = ask(Sequence(structured_script("nope"), Raising(LLMError("down"))), recorded)
    assert (result.ok, result.attempts, result.raw) == (False, 2, "nope")
    assert "down" in (result.error or "") and len(recorded) == 2


def test_structured_answer_takes_the_first_object_that_validates() -> None:
    recorded = Recorder()
    result = ask(structured_script('e.g. {"example": true} -> {"count": 5}'), recorded)
    assert (result.ok, result.value, result.attempts) == (True, Answer(count=5), 1)


# --------------------------------------------------------------------------- litellm
def test_importing_the_gateway_does_not_import_litellm() -> None:
    code = "import sys, artoo.actors.llm; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class FakeLitellm:
    def __init__(self, supports: bool) -> None:
        self.supports = supports

    def supports_response_schema(self, model: str) -> bool:
        return self.supports


@pytest.mark.parametrize("supports", [True, False])
def test_litellm_call_arguments(supports: bool) -> None:
    backend = LitellmBackend(MOCK_MODEL, api_base="http://localhost:1")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    request = req(
        "go",
        tools=[ToolSpec(name="shell", description="run", parameters={"type": "object"})],
        response_schema=schema,
        temperature=0.0,
    )
    args = backend._call_args(FakeLitellm(supports), request)
    assert args["model"] == MOCK_MODEL and args["api_base"] == "http://localhost:1"
    assert args["temperature"] == 0.0
    assert args["tools"] == [
        {
            "type": "function",
            "function": {"name": "shell", "description": "run", "parameters": {"type": "object"}},
        }
    ]
    assert ("response_format" in args) is supports
    if supports:
        assert args["response_format"]["json_schema"]["schema"] == schema
    assert args["messages"][0] == {"role": "system", "content": schema_instruction(schema)}
    # an instruction already present (as ask_structured puts it) is not repeated
    again = backend._call_args(
        FakeLitellm(supports), msgspec.structs.replace(request, messages=args["messages"])
    )
    assert again["messages"] == args["messages"]
    plain = backend._call_args(FakeLitellm(supports), req("go"))
    assert "tools" not in plain and "temperature" not in plain and "response_format" not in plain


# These call litellm itself (on mock_response): the first one in a process pays litellm's
# import, about 5 s, hence the marker.
litellm_call = pytest.mark.slow


def lite(mock: Any, **kw: Any) -> LitellmBackend:
    return LitellmBackend(MOCK_MODEL, mock_response=mock, **kw)


@litellm_call
def test_litellm_plain_answer_maps_content_usage_and_model() -> None:
    recorded = Recorder()
    response = gateway(lite("hello there"), recorded).complete(req("hi", task_id="t"))
    assert response.content == "hello there" and response.tool_calls == []
    assert set(response.usage) == {"prompt_tokens", "completion_tokens"}
    assert response.usage["completion_tokens"] > 0 and "gpt-4o-mini" in response.model
    assert recorded[0].response == "hello there" and recorded[0].usage == response.usage


@litellm_call
def test_litellm_tool_calls_are_decoded() -> None:
    backend = lite(
        "",
        mock_tool_calls=[
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "shell", "arguments": '{"command": "ls"}'},
            }
        ],
    )
    response = backend.complete(req(tools=[ToolSpec(name="shell")]))
    assert response.tool_calls == [
        ToolCallRequest(id="c1", name="shell", arguments={"command": "ls"})
    ]


@litellm_call
def test_litellm_malformed_tool_arguments_are_an_llm_error() -> None:
    backend = lite(
        "",
        mock_tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{oops"}}
        ],
    )
    with pytest.raises(LLMError, match="'shell' has arguments that are not JSON"):
        backend.complete(req())


@litellm_call
def test_litellm_failure_becomes_a_recorded_llm_error_with_its_cause() -> None:
    recorded = Recorder()
    with pytest.raises(LLMError, match="boom") as info:
        gateway(lite(RuntimeError("boom")), recorded).complete(req())
    assert info.value.__cause__ is not None
    assert recorded[0].error is not None and "boom" in recorded[0].error


@litellm_call
def test_litellm_structured_answer() -> None:
    recorded = Recorder()
    result = ask(lite('Here you go:\n```json\n{"count": 7}\n```'), recorded)
    assert (result.ok, result.value, result.attempts) == (True, Answer(count=7), 1)


@litellm_call
def test_litellm_structured_answer_repaired_once() -> None:
    recorded = Recorder()
    result = ask(Sequence(lite('{"count": "seven"}'), lite('{"count": 7}')), recorded)
    assert (result.ok, result.value, result.attempts) == (True, Answer(count=7), 2)
    assert [c.response for c in recorded] == ['{"count": "seven"}', '{"count": 7}']


@litellm_call
def test_litellm_structured_answer_never_repaired_fails_cleanly() -> None:
    recorded = Recorder()
    result = ask(lite("I cannot answer that."), recorded)
    assert (result.ok, result.value, result.attempts) == (False, None, 2)
    assert result.error and "no valid answer after one repair" in result.error
    assert len(recorded) == 2 and all(c.error is None for c in recorded)
