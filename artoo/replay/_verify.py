"""``artoo replay --verify``: recompute every deterministic decision of a log from its logged
inputs, with the runtime's own pure functions, and list each disagreement.

Each task is recomputed under the Config its TaskRequest logged (upcast from policy 0:
``_read.upcast_config_v0_v1``) and by the policy it recorded (``TaskRequest.policy``). A
task of a retired policy (policy 0) has its proof decisions taken as logged and counted in
:attr:`VerifyReport.retired` — how each round's answer was established (``proof``), the
verdicts its rules decided (``rule_verdict``), its ``lost_lines`` refusals
(``law1_confirm``) —; its Perceiver's reading and its asks for a second derivation are not
recomputed; everything else is (docs/replay.md, "Policy versions").

What is recomputed (the checks, by name in :attr:`VerifyReport.checked`):

``ggs``
    Each GGSDecision — and the PlanDirective (its MUST NOT sets), the MegramRecorded and
    the FinalResult (status, reason, loss, replans, the Law 1 summary, the ledger's cost,
    and how the answer was established: ``proof.established``) it caused — by stepping a
    :class:`~artoo.actors.roles._gradient.TaskGradient` through the task's TaskSpec,
    DispatchManifests and fan-ins (ReplanRequest, OutcomeSummary, PlanRejected,
    StepFailed), under the GGSConfig the decision logged (``params``; the given config's
    for logs older than that field), with its logged ``elapsed_ms`` and clock time (its
    Megram's ``created_at``).
``quantization``
    Each MegramRecorded's ``(f, σ, k)`` against the §6.3 matrix for its state.
``calibration``
    Each DispatchManifest's (and PlanRejected's) MUST NOT, SHOULD PREFER and CAUTION lines
    from the MemoryRecall it answered and the PlanDirective the Planner held
    (``Config.memory.recall_cap``).
``reading``
    Each TaskSpec the Perceiver's model read: code's check of the reading and the criteria
    written from it (``perceiver.read_spec``), from the Perceiver's logged model answer and
    what code saw of the workspace (``TaskSpec.seen``). Each TaskSpec it took from memory
    (``TaskSpec.reused``): the reading the accepted episode it names recorded (its
    MegramRecorded earlier in the log, not forgotten since), for the very same request
    (``perceiver.reading_spec``).
``rule_verdict``
    Each Agent-Validator verdict decided by code (a check, a failed execution, a Law 1
    denial) from the ExecutionResult it judged, and each Meta-Validator task verdict
    decided by a check from the round's merged output and the task's calls. A check that
    reads the workspace (``checks.reads_workspace``: ``value_at``, ``count_matches``,
    ``parses``, ``reads_back``, a value written ``into`` a file) is recomputed from what it
    read there, logged in ``Verdict.observed``.
``corroborate``
    Each Agent-Validator decision, after an attempt that passed, to ask for a second
    derivation (a CorrectionSignal with ``corroborate``) or to give the outcome on: the
    value asked about, recomputed with ``proof.second_derivation`` from the attempt's
    logged verdicts, the subtask's calls so far and the TaskSpec; and the outcome of the
    attempt that answered the ask (``agent_validator.after_ask``: the same value matched,
    another failed, a failed attempt the first answer's).
``law1``, ``law1_confirm``
    Each Law 1 decision a ToolCall logged (``ToolCall.law1``), recomputed from the call's
    effects or command, and the ConfirmationRequest, answer and refusal each asking
    decision implies (:mod:`._verify_law1`).
``dispatch``
    The Dispatcher's grouping of each plan and the order it sent the groups in
    (:mod:`._verify_dispatch`).
``memory``
    The megram store: a rebuild from the log's memory events (up to the seq memory has
    applied) equals ``<store>/memory``, megram by megram.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from artoo._store import StoreArg, parse_store
from artoo.schemas import (
    RETIRED,
    Config,
    CorrectionSignal,
    Criterion,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSConfig,
    GGSDecision,
    LLMCall,
    Megram,
    MegramForgotten,
    MegramRecorded,
    MemoryRecall,
    OutcomeSummary,
    PlanDirective,
    PlanRejected,
    ReplanRequest,
    StepFailed,
    SubTask,
    SubTaskOutcome,
    TaskRequest,
    TaskSpec,
    ToolCall,
    Verdict,
)

from ._read import TaskLog, policy_of, read_store, task_config
from ._report import Mismatch, VerifyReport, compare, mismatch
from ._verify_dispatch import verify_dispatch
from ._verify_law1 import verify_law1

__all__ = ["Mismatch", "VerifyReport", "verify"]


def verify(
    store: StoreArg, task_id: str | None = None, *, config: Config | None = None
) -> VerifyReport:
    """Recompute every deterministic decision of ``store``'s log (of ``task_id`` only when
    given) and compare it with the logged one. Each task is recomputed under the Config its
    TaskRequest logged (:func:`task_config`); ``config``, when given, stands in for it."""
    envelopes, tasks = read_store(store, task_id)
    report = VerifyReport()
    for task in tasks:
        _Task(task, config or task_config(task, envelopes), report).run()
        verify_law1(task, report)
        verify_dispatch(task, report)
    _quantization(envelopes if task_id is None else tasks[0].envelopes, report)
    _readings(envelopes, {t.task_id for t in tasks}, report)
    spec = parse_store(store)
    if task_id is None and spec.path is not None:  # a PostgreSQL store keeps no memory
        _memory(spec.path, envelopes, report)
    return report


# --------------------------------------------------------------------------- per task
class _Task:
    """One task's envelopes, walked in seq order the way the deciding roles saw them.

    A task logged under a retired policy (``TaskRequest.policy`` in ``schemas.RETIRED``,
    whose proof code was removed) has its proof decisions taken as logged
    (:attr:`VerifyReport.retired`): how a round's answer was established, the checks of
    its criteria, its asks for a second derivation. Everything else is recomputed."""

    def __init__(self, task: TaskLog, config: Config, report: VerifyReport) -> None:
        self.task = task
        self.config = config
        self.report = report
        self.policy = policy_of(task)
        self.caused: dict[int, list[Envelope]] = {}
        self.spec: TaskSpec | None = None
        self.sub_calls: dict[str, list[ToolCall]] = {}  # a subtask's calls, every attempt
        self.task_calls: list[ToolCall] = []  # every call of the task's rounds so far
        # subtasks asked for a second derivation: the attempt asked of, and the ask
        self.asked: dict[str, tuple[ExecutionResult, CorrectionSignal]] = {}
        for env in task.envelopes:
            if env.cause is not None:
                self.caused.setdefault(env.cause, []).append(env)

    @property
    def retired(self) -> bool:
        """The task ran under a policy whose proof is retired (``schemas.RETIRED``)."""
        return self.policy in RETIRED

    def run(self) -> None:
        from artoo.actors.roles.ggs import TaskBook

        book = TaskBook()  # the GGS's own bookkeeping, fed the same messages
        ids: deque[str] = deque()  # the Megram ids the logged decision used, served in order
        subtasks: dict[str, SubTask] = {}
        manifests: dict[int, DispatchManifest] = {}
        directive: PlanDirective | None = None
        for env in self.task.envelopes:
            body = env.body
            book.see(body, self.task.task_id, self.config.ggs, ids.popleft)
            if isinstance(body, TaskSpec):
                self.spec = body
                if not self.retired:
                    self._reading(env, body)
            elif isinstance(body, DispatchManifest):
                manifests[body.round] = body
                for st in body.subtasks:
                    subtasks[st.subtask_id] = st
            elif isinstance(body, SubTask):
                subtasks[body.subtask_id] = body
            elif isinstance(body, PlanDirective):
                directive = body
            elif isinstance(body, MemoryRecall):
                self._calibration(env, body, directive)
            elif isinstance(body, ExecutionResult):
                if body.subtask_id in subtasks:
                    self.sub_calls.setdefault(body.subtask_id, []).extend(body.tool_calls)
                sub = subtasks.get(body.subtask_id)
                if self.retired:
                    if self._judged(env) is not None:
                        self.report.retired["rule_verdict"] += 1
                else:
                    self._agent(env, body, sub)
            if isinstance(body, ReplanRequest | OutcomeSummary) and env.sender == "meta_validator":
                self.task_calls.extend(c for o in body.outcomes for c in o.tool_calls)
                if self.retired:
                    self.report.retired["rule_verdict"] += 1
                else:
                    self._task_verdicts(env, body, manifests.get(body.round))
            if book.gradient is None or book.gradient.finished:
                continue
            if isinstance(body, ReplanRequest | OutcomeSummary | PlanRejected | StepFailed):
                self._ggs(env, book, ids)

    # ---- the reading
    def _reading(self, env: Envelope, spec: TaskSpec) -> None:
        """The TaskSpec against code's check of the model's reading, as the Perceiver's
        logged model answers give it and with what code saw of the workspace then
        (``TaskSpec.seen``); a reused reading is :func:`_readings`'."""
        from artoo.actors.roles.perceiver import read_spec
        from artoo.actors.verification.answers import PerceiverAnswer

        if spec.reused:
            return
        answers = []
        for e in self.task.envelopes:
            if e.seq >= env.seq:
                break
            if isinstance(e.body, LLMCall) and e.body.role == "perceiver" and e.body.response:
                try:
                    answer = msgspec.json.decode(e.body.response, type=PerceiverAnswer)
                except msgspec.ValidationError:
                    continue
                except msgspec.DecodeError:
                    continue
                answers.append(msgspec.structs.replace(answer, question=None))
        if not answers:
            self.report.skipped["reading"] += 1
            return
        self.report.checked["reading"] += 1
        candidates = [read_spec(spec.text, a, dict(spec.seen), spec.environment) for a in answers]
        logged = {"intent": spec.intent, "listing": spec.listing}  # the model's words; shown
        for expected in reversed(candidates):
            if msgspec.structs.replace(expected, **logged) == spec:
                return
        expected = msgspec.structs.replace(candidates[-1], **logged)
        compare(self.report, env, spec, expected)

    # ---- GGS
    def _ggs(self, env: Envelope, book: Any, ids: deque[str]) -> None:
        from artoo.actors.roles.ggs import unplanned_evidence

        gradient = book.gradient
        out = [e for e in self.caused.get(env.seq, []) if e.sender == "ggs"]
        decisions = [e for e in out if isinstance(e.body, GGSDecision)]
        if not decisions:
            self.report.skipped["ggs"] += 1  # the GGS logged no decision for it
            return
        logged: GGSDecision = decisions[0].body
        megrams = [e for e in out if isinstance(e.body, MegramRecorded)]
        ids.clear()
        ids.extend(e.body.megram.id for e in megrams)
        now = megrams[0].body.megram.created_at if megrams else decisions[0].ts
        gradient.params = (
            GGSConfig.model_validate(logged.params) if logged.params else self.config.ggs
        )
        gradient.failed_tools_only = logged.failed_tools_only
        finals = [e for e in out if isinstance(e.body, FinalResult)]
        if self.retired:  # the retired policy's proof, as logged
            ended = finals[0].body if finals else None
            gradient.logged_proof = (
                (ended.established, ended.established_by) if ended is not None else ("model", "")
            )
            self.report.retired["proof"] += 1
        body = env.body
        if isinstance(body, PlanRejected | StepFailed):
            step = gradient.step_unplanned(
                body.round, unplanned_evidence(body), elapsed_ms=logged.elapsed_ms, now=now
            )
        else:
            step = gradient.step(body, elapsed_ms=logged.elapsed_ms, now=now)
        self.report.checked["ggs"] += 1
        compare(self.report, decisions[0], logged, step.decision)
        for logged_env, megram in zip(megrams, step.megrams, strict=False):
            logged_megram = logged_env.body.megram
            if not logged_megram.request and not logged_megram.steps:
                # a log from before episodes kept their request and steps
                megram = msgspec.structs.replace(megram, request="", steps=[])
            if self.retired:  # an episode's recorded approach and reading: the old rules'
                megram = msgspec.structs.replace(
                    megram, steps=logged_megram.steps, reading=logged_megram.reading
                )
            compare(self.report, logged_env, logged_megram, megram)
        if len(megrams) != len(step.megrams):
            self.report.mismatches.append(
                Mismatch(
                    decisions[0].seq,
                    "MegramRecorded",
                    "count",
                    len(megrams),
                    len(step.megrams),
                    env.task_id,
                )
            )
        self._pair(out, PlanDirective, step.directive, env)
        final = step.final
        if final is not None:
            if finals:  # as the GGS publishes it, with the logged elapsed time
                final = book.finish(final, finals[0].body.cost.elapsed_ms)
                # a resume's stamp (artoo._resume), not a decision
                final = msgspec.structs.replace(final, resumed_from=finals[0].body.resumed_from)
            self._pair(out, FinalResult, final, env)

    def _pair(self, out: list[Envelope], kind: type, recomputed: Any, cause: Envelope) -> None:
        logged = [e for e in out if isinstance(e.body, kind)]
        if recomputed is None and not logged:
            return
        if recomputed is None or not logged:
            self.report.mismatches.append(
                Mismatch(
                    logged[0].seq if logged else cause.seq,
                    kind.__name__,
                    "(present)",
                    bool(logged),
                    recomputed is not None,
                    cause.task_id,
                )
            )
            return
        compare(self.report, logged[0], logged[0].body, recomputed)

    # ---- Planner calibration
    def _calibration(
        self, env: Envelope, recall: MemoryRecall, directive: PlanDirective | None
    ) -> None:
        from artoo.actors.roles.planner import calibrate

        held = directive if directive is not None and directive.round == recall.round else None
        cal = calibrate(recall, held, cap=self.config.memory.recall_cap)
        for answer in self.caused.get(env.seq, []):
            if isinstance(answer.body, DispatchManifest):
                self.report.checked["calibration"] += 1
                got = answer.body
                compare(
                    self.report,
                    answer,
                    {
                        "must_not": got.must_not,
                        "should_prefer": got.should_prefer,
                        "caution": got.caution,
                    },
                    {
                        "must_not": cal.must_not,
                        "should_prefer": cal.should_prefer,
                        "caution": cal.caution,
                    },
                )
            elif isinstance(answer.body, PlanRejected):
                self.report.checked["calibration"] += 1
                compare(
                    self.report,
                    answer,
                    {"must_not": answer.body.must_not},
                    {"must_not": cal.must_not},
                )

    # ---- the fast loop
    def _judged(self, env: Envelope) -> Envelope | None:
        """The Agent-Validator's answer to an ExecutionResult: its CorrectionSignal or
        SubTaskOutcome (None: it gave none)."""
        return next(
            (
                e
                for e in self.caused.get(env.seq, [])
                if isinstance(e.body, CorrectionSignal | SubTaskOutcome)
            ),
            None,
        )

    def _agent(self, env: Envelope, result: ExecutionResult, sub: SubTask | None) -> None:
        """The Agent-Validator's verdicts on one attempt, and what it did next: a retry, an
        ask for a second derivation (``proof.second_derivation``), the outcome after an
        ask (``agent_validator.after_ask``), or the outcome."""
        from artoo.actors.roles.agent_validator import IMPLICIT_CRITERION, after_ask
        from artoo.actors.verification.proof import second_derivation

        answer = self._judged(env)
        if sub is None or answer is None:
            return
        body = answer.body
        earlier = self.asked.pop(result.subtask_id, None)
        verdicts = self._attempt_verdicts(answer, body, result, sub, earlier is not None)
        spec = self.spec or TaskSpec(text="", intent="", slug="")
        calls = self.sub_calls.get(sub.subtask_id, [])
        if earlier is not None:
            asked, signal = earlier
            ask_value = signal.corroborate
            from artoo.actors.verification.proof import Ask

            expected = after_ask(
                ask=Ask(value=ask_value),
                shape=spec.shape,
                asked=asked,
                asked_verdicts=signal.verdicts,
                result=result,
                verdicts=verdicts,
                history=body.history if isinstance(body, SubTaskOutcome) else [],
                calls=calls,
            )
            self.report.checked["corroborate"] += 1
            if isinstance(body, SubTaskOutcome):
                expected = msgspec.structs.replace(expected, history=body.history)
            compare(self.report, answer, body, expected)
            return
        passed = bool(verdicts) and all(v.passed for v in verdicts)
        denied = any(c.refusal == "law1_denied" for c in result.tool_calls)
        if not passed or denied or result.stop == "model_error":
            return
        ask = second_derivation(
            spec=spec,
            criteria={c.id: c for c in (sub.criteria or [IMPLICIT_CRITERION])},
            verdicts=verdicts,
            calls=calls,
            output=result.output,
        )
        logged = body.corroborate if isinstance(body, CorrectionSignal) else ""
        self.report.checked["corroborate"] += 1
        recomputed = ask.value if ask is not None else ""
        if logged != recomputed:
            mismatch(
                self.report,
                answer.seq,
                type(body).__name__,
                "corroborate",
                logged,
                recomputed,
                answer.task_id,
            )
        if isinstance(body, CorrectionSignal) and logged:
            self.asked[result.subtask_id] = (result, body)

    def _attempt_verdicts(
        self, answer: Envelope, body: Any, result: ExecutionResult, sub: SubTask, after: bool
    ) -> list[Verdict]:
        """The attempt's verdicts as logged, each decided by a rule recomputed: those of a
        CorrectionSignal, an outcome's own — or, after an ask, this attempt's from the
        outcome's history."""
        from artoo.actors.roles.agent_validator import AGREE
        from artoo.actors.verification.ladder import execution_failure_class, rule_verdict

        if isinstance(body, CorrectionSignal):
            logged = list(body.verdicts)
        elif after:
            logged = [
                v for v in body.history if v.attempt == result.attempt and v.criterion_id != AGREE
            ]
        else:
            logged = list(body.verdicts)
        by_id = {v.criterion_id: v for v in logged}
        denied = [c for c in result.tool_calls if c.refusal == "law1_denied"]
        calls = self.sub_calls.get(sub.subtask_id, [])
        targets = self.spec.targets if self.spec is not None else []
        for criterion in sub.criteria:
            verdict = by_id.get(criterion.id)
            if verdict is None or verdict.signal != "rule":
                continue
            if denied:
                expected = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class="environmental",
                    evidence=denied[0].error or "an irreversible action was denied",
                    attempt=result.attempt,
                )
            elif not result.ok:
                expected = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class=execution_failure_class(result),
                    evidence=result.error or "execution failed",
                    attempt=result.attempt,
                )
            elif criterion.check is not None:
                expected = rule_verdict(
                    criterion,
                    result.output,
                    calls,
                    Path("."),
                    result.attempt,
                    targets=targets,
                    observed=verdict.observed if _reads_files(criterion) else None,
                )
            else:
                continue
            self.report.checked["rule_verdict"] += 1
            compare(self.report, answer, {criterion.id: verdict}, {criterion.id: expected})
        return logged

    def _task_verdicts(
        self,
        env: Envelope,
        body: ReplanRequest | OutcomeSummary,
        manifest: DispatchManifest | None,
    ) -> None:
        from artoo.actors.verification.ladder import rule_verdict

        if manifest is None:
            return
        logged = {v.criterion_id: v for v in body.task_verdicts}
        targets = self.spec.targets if self.spec is not None else []
        for criterion in manifest.task_criteria:
            verdict = logged.get(criterion.id)
            if verdict is None or verdict.signal != "rule" or criterion.check is None:
                continue
            expected = rule_verdict(
                criterion,
                body.merged_output,
                self.task_calls,
                Path("."),
                targets=targets,
                observed=verdict.observed if _reads_files(criterion) else None,
            )
            self.report.checked["rule_verdict"] += 1
            compare(self.report, env, {criterion.id: verdict}, {criterion.id: expected})


def _reads_files(criterion: Criterion) -> bool:
    from artoo.actors.verification.checks import reads_workspace

    return criterion.check is not None and reads_workspace(criterion.check)


# --------------------------------------------------------------------------- whole log
def _readings(envelopes: Iterable[Envelope], tasks: set[str], report: VerifyReport) -> None:
    """Each reused TaskSpec of ``tasks`` against the reading of the accepted episode it
    names, as the log recorded it before (and did not forget)."""
    from artoo.actors.roles.perceiver import reading_spec

    episodes: dict[str, Megram] = {}
    policies: dict[str | None, int] = {}  # the policy each task's TaskRequest recorded
    for env in envelopes:
        body = env.body
        if isinstance(body, TaskRequest):
            policies[env.task_id] = body.policy
        elif isinstance(body, MegramRecorded):
            episodes[body.megram.id] = body.megram
        elif isinstance(body, MegramForgotten):
            episodes.pop(body.id, None)
        elif isinstance(body, TaskSpec) and body.reused and env.task_id in tasks:
            if policies.get(env.task_id, 0) in RETIRED:  # read by a retired policy's rules
                report.retired["reading"] += 1
                continue
            report.checked["reading"] += 1
            episode = episodes.get(body.reused)
            expected = None
            if episode is not None and episode.state == "accept":
                expected = reading_spec(episode, body.text, body.environment)
            if expected is None:
                mismatch(
                    report,
                    env.seq,
                    "TaskSpec",
                    "reused",
                    body.reused,
                    "no accepted episode of the very same request recorded a reading",
                    env.task_id,
                )
            else:
                compare(report, env, body, expected)


def _quantization(envelopes: Iterable[Envelope], report: VerifyReport) -> None:
    from artoo.actors.roles._gradient import quantize

    for env in envelopes:
        if isinstance(env.body, MegramRecorded) and env.body.megram.state:
            m = env.body.megram
            try:
                expected = quantize(m.state)
            except ValueError:
                report.skipped["quantization"] += 1
                continue
            report.checked["quantization"] += 1
            compare(
                report,
                env,
                {"f": m.f, "sigma": m.sigma, "k": m.k},
                dict(zip(("f", "sigma", "k"), expected, strict=True)),
            )


def _memory(store: Path, envelopes: list[Envelope], report: VerifyReport) -> None:
    from artoo.eventstore import MEMORY_EVENTS, MegramStore, StoreLocked

    if not (store / "memory").exists():
        report.skipped["memory"] += 1
        return
    try:
        kept = MegramStore.open(store / "memory")
    except StoreLocked:  # a running System holds it: its memory cannot be compared now
        report.skipped["memory"] += 1
        return
    with kept:
        applied = kept.applied_seq
        stored = {m.id: m for m in kept.megrams()}
    scratch = Path(tempfile.mkdtemp(prefix="artoo-verify-"))
    try:
        with MegramStore.open(scratch / "memory") as rebuilt:
            rebuilt.apply_many(
                (
                    (e.seq, e.body)
                    for e in envelopes
                    if e.seq <= applied and isinstance(e.body, MEMORY_EVENTS)
                ),
                with_seq=True,
            )
            again = {m.id: m for m in rebuilt.megrams()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report.checked["memory"] += 1
    last = max((e.seq for e in envelopes if e.seq <= applied), default=0)
    for mid in sorted(stored.keys() | again.keys()):
        if stored.get(mid) != again.get(mid):
            report.mismatches.append(
                Mismatch(
                    last,
                    "memory",
                    mid,
                    msgspec.to_builtins(stored.get(mid)),
                    msgspec.to_builtins(again.get(mid)),
                )
            )
