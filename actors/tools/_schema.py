"""A Python function as a tool a model can call: its JSON schema from type hints and the
docstring, and argument checking."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from artoo.schemas import ToolSpec

from ._types import _BadArgs, _Param, _Tool


# --------------------------------------------------------------------------- schemas
def _type_schema(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """The JSON schema of a type hint and a checker that validates (and coerces) a value."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return {}, lambda v: v
    if tp is str:
        return {"type": "string"}, _checker(lambda v: isinstance(v, str), "a string")
    if tp is bool:
        return {"type": "boolean"}, _checker(lambda v: isinstance(v, bool), "a boolean")
    if tp is int:
        return {"type": "integer"}, _check_int
    if tp is float:
        return {"type": "number"}, _check_float
    if origin is Literal:
        kinds = {type(a) for a in args}
        schema: dict[str, Any] = {"enum": list(args)}
        json_type = {str: "string", int: "integer", bool: "boolean", float: "number"}
        if len(kinds) == 1 and next(iter(kinds)) in json_type:
            schema["type"] = json_type[next(iter(kinds))]

        def check_literal(v: Any) -> Any:
            if any(v == a and type(v) is type(a) for a in args):
                return v
            raise _BadArgs(f"must be one of {list(args)!r}, got {v!r}")

        return schema, check_literal
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner, check = _type_schema(rest[0])
            return {"anyOf": [inner, {"type": "null"}]}, lambda v: None if v is None else check(v)
        raise TypeError(f"unsupported union type {tp!r} (only X | None)")
    if tp is list or origin is list:
        item_schema, check_item = _type_schema(args[0]) if args else ({}, lambda v: v)

        def check_list(v: Any) -> Any:
            if not isinstance(v, list):
                raise _BadArgs(f"must be an array, got {_json_type(v)}")
            return [check_item(x) for x in v]

        return {"type": "array", "items": item_schema}, check_list
    if tp is dict or origin is dict:
        return {"type": "object"}, _checker(lambda v: isinstance(v, dict), "an object")
    raise TypeError(f"unsupported parameter type {tp!r}")


def _checker(ok: Callable[[Any], bool], what: str) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if not ok(v):
            raise _BadArgs(f"must be {what}, got {_json_type(v)}")
        return v

    return check


def _check_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _BadArgs(f"must be an integer, got {_json_type(v)}")
    if isinstance(v, float):
        if not v.is_integer():
            raise _BadArgs(f"must be an integer, got {v!r}")
        return int(v)
    return v


def _check_float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _BadArgs(f"must be a number, got {_json_type(v)}")
    return float(v)


def _json_type(v: Any) -> str:
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}
    return "null" if v is None else names.get(type(v), "object" if isinstance(v, dict) else "?")


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


_BUILTIN_SPECS: dict[tuple[Any, str], tuple[ToolSpec, tuple[_Param, ...]]] = {}


def _describe(
    fn: Callable[..., Any], name: str, *, skip: int
) -> tuple[ToolSpec, tuple[_Param, ...]]:
    """A ToolSpec (JSON-schema parameters) and argument checkers from a function."""
    summary, docs = _parse_doc(fn.__doc__)
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[_Param] = []
    for p in list(inspect.signature(fn).parameters.values())[skip:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *{p.name} parameters are not supported")
        if p.name not in hints:
            raise TypeError(f"tool {name}: parameter '{p.name}' needs a type hint")
        schema, check = _type_schema(hints[p.name])
        if p.name in docs:
            schema = {**schema, "description": docs[p.name]}
        has_default = p.default is not inspect.Parameter.empty
        if has_default:
            schema = {**schema, "default": p.default}
        else:
            required.append(p.name)
        properties[p.name] = schema
        params.append(_Param(p.name, check, not has_default, p.default if has_default else None))
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name=name, description=summary, parameters=parameters), tuple(params)


def _bind(tool: _Tool, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise _BadArgs(f"arguments must be a JSON object, got {_json_type(args)}")
    known = {p.name for p in tool.params}
    unknown = sorted(set(args) - known)
    if unknown:
        expected = ", ".join(p.name for p in tool.params) or "none"
        raise _BadArgs(f"unexpected argument(s) {', '.join(unknown)} (expected: {expected})")
    bound: dict[str, Any] = {}
    for p in tool.params:
        if p.name in args:
            try:
                bound[p.name] = p.check(args[p.name])
            except _BadArgs as exc:
                raise _BadArgs(f"argument '{p.name}' {exc}") from None
        elif p.required:
            raise _BadArgs(f"missing required argument '{p.name}'")
        else:
            bound[p.name] = p.default
    return bound
