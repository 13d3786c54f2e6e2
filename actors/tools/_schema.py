"""A Python function as a tool a model can call: its JSON schema from type hints and the
docstring, and argument checking."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from artoo.schemas import ToolSpec

from ._types import _BadArgs, _Tool

# --------------------------------------------------------------------------- schemas
_JSON_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _json_type(v: Any) -> str:
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}
    return "null" if v is None else names.get(type(v), "object" if isinstance(v, dict) else "?")


def _tidy(schema: dict[str, Any]) -> dict[str, Any]:
    """An enum of one JSON type also states the type (models follow it more reliably)."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and "type" not in schema:
        kinds = {type(v) for v in enum}
        if len(kinds) == 1 and next(iter(kinds)) in _JSON_TYPES:
            schema = {**schema, "type": _JSON_TYPES[next(iter(kinds))]}
    return schema


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX = re.compile(r"^:param\s+(?:[\w\[\], |]+\s+)?(\w+):\s*(.*)$")


def _parse_doc(doc: str | None) -> tuple[str, dict[str, str]]:
    """A docstring's summary and its per-parameter descriptions (Google or Sphinx)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped)
        sphinx = _SPHINX.match(stripped)
        if header and not line.startswith(" "):
            section, current = header.group(1), None
        elif sphinx:
            section, current = "Args", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
        elif section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params") and stripped:
            entry = _ARG_LINE.match(stripped)
            indent = len(line) - len(line.lstrip())
            if entry and (current is None or indent <= _indent_of(lines, current)):
                current = entry.group(1).lstrip("*")
                params[current] = entry.group(3).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(summary).strip()
    return re.sub(r"(?<!\n)\n(?!\n)", " ", text), params


def _indent_of(lines: list[str], name: str) -> int:
    for line in lines:
        if re.match(rf"^\s*\*{{0,2}}{re.escape(name)}\s*(\([^)]*\))?\s*:", line):
            return len(line) - len(line.lstrip())
    return 0


_BUILTIN_SPECS: dict[tuple[Any, str], tuple[ToolSpec, type[msgspec.Struct]]] = {}


def _describe(
    fn: Callable[..., Any], name: str, *, skip: int
) -> tuple[ToolSpec, type[msgspec.Struct]]:
    """A ToolSpec and the msgspec Struct of a function's arguments.

    The parameters (after the first ``skip``) become the fields of a Struct made with
    ``msgspec.defstruct`` (type hints and defaults as written); its JSON schema, from
    ``msgspec.json.schema``, is what the model sees, with the docstring's descriptions
    added; ``msgspec.convert`` into it checks a call's arguments (:func:`_bind`).
    """
    summary, docs = _parse_doc(fn.__doc__)
    hints = typing.get_type_hints(fn)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for p in list(inspect.signature(fn).parameters.values())[skip:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *{p.name} parameters are not supported")
        if p.name not in hints:
            raise TypeError(f"tool {name}: parameter '{p.name}' needs a type hint")
        if p.default is inspect.Parameter.empty:
            fields.append((p.name, hints[p.name]))
        else:
            fields.append((p.name, hints[p.name], p.default))
    args_type = msgspec.defstruct(
        f"{name}_arguments", fields, kw_only=True, forbid_unknown_fields=True
    )
    try:
        schema = msgspec.json.schema(args_type)
    except TypeError as exc:
        raise TypeError(f"tool {name}: unsupported parameter type ({exc})") from None
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    own = defs.pop(args_type.__name__)
    properties = {
        field: _tidy({**prop, **({"description": docs[field]} if field in docs else {})})
        for field, prop in own["properties"].items()
    }
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": own.get("required", []),
        "additionalProperties": False,
    }
    if defs:  # nested Structs and enums the parameters refer to
        parameters["$defs"] = defs
    return ToolSpec(name=name, description=summary, parameters=parameters), args_type


def _bind(tool: _Tool, args: Any) -> dict[str, Any]:
    """The call's arguments checked and completed with defaults (``msgspec.convert`` in its
    lax mode: a whole float or a numeric string is taken for a number, as small models
    write them; a wrong type, a fraction for an int, an unknown or missing field is not)."""
    if not isinstance(args, dict):
        raise _BadArgs(f"arguments must be a JSON object, got {_json_type(args)}")
    try:
        value = msgspec.convert(args, tool.args, strict=False)
    except msgspec.ValidationError as exc:
        raise _BadArgs(str(exc)) from None
    return {field: getattr(value, field) for field in tool.args.__struct_fields__}
