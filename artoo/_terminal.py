"""What every terminal face shares: the exit codes and :func:`literal` for model text."""

from __future__ import annotations

from rich.text import Text

__all__ = ["CONTROL", "EXIT_ABANDON", "EXIT_OK", "EXIT_USAGE", "literal"]

EXIT_OK = 0
EXIT_ABANDON = 1
EXIT_USAGE = 2

CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c not in (9, 10)}


def literal(text: object) -> Text:
    """Model or tool text for the terminal, shown as written: no Rich markup is read
    (``[bold]``, ``[link=…]``), control characters (escape sequences) are shown escaped."""
    return Text(str(text).translate(CONTROL))
