"""The command line's configuration: files, environment variables and flags, merged.

One precedence, lowest first (a later source overrides an earlier one, key by key):

1. the defaults (``artoo.Config()``; store ``./.artoo``, workspace ``.``);
2. ``[tool.artoo]`` in ``pyproject.toml`` of the working directory;
3. ``artoo.toml`` of the working directory;
4. environment variables (:data:`ENV`);
5. flags (``--model``, ``--api-base``, ``--store``, ``--workspace`` …), then ``--set KEY=VALUE``.

Keys are :class:`~artoo.schemas.Config` fields (sections as TOML tables or dotted keys:
``ggs.delta``) plus the command line's own :data:`CLI_KEYS`. :func:`load_settings`
returns the merged result with where each value came from (``artoo config`` prints it).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from artoo.schemas import Config

from ._wiring import config_from

__all__ = [
    "CLI_DEFAULTS",
    "CLI_KEYS",
    "ENV",
    "Settings",
    "load_settings",
    "parse_setting",
]

CLI_DEFAULTS: dict[str, Any] = {"store": "./.artoo", "workspace": ".", "api_base": None}
"""The command line's own keys (not Config fields) and their defaults."""
CLI_KEYS = tuple(CLI_DEFAULTS)

ENV: dict[str, str] = {
    "ARTOO_STORE": "store",
    "ARTOO_WORKSPACE": "workspace",
    "ARTOO_API_BASE": "api_base",
    "ARTOO_MODEL": "model",
    "ARTOO_BRAIN_MODEL": "brain_model",
    "ARTOO_TOOL_MODEL": "tool_model",
}
"""Environment variables read, and the key each sets."""


@dataclass(frozen=True)
class Settings:
    """The effective configuration of one command."""

    config: Config
    store: Path
    workspace: Path
    api_base: str | None
    values: dict[str, Any]
    """Every key (dotted) and its effective value."""
    sources: dict[str, str]
    """Every key (dotted) and where its value came from (``default``, ``artoo.toml`` …)."""


def parse_setting(setting: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → ``(key, value)``: the value read as JSON (a number, ``true``, a
    list …), else taken as a string."""
    key, sep, raw = setting.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set wants key=value, not {setting!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def _flat(data: Mapping[str, Any], model: type[BaseModel] | None, prefix: str = "") -> dict:
    """Nested tables → dotted keys, descending only into Config sections."""
    out: dict[str, Any] = {}
    fields = model.model_fields if model is not None else {}
    for key, value in data.items():
        annotation = fields[key].annotation if key in fields else None
        section = (
            annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel)
            else None
        )
        if section is not None and isinstance(value, Mapping):
            out.update(_flat(value, section, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = out
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return out


def _file_layers(cwd: Path) -> list[tuple[str, dict[str, Any]]]:
    layers: list[tuple[str, dict[str, Any]]] = []
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        data = _read_toml(pyproject)
        table = data.get("tool", {}).get("artoo")
        if isinstance(table, dict):
            layers.append(("pyproject.toml [tool.artoo]", _flat(table, Config)))
    own = cwd / "artoo.toml"
    if own.is_file():
        layers.append(("artoo.toml", _flat(_read_toml(own), Config)))
    return layers


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None


def load_settings(
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    sets: Sequence[str] = (),
) -> Settings:
    """The merged configuration (precedence in the module docstring).

    ``flags`` maps keys to the values given on the command line (None: not given),
    ``sets`` are ``--set KEY=VALUE`` strings. An unknown key, or a value Config refuses,
    is a one-line ValueError naming the key and its source.
    """
    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    values = {**CLI_DEFAULTS, **_flat(Config().model_dump(), Config)}
    sources = dict.fromkeys(values, "default")
    layers = _file_layers(cwd)
    layers.append(("env", {key: env[var] for var, key in ENV.items() if env.get(var)}))
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    layers.append(("flag", given))
    layers.append(("--set", dict(parse_setting(s) for s in sets)))
    for source, layer in layers:
        for key, value in layer.items():
            if key not in values:
                raise ValueError(f"{source}: no such setting {key!r}")
            values[key] = value
            if source == "env":
                var = next(v for v, k in ENV.items() if k == key)
                sources[key] = f"${var}"
            elif source == "flag":
                sources[key] = f"--{key.replace('_', '-')}"
            else:
                sources[key] = source
    config_values = {k: v for k, v in values.items() if k not in CLI_KEYS}
    config = config_from(_nested(config_values))
    api_base = values["api_base"]
    return Settings(
        config=config,
        store=Path(str(values["store"])),
        workspace=Path(str(values["workspace"])),
        api_base=str(api_base) if api_base else None,
        values=values,
        sources=sources,
    )
