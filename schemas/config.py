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
    tests_timeout_s: float = Field(
        120.0, gt=0, description="longest one run of the workspace's tests (run_tests) may take"
    )
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
    (``"5"`` or ``True`` is not a number) and must be finite and within their bounds.

    Only settings a user would choose: how artoo decides (what proves an answer, what Law
    1 asks) is the policy version recorded in each task (``TaskRequest.policy``), never a
    field here. The switches of policy 0 (``corroborate``, ``read_back_by_effect``,
    ``refuse_lost_lines``, ``reuse_reading`` …) are retired: they are no fields, and a
    logged Config holding them is upcast by replay, which drops them
    (``artoo.replay._read.RETIRED_FIELDS``, ``upcast_config_v0_v1``)."""

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
    max_parallel: int = Field(8, ge=1, le=256, description="subtasks of one group run at once")
    max_turns: int = Field(8, ge=1, le=1000, description="tool-calling turns per Executor attempt")
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
        description="a Law 1 confirmation whose every irreversible effect deletes a path the "
        "request's reading reads as one to delete and its text names is approved by the "
        "request itself, without asking the operator (off: the operator decides every "
        "deletion)",
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
