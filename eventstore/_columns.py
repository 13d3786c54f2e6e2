"""The megram columns: numpy arrays over the live megrams that queries and the Dreamer
read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- columns
@dataclass(frozen=True, slots=True)
class MegramColumns:
    """A copy of the live megrams as columns: row i of every array is megram ``ids[i]``.

    ``t_ref`` is the later of ``created`` and ``recalled`` (NaN when never recalled);
    ``level`` holds codes into :data:`LEVELS`; ``tag`` indexes ``tags`` (space, entity).
    """

    ids: list[str]
    f: np.ndarray
    sigma: np.ndarray
    k: np.ndarray
    created: np.ndarray
    recalled: np.ndarray
    t_ref: np.ndarray
    level: np.ndarray
    tag: np.ndarray
    consolidated: np.ndarray
    tags: list[tuple[str, str]]

    def __len__(self) -> int:
        return len(self.ids)


class _Rows:
    """A growable int64 array (amortised doubling): the rows of one tag."""

    __slots__ = ("buf", "n")

    def __init__(self, rows: np.ndarray | None = None) -> None:
        if rows is None:
            self.buf = np.empty(4, dtype=np.int64)
            self.n = 0
        else:
            self.buf = np.empty(max(4, len(rows) + len(rows) // 4), dtype=np.int64)
            self.buf[: len(rows)] = rows
            self.n = len(rows)

    def append(self, row: int) -> None:
        if self.n == len(self.buf):
            grown = np.empty(2 * len(self.buf), dtype=np.int64)
            grown[: self.n] = self.buf
            self.buf = grown
        self.buf[self.n] = row
        self.n += 1

    def view(self) -> np.ndarray:
        return self.buf[: self.n]


_FLOAT_COLUMNS = ("f", "sigma", "k", "created", "recalled", "t_ref")
_LOADED_COLUMNS = ("f", "sigma", "k", "created", "recalled", "level", "tag")
_COLUMN_TYPES = {
    **{name: np.float64 for name in _FLOAT_COLUMNS},
    "level": np.int8,
    "tag": np.int32,
    "live": np.bool_,
    "consolidated": np.bool_,
}


class _Table:
    """The numpy columns of every row ever loaded or recorded (tombstones included)."""

    def __init__(self, capacity: int = 1024) -> None:
        self.n = 0
        self.cols: dict[str, np.ndarray] = {
            name: np.zeros(capacity, dtype=dtype) for name, dtype in _COLUMN_TYPES.items()
        }

    def reserve(self, extra: int) -> None:
        need = self.n + extra
        capacity = len(self.cols["f"])
        if need <= capacity:
            return
        capacity = max(need, 2 * capacity)
        for name, col in self.cols.items():
            grown = np.zeros(capacity, dtype=col.dtype)
            grown[: self.n] = col[: self.n]
            self.cols[name] = grown

    def get(self, name: str) -> np.ndarray:
        return self.cols[name][: self.n]
