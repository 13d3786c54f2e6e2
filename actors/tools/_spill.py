"""Spillover (Hive's pattern): every result saved whole under ``spill/<task>/``; the model
sees head and tail, and a pointer to ``load_data``.

Each task has a spill directory of its own, so a call lists only its task's files and
its cost does not grow with the store's age. :func:`cleanup_spill` removes the
directories of tasks untouched for ``Config.tools.spill_keep_days`` (run at
``System.open``)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import msgspec

from ._types import _SPILL_NAME, head_tail


def cleanup_spill(root: Path, *, keep_s: float, now: float | None = None) -> int:
    """Remove the task spill directories under ``root`` last modified more than ``keep_s``
    seconds before ``now``; returns how many. Files directly under ``root`` (the layout
    before per-task directories) age out the same way."""
    if not root.is_dir():
        return 0
    limit = (time.time() if now is None else now) - keep_s
    removed = 0
    for entry in root.iterdir():
        try:
            if entry.stat().st_mtime >= limit:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed += 1
        except OSError:
            continue
    return removed


def _last_spill_number(spill_dir: Path) -> int:
    numbers = [int(m.group(1)) for p in spill_dir.iterdir() if (m := _SPILL_NAME.match(p.name))]
    return max(numbers, default=0)


def _render(value: Any) -> str:
    """A host function's return value as text (JSON pretty-printed for paging)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)


def _record_args(args: Any) -> dict[str, Any]:
    """Arguments as kept in the ToolCall record (long strings cut to CONTEXT_LIMIT)."""
    if not isinstance(args, dict):
        return {}
    return {
        str(k): head_tail(v) if isinstance(v, str) else v for k, v in args.items() if _encodable(v)
    }


def _encodable(value: Any) -> bool:
    try:
        msgspec.msgpack.encode(value)
    except (TypeError, msgspec.EncodeError, OverflowError):
        return False
    return True
