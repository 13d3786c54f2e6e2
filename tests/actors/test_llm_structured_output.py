"""Constrained structured answers through litellm (on mock_response: no network, no key):
the JSON schema is sent whenever the backend can take it, and a provider's rejection
falls back one step and is remembered per model."""

from __future__ import annotations

from typing import Any

import pytest

from artoo.actors.llm import LitellmBackend, LLMRequest, ToolCallRequest
from artoo.actors.llm._litellm import _litellm, forget_fallbacks
from artoo.schemas import ToolSpec

pytestmark = pytest.mark.slow  # the first call in a process imports litellm (seconds)

SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}}}


def req(**kw: Any) -> LLMRequest:
    return LLMRequest(
        role="perceiver", tier="brain", messages=[{"role": "user", "content": "n?"}], **kw
    )


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every kwargs litellm.completion receives; a call whose response format a fake
    provider rejects (``reject``) raises litellm's BadRequestError."""
    litellm = _litellm()
    real = litellm.completion
    calls: list[dict[str, Any]] = []
    forget_fallbacks()

    def completion(**kwargs: Any) -> Any:
        calls.append(kwargs)
        fmt = (kwargs.get("response_format") or {}).get("type")
        if fmt in kwargs.pop("reject", ()):
            raise litellm.BadRequestError(
                message=f"response_format {fmt} is not supported",
                model=kwargs["model"],
                llm_provider="openai",
            )
        return real(**kwargs)

    monkeypatch.setattr(litellm, "completion", completion)
    yield calls
    forget_fallbacks()


def test_auto_sends_the_schema_to_a_model_on_its_own_server(sent: list[dict[str, Any]]) -> None:
    backend = LitellmBackend(
        "openai/qwen-local", api_base="http://127.0.0.1:1/v1", mock_response='{"count": 3}'
    )
    backend.complete(req(response_schema=SCHEMA))
    assert sent[-1]["response_format"]["type"] == "json_schema"
    assert sent[-1]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_auto_without_a_capability_keeps_the_schema_in_the_prompt(
    sent: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    backend = LitellmBackend("openai/unknown-model-x", mock_response='{"count": 3}')
    backend.complete(req(response_schema=SCHEMA))
    assert "response_format" not in sent[-1]
    assert "count" in str(sent[-1]["messages"][0]["content"])  # described in the prompt


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("json_schema", "json_schema"), ("json_object", "json_object"), ("prompt", None)],
)
def test_a_forced_mode_is_sent_as_is(
    sent: list[dict[str, Any]], mode: str, expected: str | None
) -> None:
    backend = LitellmBackend(
        "openai/unknown-model-x",
        structured_output=mode,
        mock_response='{"count": 3}',  # type: ignore[arg-type]
    )
    backend.complete(req(response_schema=SCHEMA))
    assert (sent[-1].get("response_format") or {}).get("type") == expected


def test_a_rejected_schema_falls_back_once_and_is_remembered(sent: list[dict[str, Any]]) -> None:
    backend = LitellmBackend(
        "openai/picky",
        api_base="http://127.0.0.1:1/v1",
        mock_response='{"count": 3}',
        reject=("json_schema",),
    )
    answer = backend.complete(req(response_schema=SCHEMA))
    assert answer.content == '{"count": 3}'
    assert [(c.get("response_format") or {}).get("type") for c in sent] == [
        "json_schema",
        "json_object",
    ]
    backend.complete(req(response_schema=SCHEMA))  # the next call starts where it worked
    assert sent[-1]["response_format"]["type"] == "json_object"
    other = LitellmBackend(
        "openai/other", api_base="http://127.0.0.1:1/v1", mock_response='{"count": 3}'
    )
    other.complete(req(response_schema=SCHEMA))
    assert sent[-1]["response_format"]["type"] == "json_schema"  # per model


def test_a_tool_call_needs_no_private_option(sent: list[dict[str, Any]]) -> None:
    backend = LitellmBackend(
        "openai/gpt-4o-mini",
        mock_response="",
        mock_tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
        ],
    )
    response = backend.complete(req(tools=[ToolSpec(name="glob")]))
    assert response.tool_calls == [ToolCallRequest(id="c1", name="glob", arguments={})]
    assert not [k for k in sent[-1] if k.startswith("_")]


def test_a_required_tool_choice_is_sent_with_the_tools(sent: list[dict[str, Any]]) -> None:
    backend = LitellmBackend(
        "openai/qwen-local",
        api_base="http://127.0.0.1:1/v1",
        mock_response="",
        mock_tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
        ],
    )
    backend.complete(req(tools=[ToolSpec(name="glob")], tool_choice="required"))
    assert sent[-1]["tool_choice"] == "required"
    backend.complete(req(tools=[ToolSpec(name="glob")]))
    assert "tool_choice" not in sent[-1]  # None: the model's own choice
    backend.complete(req(tool_choice="required"))  # no tools: nothing to require
    assert "tool_choice" not in sent[-1]
