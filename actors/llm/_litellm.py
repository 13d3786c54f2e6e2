"""The litellm backend: any litellm model string (imported lazily on the first call)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Literal

import msgspec

from artoo.schemas import ToolSpec

from ._types import (
    LLMError,
    LLMRequest,
    LLMResponse,
    ToolCallRequest,
    _content_text,
    _with_system_text,
    schema_instruction,
)

# --------------------------------------------------------------------------- litellm
_litellm_lock = threading.Lock()
_litellm_module: Any = None

StructuredOutput = Literal["auto", "json_schema", "json_object", "prompt"]
_DEGRADE: dict[str, str] = {"json_schema": "json_object", "json_object": "prompt"}
_fallbacks: dict[str, str] = {}  # model → the mode a provider's rejection left it at
_fallbacks_lock = threading.Lock()


def _litellm() -> Any:
    """Import litellm once (lazily), with the bundled cost map so no network is touched.

    Tool calls need litellm's ``mcp`` extra (declared: ``litellm[mcp]``), whatever the
    tools are."""
    global _litellm_module
    with _litellm_lock:
        if _litellm_module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            _litellm_module = litellm
        return _litellm_module


def _rejected(litellm: Any, exc: Exception) -> bool:
    """Whether ``exc`` is the provider refusing the request's parameters (by type)."""
    kinds = tuple(
        k
        for k in (
            getattr(litellm, "BadRequestError", None),
            getattr(litellm, "UnsupportedParamsError", None),
        )
        if isinstance(k, type)
    )
    return bool(kinds) and isinstance(exc, kinds)


def forget_fallbacks() -> None:
    """Forget every remembered structured-output fallback (tests; a changed server)."""
    with _fallbacks_lock:
        _fallbacks.clear()


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

    Tools are sent as OpenAI function tools. A ``response_schema`` is always described in
    the system prompt, and constrained by ``structured_output`` (``Config.structured_output``):

    - ``auto`` (default): a ``json_schema`` response format whenever the backend can take
      it — litellm says the model supports it, or the model is served by an
      OpenAI-compatible server of its own (an ``api_base``; llama-server, vLLM and Ollama
      enforce a schema by grammar) — else the prompt alone;
    - ``json_schema`` / ``json_object``: always that response format; ``prompt``: never one.

    When the provider rejects the response format (litellm's ``BadRequestError`` or
    ``UnsupportedParamsError``), the call is made again one step down (``json_schema`` →
    ``json_object`` → ``prompt``) and, once a step works, that step is remembered for the
    model for the rest of the process.
    """

    def __init__(
        self, model: str, *, structured_output: StructuredOutput = "auto", **kwargs: Any
    ) -> None:
        self.model = model
        self.structured_output: StructuredOutput = structured_output
        self.kwargs = kwargs

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Call the model; any failure (litellm's or a malformed answer) → :class:`LLMError`."""
        start = time.perf_counter()
        try:
            litellm = _litellm()
            raw = self._completion(litellm, request)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.model}: {type(exc).__name__}: {exc}") from exc
        response = self._response(raw)
        return msgspec.structs.replace(response, latency_ms=(time.perf_counter() - start) * 1000)

    def _completion(self, litellm: Any, request: LLMRequest) -> Any:
        mode = self.format_mode(litellm) if request.response_schema is not None else "prompt"
        while True:
            try:
                raw = litellm.completion(**self._call_args(request, mode))
            except Exception as exc:
                if mode in _DEGRADE and _rejected(litellm, exc):
                    mode = _DEGRADE[mode]
                    continue
                raise
            if request.response_schema is not None and mode != self.format_mode(litellm):
                with _fallbacks_lock:
                    _fallbacks[self.model] = mode
            return raw

    def format_mode(self, litellm: Any) -> str:
        """The response format this model gets now: its remembered fallback, else the
        configured mode (``auto`` resolved)."""
        with _fallbacks_lock:
            remembered = _fallbacks.get(self.model)
        if remembered is not None:
            return remembered
        if self.structured_output != "auto":
            return self.structured_output
        if self._own_server() or self._supports_schema(litellm):
            return "json_schema"
        return "prompt"

    def _own_server(self) -> bool:
        if self.kwargs.get("api_base") or self.kwargs.get("base_url"):
            return True
        return self.model.startswith("openai/") and bool(os.environ.get("OPENAI_API_BASE"))

    def _call_args(self, request: LLMRequest, mode: str) -> dict[str, Any]:
        messages = request.messages
        args: dict[str, Any] = {**self.kwargs, "model": self.model}
        if request.tools:
            args["tools"] = [_openai_tool(spec) for spec in request.tools]
            if request.tool_choice is not None:
                args["tool_choice"] = request.tool_choice
        if request.temperature is not None:
            args["temperature"] = request.temperature
        if request.max_output_tokens is not None:  # the role's cap, under the backend's
            cap = args.get("max_tokens")
            args["max_tokens"] = min(request.max_output_tokens, cap or request.max_output_tokens)
        schema = request.response_schema
        if schema is not None:
            if mode == "json_schema":
                args["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema},
                }
            elif mode == "json_object":
                args["response_format"] = {"type": "json_object"}
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


def model_problem(
    model: str, *, api_base: str | None = None, api_key: str | None = None
) -> str | None:
    """Why ``model`` cannot be called as configured, in one line, or None: an unknown
    provider (a misspelt model string), or a credential litellm's own validation finds
    missing (naming the variable to set). Nothing is sent over the network."""
    litellm = _litellm()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model, api_base=api_base)
    except Exception:
        return (
            f"unknown model {model!r}: litellm knows no provider for it; write it as "
            "provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
            "ollama/llama3 (https://docs.litellm.ai/docs/providers)"
        )
    if api_key:
        return None
    try:
        found = litellm.validate_environment(model=model, api_base=api_base)
    except Exception:  # litellm could not tell: the call itself will say
        return None
    missing = [
        k for k in found.get("missing_keys", []) if not (api_base and k.endswith("_API_BASE"))
    ]
    if not missing:
        return None
    local = " (any value, for a local server that takes none)" if api_base else ""
    return (
        f"model {model} ({provider}) needs {' and '.join(missing)}: set "
        f"{'them' if len(missing) > 1 else 'it'} in the environment{local}, "
        "e.g. export " + " ".join(f"{k}=..." for k in missing)
    )
