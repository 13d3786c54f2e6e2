"""Tests of the LLM gateway (artoo.actors.llm): the seam, its three backends, tiers and
structured answers. Never the network, never an API key: litellm runs on ``mock_response``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    ask_structured,
    assistant_message,
    json_objects,
    request_text,
    resolve_backend,
    resolve_models,
    schema_instruction,
    tool_message,
)
from artoo.actors.runtime.ledger import CallRecord, task_cost
from artoo.schemas import (
    Config,
    Envelope,
    LLMCall,
    ToolSpec,
    decode_envelope,
    encode_envelope,
)

from .llm_helpers import (
    DATA,
    MOCK_MODEL,
    Answer,
    Inner,
    Outer,
    Raising,
    Recorder,
    Sequence,
    StepClock,
    gateway,
    req,
)


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


def test_gateway_records_every_call_from_many_threads_for_the_one_ledger() -> None:
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
    assert len(recorded) == 200 and len({c.call_id for c in recorded}) == 200
    for task in ("t0", "t1"):
        mine = [
            CallRecord.of(c) for c, t in zip(recorded, recorded.task_ids, strict=True) if t == task
        ]
        cost = task_cost(mine, {}, 0.0)
        assert (cost.model_calls, cost.tokens_in, cost.tokens_out) == (100, 300, 200)


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
def test_litellm_call_arguments(supports: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    backend = LitellmBackend(MOCK_MODEL, timeout=7)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    request = req(
        "go",
        tools=[ToolSpec(name="shell", description="run", parameters={"type": "object"})],
        response_schema=schema,
        temperature=0.0,
    )
    mode = backend.format_mode(FakeLitellm(supports))
    assert mode == ("json_schema" if supports else "prompt")
    args = backend._call_args(request, mode)
    assert args["model"] == MOCK_MODEL and args["timeout"] == 7
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
    again = backend._call_args(msgspec.structs.replace(request, messages=args["messages"]), mode)
    assert again["messages"] == args["messages"]
    plain = backend._call_args(req("go"), mode)
    assert "tools" not in plain and "temperature" not in plain and "response_format" not in plain
    # a role's cap (Config.output_caps) holds under the backend's, never above it
    capped = LitellmBackend(MOCK_MODEL, max_tokens=1024)
    assert capped._call_args(req("go", max_output_tokens=256), mode)["max_tokens"] == 256
    assert capped._call_args(req("go", max_output_tokens=4096), mode)["max_tokens"] == 1024
    assert capped._call_args(req("go"), mode)["max_tokens"] == 1024
    assert (
        LitellmBackend(MOCK_MODEL)._call_args(req("go", max_output_tokens=99), mode)["max_tokens"]
        == 99
    )


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
