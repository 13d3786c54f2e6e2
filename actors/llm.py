r"""The LLM gateway: one narrow seam between the roles and any model, with three backends.

Every role that asks a model builds an :class:`LLMRequest` and hands it to an
:class:`LLMGateway`, which picks the backend of the request's tier, measures the call,
hands it to a recorder as an :class:`~artoo.schemas.LLMCall` (also when it fails) and returns an
:class:`LLMResponse` or raises :class:`LLMError`. A backend is anything with
``complete(request) -> LLMResponse`` (:class:`LLMBackend`):

- :class:`LitellmBackend` — any litellm model string (``openai/gpt-4o-mini``,
  ``ollama/llama3``, …). litellm is imported lazily, on the first call, so importing
  artoo never pays for it.
- :class:`ScriptedBackend` — model string ``scripted:<path>``: answers from a TOML
  script, deterministically, with no network and no key (tests, ``artoo demo``).
- :class:`ReplayBackend` — serves the LLMCalls of a recorded run, for ``replay --rerun``.

Tiers
-----
The ``brain`` tier (Perceiver, Planner, Meta-Validator, Dreamer) and the ``tool`` tier
(Executor, Agent-Validator) may use different models. :func:`resolve_models` decides
each tier's model; the first that is set wins::

    brain: config.brain_model, config.model, $ARTOO_BRAIN_MODEL, $ARTOO_MODEL
    tool:  config.tool_model,  config.model, $ARTOO_TOOL_MODEL,  $ARTOO_MODEL

Explicit configuration (``System.open(..., model=...)``, ``--model``) beats the
environment, so a forgotten ``ARTOO_BRAIN_MODEL`` never overrides what the program asked
for. An empty string counts as unset. Nothing set anywhere raises :class:`ModelNotConfigured`.

Structured answers
------------------
:func:`ask_structured` asks for one JSON object of a msgspec Struct type: the JSON schema
goes into ``request.response_schema`` (sent natively where the model supports it) and into
the system prompt; the answer is parsed with msgspec (fences and prose around the object
are tolerated); an invalid answer gets ONE repair turn quoting the validation error; then
the result is a clean failure (``ok=False``), never an invented value.

Script format (``scripted:<path>``)
-----------------------------------
A script is a TOML file of ``[[response]]`` entries::

    [[response]]
    role = "perceiver"                 # required: the role this entry answers
    content = { intent = "count the python files", slug = "count-python-files" }

    [[response]]
    role = "executor"
    match = "count .*python"           # optional regex (Python re.search)
    tool_calls = [{ name = "shell", arguments = { command = "ls src/*.py | wc -l" } }]

    [[response]]
    role = "executor"
    match = '(?m)^12$'                 # a later turn matches on the tool's output
    content = "There are 12 python files."
    times = 1                          # uses allowed (default 1; 0 = unlimited)
    usage = { prompt_tokens = 10, completion_tokens = 5 }   # optional
    delay_ms = 200                     # optional simulated model latency

Keys of an entry:

``role`` (required)
    The role name the entry answers (``perceiver``, ``planner``, ``executor``, …).
``match``
    A regular expression searched (``re.search``) in the request's text: the contents of
    all its messages joined by newlines, system prompt and tool results included. No
    ``match`` matches every request of the role.
``content``
    The text answer. A TOML table or array is sent as its JSON encoding, so a structured
    answer can be written as ``content = { intent = "count files", slug = "count" }``.
``tool_calls``
    Tool calls the model makes: an array of ``{ name = "...", arguments = {...} }``
    (``id`` optional; default ``call_<entry>_<use>_<k>``: the entry's position in the
    file, its use number and the call's position in the answer, all counted from 1).
    An entry needs ``content`` or ``tool_calls`` or both.
``times``
    How many requests the entry may answer (default 1); ``0`` means unlimited.
``usage``
    ``{ prompt_tokens, completion_tokens }``; default: about one token per 4 characters
    of the request and of the answer.
``delay_ms``
    Simulated latency of this entry; default the backend's ``latency_ms`` (0).

Selection: a request is answered by the FIRST entry, in file order, whose ``role`` is the
request's role, that still has uses left, and whose ``match`` (if any) matches. Selection
and the use count update happen under one lock, so parallel subtasks whose requests
differ in text (give each entry a ``match`` on its subtask's instruction) get their own
answers whatever the thread timing. No entry left is an error (``script exhausted for
role executor …``), which the role handles like any model failure. Unknown keys are an
error, so a typo never silently changes a script.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
import tomllib
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

import msgspec

from artoo.actors.clock import Clock, SystemClock
from artoo.actors.clock import new_id as _default_new_id
from artoo.schemas import Config, LLMCall, ToolSpec

__all__ = [
    "ROLE_TIERS",
    "TIERS",
    "LLMBackend",
    "LLMError",
    "LLMGateway",
    "LLMRequest",
    "LLMResponse",
    "LitellmBackend",
    "ModelNotConfigured",
    "ReplayBackend",
    "ScriptEntry",
    "ScriptError",
    "ScriptToolCall",
    "ScriptedBackend",
    "StructuredAnswer",
    "ToolCallRequest",
    "UsageTotals",
    "ask_structured",
    "assistant_message",
    "json_objects",
    "request_text",
    "resolve_backend",
    "resolve_models",
    "schema_instruction",
    "tool_message",
]

Tier = Literal["brain", "tool"]
TIERS: tuple[Tier, ...] = ("brain", "tool")

ROLE_TIERS: dict[str, Tier] = {
    "perceiver": "brain",
    "planner": "brain",
    "meta_validator": "brain",
    "dreamer": "brain",
    "executor": "tool",
    "agent_validator": "tool",
}
"""The tier each model-using role asks on (DESIGN §6)."""

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
    """

    role: str
    tier: Tier
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = []
    response_schema: dict[str, Any] | None = None
    task_id: str | None = None
    subtask_id: str = ""
    temperature: float | None = None


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


class UsageTotals(msgspec.Struct, frozen=True, kw_only=True):
    """Model usage of one task so far: calls (failed ones included), tokens, latency."""

    calls: int = 0
    errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0


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


@functools.cache
def _json_schema(schema_type: type) -> dict[str, Any]:
    """msgspec's JSON schema with the root ``$ref`` inlined (providers want an object root).

    Cached per type (building it dominated a structured call's CPU); treat it as read-only.
    """
    schema = msgspec.json.schema(schema_type)
    ref = schema.get("$ref", "")
    defs = dict(schema.get("$defs", {}))
    name = ref.rsplit("/", 1)[-1]
    if not ref.startswith("#/$defs/") or name not in defs:
        return schema
    root = dict(defs.pop(name))
    if defs:
        root["$defs"] = defs
    return root


def _with_system_text(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """``messages`` with ``text`` appended to the leading system message (or a new one)."""
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{_content_text(first.get('content'))}\n\n{text}".lstrip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


# --------------------------------------------------------------------------- tiers
_HOW_TO_SET = (
    "Set one with System.open(..., model='provider/model'), the --model option, or the "
    "ARTOO_MODEL environment variable (ARTOO_BRAIN_MODEL / ARTOO_TOOL_MODEL per tier); "
    "for an offline run use a script: model='scripted:<path/to/script.toml>'."
)


def resolve_models(config: Config | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each tier's model string: explicit config first, then the environment.

    brain: ``config.brain_model``, ``config.model``, ``$ARTOO_BRAIN_MODEL``, ``$ARTOO_MODEL``;
    tool: ``config.tool_model``, ``config.model``, ``$ARTOO_TOOL_MODEL``, ``$ARTOO_MODEL``.
    Empty strings count as unset. Raises :class:`ModelNotConfigured` naming the tiers
    left without a model.
    """
    env = os.environ if env is None else env
    general = config.model if config else None
    specific = {
        "brain": config.brain_model if config else None,
        "tool": config.tool_model if config else None,
    }
    models: dict[str, str] = {}
    missing: list[str] = []
    for tier in TIERS:
        chain = (
            specific[tier],
            general,
            env.get(f"ARTOO_{tier.upper()}_MODEL"),
            env.get("ARTOO_MODEL"),
        )
        chosen = next((m.strip() for m in chain if m and m.strip()), None)
        if chosen is None:
            missing.append(tier)
        else:
            models[tier] = chosen
    if missing:
        raise ModelNotConfigured(
            f"No model configured for the {' and '.join(missing)} tier. " + _HOW_TO_SET
        )
    return models


def resolve_backend(model: str, **kwargs: Any) -> LLMBackend:
    """The backend for a model string: ``scripted:<path>`` → :class:`ScriptedBackend`,
    anything else → :class:`LitellmBackend` (``kwargs`` go to the backend)."""
    if model.startswith(SCRIPTED_PREFIX):
        path = model[len(SCRIPTED_PREFIX) :]
        if not path:
            raise ScriptError("scripted: needs a script path, as in scripted:./script.toml")
        return ScriptedBackend(path, **kwargs)
    return LitellmBackend(model, **kwargs)


# --------------------------------------------------------------------------- litellm
_litellm_lock = threading.Lock()
_litellm_module: Any = None
_litellm_skip_mcp = False


def _litellm() -> Any:
    """Import litellm once (lazily), with the bundled cost map so no network is touched."""
    global _litellm_module, _litellm_skip_mcp
    with _litellm_lock:
        if _litellm_module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            _litellm_skip_mcp = _mcp_handler_broken()
            _litellm_module = litellm
        return _litellm_module


def _mcp_handler_broken() -> bool:
    """True if this litellm's MCP tool handler cannot import (its optional ``mcp`` extra).

    Such a litellm fails every call that has ``tools`` unless told ``_skip_mcp_handler``;
    artoo's tools are plain function tools, never MCP servers, so skipping is correct.
    """
    try:
        import litellm.responses.mcp.chat_completions_handler  # noqa: F401
    except ImportError as exc:
        return (exc.name or "").split(".")[0] == "mcp"
    except Exception:
        return False
    return False


def _openai_tool(spec: ToolSpec) -> dict[str, Any]:
    parameters = spec.parameters or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": parameters},
    }


def _decode_arguments(name: str, raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise LLMError(f"tool call {name!r} has arguments that are not JSON: {raw!r:.200}") from exc
    if not isinstance(value, dict):
        raise LLMError(f"tool call {name!r} has arguments that are not a JSON object: {raw!r:.200}")
    return value


class LitellmBackend:
    """Any litellm model string. Extra ``kwargs`` go to every ``litellm.completion`` call
    (``api_base``, ``timeout``, ``api_key``, ``drop_params``, ``mock_response`` in tests, …).

    Tools are sent as OpenAI function tools. A ``response_schema`` is sent as a
    ``json_schema`` response format where litellm says the model supports it; otherwise
    the schema is described in the system prompt (unless it already is).
    """

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model = model
        self.kwargs = kwargs

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Call the model; any failure (litellm's or a malformed answer) → :class:`LLMError`."""
        start = time.perf_counter()
        try:
            litellm = _litellm()
            raw = litellm.completion(**self._call_args(litellm, request))
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.model}: {type(exc).__name__}: {exc}") from exc
        response = self._response(raw)
        return msgspec.structs.replace(response, latency_ms=(time.perf_counter() - start) * 1000)

    def _call_args(self, litellm: Any, request: LLMRequest) -> dict[str, Any]:
        messages = request.messages
        args: dict[str, Any] = {**self.kwargs, "model": self.model}
        if request.tools:
            args["tools"] = [_openai_tool(spec) for spec in request.tools]
            if _litellm_skip_mcp:
                args["_skip_mcp_handler"] = True
        if request.temperature is not None:
            args["temperature"] = request.temperature
        schema = request.response_schema
        if schema is not None:
            if self._supports_schema(litellm):
                args["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema},
                }
            instruction = schema_instruction(schema)
            if not any(instruction in _content_text(m.get("content")) for m in messages):
                messages = _with_system_text(messages, instruction)
        args["messages"] = messages
        return args

    def _supports_schema(self, litellm: Any) -> bool:
        try:
            return bool(litellm.supports_response_schema(model=self.model))
        except Exception:
            return False

    def _response(self, raw: Any) -> LLMResponse:
        try:
            message = raw.choices[0].message
            usage = getattr(raw, "usage", None)
            calls = [
                ToolCallRequest(
                    id=str(call.id or f"call_{i}"),
                    name=str(call.function.name),
                    arguments=_decode_arguments(call.function.name, call.function.arguments),
                )
                for i, call in enumerate(getattr(message, "tool_calls", None) or [], start=1)
            ]
            return LLMResponse(
                content=message.content,
                tool_calls=calls,
                usage={
                    "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                    "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
                },
                model=str(getattr(raw, "model", None) or self.model),
            )
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(
                f"{self.model}: unreadable response: {type(exc).__name__}: {exc}"
            ) from exc


# --------------------------------------------------------------------------- scripted
class ScriptToolCall(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A tool call in a script entry."""

    name: str
    arguments: dict[str, Any] = {}
    id: str | None = None


class ScriptEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``[[response]]`` of a script (see the module docstring for the keys)."""

    role: str
    match: str | None = None
    content: str | dict[str, Any] | list[Any] | None = None
    tool_calls: list[ScriptToolCall] = []
    times: int = 1
    usage: dict[str, int] | None = None
    delay_ms: float | None = None


class _Script(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    response: list[dict[str, Any]] = []


def _entry(
    index: int, raw: Mapping[str, Any], source: str
) -> tuple[ScriptEntry, re.Pattern[str] | None]:
    where = f"{source}: response #{index}"
    try:
        entry = msgspec.convert(dict(raw), ScriptEntry)
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{where}: {exc}") from exc
    if entry.content is None and not entry.tool_calls:
        raise ScriptError(f"{where}: needs content or tool_calls")
    if entry.times < 0:
        raise ScriptError(f"{where}: times must be >= 0 (0 = unlimited)")
    if entry.delay_ms is not None and entry.delay_ms < 0:
        raise ScriptError(f"{where}: delay_ms must be >= 0")
    try:
        pattern = re.compile(entry.match) if entry.match is not None else None
    except re.error as exc:
        raise ScriptError(f"{where}: bad match pattern {entry.match!r}: {exc}") from exc
    return entry, pattern


def _entry_content(entry: ScriptEntry) -> str | None:
    if entry.content is None or isinstance(entry.content, str):
        return entry.content
    return json.dumps(entry.content, ensure_ascii=False)


class ScriptedBackend:
    """Answers from a TOML script (format in the module docstring); model ``scripted:<path>``.

    Deterministic: selection and use counts update under one lock. ``latency_ms`` is the
    simulated latency of entries without ``delay_ms``; the wait happens outside the lock,
    through ``sleep`` (injectable for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        script_path = Path(path)
        try:
            text = script_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"cannot read script {script_path}: {exc}") from exc
        self._setup(_load_toml(text, str(script_path)), str(script_path), latency_ms, sleep)

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> ScriptedBackend:
        """A backend from the TOML text of a script."""
        return cls.from_entries(_load_toml(text, "<script>"), latency_ms=latency_ms, sleep=sleep)

    @classmethod
    def from_entries(
        cls,
        entries: Iterable[Mapping[str, Any]],
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        name: str = "<entries>",
    ) -> ScriptedBackend:
        """A backend from entries as Python dicts (the keys of a ``[[response]]``)."""
        backend = cls.__new__(cls)
        backend._setup(list(entries), name, latency_ms, sleep)
        return backend

    def _setup(
        self,
        raw_entries: list[Mapping[str, Any]],
        source: str,
        latency_ms: float,
        sleep: Callable[[float], None],
    ) -> None:
        parsed = [_entry(i, raw, source) for i, raw in enumerate(raw_entries, start=1)]
        self.source = source
        self.model = SCRIPTED_PREFIX + source
        self._entries = [entry for entry, _ in parsed]
        self._patterns = [pattern for _, pattern in parsed]
        self._used = [0] * len(parsed)
        self._latency_ms = latency_ms
        self._sleep = sleep
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The first usable entry's answer; none left → :class:`LLMError`."""
        text = request_text(request)
        with self._lock:
            index = self._select(request.role, text)
            if index is None:
                raise LLMError(
                    f"script exhausted for role {request.role} ({self.source}): "
                    f"no entry left that matches {_snippet(request)!r}"
                )
            self._used[index] += 1
            use = self._used[index]
        entry = self._entries[index]
        delay_ms = self._latency_ms if entry.delay_ms is None else entry.delay_ms
        if delay_ms > 0:
            self._sleep(delay_ms / 1000)
        return self._answer(index + 1, use, entry, text, delay_ms)

    def unused(self) -> list[ScriptEntry]:
        """Entries with uses left (never those with ``times = 0``), in file order."""
        with self._lock:
            return [
                entry
                for entry, used in zip(self._entries, self._used, strict=True)
                if entry.times and used < entry.times
            ]

    def _select(self, role: str, text: str) -> int | None:
        for i, entry in enumerate(self._entries):
            if entry.role != role or (entry.times and self._used[i] >= entry.times):
                continue
            pattern = self._patterns[i]
            if pattern is None or pattern.search(text):
                return i
        return None

    def _answer(
        self, number: int, use: int, entry: ScriptEntry, text: str, delay_ms: float
    ) -> LLMResponse:
        content = _entry_content(entry)
        calls = [
            ToolCallRequest(
                id=call.id or f"call_{number}_{use}_{k}",
                name=call.name,
                arguments=call.arguments,
            )
            for k, call in enumerate(entry.tool_calls, start=1)
        ]
        usage = entry.usage or {
            "prompt_tokens": _rough_tokens(text),
            "completion_tokens": _rough_tokens(
                (content or "") + "".join(json.dumps(msgspec.to_builtins(c)) for c in calls)
            ),
        }
        return LLMResponse(
            content=content,
            tool_calls=calls,
            usage=dict(usage),
            model=self.model,
            latency_ms=delay_ms,
        )


def _load_toml(text: str, source: str) -> list[Mapping[str, Any]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScriptError(f"{source}: not valid TOML: {exc}") from exc
    try:
        script = msgspec.convert(data, _Script)
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{source}: a script holds only [[response]] entries: {exc}") from exc
    return script.response


# --------------------------------------------------------------------------- replay
class ReplayBackend:
    """Serves recorded :class:`~artoo.schemas.LLMCall` answers, for re-running a run.

    Calls are queued per (role, subtask_id) in recorded order; each request takes the
    next call of its queue. A recorded failure is raised again as :class:`LLMError`; a
    request with nothing left in its queue raises ``LLMError("no recorded call …")``.
    """

    def __init__(self, calls: Iterable[LLMCall]) -> None:
        self._queues: dict[tuple[str, str], deque[LLMCall]] = defaultdict(deque)
        for call in calls:
            self._queues[(call.role, call.subtask_id)].append(call)
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The next recorded answer for the request's role and subtask."""
        key = (request.role, request.subtask_id)
        with self._lock:
            queue = self._queues.get(key)
            call = queue.popleft() if queue else None
        if call is None:
            raise LLMError(
                f"no recorded call for role {request.role} subtask {request.subtask_id!r}: "
                f"{_snippet(request)!r}"
            )
        if call.error is not None:
            raise LLMError(call.error)
        try:
            calls = msgspec.convert(call.tool_calls, list[ToolCallRequest])
        except msgspec.ValidationError as exc:
            raise LLMError(f"recorded call {call.call_id} has malformed tool_calls: {exc}") from exc
        return LLMResponse(
            content=call.response,
            tool_calls=calls,
            usage=dict(call.usage),
            model=call.model,
            latency_ms=call.latency_ms,
        )

    def remaining(self) -> int:
        """How many recorded calls have not been served."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())


# --------------------------------------------------------------------------- gateway
class LLMGateway:
    """Routes each request to its tier's backend, measures it and records an LLMCall.

    ``record(call, task_id)`` receives one :class:`~artoo.schemas.LLMCall` per call,
    failed calls included, with the request's task id (LLMCall has no task field: the
    caller publishes it on the bus under that task), before ``complete`` returns or
    raises. Latency is measured on ``clock``'s monotonic time and replaces the backend's
    own figure. Per-task usage is kept for the task's Cost (:meth:`usage_for`); drop it
    with :meth:`forget` when the task ends.
    """

    def __init__(
        self,
        backends: Mapping[str, LLMBackend],
        models: Mapping[str, str],
        *,
        record: Callable[[LLMCall, str | None], None],
        clock: Clock | None = None,
        new_id: Callable[[], str] = _default_new_id,
    ) -> None:
        self._backends = dict(backends)
        self._models = dict(models)
        self._record = record
        self._clock = clock or SystemClock()
        self._new_id = new_id
        self._lock = threading.Lock()
        self._usage: dict[str | None, UsageTotals] = {}

    @classmethod
    def from_models(
        cls,
        models: Mapping[str, str],
        *,
        record: Callable[[LLMCall, str | None], None],
        clock: Clock | None = None,
        new_id: Callable[[], str] = _default_new_id,
        **backend_kwargs: Any,
    ) -> LLMGateway:
        """A gateway whose backends come from :func:`resolve_backend`; tiers with the same
        model string share one backend (so one script's use counts span both tiers)."""
        built: dict[str, LLMBackend] = {}
        for model in models.values():
            if model not in built:
                built[model] = resolve_backend(model, **backend_kwargs)
        backends = {tier: built[model] for tier, model in models.items()}
        return cls(backends, models, record=record, clock=clock, new_id=new_id)

    @property
    def models(self) -> dict[str, str]:
        """The model string of each tier."""
        return dict(self._models)

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Call the tier's backend; always record the call; return or raise :class:`LLMError`."""
        start = self._clock.monotonic()
        response: LLMResponse | None = None
        error: LLMError | None = None
        try:
            backend = self._backends.get(request.tier)
            if backend is None:
                raise LLMError(f"no backend for tier {request.tier!r}")
            response = backend.complete(request)
        except LLMError as exc:
            error = exc
        except Exception as exc:  # a backend bug still ends as a recorded LLMError
            error = LLMError(f"{type(exc).__name__}: {exc}")
            error.__cause__ = exc
        latency_ms = max(0.0, (self._clock.monotonic() - start) * 1000)
        if response is not None:
            response = msgspec.structs.replace(response, latency_ms=latency_ms)
        self._count(request.task_id, response, latency_ms)
        self._record(self._llm_call(request, response, error, latency_ms), request.task_id)
        if error is not None:
            raise error
        assert response is not None
        return response

    def usage_for(self, task_id: str | None) -> UsageTotals:
        """Usage of every call made for ``task_id`` so far (thread-safe)."""
        with self._lock:
            return self._usage.get(task_id, UsageTotals())

    def forget(self, task_id: str | None) -> UsageTotals:
        """Drop and return the usage kept for ``task_id``."""
        with self._lock:
            return self._usage.pop(task_id, UsageTotals())

    def _count(self, task_id: str | None, response: LLMResponse | None, latency_ms: float) -> None:
        usage = response.usage if response is not None else {}
        with self._lock:
            old = self._usage.get(task_id, UsageTotals())
            self._usage[task_id] = UsageTotals(
                calls=old.calls + 1,
                errors=old.errors + (response is None),
                tokens_in=old.tokens_in + int(usage.get("prompt_tokens", 0)),
                tokens_out=old.tokens_out + int(usage.get("completion_tokens", 0)),
                latency_ms=old.latency_ms + latency_ms,
            )

    def _llm_call(
        self,
        request: LLMRequest,
        response: LLMResponse | None,
        error: LLMError | None,
        latency_ms: float,
    ) -> LLMCall:
        return LLMCall(
            call_id=self._new_id(),
            role=request.role,
            tier=request.tier,
            model=self._models.get(request.tier, ""),
            request=msgspec.to_builtins(request),
            response=response.content if response is not None else None,
            tool_calls=[msgspec.to_builtins(c) for c in response.tool_calls] if response else [],
            usage=dict(response.usage) if response is not None else {},
            latency_ms=latency_ms,
            error=str(error) if error is not None else None,
            subtask_id=request.subtask_id,
        )


# --------------------------------------------------------------------------- structured
def ask_structured(
    gateway: LLMBackend, request: LLMRequest, schema_type: type[T]
) -> StructuredAnswer[T]:
    """Ask for one JSON object of ``schema_type`` (a msgspec Struct); repair once.

    The schema goes into ``response_schema`` and the system prompt. An answer that does
    not parse or validate gets one follow-up turn quoting the error; if that fails too,
    or the model call fails, the result has ``ok=False``, ``value=None`` and the error.
    Pass the :class:`LLMGateway` so both attempts are recorded.
    """
    schema = _json_schema(schema_type)
    first = msgspec.structs.replace(
        request,
        response_schema=schema,
        messages=_with_system_text(request.messages, schema_instruction(schema)),
    )
    try:
        answer = gateway.complete(first)
    except LLMError as exc:
        return StructuredAnswer(ok=False, error=f"model call failed: {exc}", attempts=1)
    value, why = _parse_structured(answer.content, schema_type)
    if why is None:
        return StructuredAnswer(ok=True, value=value, attempts=1, raw=answer.content)
    repair = msgspec.structs.replace(
        first,
        messages=[
            *first.messages,
            {"role": "assistant", "content": answer.content or ""},
            {
                "role": "user",
                "content": f"Your answer was not valid: {why}. Reply again with only one "
                "JSON object that matches the schema.",
            },
        ],
    )
    try:
        second = gateway.complete(repair)
    except LLMError as exc:
        return StructuredAnswer(
            ok=False, error=f"model call failed on repair: {exc}", attempts=2, raw=answer.content
        )
    value, why_again = _parse_structured(second.content, schema_type)
    if why_again is None:
        return StructuredAnswer(ok=True, value=value, attempts=2, raw=second.content)
    return StructuredAnswer(
        ok=False,
        error=f"no valid answer after one repair: {why_again}",
        attempts=2,
        raw=second.content,
    )
