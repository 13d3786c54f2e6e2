"""The tool catalog: the one owner of the names of every tool an Executor may be offered.

Equipment, not a role. :data:`BUILTIN_TOOLS` is the one list of built-in tool names (the
ToolRegistry implements each as its method ``_<name>``); host tools are the Python
functions given to ``System.open(tools=…)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._types import ToolRunnerFactory

__all__ = ["BUILTIN_TOOLS", "ToolCatalog"]

BUILTIN_TOOLS: tuple[str, ...] = (
    "glob",
    "read_file",
    "write_file",
    "shell",
    "run_tests",
    "load_data",
)
"""The built-in tools, in the order they are offered."""


@dataclass(frozen=True)
class ToolCatalog:
    """Built-in tools plus the host's functions; ``names`` is what a plan may use."""

    host_tools: tuple[Callable[..., Any], ...] = ()
    runner: ToolRunnerFactory | None = None
    """How an attempt's calls are run: None, by the live registry; ``artoo replay --rerun``
    gives a factory that serves the recorded calls instead."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every tool name: built-ins first, then the host's, in registration order."""
        return (*BUILTIN_TOOLS, *(fn.__name__ for fn in self.host_tools))
