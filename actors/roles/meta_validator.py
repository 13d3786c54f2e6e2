"""R4b Meta-Validator — the sensor of the medium loop.

Responsibilities:
    Fan in the SubTaskOutcomes of one plan round (the DispatchManifest says which to
    expect), merge their outputs in plan order, and judge the merged result against the
    task-level criteria with the verification ladder (rules first, then a brain-tier
    model verdict, failing closed). Everything passed → OutcomeSummary; anything failed
    → ReplanRequest. Either carries every outcome and every task verdict to the GGS.

Input contract:
    DispatchManifest, SubTaskOutcome; TaskSpec (the reading the checks read).

Output contract:
    ReplanRequest, OutcomeSummary; LLMCall for each model call.

Constraints:
    Does NOT decide what happens next (the GGS does); does NOT write memory; the merged
    output is only what the subtasks really produced (Law 0); does NOT judge plausible
    task criteria while a subtask or a check has failed (no model call spent on a known
    failure). The task's criteria (code's, from the reading) are decided by code over the
    merged output and every call of the task so far (its earlier rounds' changes are the
    task's too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from artoo.actors.llm import LLMRequest
from artoo.actors.runtime.role import Equipment, Role, VerdictKey, handles
from artoo.actors.verification.ladder import (
    criteria_text,
    model_verdicts,
    rule_verdict,
    tool_results_text,
    verdict_prompt,
)
from artoo.schemas import (
    Criterion,
    DispatchManifest,
    Envelope,
    LLMCall,
    Message,
    OutcomeSummary,
    ReplanRequest,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
    Verdict,
)

__all__ = ["MetaValidator", "merge_outputs"]


def merge_outputs(order: list[str], outcomes: dict[str, SubTaskOutcome]) -> str:
    """The outputs of matched subtasks, in plan order, one paragraph each (pure).

    A failed or skipped subtask's text is left out (Law 0: an executor's claim that its
    validator rejected must not reach the result as if it were true)."""
    parts = [
        outcomes[sid].output
        for sid in order
        if sid in outcomes and outcomes[sid].status == "matched"
    ]
    return "\n\n".join(p for p in parts if p)


@dataclass
class _Round:
    round: int
    order: list[str]
    criteria: list[Criterion]
    outcomes: dict[str, SubTaskOutcome] = field(default_factory=dict)


class MetaValidator(Role):
    """The Meta-Validator actor."""

    name: ClassVar[str] = "meta_validator"
    publishes: ClassVar[tuple[type[Message], ...]] = (ReplanRequest, OutcomeSummary, LLMCall)
    consumes: ClassVar[tuple[type[Message], ...]] = (DispatchManifest, SubTaskOutcome, TaskSpec)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.rounds: dict[str, _Round] = {}
        self.specs: dict[str, TaskSpec] = {}
        self.calls: dict[str, list[ToolCall]] = {}  # every call of the task's rounds so far

    def active_tasks(self) -> list[str]:
        return list(self.rounds)

    def forget_task(self, task_id: str) -> None:
        self.rounds.pop(task_id, None)
        self.specs.pop(task_id, None)
        self.calls.pop(task_id, None)

    @handles(TaskSpec)
    def on_task_spec(self, env: Envelope) -> None:
        self.specs[env.task_id or ""] = env.body

    def _recorded(self, round_: int, criterion_id: str) -> Callable[[], Verdict | None] | None:
        """A rerun's logged verdict for a task check that reads the workspace (else None)."""
        recorded = self.ctx.recorded_verdicts
        if recorded is None:
            return None
        return lambda: recorded.verdict(VerdictKey(criterion_id, round=round_))

    @handles(DispatchManifest)
    def on_dispatch_manifest(self, env: Envelope) -> None:
        body: DispatchManifest = env.body
        self.rounds[env.task_id or ""] = _Round(
            round=body.round,
            order=[st.subtask_id for st in body.subtasks],
            criteria=list(body.task_criteria),
        )

    @handles(SubTaskOutcome)
    def on_sub_task_outcome(self, env: Envelope) -> None:
        body: SubTaskOutcome = env.body
        task_id = env.task_id or ""
        rnd = self.rounds.get(task_id)
        if rnd is None or body.round != rnd.round or body.subtask_id not in rnd.order:
            return
        rnd.outcomes[body.subtask_id] = body
        if len(rnd.outcomes) < len(rnd.order):
            return
        del self.rounds[task_id]
        outcomes = [rnd.outcomes[sid] for sid in rnd.order]
        merged = merge_outputs(rnd.order, rnd.outcomes)
        all_matched = all(o.status == "matched" for o in outcomes)
        verdicts = self._judge(task_id, rnd, outcomes, merged, all_matched)
        if all_matched and all(v.passed for v in verdicts):
            self.reply(
                env,
                OutcomeSummary(
                    round=rnd.round, outcomes=outcomes, task_verdicts=verdicts, merged_output=merged
                ),
            )
        else:
            self.reply(
                env,
                ReplanRequest(
                    round=rnd.round, outcomes=outcomes, task_verdicts=verdicts, merged_output=merged
                ),
            )

    def _judge(
        self,
        task_id: str,
        rnd: _Round,
        outcomes: list[SubTaskOutcome],
        merged: str,
        all_matched: bool,
    ) -> list[Verdict]:
        calls = self.calls.setdefault(task_id, [])
        calls.extend(c for o in outcomes for c in o.tool_calls)
        spec = self.specs.get(task_id)
        targets = spec.targets if spec is not None else []
        by_id: dict[str, Verdict] = {}
        judged: list[Criterion] = []
        for criterion in rnd.criteria:
            if criterion.check is not None:
                by_id[criterion.id] = rule_verdict(
                    criterion,
                    merged,
                    calls,
                    self.ctx.workspace,
                    targets=targets,
                    recorded=self._recorded(rnd.round, criterion.id),
                )
            elif all_matched:
                judged.append(criterion)
        refuted = any(not v.passed for v in by_id.values())
        if judged and not refuted:  # ONE model call for what rules leave
            for criterion, verdict in zip(
                judged, self._llm_verdicts(task_id, judged, merged, calls), strict=True
            ):
                by_id[criterion.id] = verdict
        return [by_id[c.id] for c in rnd.criteria if c.id in by_id]

    def _llm_verdicts(
        self, task_id: str, criteria: list[Criterion], merged: str, calls: list[ToolCall]
    ) -> list[Verdict]:
        one = len(criteria) == 1
        request = LLMRequest(
            role=self.name,
            tier="brain",
            task_id=task_id,
            max_output_tokens=self.ctx.config.output_caps.verdict,
            messages=[
                {"role": "system", "content": verdict_prompt("the Meta-Validator", criteria)},
                {
                    "role": "user",
                    "content": (
                        f"Criterion: {criteria[0].text}"
                        if one
                        else f"Criteria:\n{criteria_text(criteria)}"
                    )
                    + f"\nTool results:\n{tool_results_text(calls)}\nOutput:\n{merged}",
                },
            ],
        )
        threshold = self.ctx.config.llm_confidence_threshold
        answers = model_verdicts(self.ctx.model(), request, criteria, threshold=threshold)
        return [verdict for verdict, _ in answers]
