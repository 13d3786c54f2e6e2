"""The Auditor's catch-up watermark: the fold's state at its last closed window.

Each time the Auditor writes a *complete* report it saves, after the report, the state
of its fold as it was when that window closed (``<store>/audit/watermark.json``, written
to a temporary file and renamed): the next seq to fold, the event-time high mark, the
loss series and stalled set of each task, and the drift history of each role. At start
it restores that state and folds only the envelopes after ``next_seq``, instead of the
whole event log. The reports stay equal to the offline recomputation because the saved
state is exactly the fold's at that seq.

A watermark that is missing, unreadable, made under another audit configuration, or
beyond the end of the event log is ignored (with a warning for the last three): the
Auditor then replays from seq 1, as before. A crash between a report and its watermark
leaves an older watermark: the windows after it are folded again and the reports already
in the log are not written twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from artoo.schemas import AuditConfig

__all__ = ["WATERMARK", "FoldMark", "load_mark", "mark_config", "resume", "save_mark"]

WATERMARK = "watermark.json"


class FoldMark(msgspec.Struct, frozen=True, kw_only=True):
    """The fold's state between windows (no window open)."""

    next_seq: int
    max_ts: float | None
    losses: dict[str, list[tuple[int, float]]] = {}
    stalled: list[str] = []
    history: list[tuple[str, str, list[float]]] = []
    config: dict[str, float | int] = {}


def mark_config(config: AuditConfig) -> dict[str, float | int]:
    """The settings a fold's state depends on (tap_size does not change a report)."""
    return {k: v for k, v in config.model_dump().items() if k != "tap_size"}


def save_mark(directory: Path, mark: FoldMark) -> None:
    """Write ``mark`` atomically (temporary file, fsync, rename)."""
    path = directory / WATERMARK
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(msgspec.json.encode(mark))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_mark(directory: Path) -> FoldMark | None:
    """The saved watermark, or None (none saved, or unreadable)."""
    try:
        data = (directory / WATERMARK).read_bytes()
    except FileNotFoundError:
        return None
    try:
        return msgspec.json.decode(data, type=FoldMark)
    except msgspec.DecodeError:
        return None


def resume(
    restore: Callable[[FoldMark], bool], directory: Path, last_seq: int
) -> tuple[int, str | None]:
    """Restore a fresh fold (``restore``: its :meth:`AuditFold.restore`) from the watermark in
    ``directory`` when it is usable: (the seq to fold from, None), else (1, why not; None
    when there is no watermark)."""
    mark = load_mark(directory)
    if mark is None:
        ok = not (directory / WATERMARK).exists()
        return 1, None if ok else "unreadable"
    if mark.next_seq > last_seq + 1:
        return 1, f"it is at seq {mark.next_seq}, beyond the event log's {last_seq}"
    if not restore(mark):
        return 1, "made under another audit config"
    return mark.next_seq, None
