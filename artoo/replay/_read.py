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

__all__ = ["TaskLog", "read_store", "task_config"]


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


BEFORE_FIELDS: dict[str, Any] = {
    "corroborate": False,
    "corroborate_after_last_retry": False,
    "corroborate_asks": 1,
    "corroborate_unbacked": False,
    "read_back_by_effect": False,
    "read_back_in_place": False,
    "corroborate_keeps_answer": False,
    "direct_kinds": [],
    "request_consent": False,
    "refuse_repeated_calls": False,
    "refuse_lost_lines": False,
    "change_needs_effect": False,
    "proof_by_evaluation": False,
    "code_count_check": False,
    "code_table_check": False,
    "code_lookup_check": False,
    "read_back_reads_named": False,
    "rewrite_created_files": False,
    "repair_lost_lines": False,
    "keep_request_targets": False,
    "unanswered_keeps_reading": False,
    "consent_reads_back": False,
    "offer_load_data_on_spill": False,
    "reuse_commands": False,
    "reuse_reading": False,
    "reuse_asks_request": False,
    "reuse_only_accepted": False,
    "record_backing_commands": False,
    "count_reads_answer": False,
    "unit_count_phrase": False,
}
"""Each Config field a log from before it ran without, and the value it ran under then
(:func:`task_config`): the one list a new such field is added to."""


def task_config(task: TaskLog, envelopes: Iterable[Envelope] | None = None) -> Config:
    """The Config ``task`` ran under: the one its TaskRequest logged (durability aside: a
    rerun's store is scratch), else — a log from before that field — ``Config()`` with
    the effector pairs and the confirmation timeout the log (``envelopes``, else the task's
    own) shows. A log from before ``Config.corroborate`` ran without it (off); one from
    before ``Config.corroborate_after_last_retry`` asked for a second derivation only
    with a retry left (off); one from before ``Config.corroborate_asks`` asked at most once
    a subtask (1); one from before ``Config.corroborate_unbacked`` never asked about a
    value no tool result showed (off); one from before ``Config.corroborate_keeps_answer``
    gave on an attempt after an ask that passed stating no answer (off); one from before
    ``Config.read_back_by_effect`` never read a change back by its effects (off); one
    from before ``Config.read_back_in_place`` held every changed line to all its words
    (off); one from before ``Config.direct_kinds`` planned every first round with the
    model (none);
    one from before ``Config.request_consent`` asked the operator of every Law 1 action
    (off); one from before ``Config.refuse_repeated_calls`` ran every repeated call and
    ended an attempt as a doom loop only on the same call three times in a row (off); one
    from before ``Config.refuse_lost_lines`` ran a change that lost lines and let the
    request consent to it (off); one from before ``Config.change_needs_effect`` passed a
    change's subtask that changed nothing (off); one from before
    ``Config.proof_by_evaluation`` took no value a call computed by running the
    request's code as proof (off); one from before ``Config.code_count_check`` had no
    count check written by code (off); one from before ``Config.code_table_check`` had
    no table check written by code (off); one from before ``Config.code_lookup_check``
    had no code lookup written by code (off); one from before
    ``Config.read_back_reads_named`` read a change back by effect whatever the request's
    other paths (off); one from before
    ``Config.rewrite_created_files`` held a file its subtask created to its lost lines
    (off); one from before
    ``Config.offer_load_data_on_spill`` offered the Executor ``load_data`` at every model
    call (off); one from before ``Config.reuse_commands`` ran none of a reused plan's
    commands for the model (off); one from before ``Config.reuse_reading`` had every
    request read by the model and recorded no reading in its episodes (off); one from
    before ``Config.reuse_asks_request`` reused a question's remembered step with the
    instruction it recorded (off); one from before ``Config.record_backing_commands``
    recorded every call of a step that worked (off); one from before
    ``Config.count_reads_answer`` took the first number an answer states standing alone
    as its count (off); one from before ``Config.unit_count_phrase`` read no unit named
    before "count" ("the line count of …") as what a request counts (off). The one
    place every replay reader takes a task's Config from."""
    request = next((e.body for e in task.envelopes if isinstance(e.body, TaskRequest)), None)
    if request is None or not request.config:
        return _inferred_config(task.envelopes if envelopes is None else list(envelopes))
    logged = Config.model_validate_json(msgspec.json.encode(request.config))
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
