"""R2 — Planner: the actuator of the medium loop.

Responsibilities
    Turn a TaskSpec into a plan: subtasks grouped by ``sequence`` (same number runs in
    parallel), each with its criteria, tools and context, plus the task-level criteria.
    Before planning, run the memory calibration protocol of paper §6.5 — deterministic,
    no model call: query Memory for the task's tag pair, map the potentials' action and
    the C-level SOPs to SHOULD PREFER / MUST NOT / CAUTION, merge the MUST NOT set with
    the GGS directive's blocked tools and targets and with the strongest tool-space Avoid
    pairs (docs/design.md C7), at most 10 memory entries; an accepted episode recall by
    meaning returned becomes a SHOULD PREFER naming its steps and commands, an abandoned
    one a MUST NOT naming the approach that failed. In round 0,
    when memory holds an accepted episode of the very same request, its plan is the first
    plan (no model call), each subtask carrying its step's proven shell commands
    (``proven_commands``) for the Executor to run before the model's first turn — one
    step of a request read as a question asked as the request itself, not as the step's
    recorded instruction —, only from an episode that ended ``accept``, checked like any
    other: if it breaks the MUST NOT set it is rejected and the model is asked, told why.
    Else, in round 0, the request is its own first plan (``direct_plan``, no model call):
    one subtask whose instruction is the user's request, every tool offered but, to a
    question, ``write_file``; should it break the MUST NOT set (the request names a
    blocked target), the model plans instead. Every later round is planned by the model;
    its subtasks carry no criteria of the model's: the task's criteria, which code wrote
    from the reading, go to a one-subtask plan's subtask, and a question's to the one
    subtask of the last sequence (``with_task_checks``). A model's plan that names as a
    tool something that is no tool (``wc -l``, ``grep``) has that name dropped and
    ``shell`` offered in its place (``repaired_tools``). Enforce the MUST NOT set in code:
    a plan that uses a blocked tool or names a blocked target is rejected and asked again
    (docs/design.md C1); every SubTask carries the blocked sets, the calibration text and
    the reading's kind and targets (the Executor's scope gate). Intent-level Caution
    (paper §6.4): when Memory's action on the task's
    intent tag is ``caution`` (mixed outcomes), ask the operator once per task through the
    Queen (a ConfirmationRequest, gate ``caution``) before planning; a denial is a
    StepFailed (step ``caution``), on which the GGS ends the task at once (and any later
    round's recall fails again, without asking). When a
    choice the request does not settle decides the plan, the model may ask the user one
    bounded question (``PlanAnswer.question``, once per task): it is published as a
    UserQuestion, the plan waits for the QuestionAnswered, then is asked again with the
    answer.

Input contract (consumes)
    ``TaskSpec`` — intent, slug, task criteria, environment (round 0).
    ``MemoryRecall`` — SOPs, live potentials and Avoid pairs of the tags recall read, and
    the accepted episodes it found.
    ``PlanDirective`` — GGS's macro-state and MUST NOT sets for the next round.
    ``ConfirmationDecision`` — the operator's answer to an intent-level Caution.
    ``QuestionAnswered`` — the answer to the question it asked.

Output contract (publishes)
    ``MemoryQuery`` — the tag pair ``(intent:<slug>, env:<environment>)`` of the task and
    its request text (recall by meaning).
    ``DispatchManifest`` — the round's subtasks, task criteria and calibration sets.
    ``PlanRejected`` — every plan the model gave (one retry with the reason) broke the
    MUST NOT set (a tool name that is no tool is repaired, not rejected): the round's
    logical failure, scored by the GGS.
    ``StepFailed`` — the model gave no valid plan (after the structured-answer repair).
    ``LLMCall`` — each model call (recorded by the gateway).
    ``ConfirmationRequest`` — intent-level Caution (gate ``caution``), once per task.
    ``UserQuestion`` — its one question to the user, if any.

Constraints
    Does NOT execute tools, validate results or decide to replan (GGS does). Does NOT
    write memory (GGS is the only writer). Does NOT add a model call for calibration.
    Does NOT publish a plan that violates the MUST NOT set or asks for a tool that does
    not exist. Does NOT import another role module.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from artoo.actors.llm import LLMRequest, ask_structured
from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.actors.verification._paths import mentions
from artoo.actors.verification.answers import (
    PlanAnswer,
    answered_prompt,
    bounded_question,
    user_question,
)
from artoo.actors.verification.derive import (
    call_root,
    evaluation_command,
    import_root,
    module_of_name,
)
from artoo.actors.verification.request import request_paths, same_request
from artoo.eventstore import task_text
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Criterion,
    DispatchManifest,
    Envelope,
    EpisodeStep,
    LLMCall,
    Megram,
    MemoryQuery,
    MemoryRecall,
    Message,
    PlanDirective,
    PlanRejected,
    QuestionAnswered,
    StepFailed,
    SubTask,
    TagPotential,
    TaskSpec,
    UserQuestion,
)

__all__ = [
    "MEMORY_CAP",
    "Calibration",
    "Violation",
    "apply_calibration",
    "calibrate",
    "direct_plan",
    "intent_caution",
    "plan_violations",
    "proven_commands",
    "repaired_tools",
    "reused_plan",
    "validate_plan",
    "with_evaluation",
    "with_task_checks",
]

MEMORY_CAP = 10
"""At most this many memory entries reach a plan (paper §10: bounded context)."""

_TOOL = "tool:"
_PATH = "path:"


# --------------------------------------------------------------------------- calibration
@dataclass(frozen=True, slots=True)
class Calibration:
    """The result of the calibration protocol (paper §6.5), as text and as code sets.

    ``must_not`` is the merged MUST NOT set — memory Avoid entries ∪ blocked tools ∪
    blocked targets — deduplicated in a stable order; ``blocked_tools`` and
    ``blocked_targets`` are its structured part, for enforcement in code.
    """

    should_prefer: list[str] = field(default_factory=list)
    must_not: list[str] = field(default_factory=list)
    caution: list[str] = field(default_factory=list)
    blocked_tools: list[str] = field(default_factory=list)
    blocked_targets: list[str] = field(default_factory=list)
    caution_targets: list[str] = field(default_factory=list)
    failed_with: dict[str, str] = field(default_factory=dict)
    """Blocked target → the tool memory saw fail on it (named in its MUST NOT line)."""

    def lines(self) -> list[str]:
        """The prompt lines: every SHOULD PREFER, then MUST NOT, then CAUTION entry."""
        tools, targets = set(self.blocked_tools), set(self.blocked_targets)
        out = [f"SHOULD PREFER: {item}" for item in self.should_prefer]
        for item in self.must_not:
            if item in tools:
                out.append(f"MUST NOT: use the tool {item}")
            elif item in targets and item in self.failed_with:
                tool = self.failed_with[item]
                out.append(f"MUST NOT: touch {item} (the approach that failed: {tool} on it)")
            elif item in targets:
                out.append(f"MUST NOT: touch {item}")
            else:
                out.append(f"MUST NOT: {item}")
        out += [f"CAUTION: {item}" for item in self.caution]
        return out

    @property
    def text(self) -> str:
        """The prompt lines joined by newlines ("" when there is nothing to say)."""
        return "\n".join(self.lines())


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: str  # "prefer" | "must_not" | "caution"
    text: str
    target: str | None = None
    tool: str | None = None  # the tool that failed on ``target``


def _own_entry(recall: MemoryRecall) -> list[_Entry]:
    kind = {"exploit": "prefer", "avoid": "must_not", "caution": "caution"}.get(recall.action)
    if kind is None or (kind == "prefer" and any(m.steps for m in recall.episodes)):
        return []  # an episode's entry names the approach itself
    if kind == "must_not" and _failed_entries(recall.failed, recall.episodes):
        return []  # so does a failed one
    text = (
        f"the approach recorded for {recall.space} on {recall.entity} "
        f"(attention {recall.attention:.2f}, decision {recall.decision:+.2f})"
    )
    return [_Entry(kind, text)]


def _sop_entries(sops: Iterable[Megram]) -> list[_Entry]:
    ranked = sorted(sops, key=lambda m: (-abs(m.sigma) * m.f, m.id))
    return [
        _Entry("prefer" if m.sigma > 0 else "must_not", m.content or f"{m.space} on {m.entity}")
        for m in ranked
    ]


def approach_text(episode: Megram) -> str:
    """What an accepted episode did, as one SHOULD PREFER entry: ``for "<request>":
    <instruction> with `<command>`; …`` (its steps and their exact commands)."""
    parts = []
    for step in episode.steps:
        said = [c for c in step.commands if f"`{c}`" not in step.instruction]
        commands = "; ".join(f"`{c}`" for c in said)
        parts.append(f"{step.instruction} with {commands}" if commands else step.instruction)
    what = f'for "{episode.request}"' if episode.request else f"for {episode.space}"
    return f"{what}: " + " then ".join(parts)


def _approach_key(episode: Megram) -> tuple[str, ...]:
    """An episode's commands with paths masked: the same approach on other files."""
    return tuple(task_text(c) for step in episode.steps for c in step.commands)


def _episode_entries(episodes: Iterable[Megram]) -> list[_Entry]:
    return [_Entry("prefer", approach_text(m)) for m in episodes if m.steps]


def _failed_entries(failed: Iterable[Megram], worked: Iterable[Megram]) -> list[_Entry]:
    """MUST NOT lines for abandoned episodes — but not for an approach that also worked
    (the same commands, paths aside, in an accepted episode): that one failed for another
    reason (an Executor that did not answer, a budget), not because it was wrong."""
    good = {_approach_key(m) for m in worked if m.steps}
    return [
        _Entry("must_not", "repeat what failed " + approach_text(m))
        for m in failed
        if m.steps and _approach_key(m) not in good
    ]


def _target_of(pair: TagPotential) -> str:
    return pair.entity.removeprefix(_PATH)


def _caution_entries(pairs: Iterable[TagPotential]) -> list[_Entry]:
    caution = [p for p in pairs if p.action == "caution" and p.space.startswith(_TOOL)]
    ranked = sorted(caution, key=lambda p: (-p.attention, p.space, p.entity))
    return [
        _Entry(
            "caution",
            f"{p.space.removeprefix(_TOOL)} on {_target_of(p)} (mixed outcomes: the operator "
            "confirms its first use)",
            target=_target_of(p),
        )
        for p in ranked
    ]


def _avoid_entries(pairs: Iterable[TagPotential]) -> list[_Entry]:
    avoid = [p for p in pairs if p.action == "avoid" and p.space.startswith(_TOOL)]
    ranked = sorted(avoid, key=lambda p: (p.decision, -p.attention, p.space, p.entity))
    return [
        _Entry("must_not", _target_of(p), target=_target_of(p), tool=p.space.removeprefix(_TOOL))
        for p in ranked
    ]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def calibrate(
    recall: MemoryRecall, directive: PlanDirective | None = None, *, cap: int = MEMORY_CAP
) -> Calibration:
    """The calibration protocol of paper §6.5 — deterministic, no model call.

    The task's own potentials map by action: exploit → SHOULD PREFER, avoid → MUST NOT,
    caution → CAUTION, ignore → nothing. C-level SOPs (strongest ``f·|σ|`` first): σ > 0 →
    SHOULD PREFER, σ ≤ 0 → MUST NOT. Accepted episodes recall by meaning returned (never a
    flagged distractor's) → SHOULD PREFER naming their steps and commands
    (:func:`approach_text`); abandoned ones → MUST NOT naming what failed, unless the
    same commands (paths aside) also worked in an accepted one. Tool-space
    Avoid pairs (``tool:<name>``, ``path:<target>``; most negative decision first) → their
    targets become MUST NOT and blocked targets; tool-space Caution pairs → CAUTION lines
    and caution targets, whose first use in the task the operator confirms (paper §6.4).
    At most ``cap`` (``Config.memory.recall_cap``) distinct memory entries, in that
    priority order. The directive's blocked tools and targets are then merged in (never
    capped).
    """
    seen: dict[tuple[str, str], _Entry] = {}
    entries = (
        _own_entry(recall)
        + _sop_entries(recall.sops)
        + _episode_entries(recall.episodes)
        + _failed_entries(recall.failed, recall.episodes)
        + _avoid_entries(recall.avoid)
        + _caution_entries(recall.caution)
    )
    for entry in entries:
        if len(seen) == cap:
            break
        seen.setdefault((entry.kind, entry.text), entry)
    memory = list(seen.values())

    tools = _unique(directive.blocked_tools) if directive else []
    remembered = [e.target for e in memory if e.target is not None and e.kind == "must_not"]
    targets = _unique(remembered + (list(directive.blocked_targets) if directive else []))
    must_not = _unique([e.text for e in memory if e.kind == "must_not"] + tools + targets)
    return Calibration(
        should_prefer=[e.text for e in memory if e.kind == "prefer"],
        must_not=must_not,
        caution=[e.text for e in memory if e.kind == "caution"],
        blocked_tools=tools,
        blocked_targets=targets,
        caution_targets=_unique(
            [e.target for e in memory if e.kind == "caution" and e.target is not None]
        ),
        failed_with={
            e.target: e.tool
            for e in memory
            if e.kind == "must_not" and e.target is not None and e.tool is not None
        },
    )


# --------------------------------------------------------------------------- enforcement
@dataclass(frozen=True)
class Violation:
    """One reason a plan may not be dispatched: a subtask using a blocked tool or naming a
    blocked target (the MUST NOT set), or asking for a tool that does not exist, or a
    check that cannot be used (``problem``)."""

    subtask_id: str
    tool: str | None = None
    target: str | None = None
    problem: str | None = None
    criterion_id: str | None = None
    """Set when the problem is the check of this criterion of the subtask."""

    @property
    def breaks_must_not(self) -> bool:
        """True for a blocked tool or target (not for an unusable tool or check)."""
        return self.problem is None

    @property
    def text(self) -> str:
        """The violation for a person (and for the model's retry prompt)."""
        if self.problem is not None:
            return f"{self.subtask_id}: {self.problem}"
        if self.tool is not None:
            return f"{self.subtask_id}: uses blocked tool {self.tool}"
        return f"{self.subtask_id}: names blocked target {self.target}"


def plan_violations(
    subtasks: Sequence[SubTask],
    calibration: Calibration,
    *,
    known_tools: Collection[str] | None = None,
) -> list[Violation]:
    """Why a plan may not be dispatched; empty when it may (pure).

    A subtask violates the MUST NOT set when its ``tools`` include a blocked tool or its
    ``instruction`` (or one of the ``commands`` it carries) names a blocked target. (The
    calibration text in ``context`` is not checked: it names the targets on purpose.) With
    ``known_tools``, a tool that does not exist is a violation.
    """
    blocked = set(calibration.blocked_tools)
    violations: list[Violation] = []
    for subtask in subtasks:
        for tool in _unique(subtask.tools):
            if tool in blocked:
                violations.append(Violation(subtask.subtask_id, tool=tool))
            elif known_tools is not None and tool not in known_tools:
                problem = f"asks for the tool {tool!r}, which does not exist"
                violations.append(Violation(subtask.subtask_id, tool=tool, problem=problem))
        for target in calibration.blocked_targets:
            named = [subtask.instruction, *subtask.commands]
            if any(mentions(text, target) for text in named):
                violations.append(Violation(subtask.subtask_id, target=target))
    return violations


def validate_plan(subtasks: Sequence[SubTask], calibration: Calibration) -> list[str]:
    """:func:`plan_violations` as text; empty when the plan may be dispatched."""
    return [v.text for v in plan_violations(subtasks, calibration)]


def apply_calibration(subtasks: Sequence[SubTask], calibration: Calibration) -> list[SubTask]:
    """The subtasks carrying the blocked sets and, ahead of their context, the calibration.

    Blocked sets already on a subtask are kept (merged, deduplicated).
    """
    text = calibration.text
    return [
        msgspec.structs.replace(
            s,
            blocked_tools=_unique([*s.blocked_tools, *calibration.blocked_tools]),
            blocked_targets=_unique([*s.blocked_targets, *calibration.blocked_targets]),
            caution_targets=_unique([*s.caution_targets, *calibration.caution_targets]),
            context="\n\n".join(part for part in (text, s.context) if part),
        )
        for s in subtasks
    ]


# ---- actor ----
PLANNER_PROMPT = """You plan a task for artoo's Executors. Their tools: {tools}.
Answer with one JSON object: {{"subtasks": [{{"instruction": "<what to do, with exact paths>",
"sequence": 1, "tools": ["<tool>"]}}], "rationale": "<one sentence>"}}.
Use one subtask unless the task has independent parts (same sequence = parallel; a later
sequence sees the earlier outputs). "tools" names only tools listed above. The last
subtask does the whole task and states its result; code checks it. Never guess the
answer: the Executor finds it with the tools. Obey every MUST NOT line.
Only when a choice the task does not settle decides the plan, add "question": {{"text":
"<one question to the user>", "options": ["<choice>", ...], "default": "<choice>"}}."""

TOOL_HINTS = {
    "glob": "glob (list paths matching a pattern)",
    "read_file": "read_file (read a text file)",
    "write_file": "write_file (create or replace a file)",
    "shell": "shell (run a command: wc -l, grep -c, ls, cat, python3 ...)",
    "run_tests": "run_tests (run the project's tests)",
}
"""How the Planner's prompt names the built-in tools (others by their name)."""


_ANSWER_CHECKS = ("answered", "value_at", "count_matches", "evaluates")


def with_task_checks(subtasks: list[SubTask], task_criteria: Sequence[Criterion]) -> list[SubTask]:
    """The plan's subtasks carrying the task's criteria (code's, from the reading) where
    the fast loop can decide them (pure): every one of them on a one-subtask plan's
    subtask — its output is the task's result; on a longer plan, those that judge an
    answer on the one subtask of the last sequence (its output answers), none when
    several share it. A change's criteria are then judged on the round by the
    Meta-Validator. A model's own criteria never reach a subtask."""
    subtasks = [msgspec.structs.replace(s, criteria=[]) for s in subtasks]
    checked = [c for c in task_criteria if c.check is not None]
    if not checked or not subtasks:
        return subtasks
    if len(subtasks) == 1:
        return [msgspec.structs.replace(subtasks[0], criteria=checked)]
    last = max(s.sequence for s in subtasks)
    final = [i for i, s in enumerate(subtasks) if s.sequence == last]
    asked = [c for c in checked if c.check is not None and c.check.kind in _ANSWER_CHECKS]
    if len(final) != 1 or not asked:
        return subtasks
    i = final[0]
    return [*subtasks[:i], msgspec.structs.replace(subtasks[i], criteria=asked), *subtasks[i + 1 :]]


def with_evaluation(subtasks: list[SubTask], workspace: Path) -> list[SubTask]:
    """Each subtask carrying an ``evaluates`` criterion, with the command that evaluates
    the request's own call first among its ``commands`` (``derive.evaluation_command``:
    the module imported as its package would be — the workspace's ``__init__.py`` files
    say where the package root is): the Executor runs it itself before the model's first
    turn, and the check reads what it printed. Pure but for those lookups."""
    out = []
    for s in subtasks:
        commands = []
        for c in s.criteria:
            check = c.check
            if check is None or check.kind != "evaluates":
                continue
            path = check.path or module_of_name(
                call_root(str(check.value)) or "", lambda p: (workspace / p).is_file()
            )
            if not path:
                continue
            found = import_root(path, lambda d: (workspace / d / "__init__.py").is_file())
            if found is not None:
                commands.append(evaluation_command(found[0], found[1], str(check.value)))
        fresh = [c for c in commands if c not in s.commands]
        out.append(msgspec.structs.replace(s, commands=[*fresh, *s.commands]) if fresh else s)
    return out


PROVEN_MAX = 3
"""At most this many recorded commands of one step are run by the Executor itself."""

_UNSAFE_WORD = re.compile(r"(^|[<>=:,])[~/](?!dev/null\b)|(^|/)\.\.(/|$)|[$`]")
"""A word of a command that may name something outside the workspace: an absolute or
home path (``/dev/null`` aside), also after a redirection or an option's ``=``, a ``..``
step, an expansion."""


def proven_commands(step: EpisodeStep, known_tools: Collection[str]) -> list[str]:
    """The recorded commands of an accepted episode's step the Executor may run itself
    (pure): its ``shell`` commands — a recorded command whose first word is the name of
    another tool (``read_file notes/a.txt``) is that tool's call, not a command line —
    each a single line, holding no redacted secret, whose every word is a
    workspace-relative path or no path at all (no absolute or home path — ``/dev/null``
    aside —, no ``..``, no expansion), at most :data:`PROVEN_MAX`; none
    when the step could not use ``shell``. They still run through the sandbox and Law 1
    as any call."""
    if "shell" not in known_tools or (step.tools and "shell" not in step.tools):
        return []
    others = set(known_tools) - {"shell"}
    out: list[str] = []
    for command in step.commands:
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        if not words or words[0] in others or "\n" in command or "[REDACTED]" in command:
            continue  # another tool's call; several lines; a secret memory does not hold
        if any(_UNSAFE_WORD.search(w) for w in words):
            continue
        if command not in out:
            out.append(command)
    return out[:PROVEN_MAX]


def reused_plan(
    recall: MemoryRecall,
    spec: TaskSpec,
    round: int,
    new_id: Callable[[], str],
    known_tools: Collection[str] | None = None,
) -> tuple[Megram, list[SubTask]] | None:
    """The first plan of round 0 taken from memory (pure apart from ``new_id``): the most
    recent recalled accepted episode of the very same request (case and spacing aside),
    its steps as SubTasks with fresh ids. None otherwise — a paraphrase or the same task
    on other files is adapted by the model from its SHOULD PREFER line instead. With
    ``known_tools``, each SubTask carries its step's :func:`proven_commands`, which the
    Executor runs before the model's first turn. A one-step plan of a request read as a
    question has the request itself as its instruction (:func:`_answers_itself`). Only
    an episode that ended ``accept`` is replayed: a ``success`` rests on a model's word.
    The plan still goes through every check (:func:`plan_violations`)."""
    if round != 0:
        return None
    for episode in recall.episodes:
        if episode.state != "accept":
            continue
        if episode.steps and same_request(episode.request, spec.text):
            own = _answers_itself(episode.steps, spec)
            return episode, [
                SubTask(
                    subtask_id=new_id(),
                    round=round,
                    sequence=max(step.sequence, 1),
                    instruction=spec.text if own else step.instruction,
                    tools=list(step.tools),
                    commands=[] if known_tools is None else proven_commands(step, known_tools),
                )
                for step in episode.steps
            ]
    return None


def _answers_itself(steps: Sequence[EpisodeStep], spec: TaskSpec) -> bool:
    """Whether a remembered plan's one step is asked as the request itself (pure): one
    step, a request read as a question (``TaskSpec.kind``) — what round 0's plan of a
    question is (:func:`direct_plan`) —, and a step that names no path the request does
    not (nor one under a path it names). The step's instruction was the request, or a
    model's rewording of it in a round after a failure ("Run the command `wc -l
    notes/todo.txt` to count the number of lines"): asked that again, a small model
    described what the command did ("… successfully counted the number of lines") and
    stated no number, three rounds running. A step that names another path holds what
    its rounds found ("Read data/sales.csv …" for "this year's sales figures") and keeps
    its words. Its tools and recorded commands are kept: they are what answered it."""
    if len(steps) != 1 or spec.kind != "question":
        return False
    named = request_paths(spec.text)
    return all(
        any(p == n or p.startswith(n.rstrip("/") + "/") for n in named)
        for p in request_paths(steps[0].instruction)
    )


@dataclass
class _Plan:
    spec: TaskSpec
    round: int = 0
    directive: PlanDirective | None = None
    caution: str | None = None  # the request id of the intent-level Caution asked
    cleared: bool | None = None  # its decision (None: not asked, or not yet answered)
    held: Envelope | None = None  # the MemoryRecall waiting for that decision
    asked: bool = False
    """Its one question to the user was asked (never a second)."""
    waiting: tuple[str, Envelope, Calibration, list[dict[str, Any]], str] | None = None
    """(question id, the MemoryRecall, its calibration, the messages so far, the question)
    while the plan waits for the answer."""


def intent_caution(spec: TaskSpec, recall: MemoryRecall, request_id: str) -> ConfirmationRequest:
    """The operator's question of an intent-level Caution (pure; paper §6.4): Memory's
    action on the task's own intent tag is ``caution`` — its past outcomes are mixed."""
    return ConfirmationRequest(
        request_id=request_id,
        action=f"run the task {spec.text!r}",
        reason=(
            f"memory marks intent:{spec.slug} caution (mixed outcomes: attention "
            f"{recall.attention:.2f}, decision {recall.decision:+.2f})"
        ),
        target=f"intent:{spec.slug}",
        gate="caution",
    )


def _criterion_line(c: Criterion) -> str:
    if c.check is None:
        return f"- {c.text}"
    check = c.check
    return f"- {c.text} (checked by code: {check.kind} {check.path} {check.value!r})".replace(
        "  ", " "
    )


def plan_messages(
    spec: TaskSpec, calibration: Calibration, directive: PlanDirective | None, tools: list[str]
) -> list[dict[str, str]]:
    """The chat messages asking for a plan (pure)."""
    system = PLANNER_PROMPT.format(tools=", ".join(TOOL_HINTS.get(t, t) for t in tools))
    user = [f"Task: {spec.text}", f"Intent: {spec.intent}"]
    if calibration.text:  # the task's own data: in the request, not the instructions
        user.append("Memory and constraints:\n" + calibration.text)
    if spec.criteria:
        user.append("Task criteria:\n" + "\n".join(_criterion_line(c) for c in spec.criteria))
    if directive is not None:
        user.append(
            f"The previous round failed. Directive: {directive.directive} "
            f"(urgency {directive.urgency}). {directive.rationale}"
        )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(user)}]


def build_subtasks(
    answer: PlanAnswer,
    round: int,
    new_id: Callable[[], str],
    known_tools: Collection[str] | None = None,
) -> list[SubTask]:
    """SubTasks with code-chosen ids from a model's plan (pure apart from ``new_id``); with
    ``known_tools``, each subtask's tools are :func:`repaired_tools`."""
    out = []
    for p in answer.subtasks:
        tools = list(p.tools) if known_tools is None else repaired_tools(p.tools, known_tools)
        out.append(
            SubTask(
                subtask_id=new_id(),
                round=round,
                sequence=max(p.sequence, 1),
                instruction=p.instruction,
                tools=tools,
            )
        )
    return out


def repaired_tools(tools: Iterable[str], known_tools: Collection[str]) -> list[str]:
    """A plan's tool list with every name that is no tool dropped (pure): a small model
    names the program it means to run (``wc -l``, ``grep``, ``python3``) as a tool; that
    program runs in the ``shell`` tool, which takes the dropped names' place when it
    exists. The plan is not asked again for it (a model call and often a whole round)."""
    kept = _unique(t for t in tools if t in known_tools)
    dropped = any(t not in known_tools for t in tools)
    if dropped and "shell" in known_tools and "shell" not in kept:
        kept.append("shell")
    return kept


def direct_plan(
    spec: TaskSpec, round: int, new_id: Callable[[], str], tools: Sequence[str] = ()
) -> list[SubTask]:
    """The first plan of a request: one subtask whose instruction is the user's request
    itself, every tool offered (pure apart from ``new_id``). No model call: a small
    model's plan of a one-step request replaced the request with its own reading, named
    tools that do not exist and guessed the answer's wording — each a lost round. The
    task's criteria go with it (:func:`with_task_checks`), the calibration too; a later
    round is planned by the model, told why this one failed. A question is not offered
    ``write_file`` nor ``run_tests``: answering changes nothing, and tests nothing."""
    answering = ("write_file", "run_tests")  # a question changes nothing, and tests nothing
    offered = [t for t in tools if t not in answering] if spec.kind == "question" else []
    return [
        SubTask(subtask_id=new_id(), round=round, sequence=1, instruction=spec.text, tools=offered)
    ]


def _reading(spec: TaskSpec) -> dict[str, Any]:
    """What a subtask carries of the reading for the Executor's scope gate: its kind and
    targets (``SubTask.kind``, ``SubTask.targets``), when the reading names targets (a
    subtask of an older reading's plan is as it was)."""
    if not spec.targets:
        return {}
    return {"kind": spec.kind, "targets": list(spec.targets)}


class Planner(Role):
    """The Planner actor."""

    name: ClassVar[str] = "planner"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        MemoryQuery,
        DispatchManifest,
        PlanRejected,
        StepFailed,
        LLMCall,
        ConfirmationRequest,
        UserQuestion,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = (
        TaskSpec,
        MemoryRecall,
        PlanDirective,
        ConfirmationDecision,
        QuestionAnswered,
    )
    max_plan_attempts: ClassVar[int] = 2

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.plans: dict[str, _Plan] = {}

    def active_tasks(self) -> list[str]:
        return list(self.plans)

    def forget_task(self, task_id: str) -> None:
        self.plans.pop(task_id, None)

    def _query(self, env: Envelope, plan: _Plan) -> None:
        self.reply(
            env,
            MemoryQuery(
                space=f"intent:{plan.spec.slug}",
                entity=f"env:{plan.spec.environment}",
                round=plan.round,
                text=plan.spec.text,
            ),
        )

    @handles(TaskSpec)
    def on_task_spec(self, env: Envelope) -> None:
        plan = _Plan(spec=env.body)
        self.plans[env.task_id or ""] = plan
        self._query(env, plan)

    @handles(PlanDirective)
    def on_plan_directive(self, env: Envelope) -> None:
        plan = self.plans.get(env.task_id or "")
        if plan is None:
            return
        body: PlanDirective = env.body
        plan.directive = body
        plan.round = body.round
        self._query(env, plan)

    def _violations(
        self, subtasks: Sequence[SubTask], calibration: Calibration, plan: _Plan
    ) -> list[Violation]:
        return plan_violations(subtasks, calibration, known_tools=self.ctx.tools.names)

    def _send_plan(
        self,
        env: Envelope,
        plan: _Plan,
        subtasks: list[SubTask],
        calibration: Calibration,
        rationale: str,
    ) -> None:
        self.reply(
            env,
            DispatchManifest(
                round=plan.round,
                subtasks=[
                    msgspec.structs.replace(s, request=plan.spec.text, **_reading(plan.spec))
                    for s in apply_calibration(
                        with_evaluation(
                            with_task_checks(subtasks, plan.spec.criteria), self.ctx.workspace
                        ),
                        calibration,
                    )
                ],
                task_criteria=list(plan.spec.criteria),
                must_not=calibration.must_not,
                should_prefer=calibration.should_prefer,
                caution=calibration.caution,
                rationale=rationale,
            ),
        )

    @handles(MemoryRecall)
    def on_memory_recall(self, env: Envelope) -> None:
        task_id = env.task_id or ""
        plan = self.plans.get(task_id)
        body: MemoryRecall = env.body
        if plan is None or body.round != plan.round:
            return
        if body.action == "caution" and plan.cleared is not True:  # intent-level Caution
            if plan.cleared is False:  # denied once: not asked again in this task
                self._caution_denied(env, plan)
            elif plan.caution is None:
                plan.caution, plan.held = self.ctx.new_id(), env
                ask = intent_caution(plan.spec, body, plan.caution)
                timeout = self.ctx.config.confirmation_timeout_s
                self.reply(env, msgspec.structs.replace(ask, timeout_s=timeout))
            else:
                plan.held = env  # still waiting for the answer
            return
        self._plan(env, plan, body)

    @handles(ConfirmationDecision)
    def on_confirmation_decision(self, env: Envelope) -> None:
        plan = self.plans.get(env.task_id or "")
        body: ConfirmationDecision = env.body
        if plan is None or plan.caution is None or body.request_id != plan.caution:
            return
        plan.cleared = body.approved
        held, plan.held = plan.held, None
        if held is None:
            return
        if body.approved:
            self._plan(held, plan, held.body)
        else:
            self._caution_denied(held, plan)

    def _caution_denied(self, env: Envelope, plan: _Plan) -> None:
        error = f"the operator denied the task: memory marks intent:{plan.spec.slug} caution"
        self.reply(env, StepFailed(role=self.sender, step="caution", error=error, round=plan.round))

    def _plan(self, env: Envelope, plan: _Plan, body: MemoryRecall) -> None:
        task_id = env.task_id or ""
        calibration = calibrate(body, plan.directive, cap=self.ctx.config.memory.recall_cap)
        messages = plan_messages(plan.spec, calibration, plan.directive, list(self.ctx.tools.names))
        violations: list[Violation] = []
        reused = reused_plan(body, plan.spec, plan.round, self.ctx.new_id, self.ctx.tools.names)
        if reused is not None:
            episode, subtasks = reused
            violations = self._violations(subtasks, calibration, plan)
            if not violations:
                rationale = f"the plan of the accepted episode {episode.id} (same request)"
                self._send_plan(env, plan, subtasks, calibration, rationale)
                return
            problem = "the remembered plan cannot be dispatched: " + "; ".join(
                v.text for v in violations
            )
            self.log.info("remembered plan rejected", task=task_id, problem=problem)
            final = messages[-1]
            messages = [
                *messages[:-1],
                {**final, "content": final["content"] + "\n\n" + problem + "."},
            ]
        elif plan.round == 0 and plan.spec.kind:
            subtasks = direct_plan(plan.spec, plan.round, self.ctx.new_id, self.ctx.tools.names)
            if not self._violations(subtasks, calibration, plan):
                rationale = f"the request itself (a {plan.spec.kind}: its first plan is no model's)"
                self._send_plan(env, plan, subtasks, calibration, rationale)
                return
        self._attempts(env, plan, calibration, messages)

    @handles(QuestionAnswered)
    def on_question_answered(self, env: Envelope) -> None:
        plan = self.plans.get(env.task_id or "")
        body: QuestionAnswered = env.body
        if plan is None or plan.waiting is None or plan.waiting[0] != body.question_id:
            return
        _, recall, calibration, messages, question = plan.waiting
        plan.waiting = None
        if body.answer is None:  # no answer: the task is abandoned
            return
        told = {"role": "user", "content": answered_prompt(question, body.answer)}
        self._attempts(recall, plan, calibration, [*messages, told])

    def _ask(
        self,
        env: Envelope,
        plan: _Plan,
        calibration: Calibration,
        messages: list[dict[str, Any]],
        answer: PlanAnswer,
    ) -> bool:
        """Publish the plan's one question to the user, if it asks one; True when it did."""
        question = bounded_question(answer.question)
        if question is None or plan.asked:
            return False
        plan.asked = True
        question_id = self.ctx.new_id()
        said = {"role": "assistant", "content": msgspec.json.encode(answer).decode()}
        plan.waiting = (question_id, env, calibration, [*messages, said], question.text)
        timeout_s = self.ctx.config.question_timeout_s
        self.reply(env, user_question(question, question_id, self.sender, timeout_s, plan.round))
        return True

    def _attempts(
        self,
        env: Envelope,
        plan: _Plan,
        calibration: Calibration,
        messages: list[dict[str, Any]],
    ) -> None:
        """Ask the model for the round's plan (one retry with the reasons) and publish it,
        or its rejection, or the one question it asks."""
        task_id = env.task_id or ""
        violations: list[Violation] = []
        for _attempt in range(self.max_plan_attempts):
            request = LLMRequest(
                role=self.name,
                tier="brain",
                task_id=task_id,
                messages=messages,
                max_output_tokens=self.ctx.config.output_caps.planner,
            )
            answer = ask_structured(self.ctx.model(), request, PlanAnswer)
            if answer.ok and answer.value is not None:
                if self._ask(env, plan, calibration, messages, answer.value):
                    return
            if not answer.ok or answer.value is None or not answer.value.subtasks:
                if self.cancelled(task_id):  # the call was not made: the cancel ends it
                    return
                error = (
                    "the plan has no subtasks" if answer.ok else f"no valid plan: {answer.error}"
                )
                self.log.warning("no valid plan", task=task_id, error=error)
                self.reply(
                    env, StepFailed(role=self.sender, step="plan", error=error, round=plan.round)
                )
                return
            subtasks = build_subtasks(
                answer.value, plan.round, self.ctx.new_id, self.ctx.tools.names
            )
            violations = self._violations(subtasks, calibration, plan)
            if not violations:
                self._send_plan(env, plan, subtasks, calibration, answer.value.rationale)
                return
            problem = "the plan cannot be dispatched: " + "; ".join(v.text for v in violations)
            messages = [
                *messages,
                {"role": "assistant", "content": msgspec.json.encode(answer.value).decode()},
                {"role": "user", "content": problem + ". Give a plan that obeys it."},
            ]
        self.reply(
            env,
            PlanRejected(
                round=plan.round,
                violations=[v.text for v in violations],
                must_not=calibration.must_not,
                tools=_unique(
                    [v.tool for v in violations if v.tool is not None and v.breaks_must_not]
                ),
                targets=_unique([v.target for v in violations if v.target is not None]),
            ),
        )
