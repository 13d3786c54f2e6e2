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

import math
import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from artoo.schemas import AuditConfig

if TYPE_CHECKING:
    from .auditor import AuditFold

__all__ = ["WATERMARK", "FoldMark", "load_mark", "restore", "resume", "save_mark", "take_mark"]

WATERMARK = "watermark.json"


class FoldMark(msgspec.Struct, frozen=True, kw_only=True):
    """The fold's state between windows (no window open)."""

    next_seq: int
    max_ts: float | None
    losses: dict[str, list[tuple[int, float]]] = {}
    stalled: list[str] = []
    history: list[tuple[str, str, list[float]]] = []
    config: dict[str, float | int] = {}


def _config(config: AuditConfig) -> dict[str, float | int]:
    """The settings a fold's state depends on (tap_size does not change a report)."""
    return {k: v for k, v in config.model_dump().items() if k != "tap_size"}


def take_mark(fold: AuditFold, next_seq: int) -> FoldMark:
    """The state of ``fold`` (no window open) with ``next_seq`` the next seq to fold."""
    return FoldMark(
        next_seq=next_seq,
        max_ts=None if math.isinf(fold._max_ts) else fold._max_ts,
        losses={t: list(v) for t, v in fold._losses.items()},
        stalled=sorted(fold._stalled),
        history=[(role, metric, list(v)) for (role, metric), v in fold._history.items()],
        config=_config(fold.config),
    )


def restore(fold: AuditFold, mark: FoldMark) -> bool:
    """Put ``mark`` into a fresh ``fold``; False (fold untouched) when the mark was made
    under another configuration."""
    if mark.config != _config(fold.config) or fold.next_seq != 1:
        return False
    fold.next_seq = mark.next_seq
    fold._max_ts = -math.inf if mark.max_ts is None else mark.max_ts
    fold._losses = {t: list(v) for t, v in mark.losses.items()}
    fold._stalled = set(mark.stalled)
    fold._history = {
        (role, metric): deque(values, maxlen=fold.config.drift_history)
        for role, metric, values in mark.history
    }
    return True


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


def resume(fold: AuditFold, directory: Path, last_seq: int) -> tuple[int, str | None]:
    """Restore a fresh ``fold`` from the watermark in ``directory`` when it is usable:
    (the seq to fold from, None), else (1, why not; None when there is no watermark)."""
    mark = load_mark(directory)
    if mark is None:
        ok = not (directory / WATERMARK).exists()
        return 1, None if ok else "unreadable"
    if mark.next_seq > last_seq + 1:
        return 1, f"it is at seq {mark.next_seq}, beyond the event log's {last_seq}"
    if not restore(fold, mark):
        return 1, "made under another audit config"
    return mark.next_seq, None
