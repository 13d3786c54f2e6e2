"""Which model each tier uses, and the backend for a model string."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from artoo.schemas import Config

from ._litellm import LitellmBackend
from ._scripted import ScriptedBackend
from ._types import SCRIPTED_PREFIX, TIERS, LLMBackend, ModelNotConfigured, ScriptError

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


def backend_options(
    model: str, config: Config, model_options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What :func:`resolve_backend` gets for ``model`` under ``config`` (pure): nothing for
    a ``scripted:`` model; for litellm ``timeout = config.role_timeout_s``, ``max_tokens =
    config.max_output_tokens`` (when set) and ``config.structured_output``, then the host's
    ``model_options`` (which win)."""
    if model.startswith(SCRIPTED_PREFIX):
        return {}
    options: dict[str, Any] = {"timeout": config.role_timeout_s}
    if config.max_output_tokens is not None:
        options["max_tokens"] = config.max_output_tokens
    options["structured_output"] = config.structured_output
    return {**options, **dict(model_options or {})}
