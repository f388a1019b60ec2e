"""Settings: defaults < user config < workspace `.cerveau/config.toml` < `CERVEAU_*` < flags.

Every layer is validated by one pydantic model, and a bad value names the file (or variable) and
the field it came from, so a person can fix it without reading a traceback.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
import tomli_w
from pydantic import BaseModel, Field, ValidationError

from . import state_file, trust
from .config_sections import (
    ContextConfig,
    CriterionConfig,
    DelegationConfig,
    DoneConfig,
    ExpertConfig,
    LimitsConfig,
    RuleConfig,
    ServiceConfig,
    _Model,
)
from .deny_read import DEFAULT_DENY_READ

__all__ = [
    "ActionMode",
    "ApprovalPolicy",
    "ConfigError",
    "ContextConfig",
    "CriterionConfig",
    "DelegationConfig",
    "DoneConfig",
    "ExpertConfig",
    "LimitsConfig",
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


class Settings(_Model):
    workspace: Path = Field(default_factory=Path.cwd)
    server_url: str | None = None
    model_path: str | None = None  # a GGUF for the managed server; default: SmolLM2-135M
    model_name: str = ""  # the "model" field sent to the server
    n_ctx: int = Field(8192, ge=512)
    # The per-request token cap, always sent; None (not set): derived from n_ctx (context/budget.py).
    max_tokens: int | None = Field(None, ge=16)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    action_mode: ActionMode = "auto"
    request_timeout_s: float = Field(300.0, gt=0)
    sandbox: SandboxMode = "workspace-write"
    approval: ApprovalPolicy = "on-request"
    approval_timeout_s: float = Field(120.0, gt=0)
    network: bool = False
    rules: list[RuleConfig] = Field(default_factory=list)
    env_allow: list[str] = Field(default_factory=list)
    # Secrets outside the workspace: masked for commands, refused to the file tools (see above).
    deny_read: list[str] = Field(default_factory=lambda: list(DEFAULT_DENY_READ))
    # The sandbox's private /tmp and /dev/shm are RAM; uncapped, each could take half the machine.
    sandbox_tmp_mb: int = Field(512, ge=16)
    # Processes (and threads) one command may have at once, where the kernel lets us cap it.
    sandbox_max_procs: int = Field(512, ge=16)
    # Which enforcement backend to use: "auto" takes the first that passes its live self-check.
    # Naming a weaker one is for the person (and the probe suite), never for a workspace config.
    sandbox_backend: Literal["auto", "bubblewrap", "landlock", "none"] = "auto"
    bash_timeout_s: float = Field(120.0, gt=0)
    output_cap: int = Field(16_000, ge=1_000)
    show_reasoning: bool = True
    theme: str = "cerveau-dark"
    keymap: dict[str, str] = Field(default_factory=dict)
    cache_dir: Path | None = None
    services: list[ServiceConfig] = Field(default_factory=list)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    done: DoneConfig = Field(default_factory=DoneConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    expert: ExpertConfig | None = None
    discuss: bool = False
    turn_close: bool = False  # distil notes after each turn that wrote files (one extra model call)
    delegate: bool = False  # offer the `explore` tool (a read-only child turn); costs prompt tokens

    # Where each layer came from, for `cerveau doctor`.
    sources: list[str] = Field(default_factory=list, exclude=True)
    # What the workspace's config asked for that would lower protection, and was NOT applied
    # because the person has not trusted this exact file (see review_workspace_layer).
    workspace_review: list[str] = Field(default_factory=list, exclude=True)
    # ... and what it lowered that WAS applied (the person trusted the file): said at start.
    workspace_lowered: list[str] = Field(default_factory=list, exclude=True)
    workspace_config_digest: str = Field("", exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)  # said at start (stray env)

    @property
    def workspace_config_path(self) -> Path:
        return self.workspace / ".cerveau" / "config.toml"

    def resolved_cache_dir(self) -> Path:
        return (
            Path(self.cache_dir) if self.cache_dir else Path(platformdirs.user_cache_dir("cerveau"))
        )


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


# CERVEAU_* variables that are not Settings fields (read directly by the stack and the tests);
# without this list, exporting one made every load_settings fail with "extra inputs".
_NOT_SETTINGS = frozenset(
    {"CERVEAU_CONFIG", "CERVEAU_CACHE_DIR_HINT", "CERVEAU_LLAMA_SERVER", "CERVEAU_REQUIRE_E2E"}
)


def _env_layer(environ: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """(layer, warnings): CERVEAU_LIMITS__MAX_ITERATIONS=30, a TOML scalar if it parses. A name that is
    no setting is a warning (a stray one made even `cerveau doctor` exit 2); a bad VALUE, an error."""
    layer: dict[str, Any] = {}
    warnings: list[str] = []
    for key, raw in sorted(environ.items()):
        if not key.startswith("CERVEAU_") or key in _NOT_SETTINGS:
            continue
        parts = key[len("CERVEAU_") :].lower().split("__")
        if not _names_a_setting(parts):
            warnings.append(f"ignored {key}: no such setting")
            continue
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = layer
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return layer, warnings


def _names_a_setting(parts: list[str]) -> bool:
    """Whether `limits.max_iterations`-style parts name a field (below a dict, the validator judges)."""
    model: Any = Settings
    for part in parts:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return True
        if (field := model.model_fields.get(part)) is None:
            return False
        args = [a for a in getattr(field.annotation, "__args__", ()) if isinstance(a, type)]
        model = next((a for a in args if issubclass(a, BaseModel)), field.annotation)
    return True


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
# the person's next plain run executed commands on the host, with nothing said. So a workspace
# layer may always ask for MORE protection, but anything that lowers it is applied only when the
# person has trusted that exact file (direnv's `allow`: the yes is kept outside the workspace,
# keyed by the file's content hash, so any later edit needs a new yes).

_SANDBOX_RANK = {"read-only": 0, "workspace-write": 1, "full-access": 2}
# `never` denies every crossing and `untrusted` asks for nearly everything: both protect more
# than `on-request`, which protects more than `on-failure` (it runs first, asks after).
_APPROVAL_RANK = {"never": 0, "untrusted": 0, "on-request": 1, "on-failure": 2}
# Settings that name a program the app runs on the host, or where the conversation is sent: any
# change from the workspace is a lowering (a `cache_dir` inside the workspace would make the app
# run a llama-server binary the model wrote; a `server_url` sends the session to another machine).
_ANY_CHANGE = ("server_url", "model_path", "cache_dir", "expert", "keymap", "sandbox_backend")


def _lowerings(base: Settings, full: Settings) -> list[tuple[str, str]]:
    """(field, sentence) for each way `full` protects less than `base`."""
    out: list[tuple[str, str]] = []
    if _SANDBOX_RANK[full.sandbox] > _SANDBOX_RANK[base.sandbox]:
        out.append(("sandbox", f"sandbox: {full.sandbox} (otherwise {base.sandbox})"))
    if _APPROVAL_RANK[full.approval] > _APPROVAL_RANK[base.approval]:
        out.append(("approval", f"approval: {full.approval} (otherwise {base.approval})"))
    if full.network and not base.network:
        out.append(("network", "network: granted to every command"))
    base_rules = [r.model_dump() for r in base.rules]
    full_rules = [r.model_dump() for r in full.rules]
    dropped = [r for r in base_rules if r not in full_rules and r["action"] != "allow"]
    added = [r for r in full_rules if r not in base_rules and r["action"] == "allow"]
    if dropped or added:
        parts = [f"drops `{r['pattern']}` ({r['action']})" for r in dropped]
        parts += [f"allows `{r['pattern']}`" for r in added]
        out.append(("rules", "rules: " + ", ".join(parts)))
    new_env = sorted(set(full.env_allow) - set(base.env_allow))
    if new_env:
        out.append(("env_allow", "env_allow: passes " + ", ".join(new_env) + " into commands"))
    unmasked = [p for p in base.deny_read if p not in full.deny_read]
    if unmasked:
        out.append(("deny_read", "deny_read: no longer hides " + ", ".join(unmasked)))
    if full.sandbox_tmp_mb > base.sandbox_tmp_mb:
        out.append(("sandbox_tmp_mb", f"sandbox_tmp_mb: {full.sandbox_tmp_mb}"))
    if full.sandbox_max_procs > base.sandbox_max_procs:
        out.append(("sandbox_max_procs", f"sandbox_max_procs: {full.sandbox_max_procs}"))
    unprotected = [p for p in base.done.protected if p not in full.done.protected]
    if unprotected:
        out.append(("done.protected", "done.protected: drops " + ", ".join(unprotected)))
    for name in _ANY_CHANGE:
        if getattr(full, name) != getattr(base, name):
            shown = getattr(full, name)
            out.append((name, f"{name}: {shown!r} (otherwise {getattr(base, name)!r})"))
    return out


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
    layers: list[tuple[str, dict[str, Any]]] = []
    ucp = user_config or user_config_path()
    if ucp.is_file():
        layers.append((str(ucp), _read_toml(ucp)))
    wcp = ws / ".cerveau" / "config.toml"
    review: list[str] = []
    lowered: list[str] = []
    digest = ""
    found = _read_workspace_config(wcp)
    if found is not None:
        table, raw = found
        digest = trust.digest(raw)
        table, review, lowered = _review_workspace_layer(
            ws,
            layers,
            table,
            str(wcp),
            trust_workspace or trust.is_trusted(ws, digest, trust_store_path(user_config)),
        )
        layers.append((str(wcp), table))
    env_layer, env_warnings = _env_layer(env)
    if env_layer:
        layers.append(("environment (CERVEAU_*)", env_layer))
    flag_layer = {k: v for k, v in (flags or {}).items() if v is not None}
    if flag_layer:
        layers.append(("command-line flags", flag_layer))

    merged: dict[str, Any] = {}
    for source, data in layers:
        candidate = _merge(merged, data)
        try:
            Settings.model_validate({**candidate, "workspace": ws})
        except ValidationError as exc:
            raise ConfigError(_explain(exc, source)) from exc
        merged = candidate
    settings = Settings.model_validate({**merged, "workspace": ws})
    settings.sources = [s for s, _ in layers]
    settings.workspace_review = review
    settings.workspace_lowered = lowered
    settings.workspace_config_digest = digest
    settings.warnings = env_warnings
    return settings


def _review_workspace_layer(
    ws: Path,
    below: list[tuple[str, dict[str, Any]]],
    table: dict[str, Any],
    source: str,
    trusted: bool,
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(the layer to apply, lowerings held back, lowerings applied). Untrusted, each lowering
    field is taken out of the layer, so what is in force is what the layers below say."""
    merged: dict[str, Any] = {}
    for _, data in below:
        merged = _merge(merged, data)
    try:
        base = Settings.model_validate({**merged, "workspace": ws})
        full = Settings.model_validate({**_merge(merged, table), "workspace": ws})
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source)) from exc
    found = _lowerings(base, full)
    if not found:
        return table, [], []
    if trusted:
        return table, [], [text for _, text in found]
    kept = dict(table)
    for name, _ in found:
        top, _, sub = name.partition(".")
        if sub and isinstance(kept.get(top), dict):
            kept[top] = {k: v for k, v in kept[top].items() if k != sub}
        else:
            kept.pop(top, None)
    return kept, [text for _, text in found], []


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
