"""Settings: defaults < user config < workspace `.cerveau/config.toml` < `CERVEAU_*` < flags.

Every layer is validated by one pydantic model, and a bad value names the file (or variable) and
the field it came from, so a person can fix it without reading a traceback.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
import tomli_w
from pydantic import Field, ValidationError, model_validator

from . import config_env, state_file, state_home, trust
from .config_sections import (
    ContextConfig,
    CriterionConfig,
    DelegationConfig,
    DoneConfig,
    ExpertConfig,
    HookConfig,
    HooksConfig,
    LimitsConfig,
    McpConfig,
    McpServerConfig,
    MemoryConfig,
    RewindConfig,
    RuleConfig,
    ServiceConfig,
    _Model,
)
from .config_tighten import (
    ALLOW_LIST,
    DENY_LIST,
    NEUTRAL,
    RULES,
    SMALLER,
    Bound,
    Flag,
    Held,
    Ordered,
    plain,
    review,
    withhold,
)
from .deny_read import DEFAULT_DENY_READ

__all__ = [
    "ActionMode",
    "ApprovalPolicy",
    "ConfigError",
    "ContextConfig",
    "CriterionConfig",
    "DelegationConfig",
    "RewindConfig",
    "DoneConfig",
    "ExpertConfig",
    "HookConfig",
    "HooksConfig",
    "LimitsConfig",
    "McpConfig",
    "McpServerConfig",
    "RuleConfig",
    "SandboxMode",
    "ServiceConfig",
    "Settings",
    "load_settings",
    "save_user_setting",
]

SandboxMode = Literal["read-only", "workspace-write", "full-access"]
ApprovalPolicy = Literal["untrusted", "on-failure", "on-request", "never"]
ActionMode = Literal["auto", "native", "constrained"]


class ConfigError(Exception):
    pass


#: Sandbox modes and approval policies by strictness (policy/policy.py): `never` denies every
#: crossing without asking, `untrusted` asks before anything but known-safe reads, `on-request`
#: asks for crossings, `on-failure` runs them sandboxed first. `never` and `untrusted` are not
#: comparable (each lets through something the other stops), so neither may replace the other.
SANDBOX_ORDER = Ordered.chain("read-only", "workspace-write", "full-access")
APPROVAL_ORDER = Ordered(
    {
        "never": frozenset({"never"}),
        "untrusted": frozenset({"untrusted"}),
        "on-request": frozenset({"never", "untrusted", "on-request"}),
        "on-failure": frozenset({"never", "untrusted", "on-request", "on-failure"}),
    }
)
#: No `max_tokens`: derived from n_ctx, between context/budget.py's REPLY_MIN and REPLY_MAX.
DERIVED_REPLY_CAP = Bound(None, 512, 4096)


class Settings(_Model):
    """Every field's Annotated rule says which way a workspace config may move it without the
    person's trust (config_tighten.py). No rule: held back whenever the workspace changes it;
    that is the case for whatever names a program the harness runs on the host or a place the
    conversation is sent (server_url, model_path, model_name, cache_dir, services, expert,
    keymap, sandbox_backend), with no list of them to keep up to date."""

    workspace: Path = Field(default_factory=Path.cwd)
    server_url: str | None = None
    model_path: str | None = None  # a GGUF for the managed server; default: SmolLM2-135M
    model_name: str = ""  # the "model" field sent to the server
    # A header naming the conversation (a digest of the session id) so a router keeps it on the
    # replica holding its cache; "" sends none. No rule: it is sent to the server.
    session_header: str = Field("x-session-id", pattern=r"^([!#$%&'*+.^_`|~0-9A-Za-z-]+)?$")
    n_ctx: Annotated[int, SMALLER] = Field(8192, ge=512)
    # The per-request token cap, always sent; None (not set): derived from n_ctx (context/budget.py).
    max_tokens: Annotated[int | None, DERIVED_REPLY_CAP] = Field(None, ge=16)
    temperature: Annotated[float, NEUTRAL] = Field(0.2, ge=0.0, le=2.0)
    action_mode: Annotated[ActionMode, NEUTRAL] = "auto"  # how tool calls are parsed
    # The no-progress window: a reply ends once the server said nothing new for this long
    # (provider/liveness.py); a reply that progresses is bounded by the caps, not by a clock.
    request_timeout_s: Annotated[float, SMALLER] = Field(120.0, gt=0)
    sandbox: Annotated[SandboxMode, SANDBOX_ORDER] = "workspace-write"
    approval: Annotated[ApprovalPolicy, APPROVAL_ORDER] = "on-request"
    # A prompt nobody answers is denied when it times out: sooner is tighter.
    approval_timeout_s: Annotated[float, SMALLER] = Field(120.0, gt=0)
    network: Annotated[bool, Flag(tight=False)] = False
    rules: Annotated[list[RuleConfig], RULES] = Field(default_factory=list)
    env_allow: Annotated[list[str], ALLOW_LIST] = Field(default_factory=list)
    # Secrets outside the workspace: masked for commands, refused to the file tools (see above).
    deny_read: Annotated[list[str], DENY_LIST] = Field(
        default_factory=lambda: list(DEFAULT_DENY_READ)
    )
    # Folders commands may also read, read-only (sandbox/view.py): `["~/.m2"]`; widening, so held.
    sandbox_read: Annotated[list[str], ALLOW_LIST] = Field(default_factory=list)
    # The sandbox's private /tmp and /dev/shm are RAM; uncapped, each could take half the machine.
    sandbox_tmp_mb: Annotated[int, SMALLER] = Field(512, ge=16)
    # Processes (and threads) one command may have at once, where the kernel lets us cap it.
    sandbox_max_procs: Annotated[int, SMALLER] = Field(512, ge=16)
    # Which enforcement backend to use: "auto" takes the first that passes its live self-check.
    # Naming a weaker one is for the person (and the probe suite), never for a workspace config.
    sandbox_backend: Literal["auto", "bubblewrap", "landlock", "none"] = "auto"
    bash_timeout_s: Annotated[float, SMALLER] = Field(120.0, gt=0)
    output_cap: Annotated[int, SMALLER] = Field(16_000, ge=1_000)
    # Hiding the model's reasoning hides from the person what it is about to do.
    show_reasoning: Annotated[bool, Flag(tight=True)] = True
    theme: Annotated[str, NEUTRAL] = "cerveau-dark"  # a name among the person's themes
    # The bell and a desktop notification (OSC 9/777) when a dialog waits or a long turn ends.
    notify: Annotated[bool, NEUTRAL] = True
    # No rule: a keymap could put "approve" on the key the person presses to deny.
    keymap: dict[str, str] = Field(default_factory=dict)
    cache_dir: Path | None = None
    services: list[ServiceConfig] = Field(default_factory=list)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    done: DoneConfig = Field(default_factory=DoneConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    rewind: RewindConfig = Field(default_factory=RewindConfig)
    # `[mcp.servers.NAME]` (cerveau_tui/mcp/). No rule: a workspace's server waits for trust.
    mcp: McpConfig = Field(default_factory=McpConfig)
    expert: ExpertConfig | None = None
    # The person's commands at the turn's points (person_hooks/); a workspace's are held back.
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    discuss: Annotated[bool, Flag(tight=True)] = False  # read and plan only
    # distil notes after each turn that wrote files (one extra model call, kept for next sessions)
    turn_close: Annotated[bool, Flag(tight=False)] = False
    memory: MemoryConfig = Field(default_factory=MemoryConfig)  # `[memory] turn_close`, moved up
    # Where the workspace's state lives (state_home.py): "workspace" (its .cerveau, the default),
    # "user" (the user state folder), "auto" (there when the workspace is read-only), a folder.
    # The person's alone: load_settings drops it from a workspace config (it would choose where
    # the next config is read from), and it is chosen before that config is read.
    state_dir: str | None = None
    # offer the `explore` tool (a read-only child turn); costs prompt tokens
    delegate: Annotated[bool, Flag(tight=False)] = False

    # Where each layer came from, for `cerveau doctor`.
    sources: list[str] = Field(default_factory=list, exclude=True)
    # What the workspace's config asked for that would lower protection, and was NOT applied
    # because the person has not trusted this exact file (see _review_workspace_layer): said as
    # sentences, and as {key, asked, in_force} for the event stream.
    workspace_review: list[str] = Field(default_factory=list, exclude=True)
    workspace_held_back: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    # ... and what it lowered that WAS applied (the person trusted the file): said at start.
    workspace_lowered: list[str] = Field(default_factory=list, exclude=True)
    workspace_config_digest: str = Field("", exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)  # said at start (stray env)

    @model_validator(mode="before")
    @classmethod
    def _memory_alias(cls, data: Any) -> Any:
        return memory_alias(data)

    @property
    def workspace_config_path(self) -> Path:
        return state_home.state_path(self.workspace, "config.toml")

    def resolved_cache_dir(self) -> Path:
        return (
            Path(self.cache_dir) if self.cache_dir else Path(platformdirs.user_cache_dir("cerveau"))
        )


def memory_alias(data: Any) -> Any:
    """`[memory] turn_close` is the top-level `turn_close`: moved there, then cleared, so the
    palette's switch of `turn_close` (an assignment, validated again) is not undone."""
    memory = data.get("memory") if isinstance(data, dict) else None
    if isinstance(memory, dict) and memory.get("turn_close") is not None:
        data = {**data, "turn_close": memory["turn_close"], "memory": {**memory}}
        data["memory"]["turn_close"] = None
    return data


def user_config_path() -> Path:
    override = os.environ.get("CERVEAU_CONFIG")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir("cerveau")) / "config.toml"


#: A config bigger than this is not a config (and must not fill memory).
CONFIG_MAX_BYTES = 1_000_000


def _read_toml(path: Path) -> dict[str, Any]:
    """The person's own config (links followed: a dotfiles checkout). Opened without blocking and
    refused unless a regular file: a FIFO there hung start-up, a directory was a traceback."""
    try:
        body = state_file.read_regular(path, CONFIG_MAX_BYTES)
    except state_file.NotARegularFile as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    try:
        return tomllib.loads(body.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _explain(exc: ValidationError, source: str) -> str:
    lines = [f"invalid settings from {source}:"]
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        lines.append(f"  {loc}: {err['msg']} (got {err.get('input')!r})")
    return "\n".join(lines)


# --- the workspace layer is not the person's word ------------------------------------------------
#
# `.cerveau/config.toml` sits in a folder the model (and whoever wrote the repository the person
# cloned) can write. Found by probing: a command created one saying `sandbox = "full-access"` and
# the person's next plain run executed commands on the host, with nothing said; later, a cloned
# one raised the timeouts and loop limits and set a `[done] gate` command the first precheck ran.
# So a workspace layer may only tighten: each field's rule (config_tighten.py) decides whether
# the value it asks for is provably no looser than the one it would replace, and whatever is not
# is applied only once the person has trusted that exact file (direnv's `allow`: the yes is kept
# outside the workspace, keyed by the file's content hash, so any later edit needs a new yes).


def trust_store_path(user_config: Path | None = None) -> Path:
    """Beside the person's own config: outside every workspace, masked inside the sandbox."""
    return trust.store_beside(user_config or user_config_path())


def trust_workspace_config(workspace: Path, digest: str, user_config: Path | None = None) -> Path:
    """Record the person's yes for this exact workspace config (its content hash)."""
    return trust.record(Path(os.path.realpath(workspace)), digest, trust_store_path(user_config))


def _read_workspace_config(path: Path) -> tuple[dict[str, Any], bytes] | None:
    """The workspace config's table and exact bytes, or None when there is none. Opened without
    following a final symlink (a link planted there points at a file the model controls) and
    without blocking: whoever wrote the repository chose what this path is, and a FIFO here hung
    start-up forever."""
    try:
        body = state_file.read_regular(path, CONFIG_MAX_BYTES, follow_links=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except state_file.NotARegularFile as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    try:
        return tomllib.loads(body.decode("utf-8")), body
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def load_settings(
    workspace: Path | str | None = None,
    flags: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    user_config: Path | None = None,
    *,
    trust_workspace: bool = False,
) -> Settings:
    """`trust_workspace`: apply a workspace config that lowers protection even though the person
    has not trusted that file (the headless `--trust-workspace-config`)."""
    ws = Path(os.path.realpath(workspace or Path.cwd()))
    env = dict(os.environ if environ is None else environ)
    below: list[tuple[str, dict[str, Any]]] = []
    ucp = user_config or user_config_path()
    if ucp.is_file():
        below.append((str(ucp), _read_toml(ucp)))
    above: list[tuple[str, dict[str, Any]]] = []
    env_layer, env_warnings = config_env.env_layer(env, Settings)
    if env_layer:
        above.append(("environment (CERVEAU_*)", env_layer))
    flag_layer = {k: v for k, v in (flags or {}).items() if v is not None}
    if flag_layer:
        above.append(("command-line flags", flag_layer))

    # Where the state lives first: the workspace config is read from there (state_home.py).
    spec = next((d["state_dir"] for _, d in [*reversed(above), *reversed(below)] if d.get("state_dir") is not None), None)  # fmt: skip
    try:
        state_home.choose(ws, spec if spec is None else str(spec))
    except state_home.StateHomeError as exc:
        raise ConfigError(str(exc)) from None
    wcp = state_home.state_path(ws, "config.toml")
    held: list[Held] = []
    lowered: list[Held] = []
    digest = ""
    layers = list(below)
    found = _read_workspace_config(wcp)
    if found is not None:
        table, raw_bytes = found
        if table.pop("state_dir", None) is not None:
            env_warnings.append(
                f"{wcp}: state_dir is ignored there (only your own config, the environment or "
                f"{state_home.FLAG} choose where the state lives)"
            )
        table = memory_alias(table)  # reviewed as the key it sets: `turn_close`
        digest = trust.digest(raw_bytes)
        trusted = trust_workspace or trust.is_trusted(ws, digest, trust_store_path(user_config))
        table, held, lowered = _review_workspace_layer(ws, below, above, table, str(wcp), trusted)
        layers.append((str(wcp), table))
    layers += above

    settings = _settle(ws, layers)
    settings.sources = [s for s, _ in layers]
    settings.workspace_review = [h.describe() for h in held]
    settings.workspace_held_back = [
        {"key": h.key, "asked": plain(h.asked), "in_force": plain(h.applies)} for h in held
    ]
    settings.workspace_lowered = [
        h.describe().replace("; in force:", "; otherwise:") for h in lowered
    ]
    settings.workspace_config_digest = digest
    settings.warnings = env_warnings
    return settings


def _settle(ws: Path, layers: list[tuple[str, dict[str, Any]]]) -> Settings:
    """The layers merged in order; a bad value names the first layer that made it bad."""
    merged: dict[str, Any] = {}
    for source, data in layers:
        candidate = _merge(merged, data)
        try:
            Settings.model_validate({**candidate, "workspace": ws})
        except ValidationError as exc:
            raise ConfigError(_explain(exc, source)) from exc
        merged = candidate
    return Settings.model_validate({**merged, "workspace": ws})


def _review_workspace_layer(
    ws: Path,
    below: list[tuple[str, dict[str, Any]]],
    above: list[tuple[str, dict[str, Any]]],
    table: dict[str, Any],
    source: str,
    trusted: bool,
) -> tuple[dict[str, Any], list[Held], list[Held]]:
    """(the layer to apply, held back, loosenings applied because trusted). Each field is judged
    on the settings in force with the workspace layer and without it (the layers `above`, the
    environment and the flags, still win over both), so a key the person set on the command line
    is never reported as held back."""
    base = _settle(ws, [*below, *above])
    found = review(base, _settle(ws, [*below, (source, table), *above]))
    if not found or trusted:
        return table, [], found
    kept = withhold(table, found, base)
    # Proved, not assumed: the layer as it will apply loosens nothing. A key withhold could not
    # reach, or fields that only validate together, refuse the file rather than pass through.
    left = review(base, _settle(ws, [*below, (source, kept), *above]))
    if left:
        raise ConfigError(f"{source}: could not hold back " + ", ".join(h.key for h in left))
    return kept, found, []


def save_user_setting(key: str, value: Any, path: Path | None = None) -> Path:
    """Persist one top-level setting (the theme chosen in the palette) in the user config,
    atomically, keeping everything else in the file."""
    target = path or user_config_path()
    data = _read_toml(target) if target.is_file() else {}
    data[key] = value
    Settings.model_validate({**data, "workspace": Path.cwd()})
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".toml.tmp")
    tmp.write_bytes(tomli_w.dumps(data).encode())
    os.replace(tmp, target)
    return target
