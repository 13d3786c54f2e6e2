"""Structured answers: one JSON object of a msgspec Struct type, with one repair."""

from __future__ import annotations

from typing import cast

import msgspec

from ._types import (
    LLMBackend,
    LLMError,
    LLMRequest,
    StructuredAnswer,
    T,
    _json_schema,
    _parse_structured,
    _with_system_text,
    schema_instruction,
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
    schema = _json_schema(cast(type, schema_type))
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
