"""Every message that flows on the bus, as msgspec Structs in one tagged union.

Schema-evolution rules (msgspec's, see docs/ARCHITECTURE.md):

1. A new field always gets a default, and is appended after the existing ones.
2. A field's type never changes; a field is never renamed (add a new one instead).
3. A tag (the class name) is never reused for a different shape.
4. A reader that meets a tag it does not know gets an :class:`UnknownMessage`
   holding the raw bytes, never an error.

All times are UTC epoch seconds (``float``) unless a field name ends in ``_ms``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .law1 import Law1Basis, Law1Check

__all__ = [
    "MESSAGE_TYPES",
    "AnyMessage",
    "BudgetName",
    "CancelRequest",
    "Check",
    "ConfirmationDecision",
    "ConfirmationRequest",
    "CorrectionSignal",
    "Cost",
    "Criterion",
    "DispatchManifest",
    "EndReason",
    "EpisodeStep",
    "EscalationTicket",
    "Established",
    "ExecutionResult",
    "FileChange",
    "FileEffect",
    "FinalResult",
    "GGSDecision",
    "Hazard",
    "JudgeObservation",
    "LLMCall",
    "Law1Basis",
    "Law1Check",
    "Megram",
    "MegramDemoted",
    "MegramForgotten",
    "MegramRecalled",
    "MegramRecorded",
    "MemoryQuery",
    "MemoryRecall",
    "Message",
    "OutcomeSummary",
    "PlanDirective",
    "PlanRejected",
    "QuestionAnswered",
    "Reading",
    "RecalledRequest",
    "Refusal",
    "ReplanRequest",
    "RoleFailed",
    "SOPPromoted",
    "StepFailed",
    "StopReason",
    "SubTask",
    "SubTaskOutcome",
    "TagPotential",
    "Target",
    "TargetRole",
    "TaskCancelled",
    "TaskPaused",
    "TaskRequest",
    "TaskResumed",
    "TaskSpec",
    "TaskUnpaused",
    "TicketResolved",
    "ToolCall",
    "ToolCallEnded",
    "ToolSpec",
    "UnknownMessage",
    "UserQuestion",
    "UserRequest",
    "Verdict",
    "WorkspaceRestored",
]

CriterionMode = Literal["verifiable", "plausible"]
FailureClass = Literal["logical", "environmental"]
Signal = Literal["rule", "llm", "human"]
Level = Literal["M", "K", "C", "T"]
MacroState = Literal[
    "abandon", "success", "accept", "break_symmetry", "change_approach", "change_path", "refine"
]
FinalStatus = Literal["accept", "success", "abandon"]
Established = Literal["code", "model", "human", "none"]
"""How a task's answer was established (FinalResult.established; docs/proof.md): ``code``
— every criterion passed was decided by code and what the task claims was proven: a
question's value derived by code or by two independent derivations that agree, a
change by its effect (in the reading's targets, read back or tested); ``model`` — some
of it rests on a model's word (a model's verdict, one derivation, a free-text answer, a
change nothing read back); ``human`` — some of it a person judged (a low-confidence
verdict taken to the operator); ``none`` — not every criterion was met (the task ended
abandon, or ``success`` close enough with some criterion failed)."""
OutcomeStatus = Literal["matched", "failed", "skipped"]
Tier = Literal["brain", "tool"]
Refusal = Literal[
    "law1_denied",
    "blocked_tool",
    "blocked_target",
    "outside_workspace",
    "unsafe_file",
    "caution_denied",
    "repeated_failure",
    "repeated_call",
    "lost_lines",
    "out_of_scope",
    "same_method",
]
"""Why a tool call was refused before or instead of running (ToolCall.refusal). Members are
only ever added, as ``repeated_failure``, ``repeated_call``, ``lost_lines`` and
``out_of_scope`` (a change during a question: the reading's scope gate) were: every older
log still decodes (a log holding a newer member does not decode in an artoo older than
it). ``lost_lines`` (a change refused for the lines it would lose) is policy 0's, retired
with it: it appears only in older logs."""
StopReason = Literal["answer", "doom_loop", "turn_cap", "model_error", "task_ended"]
"""Why an Executor attempt stopped (ExecutionResult.stop)."""
EndReason = Literal[
    "criteria_met",
    "omega",
    "law2",
    "replan_budget",
    "deadline",
    "cancelled",
    "crash",
    "closed",
    "interrupted",
    "budget",
    "log_failed",
    "step_failed",
    "worker_lost",
    "law1_denied",
    "caution_denied",
]
"""Why a task ended (FinalResult.reason); None in logs written before it existed.
``worker_lost``: the worker running it (a PostgreSQL store's) died; another ended it.
``caution_denied``: the operator denied the task at its intent-level Caution (paper §6.4)."""
BudgetName = Literal["max_model_calls", "max_tokens"]
"""A per-task budget (FinalResult.budget, LLMCall.refused)."""


# --------------------------------------------------------------------------- value types
# The docstring below is sent to the Planner's model (the JSON schema of
# ``answers.CriterionAnswer``): changing it changes a prompt. Today's vocabulary is
# ``checks.KINDS`` (answered, value_at, count_matches, evaluates, changed, parses,
# reads_back, tests); the kinds it lists are policy 0's, found only in older logs.
class Check(msgspec.Struct, frozen=True, kw_only=True):
    """A deterministic check that decides a verifiable criterion by code.

    ``kind`` is one of the documented vocabulary (see ``artoo.actors.verification.checks``):
    ``exit_code``, ``file_exists``, ``file_contains``, ``file_matches``,
    ``output_contains``, ``output_matches``, ``json_path_equals``, ``count_equals``,
    ``count_matches``, ``table_value``. ``path`` is a file path, a
    glob or a JSON path, ``value`` the expected value (for ``count_matches``, what to
    count: code measures it).
    """

    kind: str
    path: str = ""
    value: str | int | float | bool | None = None
    into: str = ""
    """For a value code derives (``value_at``, ``count_matches``, ``evaluates``) that the
    request asks to write to a file: that workspace file (the reading's write or create
    target), whose content the check judges instead of the answer. Empty: the answer is
    judged (and in logs from before this field)."""
    key: str = ""
    """For a check that reads a structured file (``value_at``, ``reads_back``): the key,
    definition or column inside it, as the reading names it ("" in older logs)."""
    shape: str = ""
    """For a check that compares a value (``answered``, ``value_at``, ``evaluates``): the
    answer shape whose normalizer compares it (``number``, ``version`` …; "" in older logs)."""


class Criterion(msgspec.Struct, frozen=True, kw_only=True):
    """One success criterion of a task or subtask."""

    id: str
    text: str
    mode: CriterionMode = "plausible"
    check: Check | None = None
    weight: float = 1.0


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The decision on one criterion for one attempt."""

    criterion_id: str
    passed: bool
    failure_class: FailureClass | None = None
    evidence: str = ""
    signal: Signal = "rule"
    confidence: float = 1.0
    attempt: int = 1
    observed: dict[str, Any] = {}
    """For a rule check that reads the workspace: what it read there (a file's existence,
    a JSON value, measured counts), so the verdict can be recomputed from the log."""


FileChange = Literal["created", "deleted", "modified", "replaced", "metadata"]
"""What a command did to one workspace path (FileEffect.change); all but ``created`` are
irreversible."""

Hazard = Literal["executable", "hook", "startup", "editor", "ci", "link", "volume"]
"""Why a creation is irreversible all the same (FileEffect.hazard): code the host may run
later without anyone choosing to — a file made ``executable``, a git ``hook``, a file an
interpreter or shell runs at ``startup`` (``sitecustomize.py``, ``*.pth``, ``.envrc``,
``.bashrc`` …), ``editor`` configuration that runs commands (``.vscode/tasks.json`` …), a
``ci`` workflow —, a symbolic ``link`` leading out of the workspace, or a ``volume`` of
creations above the sandbox's threshold."""


class FileEffect(msgspec.Struct, frozen=True, kw_only=True):
    """One change a tool call made, or would make, to the workspace: observed in the
    sandbox's upper layer for ``shell``, computed for ``write_file`` (Law 1 by effect)."""

    path: str
    """Workspace-relative path."""
    change: FileChange
    kind: Literal["file", "dir", "symlink", "other"] = "file"
    size_before: int | None = None
    size_after: int | None = None
    summary: str = ""
    """A short description for a person, e.g. ``"+2 -5 lines"`` or ``"mode 644 -> 600"``."""
    hazard: Hazard | None = None
    """Set when the effect is irreversible for what it plants, not for what it destroys."""
    diff: str | None = None
    """For a text file ``created`` or ``modified``: the lines it lost and gained, one a
    line — ``-`` and the line removed, ``+`` and the line added — with no context, no
    headers and no hunk markers, in file order (a replaced block's removed lines before
    its added ones). Lines are split at ``\n`` only (a ``\r`` stays in its line);
    whether the text ends with a newline is not shown; ``""``: no line changed. Exact or
    absent, never cut (a cut diff could hide a change): None when a side is not UTF-8 or
    over 256 KiB, when its changed lines are too many to compare exactly, when the diff
    is over 4,000 characters (``actors.tools._observe.line_diff``), for any other change
    or kind, and in logs written before the field. The proof of a change reads its
    ``-`` lines for a value the change removed (``reads_back``:
    ``verification.checks``)."""
    before: str = ""
    """The sha256 of the path's before-image kept in the store's blobs when the change
    was applied (``artoo undo``); "" when none was kept (a creation, or an older log)."""
    after: str = ""
    """The sha256 of what was applied at the path (a regular file's bytes, a symlink's
    target); "" for a removal and in older logs. Undo refuses when the path no longer
    holds it."""

    @property
    def irreversible(self) -> bool:
        """True unless the path is new (deleting or changing existing data cannot be undone)
        and plants nothing the host may run later (``hazard``)."""
        return self.change != "created" or self.hazard is not None


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """A structured record of one tool invocation (docs/design.md C1: targets are structured)."""

    tool: str
    args: dict[str, Any] = {}
    target: str | None = None
    ok: bool = True
    output_preview: str = ""
    spill_ref: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0
    subtask_id: str = ""
    attempt: int = 1
    exit_code: int | None = None
    refusal: Refusal | None = None
    """Set when the call was refused rather than run (its ``error`` says it to a person)."""
    sandboxed: bool = False
    """The command ran in the sandbox (``effects`` is what it changed, applied or not)."""
    effects: tuple[FileEffect, ...] = ()
    """What the call changed (or, when refused, would have changed) in the workspace."""
    law1: tuple[Law1Check, ...] = ()
    """Law 1's decisions on the call, gate by gate (empty: Law 1 did not judge it)."""
    stdout: str | None = None
    """A command's standard output, head and tail when long (the cut marked without a
    figure: the proof reads it; ``output_preview`` is what the model was shown); None for
    a tool with no streams, and in logs written before the field existed."""
    stderr: str | None = None
    """A command's standard error, likewise."""
    content: str | None = None
    """What the workspace gave a built-in tool other than ``shell``, without the notes
    the tool adds around it (``output_preview`` keeps what the model was shown): a
    ``read_file`` page without "[characters 0–1024 shown; … offset=1024 …]" ("" for a
    read past the end, which is only a note), a ``glob``'s paths without their count
    or the notes on hidden matches, a ``load_data`` page without its own note (head and
    tail when long, the cut marked without a figure). What the proof reads of the call
    (``verification.derive.tool_outputs``): a tool's note is no value.
    None for ``shell`` (its ``stdout`` is that), for a tool whose result is all its own
    report (``write_file``) or a host's function, and in logs written before the field
    existed (read as they were then)."""
    conversation: int = 0
    """Which conversation of its subtask made the call: 0 the first; 1 the one asked for
    a second derivation, which starts afresh and sees nothing of the first (its value is
    an independent derivation: ``verification.proof``). In a policy-0 log, an ask to show
    a value no tool result showed (``CorrectionSignal.unbacked``) continued the
    conversation it asked."""
    by: str = ""
    """Who made the call: "" the model; ``code`` the Executor itself (a derivation code
    runs — the request's own call evaluated, the workspace's tests — or a remembered
    command): the proof takes a value such a call printed as code's, never the model's."""


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A tool as described to a model: name, description, JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = {}


class Cost(msgspec.Struct, frozen=True, kw_only=True):
    """The paper's two costs (§10): time (sequential calls, elapsed) and tokens."""

    model_calls: int = 0
    sequential_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    elapsed_ms: float = 0.0


class EpisodeStep(msgspec.Struct, frozen=True, kw_only=True):
    """One subtask of an episode's plan: what it was told, its tools and the exact tool
    calls it made (workspace-relative, secrets redacted), e.g. ``shell: wc -l notes/a.txt``."""

    instruction: str
    tools: list[str] = []
    sequence: int = 1
    commands: list[str] = []


TargetRole = Literal["read", "write", "create", "delete"]
"""What a request does to one of its targets (docs/proof.md): ``read`` it (a question's
source), ``write`` it (modify an existing file), ``create`` it (a new file; a path ending in
``/`` is a directory a new file goes into), ``delete`` it."""


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """One workspace path a request names or implies, with its role (the reading's)."""

    path: str
    """Workspace-relative, ``/``-separated, no ``..`` (a directory ends in ``/``)."""
    role: TargetRole = "read"


class Reading(msgspec.Struct, frozen=True, kw_only=True):
    """How a task's request was read (its TaskSpec's reading and the criteria code wrote
    from it), kept in the accepted episode it ended in: the very same request is read so
    again, with no model call (``TaskSpec.reused``)."""

    intent: str
    kind: str = ""
    shape: str = ""
    criteria: list[Criterion] = []
    targets: list[Target] = []
    """The reading's targets (policy 1; empty in older episodes)."""
    values: list[str] = []
    key: str = ""
    unit: str = ""
    call: str = ""
    policy: int = 0
    """The policy the reading was made under (``schemas.POLICY``): only a reading of the
    policy a task runs under is reused (0: an episode from before policy versions)."""


class Megram(msgspec.Struct, frozen=True, kw_only=True):
    """The paper's 11-tuple memory unit (§6.2). Times are UTC epoch seconds."""

    id: str
    level: Level
    created_at: float
    last_recalled_at: float | None = None
    space: str
    entity: str
    content: str = ""
    state: str = ""
    f: float = 0.0
    sigma: float = 0.0
    k: float = 0.0
    request: str = ""
    """The request text of the task an intent megram records (recall by meaning reads it;
    empty in megrams from before this field and in tool-space megrams)."""
    steps: list[EpisodeStep] = []
    """What the task did: its last plan's subtasks with the commands that produced the
    answer (an accepted episode's SOP source; empty when unknown)."""
    reading: Reading | None = None
    """How the task's request was read, in an accepted episode: the very same request is
    read so again (``TaskSpec.reused``). None otherwise and in megrams from before this
    field."""


class RecalledRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One past request recall by meaning found (docs/memory.md): its text, its tag, both
    ranks (0: not in that list), the scores, and the distractor flag."""

    text: str
    space: str
    keyword_rank: int = 0
    vector_rank: int = 0
    keyword: float = 0.0
    vector: float = 0.0
    fused: float = 0.0
    disagreement: float = 0.0
    distractor: bool = False
    recalled: bool = False
    """Not a distractor and similar enough: its tag's memory is read."""


class TagPotential(msgspec.Struct, frozen=True, kw_only=True):
    """The live dual-channel potentials of one (space, entity) tag pair."""

    space: str
    entity: str
    attention: float
    decision: float
    action: str = "ignore"


# --------------------------------------------------------------------------- messages
class Message(msgspec.Struct, tag=True, frozen=True, kw_only=True):
    """Base of every bus message body; the tag is the class name."""


class UserRequest(Message, frozen=True, tag="UserRequest"):
    """Free text from the user, to the Queen."""

    text: str
    deadline_s: float | None = None
    max_model_calls: int | None = None
    max_tokens: int | None = None


class TaskRequest(Message, frozen=True, tag="TaskRequest"):
    """The Queen's admitted task, to the Perceiver."""

    text: str
    deadline_s: float | None = None
    max_model_calls: int | None = None
    max_tokens: int | None = None
    config: dict[str, Any] = {}
    """The Config the task runs under (``Config.model_dump(mode="json")``), so a rerun
    runs it under the same one (empty in logs from before this field)."""
    policy: int = 0
    """The decision policy the task ran under (``artoo.schemas.POLICY`` when it was
    admitted): replay recomputes its decisions by this version, never by today's code
    alone (docs/replay.md). 0: a log from before policy versions (the retired catalogue
    of proof rules, whose proof decisions replay takes as logged)."""


class TaskSpec(Message, frozen=True, tag="TaskSpec"):
    """The Perceiver's reading of a task, as code checked it (docs/proof.md): its kind,
    targets, answer shape, values, key, unit and call, the task-level criteria code wrote
    from it, and what code saw of the workspace — the one message every later decision
    reads."""

    text: str
    intent: str
    slug: str
    criteria: list[Criterion] = []
    environment: str = "local"
    kind: str = ""
    """The request's kind: ``question``, ``change``, ``creation`` or ``mixed`` (an answer
    and a change), as code checked the model's (``verification.reading.checked``: a kind
    outside these, or a question with targets to write, is ``mixed``); empty in logs from
    before this field (a policy-0 log may hold ``unknown``)."""
    shape: str = ""
    """What an answer must state, as the model read it: ``number``, ``name``, ``value``,
    ``boolean``, ``version``, ``list`` or ``text`` (free text: never proven); empty when
    the request asks nothing."""
    reused: str = ""
    """The id of the accepted episode whose reading this is (the very same request: no
    model read it); empty when the model read the request."""
    targets: list[Target] = []
    """The paths the request reads, writes, creates or deletes, as checked by code against
    the request and the workspace (policy 1; empty in older logs)."""
    values: list[str] = []
    """The values the request itself gives (each found in ``text`` by code)."""
    key: str = ""
    """The key, definition or column inside a read or write target that the request is
    about (``tool.black.line-length``, ``VERSION``, ``Square``); "" when none."""
    unit: str = ""
    """For a count: what is counted (``lines``, ``words``, ``chars``, ``bytes``, ``files``,
    ``matches``); "" when the request asks no count."""
    call: str = ""
    """A Python expression whose value (or output) the request asks, every name and
    literal of it the request's own; evaluated by code in the sandbox."""
    seen: dict[str, bool] = {}
    """What code saw of the workspace when it checked the reading: each named path and
    whether it existed (so replay recomputes the check from the log)."""
    notes: list[str] = []
    """Where code's check changed the model's reading, and why (one line each)."""
    listing: list[str] = []
    """The workspace entries the reading model was shown with the request (a rerun,
    over a scratch workspace, shows the model these again)."""


class SubTask(Message, frozen=True, tag="SubTask"):
    """One unit of work for one Executor–Agent-Validator pair (addressed by ``to``)."""

    subtask_id: str
    round: int = 0
    sequence: int = 1
    instruction: str = ""
    criteria: list[Criterion] = []
    context: str = ""
    tools: list[str] = []
    blocked_tools: list[str] = []
    blocked_targets: list[str] = []
    caution_targets: list[str] = []
    """Targets memory marks CAUTION (paper §6.4): their first use in the task is confirmed
    by the operator."""
    request: str = ""
    """The user's request the subtask serves (``TaskSpec.text``): the request travels to
    the Executor, so a plan that strays from it does not replace it (empty in older logs)."""
    commands: list[str] = []
    """Shell commands the Executor runs itself, in order, before the model's first turn
    (each a logged ``shell`` call through the sandbox and Law 1, in the conversation as
    the model's own, ``ToolCall.by == "code"``): the command that evaluates the request's
    own call, for a subtask carrying an ``evaluates`` criterion (``planner.with_evaluation``),
    and the proven commands of the accepted episode whose plan this is
    (``planner.proven_commands``); empty otherwise and in older logs."""
    kind: str = ""
    """The request's kind as the reading has it (``TaskSpec.kind``): the Executor's scope
    gate refuses a write during a ``question`` (empty in older logs)."""
    targets: list[Target] = []
    """The reading's targets (``TaskSpec.targets``): a write outside those of role
    write/create/delete is out of the request's scope (empty in older logs)."""


class DispatchManifest(Message, frozen=True, tag="DispatchManifest"):
    """The Planner's plan for one round: subtasks grouped by ``sequence``."""

    round: int = 0
    subtasks: list[SubTask] = []
    task_criteria: list[Criterion] = []
    must_not: list[str] = []
    should_prefer: list[str] = []
    caution: list[str] = []
    rationale: str = ""


class ExecutionResult(Message, frozen=True, tag="ExecutionResult"):
    """What an Executor attempt produced."""

    subtask_id: str
    round: int = 0
    attempt: int = 1
    ok: bool = True
    output: str = ""
    tool_calls: list[ToolCall] = []
    error: str | None = None
    stop: StopReason | None = None
    """Why the attempt stopped; None only in logs written before the field existed."""


class ToolCallEnded(Message, frozen=True, tag="ToolCallEnded"):
    """One tool call of an Executor attempt, published the moment it ended — before the
    attempt's ExecutionResult, so a call whose effects were applied is in the log even if
    the process dies before the attempt ends."""

    call: ToolCall
    index: int = 0
    """The call's place in its attempt (0 for the first)."""
    shown: str = ""
    """The text the model was shown as the call's result (its tool message)."""
    tool_call_id: str = ""
    """The model's id of the call (the tool message's ``tool_call_id``)."""


class CorrectionSignal(Message, frozen=True, tag="CorrectionSignal"):
    """The Agent-Validator's feedback to the Executor: a retry after a failed attempt, in
    the same conversation, told why; or (``corroborate``) after an attempt whose verdicts
    all passed but whose value no code derivation proved, the subtask's one ask for a
    second derivation, in a fresh conversation (``proof.second_derivation``)."""

    subtask_id: str
    round: int = 0
    attempt: int = 1
    verdicts: list[Verdict] = []
    feedback: str = ""
    failure_class: FailureClass | None = None
    corroborate: str = ""
    """The value the attempt's answer states that a fresh conversation is asked to derive
    again, by another method, never told the value (its ``feedback`` names only the
    methods not to repeat: ``artoo.actors.verification.proof.second_derivation``); its
    verdicts all passed — the ask is no failure and no retry. Empty for a retry after a
    failure, and in logs from before this field."""
    unbacked: bool = False
    """Policy 0 only (always False now): the value asked about was backed by no tool
    result, and the Executor was asked, in the same conversation, to compute it with a
    tool that prints it. Kept so older logs decode and read as they were."""
    run: str = ""
    """Policy 0 only (always "" now): a command code wrote for the Executor to run itself
    before the model's next turn (the request's evaluation, a table's or a count's
    computation). Under policy 1 such commands travel as ``SubTask.commands``. Kept so
    older logs decode and read as they were."""
    avoid: list[list[str]] = []
    """With ``corroborate``: the methods (``verification.derive.method``: a tool and what
    it reads or runs) that showed the value in the first conversation — the fresh one is
    refused a call by any of them (refusal ``same_method``), so its derivation is by
    another method. Empty otherwise, and in older logs."""


class SubTaskOutcome(Message, frozen=True, tag="SubTaskOutcome"):
    """The one result of a subtask's fast loop that crosses into the medium loop."""

    subtask_id: str
    round: int = 0
    status: OutcomeStatus = "matched"
    output: str = ""
    verdicts: list[Verdict] = []
    history: list[Verdict] = []
    attempts: int = 1
    tool_calls: list[ToolCall] = []
    failure_class: FailureClass | None = None
    reason: str = ""
    """Why a failed subtask failed ("two derivations disagree: …" when the fresh
    derivation stated another value); for a matched one, empty — but when the attempt
    after an ask for a second derivation failed and the first answer stands, why:
    "attempt 2 derived nothing: the first answer stands" (a policy-0 log may say "attempt
    2 did not answer: …")."""
    asked: str = ""
    """The value asked to be derived again in a fresh conversation
    (``CorrectionSignal.corroborate``; once a subtask — a policy-0 log may have asked
    twice, and holds the last value asked); empty when none was asked."""


class ReplanRequest(Message, frozen=True, tag="ReplanRequest"):
    """The Meta-Validator's fan-in when something failed."""

    round: int = 0
    outcomes: list[SubTaskOutcome] = []
    task_verdicts: list[Verdict] = []
    merged_output: str = ""


class OutcomeSummary(Message, frozen=True, tag="OutcomeSummary"):
    """The Meta-Validator's fan-in when every subtask and task criterion passed."""

    round: int = 0
    outcomes: list[SubTaskOutcome] = []
    task_verdicts: list[Verdict] = []
    merged_output: str = ""


class GGSDecision(Message, frozen=True, tag="GGSDecision"):
    """One medium-loop decision of the Goal Gradient Solver, with every input kept."""

    round: int
    d: float
    p: float
    omega: float
    loss: float
    grad: float
    directive: MacroState
    urgency: str = "normal"
    rationale: str = ""
    replans: int = 0
    elapsed_ms: float = 0.0
    blocked_tools: list[str] = []
    blocked_targets: list[str] = []
    law2_worsening: int = 0
    params: dict[str, float | int] = {}
    """The GGSConfig the decision was made under (``GGSConfig.model_dump()``), so replay
    ``--verify`` recomputes it from the log alone; empty in logs written before it existed."""
    failed_tools_only: bool = False
    """``blocked_tools`` holds only the tools whose calls failed in a logically failed
    round (not ok, refused, or a non-zero exit); False in logs written before this rule,
    which blocked every tool such a round used."""


class PlanDirective(Message, frozen=True, tag="PlanDirective"):
    """GGS's instruction to the Planner for the next round (MUST NOT sets included)."""

    round: int
    directive: MacroState
    blocked_tools: list[str] = []
    blocked_targets: list[str] = []
    rationale: str = ""
    urgency: str = "normal"
    failure_class: FailureClass | None = None


class FinalResult(Message, frozen=True, tag="FinalResult"):
    """The one and only end of a task, on every path."""

    task_id: str
    status: FinalStatus
    summary: str = ""
    output: str = ""
    loss: float | None = None
    replans: int = 0
    cost: Cost = Cost()
    reason: EndReason | None = None
    """Why the task ended (structured; ``summary`` says it to a person)."""
    law1_denied: bool = False
    """An irreversible action was denied by the operator (rendered as ``[LAW1]``)."""
    budget: BudgetName | None = None
    """With reason ``budget``: which budget was spent."""
    ticket_id: str | None = None
    """With reason ``cancelled``: the EscalationTicket the cancel answered, if any."""
    established: Established | None = None
    """How the answer was established (``code`` / ``model`` / ``human`` / ``none``); None in logs
    from before this field, and for tasks read without a ``TaskSpec.kind``."""
    established_by: str = ""
    """What established it, in words, when it was established by code or a person
    (``verification.proof.established``): code's derivation ("3 file(s) match
    'src/**/*.py'; the answer states 3"), the two derivations that agree ("4250 by
    `awk …` and, afresh, `python3 …`"), the read-back ("read back in pyproject.toml: …")
    or the tests ("src/app.py changed; …"); empty otherwise and in logs from before this
    field (a policy-0 log may hold "read back by effect: …")."""
    resumed_from: int | None = None
    """The task was resumed after its process stopped: the last seq of the task the log
    held then (its roles were rebuilt from the log up to it; None: never resumed)."""


class MemoryQuery(Message, frozen=True, tag="MemoryQuery"):
    """The Planner asks Memory for SOPs and potentials of a tag pair."""

    space: str
    entity: str
    round: int = 0
    tool_prefix: str = "tool:"
    text: str = ""
    """The request text: Memory recalls past requests that mean the same (empty: the tag
    alone, as in logs from before this field)."""


class MemoryRecall(Message, frozen=True, tag="MemoryRecall"):
    """Memory's answer: C-level SOPs, live potentials and the strongest Avoid pairs."""

    space: str
    entity: str
    round: int = 0
    sops: list[Megram] = []
    attention: float = 0.0
    decision: float = 0.0
    action: str = "ignore"
    avoid: list[TagPotential] = []
    caution: list[TagPotential] = []
    """The strongest tool-space tags whose action is caution (mixed outcomes)."""
    recalled: list[RecalledRequest] = []
    """What recall by meaning found for the query's text, best first, with its scores and
    flags (the potentials and SOPs above cover the query's tag and every recalled tag)."""
    episodes: list[Megram] = []
    """Accepted episodes of the recalled tags that name their steps, best first (at most
    3): a plan the Planner may adapt as its first plan."""
    failed: list[Megram] = []
    """Abandoned episodes of the recalled tags that name their steps, newest first (at
    most 3): the approaches that failed, for the MUST NOT lines."""


class MegramRecorded(Message, frozen=True, tag="MegramRecorded"):
    """A new Megram, whole (GGS writes, Memory applies)."""

    megram: Megram


class MegramRecalled(Message, frozen=True, tag="MegramRecalled"):
    """Megrams whose decay clock restarts at ``at``."""

    ids: list[str]
    at: float


class MegramForgotten(Message, frozen=True, tag="MegramForgotten"):
    """A Megram physically forgotten by the Dreamer."""

    id: str
    reason: str = ""


class MegramDemoted(Message, frozen=True, tag="MegramDemoted"):
    """A Common-Sense entry stripped of its time immunity (trust bankruptcy)."""

    id: str
    level: Level = "K"
    k: float = 0.05
    reason: str = ""


class SOPPromoted(Message, frozen=True, tag="SOPPromoted"):
    """A consolidated cluster: a new C-level Megram and the sources it came from."""

    megram: Megram
    source_ids: list[str] = []
    kind: Literal["best_practice", "constraint"] = "best_practice"


class LLMCall(Message, frozen=True, tag="LLMCall"):
    """One model call, recorded so a run can be replayed without the model."""

    call_id: str
    role: str
    tier: Tier
    model: str
    request: dict[str, Any] = {}
    response: str | None = None
    tool_calls: list[dict[str, Any]] = []
    usage: dict[str, int] = {}
    latency_ms: float = 0.0
    error: str | None = None
    subtask_id: str = ""
    refused: BudgetName | None = None
    """Set when the call was not made: the task's budget of this kind was spent."""


class ConfirmationRequest(Message, frozen=True, tag="ConfirmationRequest"):
    """Law 1: an irreversible action waiting for a human's yes."""

    request_id: str
    action: str
    reason: str
    tool: str = ""
    args: dict[str, Any] = {}
    target: str | None = None
    subtask_id: str = ""
    timeout_s: float = 60.0
    effects: tuple[FileEffect, ...] = ()
    """Exactly what approving would change: each file deleted, overwritten or created, as
    observed in the sandbox (empty when the parser decided)."""
    gate: str = ""
    """Which gate asks: ``law1`` (an irreversible action), ``caution`` (the first use of
    an approach memory marks caution), ``verdict`` (the ladder's human rung), ``resume``
    (a call under way when the process stopped, not known safe to run again); empty in
    logs written before the field existed."""
    created: tuple[str, ...] = ()
    """Policy 0 only (always empty now): workspace paths that calls of the asking subtask
    created, whose lost lines its lost-lines rule counted as the task's own. Kept so older
    logs decode and read as they were."""


class ConfirmationDecision(Message, frozen=True, tag="ConfirmationDecision"):
    """The answer to a ConfirmationRequest (denied at its timeout)."""

    request_id: str
    approved: bool
    by: str = "operator"
    reason: str = ""


class EscalationTicket(Message, frozen=True, tag="EscalationTicket"):
    """The Judge's structured report of degradation, to the Queen."""

    ticket_id: str
    severity: Literal["low", "medium", "high", "critical"] = "medium"
    kind: str = ""
    """The detector that raised it (``doom_loop``, ``cycle``, ``stall`` …)."""
    summary: str = ""
    """The cause, for a person."""
    evidence: list[int] = []
    """The seqs of the envelopes that show it."""
    evidence_ranges: list[list[int]] = []
    """The same evidence as ``[first, last]`` seq ranges."""
    action: Literal["inspect", "cancel", "continue"] = "inspect"
    """What the Judge suggests the operator do."""
    case: str | None = None
    """For ``model_opinion``: the ambiguous case the model was asked about
    (``varying_repeat``, ``plateau``); None otherwise."""
    error_kind: Literal["error", "refused", "timeout", "unparsable"] | None = None
    """For ``model_opinion``: why the model rung failed closed (None: the model answered
    ``degraded``)."""


class TicketResolved(Message, frozen=True, tag="TicketResolved"):
    """An EscalationTicket closed: its task ended (Judge) or the operator answered (Queen)."""

    ticket_id: str
    resolution: Literal["task_ended", "continue", "cancel", "acknowledged"] = "task_ended"
    by: str = ""
    reason: str = ""


class JudgeObservation(Message, frozen=True, tag="JudgeObservation"):
    """A periodic health observation of the Judge."""

    summary: str = ""
    healthy: bool = True
    metrics: dict[str, float] = {}


class TaskCancelled(Message, frozen=True, tag="TaskCancelled"):
    """A task was cancelled: by the Queen (the host's CancelRequest, the operator's or the
    policy's answer to a ticket) or by ``System.close()``."""

    reason: str = ""
    closing: bool = False
    """Sent by ``System.close()`` for a task still running: it ends as "system closed"."""
    ticket_id: str | None = None
    """The EscalationTicket this cancel answers (None: not a ticket's)."""


class CancelRequest(Message, frozen=True, tag="CancelRequest"):
    """The host asks the Queen to cancel a task (``TaskHandle.cancel()``)."""

    reason: str = ""


class RoleFailed(Message, frozen=True, tag="RoleFailed"):
    """A role raised; the Supervisor restarts it and ends the tasks it served."""

    role: str
    error: str
    traceback: str = ""
    task_ids: list[str] = []
    last_seq: int = 0


class StepFailed(Message, frozen=True, tag="StepFailed"):
    """A role could not do one step of a task cleanly (no valid model answer after the
    repair, a model outage): the task goes on through the GGS; the actor is alive."""

    role: str
    step: str
    error: str
    round: int = 0


class PlanRejected(Message, frozen=True, tag="PlanRejected"):
    """The Planner could not make a plan that keeps the MUST NOT set (after its retry):
    a round's logical failure, scored by the GGS."""

    round: int = 0
    violations: list[str] = []
    must_not: list[str] = []
    tools: list[str] = []
    """Blocked tools the rejected plan used."""
    targets: list[str] = []
    """Blocked targets the rejected plan named."""


class TaskResumed(Message, frozen=True, tag="TaskResumed"):
    """A task the stopped process left open goes on (``Config.recovery = "resume"``): its
    roles are rebuilt from its ``replayed`` envelopes, the last at seq ``from_seq``, then
    it goes on live. Published by the System at open, before the task's first new step."""

    from_seq: int
    replayed: int = 0
    stopped_s: float = 0.0
    """Clock seconds between the task's last logged envelope and the resume (not counted
    against its deadline)."""
    paused: bool = False
    """The operator had paused it (it stays paused until resumed)."""
    waiting: bool = False
    """It was waiting for the user's answer to a question."""


class TaskPaused(Message, frozen=True, tag="TaskPaused"):
    """The operator paused a task (``TaskHandle.pause``, ``System.answer(task, "pause")``,
    ``/pause``): it makes no model or tool call and its deadline clock stops until a
    :class:`TaskUnpaused`. Kept in the log, so a paused task is paused after a restart."""

    by: str = "host"
    reason: str = ""


class TaskUnpaused(Message, frozen=True, tag="TaskUnpaused"):
    """The operator resumed a paused task: it goes on where it stopped."""

    by: str = "host"
    reason: str = ""


class UserQuestion(Message, frozen=True, tag="UserQuestion"):
    """A role asks the user one question (an ambiguous request, a choice the request does
    not settle): free text, or one of ``options``. The task waits for the
    :class:`QuestionAnswered` (its deadline clock stopped); it goes to the operator inbox
    and the ``on_question`` callback."""

    question_id: str
    role: str
    text: str
    options: list[str] = []
    default: str | None = None
    """Taken when no answer comes in ``timeout_s`` (``Config.question_on_timeout``)."""
    timeout_s: float = 300.0
    round: int = 0


class QuestionAnswered(Message, frozen=True, tag="QuestionAnswered"):
    """The answer to a :class:`UserQuestion`: the user's (``by="operator"``), or at the
    timeout (``by="timeout"``) — or at once when no one can be asked (``by="no_operator"``:
    no ``on_question``, no inbox) — the question's default, or None when the task is
    abandoned for want of an answer."""

    question_id: str
    answer: str | None = None
    by: str = "operator"


class WorkspaceRestored(Message, frozen=True, tag="WorkspaceRestored"):
    """A task's applied changes undone from their before-images (``artoo undo``,
    ``System.undo``): logged under the undone task's id, after its FinalResult."""

    paths: list[str] = []
    """The workspace paths restored (a created path: removed), in the order undone."""
    seqs: list[int] = []
    """The seqs of the ToolCallEnded envelopes whose effects were undone, newest first."""
    by: str = "operator"
    reason: str = ""


class UnknownMessage(msgspec.Struct, frozen=True):
    """What a reader gets for a body whose tag it does not know: the tag and raw bytes."""

    tag: str
    raw: bytes


MESSAGE_TYPES: tuple[type[Message], ...] = (
    UserRequest,
    TaskRequest,
    TaskSpec,
    DispatchManifest,
    SubTask,
    ExecutionResult,
    ToolCallEnded,
    CorrectionSignal,
    SubTaskOutcome,
    ReplanRequest,
    OutcomeSummary,
    GGSDecision,
    PlanDirective,
    FinalResult,
    MemoryQuery,
    MemoryRecall,
    MegramRecorded,
    MegramRecalled,
    MegramForgotten,
    MegramDemoted,
    SOPPromoted,
    LLMCall,
    ConfirmationRequest,
    ConfirmationDecision,
    EscalationTicket,
    JudgeObservation,
    TaskCancelled,
    RoleFailed,
    StepFailed,
    PlanRejected,
    TicketResolved,
    CancelRequest,
    TaskResumed,
    TaskPaused,
    TaskUnpaused,
    UserQuestion,
    QuestionAnswered,
    WorkspaceRestored,
)

AnyMessage = (
    UserRequest
    | TaskRequest
    | TaskSpec
    | DispatchManifest
    | SubTask
    | ExecutionResult
    | ToolCallEnded
    | CorrectionSignal
    | SubTaskOutcome
    | ReplanRequest
    | OutcomeSummary
    | GGSDecision
    | PlanDirective
    | FinalResult
    | MemoryQuery
    | MemoryRecall
    | MegramRecorded
    | MegramRecalled
    | MegramForgotten
    | MegramDemoted
    | SOPPromoted
    | LLMCall
    | ConfirmationRequest
    | ConfirmationDecision
    | EscalationTicket
    | JudgeObservation
    | TaskCancelled
    | RoleFailed
    | StepFailed
    | PlanRejected
    | TicketResolved
    | CancelRequest
    | TaskResumed
    | TaskPaused
    | TaskUnpaused
    | UserQuestion
    | QuestionAnswered
    | WorkspaceRestored
)
