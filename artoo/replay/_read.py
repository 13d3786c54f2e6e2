"""Reading a store's event log for replay: every envelope, grouped by task, in seq order."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from artoo.schemas import (
    Config,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    TaskRequest,
    UserRequest,
)

if TYPE_CHECKING:
    from artoo._store import StoreArg

__all__ = [
    "BEFORE_FIELDS",
    "RETIRED_FIELDS",
    "TaskLog",
    "policy_of",
    "read_store",
    "task_config",
    "upcast_config_v0_v1",
]


@dataclass
class TaskLog:
    """One task's envelopes in seq order, with what a reader asks of them first."""

    task_id: str
    envelopes: list[Envelope] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The task as the user wrote it ("" when the log has no UserRequest for it)."""
        for env in self.envelopes:
            if isinstance(env.body, UserRequest):
                return env.body.text
        return ""

    @property
    def final(self) -> FinalResult | None:
        """The task's FinalResult, if it ended."""
        for env in reversed(self.envelopes):
            if isinstance(env.body, FinalResult):
                return env.body
        return None

    @property
    def started(self) -> float:
        """The time of the task's first envelope."""
        return self.envelopes[0].ts if self.envelopes else 0.0


def read_store(store: StoreArg, task_id: str | None = None) -> tuple[list[Envelope], list[TaskLog]]:
    """Every envelope of ``store``'s event log in seq order, and the tasks in the order they
    started (only ``task_id`` when given; a ``ValueError`` when the log has no such task).

    The store must not be open in another process (``StoreLocked``).
    """
    from artoo._store import read_log

    path = store
    paused = gc.isenabled()
    gc.disable()  # a million new objects would set off full collections, each walking them all
    try:
        # read_only: no key scan at open; reading every seq checks them all anyway
        with read_log(store) as log:
            envelopes = list(log.read())
        tasks: dict[str, TaskLog] = {}
        for env in envelopes:
            if env.task_id:
                task = tasks.get(env.task_id)
                if task is None:
                    task = tasks[env.task_id] = TaskLog(env.task_id)
                task.envelopes.append(env)
    finally:
        if paused:
            gc.enable()
    if task_id is not None:
        if task_id not in tasks:
            raise ValueError(f"no task {task_id} in {path}")
        return envelopes, [tasks[task_id]]
    return envelopes, list(tasks.values())


RETIRED_FIELDS = frozenset(
    {
        "corroborate",
        "corroborate_after_last_retry",
        "corroborate_asks",
        "corroborate_unbacked",
        "read_back_by_effect",
        "read_back_in_place",
        "corroborate_keeps_answer",
        "direct_kinds",
        "refuse_repeated_calls",
        "offer_load_data_on_spill",
        "refuse_lost_lines",
        "change_needs_effect",
        "code_count_check",
        "consent_reads_back",
        "unanswered_keeps_reading",
        "keep_request_targets",
        "repair_lost_lines",
        "rewrite_created_files",
        "read_back_reads_named",
        "code_table_check",
        "code_lookup_check",
        "proof_by_evaluation",
        "reuse_commands",
        "reuse_reading",
        "record_backing_commands",
        "reuse_only_accepted",
        "reuse_asks_request",
        "count_reads_answer",
        "unit_count_phrase",
    }
)
"""The Config fields of policy 0 (one boolean or setting per fix), retired with it: a log
from before policy 1 may hold them; :func:`upcast_config_v0_v1` drops them."""


BEFORE_FIELDS: dict[str, Any] = {"request_consent": False}
"""Each Config field in use today that a log from before it ran without, and the value it
ran under then (:func:`task_config`, both paths): the one list a new such field is added
to. A log from before ``Config.request_consent`` asked the operator of every Law 1
action (off)."""


def upcast_config_v0_v1(config: dict[str, Any]) -> dict[str, Any]:
    """A TaskRequest's logged Config (policy 0) as policy 1's Config reads it (pure): the
    retired fields dropped. What they switched is now the policy, recorded in the task's
    ``TaskRequest.policy`` (eventsourcing's upcasting: the old record is read, not
    rewritten)."""
    return {k: v for k, v in config.items() if k not in RETIRED_FIELDS}


def policy_of(task: TaskLog) -> int:
    """The decision policy ``task`` ran under (``TaskRequest.policy``; 0 for a log from
    before policy versions, or with no TaskRequest)."""
    request = next((e.body for e in task.envelopes if isinstance(e.body, TaskRequest)), None)
    return request.policy if request is not None else 0


def task_config(task: TaskLog, envelopes: Iterable[Envelope] | None = None) -> Config:
    """The Config ``task`` ran under: the one its TaskRequest logged, upcast to today's
    fields (:func:`upcast_config_v0_v1`; durability aside: a rerun's store is scratch),
    else ``Config()`` with the effector pairs and the confirmation timeout the log
    (``envelopes``, else the task's own) shows; either way a field the log ran without
    has the value it ran under then (:data:`BEFORE_FIELDS`). The one place every replay
    reader takes a task's Config from; how it decided is its policy (:func:`policy_of`)."""
    request = next((e.body for e in task.envelopes if isinstance(e.body, TaskRequest)), None)
    if request is None or not request.config:
        return _inferred_config(task.envelopes if envelopes is None else list(envelopes))
    raw = msgspec.json.encode(upcast_config_v0_v1(request.config))
    logged = Config.model_validate_json(raw)
    update: dict[str, Any] = {"durability": "none"}
    update |= {k: v for k, v in BEFORE_FIELDS.items() if k not in request.config}
    return logged.model_copy(update=update)


def _inferred_config(envelopes: list[Envelope]) -> Config:
    pairs = {e.to for e in envelopes if e.to and e.to.startswith("pair-")}
    indexes = [int(p.split("-", 1)[1]) for p in pairs if p.split("-", 1)[1].isdigit()]
    update: dict[str, Any] = {"durability": "none", **BEFORE_FIELDS}
    if indexes:
        update["max_parallel"] = max(indexes) + 1
    timeouts = [e.body.timeout_s for e in envelopes if isinstance(e.body, ConfirmationRequest)]
    if timeouts:
        update["confirmation_timeout_s"] = timeouts[0]
    return Config().model_copy(update=update)
