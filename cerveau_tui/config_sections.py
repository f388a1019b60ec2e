"""The sections of Settings (`[done]`, `[limits]`, `[context]`, ...), one pydantic model each.

Apart from config.py so each section reads on its own and the loader stays under the size limit;
config.py re-exports them, so `from cerveau_tui.config import DoneConfig` keeps working.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .config_tighten import DENY_LIST, GATE, NEUTRAL, SMALLER, Bound, Flag, Ordered

# Each field says which way is tighter (config_tighten.py): a repository's config may move it that
# way without the person's trust. A field with no rule is held back whenever a workspace changes
# it, so a new setting is safe by default; give it a rule only when a lower value is provably
# safer. The done check's own switches are NEUTRAL or tighter when off: `gate = "off"` runs
# nothing, and what the check measures is the work, not the machine's safety.

#: `max_iterations = 0` is the model family's default, decided at run time (loop/engine.py's
#: FAMILY_MAX_ITERATIONS and DEFAULT_MAX_ITERATIONS): somewhere in this range.
FAMILY_ITERATIONS = (16, 50)
#: 0 means "no ceiling" (max_turn_tokens) or "all the parent has left" (the child's ceiling).
UNBOUNDED_AT_ZERO = Bound(unset=0, low=math.inf, high=math.inf)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CriterionConfig(_Model):
    name: str
    command: str = ""
    exit_code: int = 0
    timeout_s: float = 300.0


class DoneConfig(_Model):
    enabled: Annotated[bool, NEUTRAL] = True
    # Commands: held back (no rule), whatever they say.
    criteria: list[CriterionConfig] = Field(default_factory=list)
    protected: Annotated[list[str], DENY_LIST] = Field(default_factory=list)
    max_stall_cycles: Annotated[int, SMALLER] = Field(2, ge=1)
    precheck: Annotated[bool, Flag(tight=False)] = True
    autofix: Annotated[bool, Flag(tight=False)] = True  # runs the stack's formatter
    # Off: stall cycles reaching max_stall_cycles end the turn "incomplete" instead of climbing
    # the escalation ladder (done/gate.py explains how the two fit).
    escalation: Annotated[bool, Flag(tight=False)] = True
    # The done check when no criteria are written: "" undecided (the TUI asks once per workspace;
    # headless runs without one), "auto" the detected stack's check, "off" none, else a command.
    gate: Annotated[str, GATE] = ""
    # Once the gate passes, one bounded round in which the model tidies its own diff, then the
    # gate again; a red result rolls the polish back and the green result stands.
    polish: Annotated[bool, Flag(tight=False)] = True
    polish_max_iterations: Annotated[int, SMALLER] = Field(4, ge=1)


class LimitsConfig(_Model):
    # 0: the model family's default
    max_iterations: Annotated[int, Bound(0, *FAMILY_ITERATIONS)] = Field(0, ge=0)
    # The repeat thresholds: a larger one lets the model go round in circles longer.
    max_identical_calls: Annotated[int, SMALLER] = Field(3, ge=2)
    max_turn_tokens: Annotated[int, UNBOUNDED_AT_ZERO] = Field(0, ge=0)  # 0: no ceiling
    progress_stall_limit: Annotated[int, SMALLER] = Field(8, ge=2)
    breaker_threshold: Annotated[int, SMALLER] = Field(3, ge=2)
    on_repeat: Annotated[Literal["stop", "ask"], Ordered.chain("stop", "ask")] = "stop"


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
    # NEUTRAL: when the window is compacted bounds nothing the model can do; the reply cap and
    # n_ctx are the bounds, and they are held to SMALLER.
    high_water: Annotated[float, NEUTRAL] = Field(0.85, gt=0.2, le=1.0)
    low_water: Annotated[float, NEUTRAL] = Field(0.5, gt=0.05, lt=1.0)
    # a model-written handoff at compaction; off: the resume brief alone
    summarise: Annotated[bool, NEUTRAL] = True
    summary_max_tokens: Annotated[int, SMALLER] = Field(1024, ge=64)
    # what changed mid-session, appended before the next model call
    reminders: Annotated[bool, NEUTRAL] = True
    budget_notice: Annotated[bool, NEUTRAL] = True  # tell the model at 70% and 90% of the window
    # per AGENTS.md, truncation declared: the repository's own text in every prompt
    instructions_max_bytes: Annotated[int, SMALLER] = Field(8192, ge=256, le=1_048_576)
    skills: Annotated[bool, Flag(tight=False)] = True

    @model_validator(mode="after")
    def _marks_in_order(self) -> ContextConfig:
        if self.low_water >= self.high_water:
            raise ValueError(
                f"low_water ({self.low_water}) must be below high_water ({self.high_water})"
            )
        return self


class RewindConfig(_Model):
    """How long restore points are kept (session/rewind/gc.py). No rule: a workspace's config
    cannot shorten them (that would drop the person's own way back) without the person's trust."""

    max_age_days: float = Field(30.0, gt=0)
    max_mb: float = Field(2048.0, ge=16)


class MemoryConfig(_Model):
    """`[memory] turn_close` (and CERVEAU_MEMORY__TURN_CLOSE): the same switch as the top-level
    `turn_close`, read at load (Settings moves it there; the palette switches that one)."""

    turn_close: Annotated[bool | None, Flag(tight=False)] = None


class DelegationConfig(_Model):
    """The seed's DelegateLimits: none is optional (delegation without a ceiling multiplies cost)."""

    max_iterations: Annotated[int, SMALLER] = Field(8, ge=1)
    max_result_bytes: Annotated[int, SMALLER] = Field(4000, ge=200)
    # the child's token ceiling; 0: what the parent has left
    max_tokens: Annotated[int, UNBOUNDED_AT_ZERO] = Field(0, ge=0)


#: The points of a turn a person's hook attaches to (person_hooks/ says what each may do).
HookEvent = Literal[
    "session_start",
    "user_prompt",
    "pre_tool",
    "post_tool",
    "approval_waiting",
    "pre_compact",
    "turn_end",
]
#: The events about one tool call: only these take a `match`.
TOOL_EVENTS = frozenset({"pre_tool", "post_tool", "approval_waiting"})


class HookConfig(_Model):
    """One command a person attaches to an event. Run as argv, never through a shell: a list as
    written, a string split as a shell would split words (shlex) but with nothing expanded. The
    event is JSON on its stdin; nothing of the model's reaches its command line."""

    command: str | list[str]
    # Tool events: tool-name globs separated by `|`, each optionally `name(path glob)` to run only
    # for calls naming such a path ("write_file(*.py)|edit_file(*.py)"); "" is every call.
    match: str = ""
    timeout_s: float = Field(30.0, gt=0, le=3600)
    # "sandbox": the boundary the model's commands get; "host": the person's own rights.
    where: Literal["sandbox", "host"] = "sandbox"
    name: str = ""  # what hook_ran and doctor call it; default: the program's name
    # A host hook's extra variables, by name, from the person's environment (a notifier's
    # DBUS_SESSION_BUS_ADDRESS, a token): this hook's only, never the model's commands'.
    env: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _argv_is_runnable(self) -> HookConfig:
        import shlex

        try:
            argv = shlex.split(self.command) if isinstance(self.command, str) else self.command
        except ValueError as exc:
            raise ValueError(f"command {self.command!r}: {exc}") from None
        if not argv or not argv[0].strip():
            raise ValueError("command is empty")
        if self.env and self.where != "host":
            raise ValueError('env passes your variables to a where = "host" hook only')
        return self


class HooksConfig(_Model):
    """`[[hooks.pre_tool]]` and the others: the person's commands at the turn's points. No rule:
    a workspace config's hooks are held back until the person trusts that file (they run
    commands, as a `[done] gate` does)."""

    session_start: list[HookConfig] = Field(default_factory=list)
    user_prompt: list[HookConfig] = Field(default_factory=list)
    pre_tool: list[HookConfig] = Field(default_factory=list)
    post_tool: list[HookConfig] = Field(default_factory=list)
    approval_waiting: list[HookConfig] = Field(default_factory=list)
    pre_compact: list[HookConfig] = Field(default_factory=list)
    turn_end: list[HookConfig] = Field(default_factory=list)
    # How many times turn_end hooks may send the model back to work in one turn (exit 2), as the
    # done ladder is bounded: a hook that always says "keep going" must not run the turn forever.
    max_continuations: Annotated[int, SMALLER] = Field(3, ge=0, le=20)

    @model_validator(mode="after")
    def _match_on_tool_events_only(self) -> HooksConfig:
        for event in get_args(HookEvent):
            if event in TOOL_EVENTS:
                continue
            for h in getattr(self, event):
                if h.match:
                    raise ValueError(f"{event}: `match` filters tool calls; {event} has none")
        return self


#: An MCP server's name: what the model writes in `mcp_call` and the scopes name.
MCP_SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"


class McpServerConfig(_Model):
    """One MCP server, `[mcp.servers.NAME]` (cerveau_tui/mcp/): a program speaking MCP on its
    stdin and stdout, run inside the sandbox (`command`, `args`, `env`), or a remote server
    (`url`, streamable HTTP) whose every call is a network crossing the person approves. No rule:
    each names a program the harness runs or a place arguments are sent, so a workspace config's
    server is held back until the person trusts that file."""

    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    #: Hosts the (stdio) server may reach through the sandbox's proxy; none: no network at all.
    network: list[str] = Field(default_factory=list)
    #: The person's word that these tools only read (true: every tool of the server); a call to
    #: one runs without a dialog. The server's own readOnlyHint is never taken for it.
    read_only: bool | list[str] = False
    timeout_s: float = Field(60.0, gt=0)  # one call; a server that hangs is stopped past it
    start_timeout_s: float = Field(30.0, gt=0)  # start, initialize and list its tools
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("an MCP server has either `command` (stdio) or `url` (HTTP)")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError("`url` must be an http:// or https:// URL")
        return self

    def marks_read_only(self, tool: str) -> bool:
        return self.read_only is True or (
            isinstance(self.read_only, list) and tool in self.read_only
        )


class McpConfig(_Model):
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    #: The prefix's index of MCP tools, at most this many tokens (about 4 characters each).
    index_tokens: int = Field(400, ge=50)

    @model_validator(mode="after")
    def _names(self) -> McpConfig:
        import re

        bad = [n for n in self.servers if not re.match(MCP_SERVER_NAME, n)]
        if bad:
            raise ValueError(
                f"MCP server name {bad[0]!r}: letters, digits, '-' and '_', at most 32"
            )
        return self
