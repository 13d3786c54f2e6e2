"""The litellm backend: any litellm model string (imported lazily on the first call)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

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
