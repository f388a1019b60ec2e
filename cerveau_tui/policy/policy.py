"""The policy: one tool call's declaration in, allow / ask / deny out. Pure: no I/O but realpath.

Order of questions, each for a reason:
1. `deny` rules first, in every mode: a person's written "never" outranks any approval. Then what
   the file tools may never touch: they run in the app's own process, with the person's rights,
   outside the sandbox, so whatever the sandbox masks (the deny-read list: keys, credentials,
   the app's own config) they refuse too, and they never write git's or the app's own state
   (`.git` at any depth, `.cerveau/`): code planted there runs at the person's next `git status`,
   and a config written there lowers the next session's protection.
2. The sandbox mode says what crosses: read-only (any write), workspace-write (writes outside the
   workspace, into protected paths, and the network), full-access (nothing).
3. Without an enforcing sandbox every command in read-only and workspace-write crosses: a declared
   path is advisory (a model can hide a write inside `python -c`), only the kernel is a boundary.
4. `ask` rules ask questions the sandbox cannot (`*.lock`, `.env*`), in every mode. A file tool
   reading outside the workspace asks too: the sandbox confines commands, not the app itself.
5. The approval policy turns crossings into verdicts; a session grant answers an ask in advance.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import ApprovalPolicy, RuleConfig, SandboxMode
from ..sandbox.base import Grant
from ..tools.base import Declared
from .actions import action_verdict
from .commands import COMMAND_TOOLS, is_known_safe
from .glob import glob_match
from .grants import GrantBook
from .judge import GrantListener
from .paths import Boundary, app_refusal, own_paths, realpath, room_for
from .rerun import rerun_verdict
from .rules_store import LastingRules
from .scopes import any_host_plus_named, command_choices, folder_choice, merged
from .verdict import Verdict

# Tools that only read, executed by the app itself: `untrusted` runs them without asking.
SAFE_TOOLS = frozenset({"read_file", "list_files", "search", "grep", "glob", "view"})


@dataclass
class _Crossing:
    reason: str
    room: Path | None = None  # what must become writable for this to succeed
    network: bool = False
    sandboxable: bool = True  # a command would run inside the sandbox without the room
    outside: bool = False  # a write that crosses only by being outside the workspace


class Policy:
    def __init__(
        self,
        workspace: Path,
        mode: SandboxMode,
        approval: ApprovalPolicy,
        rules: list[RuleConfig],
        network_grant: Callable[[], bool],
        enforced: bool,
        protected_extra: list[str] | None = None,
        deny_read: list[Path] | None = None,
        lasting: LastingRules | None = None,
    ) -> None:
        self.boundary = Boundary(workspace, list(protected_extra or []))
        # Absolute, realpath'd (config.deny_read_paths); not applied in full-access, where
        # nothing is masked for commands either.
        self.deny_read = [Path(os.path.realpath(p)) for p in (deny_read or [])]
        self.workspace = self.boundary.workspace
        self.mode = mode
        self.approval = approval
        self.rules = list(rules)
        self.network_grant = network_grant
        self.enforced = enforced
        self.own_paths = own_paths()  # never written by the file tools (paths.own_paths)
        # Session grants and the lasting rules kept outside the workspace (grants.py).
        self.grants = GrantBook(lasting)
        self.listener: GrantListener | None = None  # the session's journal (judge.py)

    # -- the question -------------------------------------------------------------------------
    def evaluate(self, tool: str, declared: Declared) -> Verdict:
        is_cmd = tool in COMMAND_TOOLS or declared.command is not None
        command = (declared.command or "") if is_cmd else None
        writes = self._paths(declared.writes, drop_root=is_cmd)
        reads = self._paths(declared.reads, drop_root=True)

        denied = self._rule_hits(("deny",), reads, writes)
        if denied:
            pattern, path, verb = denied[0]
            return Verdict(
                "deny", f"{verb} {self.boundary.show(path)}: the rule `{pattern}` denies it"
            )
        if declared.action is not None:
            return action_verdict(declared.action, self.grants, self.mode, self.approval)
        never = self.grants.denied(command, self._file_key(tool, writes, reads), writes)
        if never is not None:
            return Verdict("deny", f"you set this to never in this workspace ({never})")
        if not is_cmd and self.mode != "full-access":
            refusal = app_refusal(self.boundary, self.deny_read, self.own_paths, reads, writes)
            if refusal:
                return Verdict("deny", refusal)

        allow_hits = self._rule_hits(("allow",), reads, writes)
        allowed = {p for _, p, _ in allow_hits if p in writes}
        allowed_reads = {p for _, p, verb in allow_hits if verb == "reads"}
        crossings = self._crossings(is_cmd, writes, allowed, declared, reads, allowed_reads)
        asks = [
            _Crossing(
                f"{verb} {self.boundary.show(p)} (the rule `{pat}` asks first)", sandboxable=False
            )
            for pat, p, verb in self._rule_hits(("ask",), reads, writes)
        ]
        # The session's "Grant network" is any host (hosts empty): the person gave it as such.
        network_on = bool(self.network_grant())
        base = Grant(
            extra_writable=tuple(
                r for p in sorted(allowed) if is_cmd and (r := self._needs_room(p))
            ),
            network=network_on and is_cmd,
        )
        given = Grant()
        if command is not None:
            # A grant is room, not only "do not ask" (grants.py: command_room).
            given = self.grants.command_room(command)
            base = merged(base, given)
        all_items = crossings + asks
        if (
            not all_items
            and self.approval == "untrusted"
            and not self._known_safe(tool, declared, is_cmd)
        ):
            all_items = [
                _Crossing(
                    "approval policy `untrusted` asks before anything but known-safe reads",
                    sandboxable=False,
                )
            ]
        if not all_items:
            v = Verdict("allow", "inside the boundary", grant=base)
            # Run with the room a grant gave (its folder, the network): the card says which
            # (found: the second `touch` under a granted folder said nothing).
            v.granted_by = self.grants.room_granted_by(command, given)
            return v

        needs_network = any(c.network for c in all_items)
        need = Grant(
            extra_writable=tuple(dict.fromkeys(c.room for c in all_items if c.room)),
            network=needs_network,
            # A yes is to what the dialog shows: any host, and the hosts the command names by
            # URL (found: `curl http://127.0.0.1:8766/` approved once was refused by the proxy,
            # since "any host" never reaches this machine's own addresses).
            hosts=any_host_plus_named(command) if needs_network else (),
        )
        # Asked: the room a yes adds (the network to any host until the person picks a
        # "to host only" scope: Verdict.choose).
        grant = merged(base, need)
        scope, key, choices = self._scope(tool, command, writes, reads, crossings, asks, need)
        reason = "; ".join(c.reason for c in all_items)
        if command is not None:
            cover = self.grants.command_cover(command, need)
            held = None
            if cover is not None:
                # Let through by held grants: the network they gave, to their hosts only (a
                # `command:curl@github.com` cover runs with hosts=("github.com",)).
                held, covered_room = cover
                grant = merged(base, Grant(extra_writable=need.extra_writable), covered_room)
        else:
            only_outside = all(c.outside for c in all_items)
            held = self.grants.covers_file(key, writes if only_outside else None)
        if held is not None:
            by = self.grants.label(held)
            v = Verdict("allow", f"{reason} — {by}", grant, scope, key, True)
            v.granted_by, v.choices = by, choices
            return v
        if self.approval == "never":
            why = f"{reason} — approval policy `never` denies crossings; {self._allowed_here()}"
            return Verdict("deny", why, None, scope, key)
        if (
            self.approval == "on-failure"
            and is_cmd
            and self.enforced
            and all(c.sandboxable for c in all_items)
        ):
            # Codex's on-failure: run it sandboxed without the extra room; if the kernel says no,
            # after_failure() offers a rerun with the room.
            return Verdict(
                "allow",
                f"runs sandboxed without extra room ({reason}); asks if it fails",
                base,
                scope,
                key,
            )
        v = Verdict("ask", reason, grant, scope, key)
        v.choices = choices
        return v

    def after_failure(
        self, tool: str, declared: Declared, exit_code: int | None, output: str
    ) -> Verdict | None:
        return rerun_verdict(self, tool, declared, exit_code, output)

    # -- session grants and lasting rules (what each means: judge.py) -------------------------
    def grant_session(self, verdict: Verdict) -> None:
        if verdict.scope_key:
            self.grants.grant(verdict.scope_key, verdict.scope, verdict.grant)
            if self.listener is not None:
                self.listener.granted(verdict)

    def keep_rule(self, verdict: Verdict, decision: str) -> bool:
        if not verdict.scope_key:
            return False
        return self.grants.keep(verdict.scope_key, verdict.scope, decision, verdict.grant)

    def session_scopes(self) -> list[tuple[str, str]]:
        return self.grants.session_scopes()

    def revoke(self, scope_key: str) -> bool:
        done = self.grants.revoke(scope_key)
        if done and self.listener is not None:
            self.listener.revoked(scope_key)
        return done

    def lasting_rules(self) -> list[tuple[str, str, str]]:
        lasting = self.grants.lasting
        return [(r.scope_key, r.scope, r.decision) for r in lasting.rules] if lasting else []

    def revoke_rule(self, scope_key: str) -> bool:
        return self.grants.lasting is not None and self.grants.lasting.revoke(scope_key)

    # -- parts --------------------------------------------------------------------------------
    def _paths(self, paths: list[Path], *, drop_root: bool) -> list[Path]:
        out: list[Path] = []
        for p in paths:
            rp = realpath(p, self.workspace)
            # The bash tool declares the workspace root as "may write anywhere in it": that is the
            # sandbox's job to bound, not a specific intent to judge.
            if drop_root and rp == self.workspace:
                continue
            if rp not in out:
                out.append(rp)
        return out

    def _rule_hits(
        self, actions: tuple[str, ...], reads: list[Path], writes: list[Path]
    ) -> list[tuple[str, Path, str]]:
        hits: list[tuple[str, Path, str]] = []
        for rule in self.rules:
            if rule.action not in actions:
                continue
            pattern = _expand_home(rule.pattern)
            pools = []
            if rule.on in ("write", "any"):
                pools.append(("writes", writes))
            if rule.on in ("read", "any"):
                pools.append(("reads", reads))
            for verb, pool in pools:
                for p in pool:
                    if glob_match(pattern, self.boundary.match_name(p)):
                        hits.append((rule.pattern, p, verb))
        return hits

    def _crossings(
        self,
        is_cmd: bool,
        writes: list[Path],
        allowed: set[Path],
        declared: Declared,
        reads: list[Path],
        allowed_reads: set[Path],
    ) -> list[_Crossing]:
        if self.mode == "full-access":
            return []
        out: list[_Crossing] = []
        for p in writes:
            if p in allowed:
                continue
            where = self.boundary.where(p)
            shown = self.boundary.show(p)
            if self.mode == "read-only":
                out.append(
                    _Crossing(f"writes {shown} (sandbox mode is read-only)", self._needs_room(p))
                )
            elif where == "outside":
                out.append(
                    _Crossing(
                        f"writes {shown}, outside the workspace", self._needs_room(p), outside=True
                    )
                )
            elif where == "protected":
                out.append(
                    _Crossing(
                        f"writes {shown}, a protected path (it can change what runs later with your rights)",
                        self._needs_room(p),
                    )
                )
        if not is_cmd:
            for rp in reads:
                if rp not in allowed_reads and self.boundary.where(rp) == "outside":
                    out.append(
                        _Crossing(
                            f"reads {self.boundary.show(rp)}, outside the workspace",
                            sandboxable=False,
                        )
                    )
        if declared.network and not self.network_grant():
            out.append(_Crossing("uses the network, which is not granted", network=True))
        if is_cmd and not self.enforced:
            out.append(
                _Crossing(
                    "the sandbox is NOT enforced on this machine, so the command would run with your full rights",
                    sandboxable=False,
                )
            )
        return out

    def _allowed_here(self) -> str:
        """What runs without a yes in this mode, for a refusal to name the way forward (issue 37:
        a refused scope said what was refused, never what would do)."""
        inside = "reads" if self.mode == "read-only" else "reads and writes (not in `.git`)"
        net = "" if self.network_grant() else ", commands without the network"
        return f"allowed without asking: {inside} inside the workspace{net}"

    def _needs_room(self, path: Path) -> Path | None:
        """The room a command needs to write `path`; None when the sandbox already allows it.
        Mirrors the runners: in workspace-write the workspace is writable except `.git` (bound
        read-only whole: objects, refs and hooks alike) and the app's config."""
        if self.mode == "workspace-write" and self.boundary.where(path) == "inside":
            rel = self.boundary.rel(path) or ""
            if not (rel == ".git" or rel.startswith(".git/") or rel == ".cerveau/config.toml"):
                return None
        return room_for(path)

    def _known_safe(self, tool: str, declared: Declared, is_cmd: bool) -> bool:
        if is_cmd:
            return is_known_safe(declared.command or "")
        if tool in SAFE_TOOLS:
            return True
        # A tool that declares no effect at all (update_plan, commit_plan) touches nothing outside
        # the app.
        return (
            not declared.writes
            and not declared.network
            and declared.command is None
            and not declared.reads
        )

    def _scope(
        self,
        tool: str,
        command: str | None,
        writes: list[Path],
        reads: list[Path],
        crossings: list[_Crossing],
        asks: list[_Crossing],
        need: Grant,
    ) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """(scope, key, every choice narrowest first): what "approve for session" covers."""
        if command is not None:
            options = command_choices(command, need, self.boundary.show)
            # The narrowest past "exactly" (found: `curl` to one host had "any host" preselected).
            default = options[min(1, len(options) - 1)]
            return default.label, default.key, tuple((o.key, o.label) for o in options)
        scope, key = self._file_scope(tool, writes, reads, bool(asks and not crossings))
        choices = [(key, scope)]
        outside = [p for p in writes if self.boundary.where(p) == "outside"]
        folder = folder_choice(outside, self.workspace, self.boundary.show)
        if folder is not None and len(outside) == len(writes) and all(c.outside for c in crossings):
            choices.append((folder.key, folder.label))
        return scope, key, tuple(choices)

    def _file_key(self, tool: str, writes: list[Path], reads: list[Path]) -> str:
        return self._file_scope(tool, writes, reads, False)[1]

    def _file_scope(
        self, tool: str, writes: list[Path], reads: list[Path], rule_only: bool
    ) -> tuple[str, str]:
        if rule_only:
            patterns = sorted(
                {
                    r.pattern
                    for r in self.rules
                    if r.action == "ask"
                    and any(
                        glob_match(_expand_home(r.pattern), self.boundary.match_name(p))
                        for p in writes
                    )
                }
            )
            if len(patterns) == 1:
                return f"writes matching `{patterns[0]}`", f"rule:{patterns[0]}"
        if writes:
            shown = ", ".join(self.boundary.show(p) for p in sorted(writes))
            return f"{tool} writing {shown}", "write:" + "|".join(
                p.as_posix() for p in sorted(writes)
            )
        outside = sorted(p for p in reads if self.boundary.where(p) == "outside")
        if outside:
            shown = ", ".join(self.boundary.show(p) for p in outside)
            return f"{tool} reading {shown}", "read:" + "|".join(p.as_posix() for p in outside)
        return f"every `{tool}` call", f"tool:{tool}"


def _expand_home(pattern: str) -> str:
    # A person writes `~/.ssh/**` in their config and means their home; the model's paths are never
    # `~`-expanded (resolve_path), so this only widens what a person's rule covers.
    if pattern.startswith("~/") or pattern == "~":
        return str(Path(pattern).expanduser())
    return pattern
