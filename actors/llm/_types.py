"""The LLM seam's types and pure helpers: requests, responses, errors, tiers, messages."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

import msgspec

from artoo.schemas import ToolSpec

Tier = Literal["brain", "tool"]
TIERS: tuple[Tier, ...] = ("brain", "tool")

ROLE_TIERS: dict[str, Tier] = {
    "perceiver": "brain",
    "planner": "brain",
    "meta_validator": "brain",
    "dreamer": "brain",
    "judge": "brain",
    "executor": "tool",
    "agent_validator": "tool",
}
"""The tier each model-using role asks on (paper §11.2)."""

SCRIPTED_PREFIX = "scripted:"
_SNIPPET_CHARS = 160


# --------------------------------------------------------------------------- types
class LLMError(Exception):
    """A model call failed: transport, provider, script exhausted, no recorded call, …"""


class ModelNotConfigured(ValueError):
    """No model is set for a tier; the message says how to set one."""


class ScriptError(ValueError):
    """A script file or entry list is malformed (names the entry and the problem)."""


class ToolCallRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call a model asked for; ``arguments`` is the decoded JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] = {}


class LLMRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a role asks a model.

    ``messages`` are in OpenAI chat format (``role``/``content``, assistant messages with
    ``tool_calls``, ``tool`` messages with ``tool_call_id``; see :func:`assistant_message`
    and :func:`tool_message`). ``response_schema`` is a JSON schema the answer must match.
    ``tool_choice`` ``"required"`` asks for a tool call (sent only with ``tools``; None
    leaves the choice to the model).
    """

    role: str
    tier: Tier
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = []
    tool_choice: Literal["auto", "required"] | None = None
    response_schema: dict[str, Any] | None = None
    task_id: str | None = None
    subtask_id: str = ""
    temperature: float | None = None
    max_output_tokens: int | None = None
    """This call's cap on the answer's tokens (the role's ``Config.output_caps``); the
    backend's own cap (``Config.max_output_tokens``) still holds when smaller."""


class LLMResponse(msgspec.Struct, frozen=True, kw_only=True):
    """A model's answer: text and/or tool calls, token usage, model name and latency."""

    content: str | None = None
    tool_calls: list[ToolCallRequest] = []
    usage: dict[str, int] = {}
    model: str = ""
    latency_ms: float = 0.0


@runtime_checkable
class LLMBackend(Protocol):
    """A model. ``complete`` raises :class:`LLMError` on any failure.

    :class:`LLMGateway` has the same method, so anything that takes a backend (such as
    :func:`ask_structured`) also takes the gateway.
    """

    def complete(self, request: LLMRequest) -> LLMResponse: ...


T = TypeVar("T")


class StructuredAnswer(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """The outcome of :func:`ask_structured`.

    ``ok`` with the parsed ``value``, or ``ok=False`` with ``value=None`` and the
    ``error``; ``attempts`` is the number of model calls made (1 or 2); ``raw`` is the
    last answer text received (``None`` if no answer came).
    """

    ok: bool
    value: T | None = None
    error: str | None = None
    attempts: int = 1
    raw: str | None = None


# --------------------------------------------------------------------------- pure helpers
def request_text(request: LLMRequest) -> str:
    """All message contents of ``request`` joined by newlines (tool results included)."""
    return "\n".join(_content_text(m.get("content")) for m in request.messages)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _rough_tokens(text: str) -> int:
    """About one token per four characters, at least one."""
    return max(1, (len(text) + 3) // 4)


def _snippet(request: LLMRequest) -> str:
    last = _content_text(request.messages[-1].get("content")) if request.messages else ""
    last = " ".join(last.split())
    return last if len(last) <= _SNIPPET_CHARS else last[: _SNIPPET_CHARS - 1] + "…"


def assistant_message(response: LLMResponse) -> dict[str, Any]:
    """The OpenAI-format assistant message for ``response`` (to continue a conversation)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in response.tool_calls
        ]
    return message


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    """The OpenAI-format ``tool`` message carrying one tool call's result."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """The system-prompt text that asks for one JSON object matching ``schema``."""
    return (
        "Answer with exactly one JSON object that matches this JSON schema, "
        "and nothing else:\n" + json.dumps(schema, ensure_ascii=False, sort_keys=True)
    )


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order of appearance.

    Tolerates code fences and prose around the objects; text that is not JSON is skipped.
    """
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        pos = text.find("{", end)
    return found


def _parse_structured(text: str | None, schema_type: type[T]) -> tuple[T | None, str | None]:
    """(value, None) for the first embedded object valid for ``schema_type``; else (None, why)."""
    if not text or not text.strip():
        return None, "the answer is empty; expected one JSON object"
    candidates = json_objects(text)
    if not candidates:
        return None, "the answer contains no JSON object"
    first_error = ""
    for candidate in candidates:
        try:
            return msgspec.convert(candidate, schema_type), None
        except msgspec.ValidationError as exc:
            first_error = first_error or str(exc)
    return None, f"the JSON object does not match the schema: {first_error}"


SCHEMA_MAX_ITEMS = 16
"""Items a list of a structured answer may hold, in the schema a model is asked for."""
SCHEMA_MAX_CHARS = 600
"""Characters a string of a structured answer may hold, likewise."""


@functools.cache
def _json_schema(schema_type: type) -> dict[str, Any]:
    """msgspec's JSON schema with the root ``$ref`` inlined (providers want an object root),
    every list and string bounded (:func:`_bounded`), and the fields a Struct names in
    ``__schema_required__`` required of the model (decoding still defaults them).

    Cached per type (building it dominated a structured call's CPU); treat it as read-only.
    """
    schema = _bounded(msgspec.json.schema(schema_type))
    ref = schema.get("$ref", "")
    defs = dict(schema.get("$defs", {}))
    name = ref.rsplit("/", 1)[-1]
    if not ref.startswith("#/$defs/") or name not in defs:
        return schema
    root = dict(defs.pop(name))
    asked = getattr(schema_type, "__schema_required__", ())
    if asked:  # fields a model must write, though decoding defaults them
        root["required"] = [
            *root.get("required", []),
            *(f for f in asked if f not in root.get("required", [])),
        ]
    if defs:
        root["$defs"] = defs
    return root


def _bounded(node: Any) -> Any:
    """The schema with ``maxItems`` on every array and ``maxLength`` on every free string
    that states none (pure): a server that enforces the schema by a grammar then cannot
    let a small model run on to its token cap inside one value — a question's options
    "1", "2", … "84" once did, twice, and the cut answer was no JSON, so no reading. The
    answer is still decoded by the type itself (a longer list from a server that does not
    enforce the schema is not refused here)."""
    if isinstance(node, list):
        return [_bounded(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _bounded(v) for k, v in node.items()}
    if out.get("type") == "array":
        out.setdefault("maxItems", SCHEMA_MAX_ITEMS)
    elif out.get("type") == "string" and "enum" not in out:
        out.setdefault("maxLength", SCHEMA_MAX_CHARS)
    return out


def _with_system_text(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """``messages`` with ``text`` appended to the leading system message (or a new one)."""
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{_content_text(first.get('content'))}\n\n{text}".lstrip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]
