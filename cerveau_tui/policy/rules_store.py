"""Rules that last: "always in this workspace" and "never", kept where no workspace can reach.

The attack it stops: a rule is a boundary decision made in advance, so a rule the model or a cloned
repository could write is a grant nobody gave. So the store sits beside the trust store (the
person's config folder, which the sandbox masks and the file tools refuse), each rule is keyed by
the workspace's realpath and sealed (HMAC) with the person's key (person_key.py) over the rule and
that path: a rule edited by hand, copied from another workspace, or planted without the key does
not verify and is ignored. A workspace `.cerveau/config.toml` cannot add allow rules either
(config_tighten.py's RULES rule).

A rule can never widen the sandbox mode: an allow rule answers the kind of crossing a session grant
answers, with the room that grant gave (an extra writable folder, the network), never
full-access; a room no grant may reach (`/`, a kernel interface, the harness's own files) is
dropped at load (sandbox/grantable.py). A rule's network keeps its hosts (`hosts`, sealed when
there are any, so a rule written before hosts existed still verifies); a rule for
`command:X@host` gives that host only, whatever its record says (scopes.scoped_room).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..person_key import load_key, mac, verifies
from ..sandbox.base import Grant
from ..state_file import read_regular
from .scopes import scoped_room

Decision = Literal["allow", "deny"]
STORE_NAME = "workspace-rules.json"
STORE_MAX_BYTES = 4_000_000


def store_path(user_config: Path | None = None) -> Path:
    from ..config import user_config_path

    return (user_config or user_config_path()).parent / STORE_NAME


@dataclass(frozen=True)
class LastingRule:
    scope_key: str
    scope: str
    decision: Decision
    workspace: str
    room: Grant = Grant()

    def body(self) -> dict[str, Any]:
        return {
            "purpose": "lasting-rule",
            "scope_key": self.scope_key,
            "scope": self.scope,
            "decision": self.decision,
            "workspace": self.workspace,
            "extra_writable": [p.as_posix() for p in self.room.extra_writable],
            "network": bool(self.room.network),
            # Only when limited: a body without `hosts` is the one old rules were sealed over.
            **({"hosts": list(self.room.hosts)} if self.room.network and self.room.hosts else {}),
        }


def _from(entry: object) -> LastingRule | None:
    if not isinstance(entry, dict):
        return None
    try:
        rule = LastingRule(
            scope_key=str(entry["scope_key"]),
            scope=str(entry["scope"]),
            decision=entry["decision"] if entry["decision"] in ("allow", "deny") else "deny",
            workspace=str(entry["workspace"]),
            room=Grant(
                extra_writable=tuple(Path(str(p)) for p in entry.get("extra_writable", [])),
                network=bool(entry.get("network", False)),
                hosts=tuple(str(h) for h in entry.get("hosts", []) or []),
            ),
        )
    except (KeyError, TypeError):
        return None
    if rule.decision != entry["decision"]:
        return None
    return rule


def _grantable(room: Grant) -> bool:
    from ..sandbox.grantable import grant_refusal

    return all(
        p.is_absolute() and p != p.parent and grant_refusal(p) is None for p in room.extra_writable
    )


def _stamp(store: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(store)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class LastingRules:
    """The person's lasting rules for one workspace. Reads and writes its store; the policy asks
    it like the session grants (deny first).

    Read at the moment of use: `cerveau rules --revoke` in another terminal left a running app
    answering "always allowed" from the list it read at start (issue 33). `rules` stats the store
    at each lookup and reads it again when its inode, size or times changed; every write is a
    rename of a new file (a new inode), so a change is never missed for a same-second edit."""

    def __init__(
        self, workspace: Path, store: Path | None = None, key: bytes | None = None
    ) -> None:
        self.workspace = os.path.realpath(workspace)
        self.store = store or store_path()
        self._key = key if key is not None else load_key(create=True)
        self._stamp: tuple[int, int, int, int] | None = None
        self._rules: list[LastingRule] = []

    @property
    def rules(self) -> list[LastingRule]:
        stamp = _stamp(self.store)
        if stamp is None or stamp != self._stamp:
            # Stat before read: a write landing in between changes the stamp again and the next
            # lookup reads once more, never a newer stamp recorded over an older list.
            self._rules = [r for r in self._load() if r.workspace == self.workspace]
            self._stamp = stamp
        return self._rules

    def _entries(self) -> list[object]:
        try:
            data = json.loads(read_regular(self.store, STORE_MAX_BYTES))
        except (OSError, ValueError):
            return []
        rules = data.get("rules") if isinstance(data, dict) else None
        return list(rules) if isinstance(rules, list) else []

    def _load(self) -> list[LastingRule]:
        out: list[LastingRule] = []
        for entry in self._entries():
            rule = _from(entry)
            if rule is None or not isinstance(entry, dict):
                continue
            if not verifies(self._key, rule.body(), entry.get("mac")):
                continue  # edited by hand, copied, or planted: not the person's rule
            if rule.decision == "allow" and not _grantable(rule.room):
                continue
            out.append(rule)
        return out

    def allows(self) -> dict[str, Grant]:
        return {
            r.scope_key: scoped_room(r.scope_key, r.room)
            for r in self.rules
            if r.decision == "allow"
        }

    def denies(self) -> list[str]:
        return [r.scope_key for r in self.rules if r.decision == "deny"]

    def label(self, scope_key: str) -> str:
        return next((r.scope for r in self.rules if r.scope_key == scope_key), scope_key)

    def add(self, scope_key: str, scope: str, decision: Decision, room: Grant | None) -> bool:
        """Keep a rule for this workspace (replacing one for the same scope); False when it could
        not be sealed or written (no key: the session goes on asking, the safe side)."""
        if self._key is None or not scope_key:
            return False
        rule = LastingRule(scope_key, scope, decision, self.workspace, room or Grant())
        if decision == "allow" and not _grantable(rule.room):
            return False
        return self._save(lambda rules: [*(r for r in rules if r.scope_key != scope_key), rule])

    def revoke(self, scope_key: str) -> bool:
        def drop(rules: list[LastingRule]) -> list[LastingRule]:
            return [r for r in rules if scope_key not in (r.scope_key, r.scope)]

        return len(drop(self.rules)) != len(self.rules) and self._save(drop)

    def _save(self, change: Callable[[list[LastingRule]], list[LastingRule]]) -> bool:
        """`change` applied to this workspace's rules as they are on disk now (another session
        in the same workspace may have added one since this one read them)."""
        # Two sessions (two workspaces) saving at once: read-modify-write under one lock, or the
        # later write drops the other's rule (a "never" lost in silence).
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(
                self.store.with_name(f".{self.store.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600
            )
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return self._save_locked(
                change([r for r in self._load() if r.workspace == self.workspace])
            )
        finally:
            os.close(fd)

    def _save_locked(self, mine: list[LastingRule]) -> bool:
        # Every other workspace's entries kept as they were (sealed or not, they are not ours).
        others = [
            e
            for e in self._entries()
            if not (isinstance(e, dict) and e.get("workspace") == self.workspace)
        ]
        entries = [*others]
        for r in mine:
            body = r.body()
            entry = {k: v for k, v in body.items() if k != "purpose"}
            entry["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            entry["mac"] = mac(self._key, body)
            entries.append(entry)
        try:
            tmp = self.store.with_name(f".{self.store.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"rules": entries}, indent=1))
            os.replace(tmp, self.store)
        except OSError:
            return False
        self._rules, self._stamp = mine, None  # the next lookup stats the file it just wrote
        return True


def all_rules(store: Path | None = None, key: bytes | None = None) -> list[LastingRule]:
    """Every sealed rule in the store, for `cerveau rules` (across workspaces)."""
    probe = LastingRules(Path("/"), store, key)
    return probe._load()
