"""Secrets stay out of what tools run with and of everything they report.

Tools run with a scrubbed environment: only the variables of :data:`ENV_ALLOWLIST` (and
``LC_*``), plus any the host adds, reach a shell command — never an API key. And the
values of secret-looking variables of the host (names with KEY, TOKEN, SECRET, PASSWORD,
PASSWD, CREDENTIAL or AUTH; values of 8 characters or more), plus secrets given
explicitly (credentials in ``model_options``), are replaced by ``[REDACTED]`` in every tool
result — its preview, the model's context, the spill file and the ToolCall record — so
they never reach the model, the bus, the event log or ``spill/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["ENV_ALLOWLIST", "REDACTED", "Redactor", "secret_values", "tool_env"]

ENV_ALLOWLIST: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "PWD",
)
"""Host environment variables a tool's process sees (plus every ``LC_*``)."""

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_LEN = 8


def tool_env(environ: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """The environment a tool's process gets: the allowlisted variables of ``environ``
    (default: this process's), ``LC_*``, and the names in ``allow``."""
    source = os.environ if environ is None else environ
    names = {*ENV_ALLOWLIST, *allow}
    return {k: v for k, v in source.items() if k in names or k.startswith("LC_")}


def secret_values(environ: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The values to redact: secret-looking variables of ``environ`` and ``extra``, longest
    first (so a secret containing another is replaced whole)."""
    source = os.environ if environ is None else environ
    found = {v for k, v in source.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_LEN}
    found |= {v for v in extra if isinstance(v, str) and len(v) >= _MIN_LEN}
    return sorted(found, key=lambda v: (-len(v), v))


class Redactor:
    """Replaces every known secret value in a text (one pass of ``re.sub``, linear)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = [s for s in secrets if s]
        self._pattern = (
            re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))
            if values
            else None
        )

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED]``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)
