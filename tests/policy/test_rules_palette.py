"""The palette lists the lasting rules and revokes one: gone from the store and from this session."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from types import SimpleNamespace

from cerveau_tui.app.palette import revoke_rule
from cerveau_tui.policy import Policy
from cerveau_tui.policy.rules_store import LastingRules
from cerveau_tui.sandbox.base import Grant
from cerveau_tui.session import Session

from .conftest import bash


def test_a_rule_revoked_from_the_palette_asks_again_now_and_later(ws: Path, tmp_path: Path) -> None:
    store, key = tmp_path / "cfg" / "workspace-rules.json", secrets.token_bytes(32)
    LastingRules(ws, store, key).add("command:pytest", "`pytest`", "allow", Grant())
    policy = Policy(
        ws, "workspace-write", "untrusted", [], network_grant=lambda: False, enforced=True,
        lasting=LastingRules(ws, store, key),
    )  # fmt: skip
    session = SimpleNamespace(engine=SimpleNamespace(policy=policy))
    session.lasting_rules = lambda: Session.lasting_rules(session)  # type: ignore[arg-type]
    session.revoke_rule = lambda k: Session.revoke_rule(session, k)  # type: ignore[arg-type]
    assert session.lasting_rules() == [("command:pytest", "`pytest`", "allow")]
    said: list[str] = []
    app = SimpleNamespace(
        runner=SimpleNamespace(session=session), chat=SimpleNamespace(notice=said.append)
    )
    assert policy.evaluate("bash", bash(ws, "pytest")).action == "allow"
    revoke_rule(app, "command:pytest", "always: `pytest`")  # type: ignore[arg-type]
    assert said == ["lasting rule revoked (always: `pytest`)"]
    assert policy.evaluate("bash", bash(ws, "pytest")).action == "ask"
    assert json.loads(store.read_text())["rules"] == []
