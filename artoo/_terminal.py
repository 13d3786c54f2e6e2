"""What every terminal face shares: the exit codes, :func:`literal` for model text, and
:func:`terminal_operator`, the operator who answers confirmations on the terminal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from artoo.schemas import ConfirmationRequest

__all__ = [
    "CONTROL",
    "EXIT_ABANDON",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "literal",
    "terminal_operator",
]

EXIT_OK = 0
EXIT_ABANDON = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c not in (9, 10)}


def literal(text: object) -> Text:
    """Model or tool text for the terminal, shown as written: no Rich markup is read
    (``[bold]``, ``[link=…]``), control characters (escape sequences) are shown escaped."""
    return Text(str(text).translate(CONTROL))


def terminal_operator(
    console: Console, read: Callable[[str], str]
) -> Callable[[ConfirmationRequest], bool]:
    """An operator asking on the terminal: what would happen (the effects the sandbox
    observed, or the reason the parser gave), then ``approve? [y/N]``; only ``y``/``yes``
    approves — anything else, an empty line or end of input denies. One question at a
    time (parallel subtasks wait their turn)."""
    lock = threading.Lock()

    def ask(request: ConfirmationRequest) -> bool:
        with lock:
            console.print(
                Text("confirmation needed", style="bold")
                + Text(f" ({request.gate or 'law1'}): ")
                + literal(request.action)
            )
            for effect in request.effects[:40]:
                console.print(literal(f"  {effect.change:<9} {effect.path}  {effect.summary}"))
            if len(request.effects) > 40:
                console.print(literal(f"  … and {len(request.effects) - 40} more"))
            console.print(literal(request.reason))
            try:
                answer = read("approve? [y/N] ")
            except EOFError:
                return False
            return answer.strip().lower() in ("y", "yes")

    return ask
