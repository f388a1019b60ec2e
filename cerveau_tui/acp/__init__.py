"""`cerveau acp`: cerveau as an Agent Client Protocol agent, for editors (Zed, JetBrains) and
terminal clients (toad) that speak JSON-RPC on an agent's stdin and stdout.

A third client of the one engine, beside the TUI and the headless runner: agent.py holds the
client's sessions (each built by `build_session`, each prompt one turn), updates.py says our
events as ACP's `session/update`s, approver.py puts each boundary crossing to the client as
`session/request_permission`. Commands and writes stay ours (sandbox, our file tools); the client
is told what ran and never asked to run or write anything.

Built on the SDK `agent-client-protocol` (import `acp`; its one dependency is pydantic, which we
have): its connection, router and generated schema, so the wire is the protocol's own models.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from .agent import CerveauAgent, SettingsFor
from .stdio import serve

__all__ = ["CerveauAgent", "run_acp"]


def run_acp(settings_for: SettingsFor, *, pinned: Path | None = None) -> int:
    """Serve until the client closes stdin. `pinned` (`--workspace`): the one workspace a session
    may open; without it, each session/new's cwd is its workspace (refused as the CLI refuses)."""
    try:
        asyncio.run(serve(CerveauAgent(settings_for, pinned=pinned)))
    except KeyboardInterrupt:
        return 130
    return 0
