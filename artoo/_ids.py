"""Task ids for people: a unique prefix names a task; short ids for tables and plots."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from artoo._store import StoreArg

__all__ = ["SHORT_MIN", "match_task", "resolve_task", "short_ids", "store_task_ids"]

SHORT_MIN = 8
"""The fewest characters a short id has (more where tasks share a longer prefix)."""


def store_task_ids(store: StoreArg) -> list[str]:
    """Every task id of ``store``'s log, in the order the tasks started (the store must
    not be open in another process)."""
    from artoo._store import read_log

    seen: dict[str, None] = {}
    with read_log(store) as log:
        for env in log.read():
            if env.task_id and env.task_id not in seen:
                seen[env.task_id] = None
    return list(seen)


def match_task(given: str, ids: Sequence[str]) -> str:
    """The one id of ``ids`` that is ``given`` or starts with it (case-insensitive);
    a one-line ValueError when none does or several do."""
    wanted = given.strip().upper()
    if not wanted:
        raise ValueError("an empty task id")
    if wanted in ids:
        return wanted
    found = [t for t in ids if t.upper().startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"no task {given!r} in this store ({len(ids)} tasks)")
    shown = ", ".join(found[:5]) + (" …" if len(found) > 5 else "")
    raise ValueError(f"task {given!r} is ambiguous: {len(found)} tasks start with it ({shown})")


def resolve_task(store: StoreArg, given: str | None) -> str | None:
    """The full id of the task ``given`` (an id or a unique prefix) names in ``store``."""
    if given is None:
        return None
    return match_task(given, store_task_ids(store))


def short_ids(ids: Iterable[str], minimum: int = SHORT_MIN) -> dict[str, str]:
    """Each id's shortest prefix (at least ``minimum`` characters) no other id shares —
    a prefix every command taking a task id accepts."""
    unique = sorted(set(ids))
    out: dict[str, str] = {}
    for i, task in enumerate(unique):
        need = minimum
        for other in (unique[i - 1] if i else "", unique[i + 1] if i + 1 < len(unique) else ""):
            common = 0
            while common < min(len(task), len(other)) and task[common] == other[common]:
                common += 1
            need = max(need, common + 1)
        out[task] = task[: min(need, len(task))]
    return out
