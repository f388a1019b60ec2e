"""The person's answers given in advance: session grants and lasting rules, asked as one book.

Deny before allow: a "never" rule is looked at before anything else in the policy, a session
grant or an "always" rule only answers an ask. Both kinds are matched structurally (scopes.py):
a grant covers exactly what its scope says, with the room it gave; a host-scoped grant's network is
its hosts only (scoped_room), the list the proxy holds the command to.
"""

from __future__ import annotations

from pathlib import Path

from ..sandbox.base import Grant
from .rules_store import LastingRules
from .scopes import (
    command_cover,
    command_covered,
    command_denied,
    folder_covers,
    merged,
    parts,
    scoped_room,
    without_named,
)


class GrantBook:
    def __init__(self, lasting: LastingRules | None = None) -> None:
        self.lasting = lasting
        self._session: dict[str, str] = {}  # scope_key -> scope, in grant order
        self._room: dict[str, Grant] = {}  # scope_key -> the room that grant gave

    # -- giving and taking back ---------------------------------------------------------------
    def grant(self, key: str, scope: str, room: Grant | None) -> None:
        self._session[key] = scope or key
        # The same scope granted again with other room (another folder) keeps both rooms.
        had = self._room.get(key, Grant())
        self._room[key] = merged(had, _kept_room(key, room))

    def keep(self, key: str, scope: str, decision: str, room: Grant | None) -> bool:
        """A lasting rule for this workspace ("allow" or "deny"); False without a store."""
        if self.lasting is None:
            return False
        kept = _kept_room(key, room) if room is not None else None
        return self.lasting.add(key, scope, "allow" if decision == "allow" else "deny", kept)

    def session_scopes(self) -> list[tuple[str, str]]:
        return list(self._session.items())

    def revoke(self, key: str) -> bool:
        self._room.pop(key, None)
        return self._session.pop(key, None) is not None

    # -- asking -------------------------------------------------------------------------------
    def _held(self) -> dict[str, Grant]:
        held = dict(self.lasting.allows()) if self.lasting is not None else {}
        held.update(self._room)
        return held

    def label(self, key: str) -> str:
        if key in self._session:
            return f"approved for this session ({self._session[key]})"
        shown = self.lasting.label(key) if self.lasting is not None else key
        return f"always allowed in this workspace ({shown})"

    def denied(self, command: str | None, key: str, writes: list[Path]) -> str | None:
        """The "never" rule this call falls under, spelled out; None when there is none."""
        if self.lasting is None:
            return None
        denies = self.lasting.denies()
        if command is not None:
            hit = command_denied(command, denies)
        else:
            hit = next(
                (k for k in denies if k == key or (writes and folder_covers(k, writes))), None
            )
        return self.lasting.label(hit) if hit is not None else None

    def command_room(self, command: str) -> Grant:
        """The room every held grant that covers this whole command gave it: the rerun the person
        approved for `make` with /opt writable gives every later `make` that room too."""
        held = self._held()
        return merged(
            *(g for k, g in held.items() if command_covered(command, {k: g}, Grant()) is not None)
        )

    def room_granted_by(self, command: str | None, given: Grant) -> str:
        """Which held grant gave this command the room it runs with (`given`: command_room),
        spelled out; "" when it runs with none. A command declares only the workspace, so what
        it writes outside is not known before it runs: the room given is what is said."""
        if command is None or not (given.extra_writable or given.network):
            return ""
        held = self.covers_command(command, given)
        return self.label(held) if held is not None else ""

    def covers_command(self, command: str, need: Grant) -> str | None:
        return command_covered(command, self._held(), need)

    def command_cover(self, command: str, need: Grant) -> tuple[str, Grant] | None:
        """The first held grant that lets `command` through with room `need`, and the room all the
        grants covering its parts give together: a chain of `curl` to a host and `git push` runs
        with the hosts of both, any host if one of them gave any."""
        held = self._held()
        keys = command_cover(command, held, need)
        if not keys:
            return None
        return keys[0], merged(*(held[k] for k in keys))

    def covers_file(self, key: str, outside_writes: list[Path] | None) -> str | None:
        """A file tool's call: the exact scope held, or (for writes that only cross by being
        outside the workspace) a folder scope holding them all."""
        held = self._held()
        if key in held:
            return key
        if outside_writes:
            return next(
                (
                    k
                    for k in held
                    if any(a.startswith("dir:") for a in parts(k))
                    and folder_covers(k, outside_writes)
                ),
                None,
            )
        return None


def _kept_room(key: str, room: Grant | None) -> Grant:
    """The room a grant keeps for later calls: its hosts (scoped_room), and for a program's
    any-host scope not the addresses one approved call named (without_named); an `exact:` key
    is that very command, so it keeps them."""
    kept = scoped_room(key, room or Grant())
    if all(a.startswith("exact:") for a in parts(key)):
        return kept
    return without_named(kept)
