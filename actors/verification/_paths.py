"""Whether a text names a path: used where plans and calls are matched against targets."""

from __future__ import annotations

import re

__all__ = ["mentions"]


def mentions(text: str, target: str) -> bool:
    """Whether ``text`` names ``target`` as a whole path (or a path under it).

    ``/tmp/a`` is named by "read /tmp/a." and "/tmp/a/b", not by "/tmp/ab" or "/var/tmp/a".
    """
    if not target:
        return False
    pattern = rf"(?<![\w.\-]){re.escape(target)}(?![\w\-]|\.\w)"
    return re.search(pattern, text) is not None
