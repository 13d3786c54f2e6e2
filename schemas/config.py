"""The pydantic Config: every tunable of a System, with the paper's defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AuditConfig",
    "Config",
    "DreamerConfig",
    "GGSConfig",
    "JudgeConfig",
    "MemoryConfig",
    "OutputCapsConfig",
    "QueenConfig",
    "SupervisorConfig",
    "TelemetryConfig",
    "ToolsConfig",
]


class GGSConfig(BaseModel):
    """The Goal Gradient Solver's hyperparameters (paper, Appendix B)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    alpha: float = Field(0.6, ge=0, description="weight on intent-result distance D")
    beta: float = Field(0.3, ge=0, description="weight on process implausibility P")
    lam: float = Field(0.4, ge=0, description="weight on resource cost Ω (λ)")
    w1: float = Field(0.6, ge=0, description="share of Ω from replans")
    w2: float = Field(0.4, ge=0, description="share of Ω from elapsed time")
    epsilon: float = Field(0.1, gt=0, description="|∇L| below this: no directional signal")
    delta: float = Field(0.3, ge=0, le=1, description="D at or below this: success")
    rho: float = Field(0.5, ge=0, le=1, description="P above this: logical failure")
    theta: float = Field(0.8, gt=0, description="Ω at or above this: abandon")
    time_budget_ms: float = Field(300_000, gt=0, description="time budget per task")
    max_replans: int = Field(3, ge=0, description="replan budget per task")
    law2_rounds: int = Field(2, ge=1, description="consecutive worsening rounds that kill")


class MemoryConfig(BaseModel):
    """Thresholds of the memory potentials and of what the Planner reads (paper §6)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    attention_floor: float = Field(
        0.5, ge=0, description="attention potential below this: ignore (paper §6.4)"
    )
    decision_band: float = Field(
        0.2, ge=0, description="|decision potential| within this: caution (paper §6.4)"
    )
    avoid_limit: int = Field(
        10, ge=0, description="strongest tool-space Avoid pairs Memory returns per recall"
    )
    recall_cap: int = Field(
        10, ge=0, description="memory entries the Planner puts into one plan (paper §6.5)"
    )
    embedder: Literal["hash", "minilm"] = Field(
        "hash",
        description="sentence vectors of recall by meaning: hash (no model) or minilm "
        "(the artoo[embed] extra; docs/memory.md)",
    )
    recall_k: int = Field(5, ge=0, description="past requests recall by meaning returns")
    disagreement: float = Field(
        0.5, ge=0, le=1, description="keyword/vector rank disagreement that flags a distractor"
    )


class DreamerConfig(BaseModel):
    """The Dreamer's slow loop (paper §7)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    forget_below: float = Field(
        0.1, ge=0, description="attention below this (and not Common Sense): forgotten"
    )
    consolidate_attention: float = Field(
        5.0, ge=0, description="a cluster's attention at or above this may consolidate"
    )
    consolidate_decision: float = Field(
        3.0, ge=0, description="|a cluster's decision| at or above this consolidates"
    )
    demoted_k: float = Field(0.05, ge=0, description="decay rate of a demoted entry")
    max_rule_chars: int = Field(2000, ge=1, description="longest SOP text kept")
    max_candidates: int = Field(32, ge=1, description="clusters distilled per pass")


class SandboxLimitsConfig(BaseModel):
    """What one sandboxed shell command may use (the sandbox's ``Limits``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    write_mb: int = Field(1024, ge=1, description="MiB a command may write to the workspace")
    write_files: int = Field(200_000, ge=100, description="paths a command may create")
    tmp_mb: int = Field(256, ge=1, description="MiB of each of its /tmp, /dev/shm and home")
    memory_mb: int = Field(4096, ge=64, description="address space of each of its processes")
    processes: int = Field(256, ge=8, description="its processes and threads at once")
    open_files: int = Field(1024, ge=64, description="open files per process")
    ask_mb: int = Field(100, ge=0, description="creating more MiB than this asks")
    ask_files: int = Field(10_000, ge=0, description="creating more paths than this asks")


class ToolsConfig(BaseModel):
    """The Executors' built-in tools."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    shell_timeout_s: float = Field(30.0, gt=0, description="longest one shell command may run")
    context_limit: int = Field(
        4 * 1024, ge=256, description="characters of a tool result put into the context"
    )
    spill_limit: int = Field(
        30 * 1024, ge=1024, description="characters of one read page of a spilled result"
    )
    spill_keep_days: float = Field(
        7.0, gt=0, description="a task's spilled results are removed this long after its last"
    )
    env_allow: list[str] = Field(
        [],
        description="host environment variables a shell command may see besides the "
        "allowlist (PATH, HOME, LANG, LC_*, TERM, TZ, USER, SHELL, TMPDIR …)",
    )
    sandbox: Literal["auto", "required", "off"] = Field(
        "auto",
        description="run shell commands in the sandbox and decide Law 1 by their observed "
        "effects: auto (when the machine allows it; otherwise the parser decides, with a "
        "warning), required (System.open fails without it), off (the parser decides)",
    )
    hide: list[str] = Field(
        [
            "~/.ssh",
            "~/.gnupg",
            "~/.aws",
            "~/.azure",
            "~/.config/gcloud",
            "~/.kube",
            "~/.docker",
            "~/.netrc",
            "~/.git-credentials",
            "~/.pypirc",
            "~/.npmrc",
        ],
        description="paths no tool may touch and sandboxed commands see empty (credentials "
        "in files); ~ is the home directory; the store is always hidden",
    )
    network: bool = Field(
        False,
        description="let sandboxed shell commands reach the network (commands acting on "
        "remote systems are still read by the Law 1 classifier)",
    )
    read: list[str] = Field(
        [],
        description="host paths sandboxed commands may read besides the workspace and the "
        "system directories (e.g. ~/.gitconfig); ~ is the home directory",
    )
    limits: SandboxLimitsConfig = Field(
        default_factory=SandboxLimitsConfig,
        description="what one sandboxed shell command may use",
    )
    undo_max_mb: float = Field(
        64.0,
        ge=0,
        description="the largest before-image kept of one changed path, in MiB (a file's "
        "bytes, or a removed directory's whole tree): a change whose image is larger is "
        "not kept, so it is not reversible (Law 1 asks) and artoo undo cannot restore it",
    )


class SupervisorConfig(BaseModel):
    """How crashed role actors are restarted."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    max_restarts: int = Field(
        5, ge=0, description="restarts of one role allowed within restart_window_s"
    )
    restart_window_s: float = Field(
        60.0, gt=0, description="the window over which restarts are counted"
    )


class OutputCapsConfig(BaseModel):
    """Per-role caps on the tokens one model answer may write (litellm's ``max_tokens``
    of that call): a reading, a plan, a verdict, an SOP rule and an opinion are small, an
    Executor turn is one tool call or a short answer, all far under ``max_output_tokens``;
    a small model that runs on is cut where its answer should have ended (and does not hold
    a one-slot model server for minutes). None: ``max_output_tokens`` alone."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    perceiver: int | None = Field(384, ge=16, description="the Perceiver's reading")
    planner: int | None = Field(512, ge=16, description="the Planner's plan")
    verdict: int | None = Field(
        256, ge=16, description="a validator's verdict (Agent- and Meta-Validator)"
    )
    executor: int | None = Field(
        512, ge=16, description="one Executor turn (a tool call, or the subtask's answer)"
    )
    dreamer: int | None = Field(256, ge=16, description="the Dreamer's distilled SOP rule")
    judge: int | None = Field(256, ge=16, description="the Judge's opinion on a case")


class AuditConfig(BaseModel):
    """The Auditor's window and its role-drift rule (paper §8)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    window_s: float = Field(300.0, gt=0, description="length of one audit window (event time)")
    drift_mads: float = Field(
        3.0, gt=0, description="drift: a metric above median + this many MADs of its history"
    )
    drift_min_windows: int = Field(
        5, ge=2, description="earlier windows of a role needed before drift is judged"
    )
    drift_history: int = Field(50, ge=2, description="earlier windows of a role kept for drift")
    tap_size: int = Field(10_000, ge=1, description="the Auditor's tap (a full tap drops)")


class JudgeConfig(BaseModel):
    """The health Judge's detectors and thresholds (Hive's Judge, coded)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    interval_s: float = Field(10.0, gt=0, description="timer: stalls are looked for this often")
    stall_s: float = Field(60.0, gt=0, description="a running task silent this long: stall")
    repeat_limit: int = Field(
        3, ge=2, description="doom loop: the Nth identical tool call (same result) in a row"
    )
    cycle_repeats: int = Field(
        2, ge=2, description="cycle: a block of 2–4 calls repeated this many times in a row"
    )
    retry_storm: int = Field(5, ge=1, description="corrections of one task that make a storm")
    error_repeats: int = Field(3, ge=2, description="identical errors of one task: ticket")
    budget_warn: float = Field(
        0.8, gt=0, le=1, description="share of a task's call/token budget used: ticket"
    )
    model_error_rate: float = Field(
        0.5, gt=0, le=1, description="share of a task's model calls failing: ticket"
    )
    model_error_min_calls: int = Field(4, ge=1, description="calls before the rate is judged")
    cooldown_s: float = Field(
        60.0, ge=0, description="a resolved (task, detector) is not ticketed again sooner"
    )
    stall_critical_s: float | None = Field(
        None,
        gt=0,
        description="a stall this long is critical, suggesting cancel (None: 4 × stall_s, "
        "Hive's 4 minutes at the default stall_s)",
    )
    doom_critical: int = Field(
        2,
        ge=2,
        description="a doom loop that goes on to doom_critical × repeat_limit identical "
        "calls in a row is critical (the same ticket raised again, severity critical)",
    )
    model_rung: bool = Field(
        False,
        description="ask the brain-tier model about the cases the rules mark ambiguous "
        "(a repeated call whose results differ; a loss plateau), at most once per (task, "
        "case); it fails closed: an error, refusal, timeout or unusable answer is a ticket",
    )
    plateau_rounds: int = Field(
        3, ge=2, description="ambiguous: GGS rounds in a row without a better loss"
    )
    model_timeout_s: float = Field(
        120.0, gt=0, description="clock time a model opinion may take; later: a ticket"
    )


class QueenConfig(BaseModel):
    """The Queen's escalation rules: which tickets reach the operator, which end a task."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    relay_at: Literal["low", "medium", "high", "critical"] = Field(
        "high",
        description="a ticket this severe or more goes to the operator (callback and inbox); "
        "a milder one is acknowledged and not relayed",
    )
    auto_cancel: Literal["off", "critical"] = Field(
        "off",
        description="critical: a critical ticket whose suggested action is cancel ends its "
        "task at once; off: the operator decides every ticket",
    )


class TelemetryConfig(BaseModel):
    """Live telemetry: each task's spans sent to an OpenTelemetry collector as it ends."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    otlp_endpoint: str | None = Field(
        None,
        description="an OTLP/HTTP traces endpoint (e.g. http://localhost:4318/v1/traces): "
        "each task's spans, with a gen_ai.evaluation.result event per verdict, are sent "
        "there when it ends (None: no live export)",
    )
    export_interval_s: float = Field(
        1.0, gt=0, description="the batch processor's delay between two exports"
    )


class Config(BaseModel):
    """Everything a System can be told. Unknown keys are an error; values are not coerced
    (``"5"`` or ``True`` is not a number) and must be finite and within their bounds."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    model: str | None = Field(None, description="litellm model string or scripted:<path>")
    brain_model: str | None = Field(None, description="model for the brain tier")
    tool_model: str | None = Field(None, description="model for the tool tier")
    durability: Literal["none", "batch", "always"] = "batch"
    recovery: Literal["resume", "abandon"] = Field(
        "resume",
        description="a task the stopped process left open: resume it from the log at open "
        "(model answers and tool results served from it, then live), or abandon it "
        "(FinalResult abandon, reason interrupted)",
    )
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        "auto",
        description="how a structured answer is constrained: auto (a JSON schema response "
        "format where the backend takes one: litellm says so, or an api_base server), "
        "json_schema, json_object, or prompt (the schema in the prompt only)",
    )
    max_retries: int = Field(2, ge=0, le=100, description="fast-loop retries per subtask")
    corroborate: bool = Field(
        True,
        description="an answer to a question that one tool call alone backs is derived once "
        "more, by a different call, before its subtask ends (once a subtask, twice when the "
        "first ask's answer corrects the value: see corroborate_asks; not a retry: see "
        "corroborate_after_last_retry): without it such an answer ends success, never accept",
    )
    corroborate_after_last_retry: bool = Field(
        True,
        description="the second derivation (corroborate) is asked for after any attempt "
        "that passed, the last one max_retries allows too: one attempt more than the "
        "retries; off, it is one of the retries, and an answer right only on the last "
        "attempt ends success (a log from before this field replays with it off)",
    )
    corroborate_asks: int = Field(
        2,
        ge=1,
        le=2,
        description="how many second derivations (corroborate) one subtask may be asked for: "
        "a second is asked only when the fresh conversation's answer passed with another "
        "value than the one asked about (it corrected the first answer, and its value stands "
        "on one derivation too), in a new fresh conversation — or, after an ask to show a "
        "value no tool result showed (corroborate_unbacked), for that value one call now "
        "backs; 1, the new value is given on as it is (a log from before this field "
        "replays with 1)",
    )
    corroborate_unbacked: bool = Field(
        True,
        description="an answer to a question that passed stating a value no tool result "
        "shows (a mean the model worked out from a file it read) is asked, in the same "
        "conversation, to compute it with a command or tool that prints it — one of the "
        "corroborate_asks asks (corroborate on); off, such an answer is given on as it is "
        "and ends success at best (a log from before this field replays with it off)",
    )
    read_back_by_effect: bool = Field(
        True,
        description="a change or creation is proven by code when what Law 1 observed it "
        "change reads back as the request (proof.read_back_by_effect): every file changed "
        "is one the request names, created or modified and known line by line "
        "(FileEffect.diff), every word of every line added or removed is a word of the "
        "request, and every text it quotes is in an added line; off, a change needs a "
        "check that read a file it changed back, else it ends success at best (a log from "
        "before this field replays with it off)",
    )
    read_back_in_place: bool = Field(
        True,
        description="with read_back_by_effect, a line changed in place (a removed line and "
        "the added line at least 60% alike that keeps it) whose words were replaced is read "
        "back by the words that changed, its other words aside: each is a word of the "
        "request, a word gone that is no number (an identifier the request names) or every "
        "word of both lines locates it, and each word gone comes before each word come in "
        "the request ('rename the function shout to yell' proves def shout(…) → def "
        "yell(…)); off, every word of every changed line must be a word of the request (a "
        "log from before this field replays with it off)",
    )
    corroborate_keeps_answer: bool = Field(
        True,
        description="the attempt that follows an ask for a second derivation (corroborate) "
        "and passes but does not answer the request — a question's answer that states no "
        "asked-for value, by the Meta-Validator's own rule — derives nothing: the subtask "
        "ends on the answer asked about, as when that attempt fails; off, it is given on "
        "and the task's request check fails it (a log from before this field replays with "
        "it off)",
    )
    direct_kinds: list[Literal["question", "change", "creation"]] = Field(
        ["question", "change", "creation"],
        description="request kinds whose first plan is the request itself, one subtask, with "
        "no Planner model call (a remembered plan of the same request still comes first; a "
        "request read without a valid kind is always planned by the model)",
    )
    max_parallel: int = Field(8, ge=1, le=256, description="subtasks of one group run at once")
    max_turns: int = Field(8, ge=1, le=1000, description="tool-calling turns per Executor attempt")
    refuse_repeated_calls: bool = Field(
        True,
        description="a tool call identical to one the Executor's conversation already made "
        "(same tool, same arguments; a retry continues the conversation) that gave a result, "
        "with no change to the workspace since, is not run again (refusal repeated_call: its "
        "result is above); a call made so the third time, in a row or not, or two such "
        "refusals in a row, end the attempt as a doom loop; off, only the same call three "
        "times in a row does (a log from before this field replays with it off)",
    )
    offer_load_data_on_spill: bool = Field(
        True,
        description="the Executor offers load_data only once a call of its conversation "
        "gave a result too large for the context (ToolCall.spill_ref: saved, and named to "
        "the model with a load_data pointer), from the next model call on; a retry "
        "continues the conversation, a second derivation starts one without; off, "
        "load_data is always offered (a log from before this field replays with it off)",
    )
    refuse_lost_lines: bool = Field(
        True,
        description="a change that would lose lines of an existing file (FileEffect.diff: a "
        "line removed that no added line keeps, moved or changed in place, holding a word "
        "the request does not) is refused the first time for that file in a subtask, "
        "unasked, and the model told which lines and how to keep them (refusal lost_lines); "
        "made again, the operator is asked; the request's own consent never covers it (a "
        "log from before this field replays with it off)",
    )
    change_needs_effect: bool = Field(
        True,
        description="a subtask that is the request itself, a sure change or creation, passes "
        "only once one of its calls changed the workspace (or "
        "wrote a file that already held the text): an attempt whose change was refused or "
        "never made is retried, told so, whatever its answer says (a log from before this "
        "field replays with it off)",
    )
    code_count_check: bool = Field(
        True,
        description="a plain count request (how many lines / words / files … of the one "
        "workspace path it names, no other condition) whose reading has no usable count "
        "check gets the count_matches code writes, as one more verifiable criterion, and is "
        "not asked again for it (a log from before this field replays with it off)",
    )
    consent_reads_back: bool = Field(
        True,
        description="retired: the request consented to a modified file only when the change "
        "read back as the request word by word; the request's consent now reads the reading "
        "and covers deletions only (a modification of a target is reversible and never asks), "
        "so this setting no longer changes anything (kept so older Configs load)",
    )
    unanswered_keeps_reading: bool = Field(
        True,
        description="a question the Perceiver asked that no one answered (at its timeout, or "
        "with no one to ask) leaves the reading as the model first gave it: the question's "
        "default is the model's guess, never put into the request's reading as the user's "
        "word (a log from before this field replays with it off: read again with the default)",
    )
    keep_request_targets: bool = Field(
        True,
        description="a path the request names, when it surely asks for a change or a "
        "creation, is not made a blocked target (MUST NOT) by the GGS for a failure no one "
        "denied: what failed on it was the way it was tried, not the path; a denied call's "
        "target stays blocked (a log from before this field replays with it off)",
    )
    repair_lost_lines: bool = Field(
        True,
        description="a change refused for the lines it would lose (refuse_lost_lines) is "
        "followed, in the same turn, by a shell command of the Executor's own that makes "
        "only what the request accounts for of it, keeping those lines: a line changed in "
        "place that reads back as the request, new lines of only the request's words "
        "appended; it goes through Law 1 and the request's consent as any call; a change with "
        "no such part is followed by a read_file of the file when the conversation has not "
        "read it (a log from before this field replays with it off)",
    )
    rewrite_created_files: bool = Field(
        True,
        description="a file a subtask itself created may be rewritten whole: its lines are "
        "not held to refuse_lost_lines, which guards the workspace's own lines (a log from "
        "before this field replays with it off)",
    )
    read_back_reads_named: bool = Field(
        True,
        description="a change is read back by its effects only when every workspace path "
        'the request names was read, listed or written by a call that worked ("make a copy '
        "of README.md named README.bak\" is not done by writing the request's words to "
        "README.bak, README.md unread); a log from before this field replays with it off",
    )
    code_table_check: bool = Field(
        True,
        description="a question about the one CSV (or TSV) file it names gets a table_value "
        "check, written by code: code reads the question against the file's header and "
        "computes the total, mean, highest or lowest of a named column, a count of the rows "
        "meeting a condition, or which value of a named column has the largest or smallest "
        "value, and the answer must state it; a question code cannot read so passes it and "
        "proves nothing (a log from before this field replays with it off)",
    )
    code_lookup_check: bool = Field(
        True,
        description="a question about Python code (a constant's value, a class's parent "
        "classes, which file defines a name) gets a code_value check, written by code: "
        "Python's parser looks it up in the file or directory the question names, and the "
        "answer must state it; a question code cannot read so passes it and proves nothing "
        "(a log from before this field replays with it off)",
    )
    proof_by_evaluation: bool = Field(
        True,
        description="a question's answer is proven by code when it states what a shell call "
        "printed that ran the request's own code: python3 -c importing only from Python "
        "files the request names and printing one expression of the request's names and "
        "constants (the call it writes, if it writes one), or python3 FILE for what a "
        "named script prints; asked to compute a value, the model is given that command "
        "when code can write it (a log from before this field replays with it off)",
    )
    reuse_commands: bool = Field(
        True,
        description="the plan reused from an accepted episode of the very same request "
        "carries each step's recorded shell commands (at most 3, workspace-relative paths "
        "only), and the Executor runs them itself before the model's first turn, as logged "
        "shell calls through the sandbox and Law 1: the model answers from what they "
        "printed, every check still applies (a log from before this field replays with it "
        "off)",
    )
    reuse_reading: bool = Field(
        True,
        description="an accepted episode records the task's reading (intent, kind, answer "
        "shape, criteria as checked: Megram.reading), and the very same request (case and "
        "spacing aside) is read again from the newest such episode in memory, with no model "
        "call (TaskSpec.reused names it); a paraphrase is read by the model (a log from "
        "before this field replays with it off)",
    )
    record_backing_commands: bool = Field(
        True,
        description="an episode's step records, of the tool calls that worked, only those "
        "whose result backs the number its answer states, when one does: a call the model "
        "made on the way (wc -l before wc -w, for a word count) is not the approach, and a "
        "reuse of the plan would run it again and show the model its number first (a log "
        "from before this field replays with it off)",
    )
    reuse_only_accepted: bool = Field(
        True,
        description="the plan of a remembered episode of the very same request is replayed "
        "only when that episode ended accept (proven by code), never success (a model's "
        "word) (a log from before this field replays with it off)",
    )
    reuse_asks_request: bool = Field(
        True,
        description="the plan reused from an accepted episode of the very same request, "
        "when that episode's plan was one step and the request is read as a question, has "
        "the request itself as its instruction (its recorded tools and proven commands "
        "kept), as round 0's plan of a question has: a step a model wrote ('Run the command "
        "wc -l ...') once had the model describe what the command did instead of answering "
        "(a log from before this field replays with it off)",
    )
    count_reads_answer: bool = Field(
        True,
        description="a count_matches check reads the count an answer states as a person "
        "would: not a number inside a code span or a quoted command or output, an exit "
        "code, a command option's (-maxdepth 0, -n 5) or a list marker, and not one the "
        "request states while others remain; several different numbers left state no "
        "count and fail the check, as none does (off: the first number standing alone, "
        "which read 'exit code 0' as a count; a log from before this field replays with it "
        "off)",
    )
    unit_count_phrase: bool = Field(
        True,
        description="a request that names its unit before 'count' ('what is the line count "
        "of src/app.py?', 'the word count of README.md') counts that unit, as 'how many "
        "lines' does: code writes its count check (code_count_check), a plan's wc -l of "
        "the file serves it, and a count_matches of that unit proves its answer, no second "
        "derivation asked (a log from before this field replays with it off)",
    )
    task_timeout_s: float = Field(300.0, gt=0, description="deadline of a task")
    role_timeout_s: float = Field(
        120.0, ge=0.1, description="longest one role step may take (at least 0.1 s)"
    )
    max_output_tokens: int | None = Field(
        1024,
        ge=1,
        description="tokens one model answer may write (litellm's max_tokens; None: the "
        "provider's limit); bounds a small model that runs on",
    )
    confirmation_timeout_s: float = Field(60.0, gt=0, description="Law 1 wait before denial")
    request_consent: bool = Field(
        True,
        description="a Law 1 confirmation whose every effect that asks is a deletion the "
        "request's reading names (a delete target) and the request spells out is approved by "
        "the request itself, without asking the operator",
    )
    question_timeout_s: float = Field(
        300.0, gt=0, description="how long a task waits for the user's answer to a question"
    )
    question_on_timeout: Literal["default", "abandon"] = Field(
        "default",
        description="no answer in time: go on with the question's default (none given: the "
        "role decides without it), or abandon the task",
    )
    llm_confidence_threshold: float = Field(0.7, ge=0, le=1)
    dream_interval_s: float = Field(300.0, gt=0)
    max_model_calls: int | None = Field(
        None, ge=1, description="model calls one task may make (None: no limit)"
    )
    max_tokens: int | None = Field(
        None, ge=1, description="tokens (prompt + completion) one task may use (None: no limit)"
    )
    ggs: GGSConfig = GGSConfig()
    output_caps: OutputCapsConfig = OutputCapsConfig()
    memory: MemoryConfig = MemoryConfig()
    dreamer: DreamerConfig = DreamerConfig()
    tools: ToolsConfig = ToolsConfig()
    supervisor: SupervisorConfig = SupervisorConfig()
    audit: AuditConfig = AuditConfig()
    judge: JudgeConfig = JudgeConfig()
    queen: QueenConfig = QueenConfig()
    telemetry: TelemetryConfig = TelemetryConfig()

    def task_deadline_s(self, requested: float | None) -> float:
        """A task's deadline in seconds: the one asked for, else ``task_timeout_s``.

        The one place the default deadline is computed (Queen, GGS and System use it).
        """
        return requested if requested is not None else self.task_timeout_s

    def task_budget(
        self, max_model_calls: int | None, max_tokens: int | None
    ) -> tuple[int | None, int | None]:
        """A task's ``(max_model_calls, max_tokens)``: the ones asked for, else Config's."""
        calls = max_model_calls if max_model_calls is not None else self.max_model_calls
        tokens = max_tokens if max_tokens is not None else self.max_tokens
        for name, value in (("max_model_calls", calls), ("max_tokens", tokens)):
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive whole number, not {value}")
        return calls, tokens
