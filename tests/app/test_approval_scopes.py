"""The dialog offers every scope the policy computed, numbered narrowest first; a number pressed
alone chooses one, and `a` / `A` / `N` grant, keep or refuse exactly that one (screens/
approval_scopes.py). Verified on the dialog's answer, its chat line, and (with the real engine)
on the wire and in the next call."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.header import SessionHeader
from cerveau_tui.policy.rules_cli import rules_command
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import AskInThread, FakeClock, arm, engine_app, press_alone, viewer_app, wait_until

CHOICES = [
    ["exact:curl -s http://h:8080/one", "exactly `curl -s http://h:8080/one`"],
    ["command:curl@h:8080", "commands starting with `curl` to h:8080 only"],
    ["command:curl", "commands starting with `curl`, any host"],
]


def _ask(app: Any) -> AskInThread:
    return AskInThread(
        app,
        summary="curl -s http://h:8080/one",
        reason="uses the network",
        scope=CHOICES[2][1],
        choices=[tuple(c) for c in CHOICES],
    )


def _chat(app: Any) -> str:
    return "\n".join(n.text for n in app.screen_stack[0].query_one(ChatView).query(NoticeLine))


def _keys(app: Any) -> str:
    return str(app.screen.query_one("#keys").render())


async def test_the_dialog_lists_every_scope_numbered_the_default_marked(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 45)) as pilot:
        _ask(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await arm(pilot, clock)
        keys = _keys(app)
        assert "1  exactly `curl -s http://h:8080/one`" in keys
        assert "2  commands starting with `curl` to h:8080 only" in keys
        assert "▸ 3  commands starting with `curl`, any host" in keys


async def test_a_number_alone_chooses_the_scope_the_session_grant_covers(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 45)) as pilot:
        ask = _ask(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "2")
        assert ask.decision is None  # choosing decides nothing
        assert "▸ 2  commands starting with `curl` to h:8080 only" in _keys(app)
        await press_alone(pilot, clock, "a", "a")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved_session"
        assert ask.decision.scope_key == "command:curl@h:8080"
        assert await wait_until(
            pilot,
            lambda: (
                "you approved for this session: commands starting with `curl` to h:8080 only"
                in _chat(app)
            ),
        )


async def test_choosing_another_scope_while_confirming_goes_back_and_grants_nothing(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 45)) as pilot:
        ask = _ask(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "a", "1")  # `1` goes back, and chooses the exact one
        assert "▸ 1  exactly `curl" in _keys(app)
        await press_alone(pilot, clock, "a")  # so this `a` asks again, for the exact one
        assert ask.decision is None
        await arm(pilot, clock)
        assert "a again, alone" in _keys(app) and "exactly `curl" in _keys(app)


async def test_capital_n_twice_refuses_the_chosen_scope_always(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 45)) as pilot:
        ask = _ask(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "1", "N")
        assert ask.decision is None  # the first `N` only asks for the confirmation
        await arm(pilot, clock)
        assert "NEVER allow in this workspace" in _keys(app)
        await press_alone(pilot, clock, "N")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "denied_always"
        assert ask.decision.scope_key == CHOICES[0][0]
        assert await wait_until(
            pilot, lambda: "you refused always in this workspace: exactly `curl" in _chat(app)
        )


async def test_a_number_the_dialog_does_not_offer_goes_to_the_prompt(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 45)) as pilot:
        ask = _ask(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "4")
        assert ask.decision is None and app.prompt.text == "4"


async def test_with_one_scope_a_number_is_typing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "1")
        assert ask.decision is None and app.prompt.text == "1"


async def test_a_held_key_is_shown_the_moment_it_is_pressed(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await arm(pilot, clock)
        await pilot.press("y")
        await pilot.pause()
        assert ask.decision is None and "y… confirming" in _keys(app)


# --- with the real engine: the chosen scope is what the grant covers --------------------------


def _touch(path: Path) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": f"touch {path}"}}]}


async def _two_touches(
    tmp_path: Path,
    keys: tuple[str, ...],
    cards: list[str] | None = None,
    header: list[str] | None = None,
) -> tuple[list[Any], list[Any]]:
    """Two `touch` commands outside the workspace; the first dialog answered with `keys`, any
    later one with `y`. Returns (approval_requested, approval_resolved) payloads; `cards` gets
    the text each tool card shows of the grant that let it through."""
    out = Path(tempfile.mkdtemp(prefix="cerveau-scope-tui-", dir="/var/tmp"))  # not /tmp
    try:
        clock = FakeClock()
        script = [_touch(out / "a"), _touch(out / "b"), {"content": "done"}]
        with ScriptedServer({"responses": script}) as srv:
            app, rec = engine_app(
                tmp_path, srv.url, clock, approval="on-request", sandbox="workspace-write"
            )
            async with app.run_test(size=(140, 45)) as pilot:
                assert await wait_until(pilot, lambda: app.runner.session is not None)
                await pilot.press(*"touch two files", "enter")
                assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
                await press_alone(pilot, clock, *keys)
                asked = 1
                while not rec.of("turn_ended"):
                    if len(rec.of("approval_requested")) > asked:
                        asked += 1
                        assert await wait_until(
                            pilot, lambda: isinstance(app.screen, ApprovalScreen)
                        )
                        await press_alone(pilot, clock, "y")
                    await pilot.pause(0.05)
                await pilot.pause(0.2)
                if cards is not None:
                    cards += [str(g.render()) for g in app.chat.query(".granted")]
                if header is not None:
                    header.append(str(app.query_one(SessionHeader).render()))
                await pilot.press("ctrl+q")
        return (
            [e.payload for e in rec.of("approval_requested")],
            [e.payload for e in rec.of("approval_resolved")],
        )
    finally:
        shutil.rmtree(out, ignore_errors=True)


async def test_the_exact_scope_chosen_covers_that_command_only(tmp_path: Path) -> None:
    requested, resolved = await _two_touches(tmp_path, ("1", "a", "a"))
    assert len(requested) == 2  # `touch .../b` is not `touch .../a`: asked again
    label = requested[0]["choices"][0][1]
    assert resolved[0]["decision"] == "approved_session" and resolved[0]["scope"] == label
    assert label.startswith("exactly `touch ")


async def test_the_program_scope_chosen_covers_the_next_touch(tmp_path: Path) -> None:
    cards: list[str] = []
    requested, resolved = await _two_touches(tmp_path, ("2", "a", "a"), cards)
    assert len(requested) == 1
    # Both cards say which grant let them through: the second was never asked about.
    assert cards == [f"let through: approved for this session ({resolved[0]['scope']})"] * 2
    assert resolved[0]["scope"] == requested[0]["choices"][1][1]
    assert "commands starting with `touch`" in resolved[0]["scope"]


async def test_never_is_a_lasting_deny_rule_listed_by_cerveau_rules(tmp_path: Path) -> None:
    requested, resolved = await _two_touches(tmp_path, ("2", "N", "N"))
    assert resolved[0]["decision"] == "denied_always"
    # The second touch falls under the "never" rule: refused by the policy, not asked.
    assert len(requested) == 1
    code, text = rules_command(tmp_path / "ws", True, None)
    rows = json.loads(text)
    assert code == 0
    assert {"scope": resolved[0]["scope"], "decision": "deny"}.items() <= rows[0].items()
    assert Path(rows[0]["workspace"]) == (tmp_path / "ws").resolve()


async def test_the_header_keeps_an_always_rule_after_the_turn(tmp_path: Path) -> None:
    header: list[str] = []
    requested, resolved = await _two_touches(tmp_path, ("2", "A", "A"), header=header)
    assert resolved[0]["decision"] == "approved_always" and len(requested) == 1
    # Read once the turn is over (the session's grants refreshed): the lasting rule stays shown.
    assert "always: commands starting with `touch`" in " ".join(header[0].split())
