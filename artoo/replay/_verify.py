"""``artoo replay --verify``: recompute every deterministic decision of a log from its logged
inputs, with the runtime's own pure functions, and list each disagreement.

What is recomputed (the checks, by name in :attr:`VerifyReport.checked`):

``ggs``
    Each GGSDecision — and the PlanDirective (its MUST NOT sets), the MegramRecorded and
    the FinalResult (status, reason, loss, replans, the Law 1 summary and the ledger's
    cost) it caused — by stepping a :class:`~artoo.actors.roles._gradient.TaskGradient` through
    the task's TaskSpec, DispatchManifests and fan-ins (ReplanRequest, OutcomeSummary,
    PlanRejected, StepFailed), under the GGSConfig the decision logged (``params``; the
    given config's for logs older than that field) and the task's
    ``Config.read_back_by_effect`` and ``read_back_in_place`` (the proof of a change), with
    its logged ``elapsed_ms`` and clock time (its Megram's ``created_at``).
``quantization``
    Each MegramRecorded's ``(f, σ, k)`` against the §6.3 matrix for its state.
``calibration``
    Each DispatchManifest's (and PlanRejected's) MUST NOT, SHOULD PREFER and CAUTION lines
    from the MemoryRecall it answered and the PlanDirective the Planner held
    (``Config.memory.recall_cap``).
``rule_verdict``
    Each Agent-Validator verdict decided by code (a check, a failed execution, a Law 1
    denial) from the ExecutionResult it judged, and each Meta-Validator task verdict
    decided by a check from the round's merged output. A check that reads the workspace
    (``file_exists``, ``file_contains``, ``file_matches``, ``json_path_equals`` on a file,
    ``count_matches``) is recomputed from what it read there, logged in
    ``Verdict.observed``; a log from before that field has none, and such a verdict is
    counted in :attr:`VerifyReport.skipped`. The grounding of stated numbers
    (``artoo.actors.verification.grounding``) is applied on top, from the logged tool calls and the
    TaskSpec's text, as the validators applied it.
``corroborate``
    Each Agent-Validator decision, after an attempt that passed, to ask for a second
    derivation (a CorrectionSignal with ``corroborate``) or to give the outcome on: the
    value asked about, recomputed with ``proof.needs_second_derivation`` from the
    attempt's logged verdicts, the subtask's calls so far and the TaskSpec, under the
    task's ``Config.corroborate``, ``corroborate_after_last_retry``,
    ``corroborate_unbacked``, ``read_back_by_effect``, ``read_back_in_place`` and
    ``max_retries`` (``agent_validator.may_corroborate``),
    and whether it asked to show a value no tool result showed (``unbacked``): once per
    subtask, and again — up to ``Config.corroborate_asks`` asks — after an attempt that
    followed an ask and passed with another value than the one asked about, or with the
    value an ``unbacked`` ask asked to be shown, one call backing it now
    (``agent_validator.may_ask_again``).
``corroborate_fallback``
    Each Agent-Validator decision on the attempt that followed such an ask: given on as
    usual (or asked about again) when it passed and answers the request or holds a Law 1
    denial, else the SubTaskOutcome of the attempt last asked of, which passed
    (``agent_validator.corroboration_fallback``: its output and the ask's verdicts, every
    verdict and call of the subtask), recomputed from the ask, the earlier ExecutionResult
    and this attempt's verdicts (a fallback logs them in its ``history``; those a rule
    decides are recomputed under ``rule_verdict``) — and, under the task's
    ``Config.corroborate_keeps_answer``, from this attempt's output, the TaskSpec and
    the subtask's calls (whether it answers: ``ladder.request_problem``).
``law1``, ``law1_confirm``
    Each Law 1 decision a ToolCall logged (``ToolCall.law1``), recomputed from the call's
    effects or command, and the ConfirmationRequest, answer and refusal each asking
    decision implies (:mod:`._verify_law1`).
``dispatch``
    The Dispatcher's grouping of each plan and the order it sent the groups in
    (:mod:`._verify_dispatch`).
``reading``
    Each TaskSpec the Perceiver took from memory (``TaskSpec.reused``): the reading the
    accepted episode it names recorded (its MegramRecorded earlier in the log, not
    forgotten since), for the very same request (``perceiver.reading_spec``).
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
    Config,
    CorrectionSignal,
    Criterion,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSConfig,
    GGSDecision,
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
    TaskSpec,
    ToolCall,
    Verdict,
)

from ._read import TaskLog, read_store, task_config
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
    """One task's envelopes, walked in seq order the way the deciding roles saw them."""

    def __init__(self, task: TaskLog, config: Config, report: VerifyReport) -> None:
        self.task = task
        self.config = config
        self.report = report
        self.caused: dict[int, list[Envelope]] = {}
        self.request: str | None = None  # the TaskSpec's text: what grounding reads
        self.spec: TaskSpec | None = None  # its kind and shape: what the request verdict reads
        self.sub_calls: dict[str, list[ToolCall]] = {}  # a subtask's calls, every attempt
        # subtasks asked for a second derivation: the attempt last asked of, and the ask
        self.asked: dict[str, tuple[ExecutionResult, CorrectionSignal]] = {}
        self.asks: dict[str, int] = {}  # how many asks each subtask was sent
        for env in task.envelopes:
            if env.cause is not None:
                self.caused.setdefault(env.cause, []).append(env)

    def run(self) -> None:
        from artoo.actors.roles.ggs import TaskBook

        book = TaskBook()  # the GGS's own bookkeeping, fed the same messages
        ids: deque[str] = deque()  # the Megram ids the logged decision used, served in order
        subtasks: dict[str, SubTask] = {}
        manifests: dict[int, DispatchManifest] = {}
        directive: PlanDirective | None = None
        for env in self.task.envelopes:
            body = env.body
            book.see(
                body,
                self.task.task_id,
                self.config.ggs,
                ids.popleft,
                by_effect=self.config.read_back_by_effect,
                in_place=self.config.read_back_in_place,
                evaluation=self.config.proof_by_evaluation,
                reading=self.config.reuse_reading,
                named_read=self.config.read_back_reads_named,
                keep_targets=self.config.keep_request_targets,
                backing=self.config.record_backing_commands,
                unit_count=self.config.unit_count_phrase,
            )
            if isinstance(body, TaskSpec):
                self.request = body.text
                self.spec = body
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
                self._agent_verdicts(env, body, subtasks.get(body.subtask_id))
                # the fallback first: judged against the ask this attempt followed, not one
                # it is asked itself
                self._fallback(env, body, subtasks.get(body.subtask_id))
                self._corroboration(env, body, subtasks.get(body.subtask_id))
            if isinstance(body, ReplanRequest | OutcomeSummary) and env.sender == "meta_validator":
                self._task_verdicts(env, body, manifests.get(body.round))
            if book.gradient is None or book.gradient.finished:
                continue
            if isinstance(body, ReplanRequest | OutcomeSummary | PlanRejected | StepFailed):
                self._ggs(env, book, ids)

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
            finals = [e for e in out if isinstance(e.body, FinalResult)]
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

    # ---- rule verdicts
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

    def _fell_back(self, body: Any, result: ExecutionResult) -> bool:
        """True when ``body``, the answer to ``result``, gave on an earlier attempt's answer
        (``agent_validator.corroboration_fallback``): a matched SubTaskOutcome whose
        verdicts are another attempt's, in a subtask asked for a second derivation."""
        return (
            isinstance(body, SubTaskOutcome)
            and body.status == "matched"
            and body.subtask_id in self.asked
            and any(v.attempt != result.attempt for v in body.verdicts)
        )

    def _count_request(self) -> str | None:
        """What a count check reads the stated count against (``Config.count_reads_answer``:
        the request; None, off — a log from before it took the first number)."""
        return (self.request or "") if self.config.count_reads_answer else None

    def _attempt_verdicts(self, body: Any, result: ExecutionResult) -> list[Verdict]:
        """The verdicts the answer ``body`` logged for ``result``'s attempt: its own, but a
        fallback's are the earlier attempt's and this attempt's are in its history."""
        if self._fell_back(body, result):
            return [v for v in body.history if v.attempt == result.attempt]
        return list(body.verdicts)

    def _agent_verdicts(self, env: Envelope, result: ExecutionResult, sub: SubTask | None) -> None:
        from artoo.actors.verification.ladder import (
            execution_failure_class,
            grounding_verdicts,
            rule_verdict,
            ungrounded,
        )

        answer = self._judged(env)
        if sub is None or answer is None:
            return
        logged = {v.criterion_id: v for v in self._attempt_verdicts(answer.body, result)}
        criteria = sub.criteria
        denied = [c for c in result.tool_calls if c.refusal == "law1_denied"]
        weak = None
        if result.ok and not denied:
            weak = ungrounded(
                result.output,
                self.sub_calls.get(sub.subtask_id, []),
                request=self.request,
                instruction=sub.instruction,
                checked=[(c, logged[c.id]) for c in criteria if c.id in logged],
                kind=self.spec.kind if self.spec is not None else "",
                count_reading=self.config.count_reads_answer,
            )
        for criterion in criteria:
            verdict = logged.get(criterion.id)
            if verdict is None:
                continue
            expected: Verdict | None = None
            if denied:
                expected = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class="environmental",
                    evidence=denied[0].error or "an irreversible action was denied",
                    attempt=result.attempt,
                )
            elif not result.ok:
                from artoo.actors.verification.checks import COMPUTED_KINDS

                tabled = criterion.check is not None and (
                    criterion.check.kind in COMPUTED_KINDS
                    or criterion.check.kind == "count_matches"
                )
                expected = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class=execution_failure_class(result),
                    evidence=result.error or "execution failed",
                    signal="rule",
                    attempt=result.attempt,
                    observed=verdict.observed if tabled else {},  # what the table gave, read
                )
            elif criterion.check is not None and (
                not _reads_files(criterion) or verdict.observed  # (a log from before observed)
            ):
                expected = rule_verdict(
                    criterion,
                    result.output,
                    result.tool_calls,
                    Path("."),
                    result.attempt,
                    observed=verdict.observed if _reads_files(criterion) else None,
                    count_request=self._count_request(),
                )
            if weak is not None:  # grounding decides what the rules or a model would have
                base = verdict if expected is None else expected
                (expected,) = grounding_verdicts([criterion], [base], weak, result.attempt)
            if expected is None:
                if criterion.check is not None:
                    self.report.skipped["rule_verdict"] += 1
                continue  # a model's verdict: not deterministic
            self.report.checked["rule_verdict"] += 1
            compare(self.report, answer, {criterion.id: verdict}, {criterion.id: expected})

    def _run(self, answer: Envelope, body: CorrectionSignal, sub: SubTask) -> None:
        """The command a retry or an ask about an unshown value had the Executor run
        itself (``CorrectionSignal.run``, ``agent_validator.evaluation_run``)."""
        from artoo.actors.roles.agent_validator import computed_run, evaluation_run

        spec = self.spec
        expected = ""
        calls = self.sub_calls.get(sub.subtask_id, [])
        if not body.corroborate or body.unbacked:
            expected = evaluation_run(
                request=self.request or "",
                kind=spec.kind if spec is not None else "",
                shape=spec.shape if spec is not None else "",
                calls=calls,
                enabled=self.config.proof_by_evaluation,
            )
        if not expected and not body.corroborate:
            expected = computed_run(verdicts=body.verdicts, calls=calls)
        self.report.checked["run"] += 1
        if body.run != expected:
            mismatch(
                self.report,
                answer.seq,
                type(body).__name__,
                "run",
                body.run,
                expected,
                answer.task_id,
            )

    def _corroboration(self, env: Envelope, result: ExecutionResult, sub: SubTask | None) -> None:
        """The Agent-Validator's choice, after an attempt that passed, between asking for
        a second derivation and giving the outcome on (``proof.needs_second_derivation``):
        once a subtask, or again about another value than the one asked about
        (``agent_validator.may_ask_again``)."""
        from artoo.actors.roles.agent_validator import (
            IMPLICIT_CRITERION,
            may_ask_again,
            may_corroborate,
            second_derivation_ask,
        )

        answer = self._judged(env)
        if sub is None or answer is None:
            return
        body = answer.body
        if isinstance(body, CorrectionSignal):
            self._run(answer, body, sub)
        asked = body.corroborate if isinstance(body, CorrectionSignal) else ""
        if isinstance(body, CorrectionSignal) and not asked:
            return  # a retry after a failure
        if isinstance(body, SubTaskOutcome) and (
            body.status != "matched" or self._fell_back(body, result)
        ):
            return  # this attempt did not pass
        asks = self.asks.get(sub.subtask_id, 0)
        could = may_corroborate(self.config, result.attempt) and asks < self.config.corroborate_asks
        if not could and not asked:
            return
        spec = self.spec
        ask = second_derivation_ask(
            request=self.request or "",
            kind=spec.kind if spec is not None else "",
            task_criteria=spec.criteria if spec is not None else [],
            criteria=sub.criteria or [IMPLICIT_CRITERION],
            verdicts=body.verdicts,
            calls=self.sub_calls.get(sub.subtask_id, []),
            output=result.output,
            shape=spec.shape if spec is not None else "",
            unbacked=self.config.corroborate_unbacked,
            by_effect=self.config.read_back_by_effect,
            in_place=self.config.read_back_in_place,
            evaluation=self.config.proof_by_evaluation,
            named_read=self.config.read_back_reads_named,
            unit_count=self.config.unit_count_phrase,
        )
        prior = self.asked.get(sub.subtask_id)
        made = (
            ask
            if ask is not None
            and could
            and may_ask_again(
                self.config,
                asks,
                prior[1].corroborate if prior else "",
                ask.value,
                asked_unbacked=prior[1].unbacked if prior else False,
                unbacked=ask.unbacked,
            )
            else None
        )
        recomputed = made.value if made is not None else ""
        self.report.checked["corroborate"] += 1
        if asked != recomputed:
            mismatch(
                self.report,
                answer.seq,
                type(body).__name__,
                "corroborate",
                asked,
                recomputed,
                answer.task_id,
            )
        logged_unbacked = isinstance(body, CorrectionSignal) and body.unbacked
        if made is not None and asked == recomputed and logged_unbacked != made.unbacked:
            mismatch(
                self.report,
                answer.seq,
                type(body).__name__,
                "unbacked",
                logged_unbacked,
                made.unbacked,
                answer.task_id,
            )
        if isinstance(body, CorrectionSignal) and asked:
            self.asked[sub.subtask_id] = (result, body)
            self.asks[sub.subtask_id] = asks + 1

    def _fallback(self, env: Envelope, result: ExecutionResult, sub: SubTask | None) -> None:
        """The Agent-Validator's choice on the attempt that followed an ask for a second
        derivation: judge it as usual, or give on the earlier answer that passed
        (``agent_validator.corroboration_fallback``)."""
        from artoo.actors.roles.agent_validator import corroboration_fallback

        answer = self._judged(env)
        earlier = self.asked.get(result.subtask_id)
        if sub is None or answer is None or earlier is None or earlier[1].attempt >= result.attempt:
            return
        body = answer.body
        fell_back = self._fell_back(body, result)
        expected = corroboration_fallback(
            asked=earlier[0],
            asked_verdicts=earlier[1].verdicts,
            result=result,
            verdicts=self._attempt_verdicts(body, result),
            history=body.history if isinstance(body, SubTaskOutcome) else [],
            calls=self.sub_calls.get(sub.subtask_id, []),
            value=earlier[1].corroborate,
            request=self.request or "",
            kind=self.spec.kind if self.spec is not None else "",
            shape=self.spec.shape if self.spec is not None else "",
            keeps_answer=self.config.corroborate_keeps_answer,
        )
        self.report.checked["corroborate_fallback"] += 1
        if fell_back and expected is not None:
            compare(self.report, answer, body, expected)
        elif fell_back != (expected is not None):
            mismatch(
                self.report,
                answer.seq,
                type(body).__name__,
                "(fallback)",
                fell_back,
                expected is not None,
                answer.task_id,
            )

    def _task_verdicts(
        self,
        env: Envelope,
        body: ReplanRequest | OutcomeSummary,
        manifest: DispatchManifest | None,
    ) -> None:
        from artoo.actors.verification.ladder import (
            REQUEST_CRITERION,
            grounding_verdicts,
            request_verdict,
            rule_verdict,
            ungrounded,
        )

        if manifest is None:
            return
        calls = [c for o in body.outcomes for c in o.tool_calls]
        logged = {v.criterion_id: v for v in body.task_verdicts}
        weak = None
        spec = self.spec
        if all(o.status == "matched" for o in body.outcomes):
            weak = ungrounded(
                body.merged_output,
                calls,
                request=self.request,
                checked=[(c, logged[c.id]) for c in manifest.task_criteria if c.id in logged],
                kind=spec.kind if spec is not None else "",
                count_reading=self.config.count_reads_answer,
            )
            answered = (
                request_verdict(spec.text, spec.kind, spec.shape, body.merged_output, calls)
                if spec is not None
                else None
            )
            if answered is not None or REQUEST_CRITERION in logged:
                self.report.checked["rule_verdict"] += 1
                compare(
                    self.report,
                    env,
                    {REQUEST_CRITERION: logged.get(REQUEST_CRITERION)},
                    {REQUEST_CRITERION: answered},
                )
        for criterion in manifest.task_criteria:
            verdict = logged.get(criterion.id)
            if verdict is None or verdict.signal != "rule":
                continue
            expected: Verdict | None = None
            if criterion.check is not None and (
                not _reads_files(criterion) or verdict.observed  # (a log from before observed)
            ):
                expected = rule_verdict(
                    criterion,
                    body.merged_output,
                    calls,
                    Path("."),
                    observed=verdict.observed if _reads_files(criterion) else None,
                    count_request=self._count_request(),
                )
            if weak is not None:
                (expected,) = grounding_verdicts([criterion], [expected or verdict], weak)
            if expected is None:
                if criterion.check is not None:
                    self.report.skipped["rule_verdict"] += 1
                continue
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
    for env in envelopes:
        body = env.body
        if isinstance(body, MegramRecorded):
            episodes[body.megram.id] = body.megram
        elif isinstance(body, MegramForgotten):
            episodes.pop(body.id, None)
        elif isinstance(body, TaskSpec) and body.reused and env.task_id in tasks:
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
