"""The pydantic Config: every tunable of a System, with the paper's defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Config", "GGSConfig"]


class GGSConfig(BaseModel):
    """The Goal Gradient Solver's hyperparameters (paper, Appendix B)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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


class Config(BaseModel):
    """Everything a System can be told. Unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="litellm model string or scripted:<path>")
    brain_model: str | None = Field(None, description="model for the brain tier")
    tool_model: str | None = Field(None, description="model for the tool tier")
    durability: Literal["none", "batch", "always"] = "batch"
    max_retries: int = Field(2, ge=0, description="fast-loop retries per subtask")
    max_parallel: int = Field(8, ge=1, description="subtasks of one group run at once")
    max_turns: int = Field(8, ge=1, description="tool-calling turns per Executor attempt")
    task_timeout_s: float = Field(300.0, gt=0, description="deadline of a task")
    role_timeout_s: float = Field(120.0, gt=0, description="longest one role step may take")
    confirmation_timeout_s: float = Field(60.0, gt=0, description="Law 1 wait before denial")
    llm_confidence_threshold: float = Field(0.7, ge=0, le=1)
    dream_interval_s: float = Field(300.0, gt=0)
    ggs: GGSConfig = GGSConfig()
