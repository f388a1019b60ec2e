"""The sections of Settings (`[done]`, `[limits]`, `[context]`, ...), one pydantic model each.

Apart from config.py so each section reads on its own and the loader stays under the size limit;
config.py re-exports them, so `from cerveau_tui.config import DoneConfig` keeps working.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CriterionConfig(_Model):
    name: str
    command: str = ""
    exit_code: int = 0
    timeout_s: float = 300.0


class DoneConfig(_Model):
    enabled: bool = True
    criteria: list[CriterionConfig] = Field(default_factory=list)
    protected: list[str] = Field(default_factory=list)
    max_stall_cycles: int = Field(2, ge=1)
    precheck: bool = True
    autofix: bool = True
    # Off: stall cycles reaching max_stall_cycles end the turn "incomplete" instead of climbing
    # the escalation ladder (done/gate.py explains how the two fit).
    escalation: bool = True
    # The done check when no criteria are written: "" undecided (the TUI asks once per workspace;
    # headless runs without one), "auto" the detected stack's check, "off" none, else a command.
    gate: str = ""
    # Once the gate passes, one bounded round in which the model tidies its own diff, then the
    # gate again; a red result rolls the polish back and the green result stands.
    polish: bool = True
    polish_max_iterations: int = Field(4, ge=1)


class LimitsConfig(_Model):
    max_iterations: int = Field(0, ge=0)  # 0: the model family's default
    max_identical_calls: int = Field(3, ge=2)
    max_turn_tokens: int = Field(0, ge=0)  # 0: no ceiling
    progress_stall_limit: int = Field(8, ge=2)
    breaker_threshold: int = Field(3, ge=2)
    on_repeat: Literal["stop", "ask"] = "stop"


class ServiceConfig(_Model):
    name: str
    url: str


class RuleConfig(_Model):
    pattern: str
    action: Literal["ask", "deny", "allow"] = "ask"
    on: Literal["write", "read", "any"] = "write"


class ExpertConfig(_Model):
    server_url: str
    model: str = ""
    max_tokens: int = 2048


class ContextConfig(_Model):
    """How the window is kept over a long session (context/window.py explains the marks)."""

    # Compact when a request would pass high_water of the budget (n_ctx minus the reply cap),
    # down to low_water; between compactions the prompt only grows at its end.
    high_water: float = Field(0.85, gt=0.2, le=1.0)
    low_water: float = Field(0.5, gt=0.05, lt=1.0)
    summarise: bool = True  # a model-written handoff at compaction; off: the resume brief alone
    summary_max_tokens: int = Field(1024, ge=64)
    reminders: bool = True  # what changed mid-session, appended before the next model call
    budget_notice: bool = True  # tell the model at 70% and 90% of the window
    instructions_max_bytes: int = Field(
        8192, ge=256, le=1_048_576
    )  # per AGENTS.md, truncation declared
    skills: bool = True

    @model_validator(mode="after")
    def _marks_in_order(self) -> ContextConfig:
        if self.low_water >= self.high_water:
            raise ValueError(
                f"low_water ({self.low_water}) must be below high_water ({self.high_water})"
            )
        return self


class DelegationConfig(_Model):
    """The seed's DelegateLimits: none is optional (delegation without a ceiling multiplies cost)."""

    max_iterations: int = Field(8, ge=1)
    max_result_bytes: int = Field(4000, ge=200)
    max_tokens: int = Field(0, ge=0)  # the child's token ceiling; 0: what the parent has left
