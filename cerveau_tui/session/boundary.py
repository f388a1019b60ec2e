"""The session's boundary, its step of the build (build.py): the runner (the sandbox the live
self-check picked, behind the git guard), the policy (with the deny-read list), the torn-temp
sweep; and what is said at the start about protection (also by headless, outside the stream)."""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings

if TYPE_CHECKING:
    from ..policy import Policy
    from ..sandbox.base import Runner
    from ..workspace.git.guard import Finding


@dataclass(frozen=True)
class Boundary:
    runner: Runner  # every command goes through it: the sandbox's, behind the git guard
    status: dict[str, Any]  # the self-check's report (backend, enforced, notes, gaps)
    policy: Policy


def parts(settings: Settings, bus: Emitter, started: ExitStack) -> Boundary:
    """The runner and the policy, after the sweep; `started` lets go of the runner's background
    commands if a later step of the build fails."""
    runner, status = sandbox(settings)
    runner = guard_git(runner, settings, bus)
    started.callback(runner.kill_background)
    sweep(settings, bus)
    return Boundary(runner, status, policy(settings, enforced=bool(status.get("enforced"))))


def boundary_notice(bus: Emitter, text: str) -> None:
    """A protection of the harness's own fired (a planted link moved aside, git code undone, a
    workspace config held back): the person sees it, at warning level."""
    bus.emit(P.NoticePayload(text=text, level="warning", source="boundary"))


def guard_git(runner: Runner, settings: Settings, bus: Emitter) -> Runner:
    """Every command (the model's, the person's `!cmd`, a done criterion) is followed by a check
    that it left no code for the person's next `git`; what it left is undone and said."""
    from ..sandbox.guarded import GuardedRunner

    ws = settings.workspace

    def found(findings: list[Finding]) -> None:
        for f in findings:
            boundary_notice(bus, f.describe(ws))

    # workspace=: the file tools, undo and rollback report through `found` too (git_change).
    return GuardedRunner(runner, on_findings=found, workspace=ws)


def sweep(settings: Settings, bus: Emitter) -> None:
    """Temp files a crash left half-written are never listed, and go at the next start."""
    from ..workspace.io.beneath import sweep_torn_temps

    try:
        swept = sweep_torn_temps(settings.workspace)
    except OSError:
        return
    if swept:
        bus.emit(
            P.NoticePayload(text=f"removed {len(swept)} temp file(s) a crash left half-written"),
        )


def protection(settings: Settings) -> dict[str, Any]:
    """What the workspace's own config asked for that protects less than the person's: held back
    (not trusted) or applied (trusted). Said at start, in the event and as warnings.

    `held_back` is the dotted keys (`done.gate`, `limits.max_iterations`), so a client can ask
    `"done.gate" in held_back`; `in_force` and `asked` give, per key, the value that applies
    instead and the one the file asked for; `said` is the sentences the notice shows."""
    held = list(settings.workspace_held_back)
    return {
        "held_back": [h["key"] for h in held],
        "in_force": {h["key"]: h["in_force"] for h in held},
        "asked": {h["key"]: h["asked"] for h in held},
        "said": list(settings.workspace_review),
        "applied": list(settings.workspace_lowered),
        "digest": settings.workspace_config_digest,
    }


def protection_notices(p: dict[str, Any]) -> list[str]:
    out = []
    if p["said"]:
        out.append(
            ".cerveau/config.toml asks for less protection and was NOT applied there (trust it in the "
            "TUI, or pass --trust-workspace-config): " + "; ".join(p["said"])
        )
    if p["applied"]:
        out.append(
            "this workspace's trusted .cerveau/config.toml lowers protection: "
            + "; ".join(p["applied"])
        )
    return out


def said_at_start(settings: Settings) -> list[str]:
    """The protection notices, for a client that also says them outside the event stream."""
    return protection_notices(protection(settings))


def sandbox(settings: Settings) -> tuple[Runner, dict[str, Any]]:
    from ..sandbox.select import backends_for, select_runner, self_check

    status = self_check(settings.resolved_cache_dir(), backends=backends_for(settings))
    runner = select_runner(settings, status, deny_read=denied_reads(settings))
    info: dict[str, Any] = {
        "backend": status.backend,
        "enforced": status.enforced,
        "notes": list(status.notes),
        "gaps": list(status.gaps),
    }
    if status.enforced and status.backend == "landlock":
        from ..sandbox.view import own_files_inside

        exposed = own_files_inside(settings.workspace)
        if exposed:
            info["enforced"] = False
            info["notes"].append(
                "NOT enforced here: Landlock cannot keep cerveau's own files inside this workspace "
                "read-only (" + ", ".join(map(str, exposed[:3])) + "); every command is asked"
            )
    return runner, info


def denied_reads(settings: Settings) -> list[Path]:
    """The deny-read list as paths, plus wherever the person's own config (and the trust store
    beside it) really lives: it says how the next session is protected."""
    from ..config import user_config_path
    from ..deny_read import deny_read_paths

    paths = deny_read_paths(settings.deny_read)
    own = Path(os.path.realpath(user_config_path().parent))
    if own not in paths:
        paths.append(own)
    # And the workspaces' state kept outside them (state_home.py): masked, refused to the tools.
    from ..state_home import protected

    paths += [p for p in protected() if p not in paths]
    # And the model servers' keys (stack/keys.py): hidden from commands, and read_file on an
    # approved read outside the workspace sent one to the model and the ACP client.
    from ..stack.paths import stack_paths

    run = Path(os.path.realpath(stack_paths(settings.cache_dir).run_dir))
    if run not in paths:
        paths.append(run)
    ws = Path(os.path.realpath(settings.workspace))
    # A workspace inside a denied folder stays usable: the list hides secrets, not the work.
    return [p for p in paths if not (p == ws or p in ws.parents)]


def policy(settings: Settings, *, enforced: bool) -> Policy:
    from ..policy import Policy
    from ..policy.rules_store import LastingRules

    return Policy(
        settings.workspace,
        settings.sandbox,
        settings.approval,
        settings.rules,
        network_grant=lambda: settings.network,
        enforced=enforced,
        deny_read=denied_reads(settings),
        # "always" / "never" for this workspace, read from beside the trust store (sealed).
        lasting=LastingRules(settings.workspace),
    )
