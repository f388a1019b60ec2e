"""Stop thinking (loop/thinking.py): F4 or the palette ends the model's reasoning now. Against the
scripted llama-server (no `reasoning_control`): the stream is ended where the reasoning is, the
same request is sent again with thinking off, and the reasoning panel says so."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.reasoning import ReasoningBlock
from cerveau_tui.bus import Event
from cerveau_tui.protocol import EventType
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, wait_until

LONG_THOUGHT = "Let me think about this very carefully, one step at a time. " * 20
SCRIPT = [{"reasoning": LONG_THOUGHT, "content": "never shown"}, {"content": "the answer"}]


async def test_f4_ends_the_reasoning_and_asks_again_with_thinking_off(tmp_path: Path) -> None:
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock())
        async with app.run_test(size=(140, 45)) as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            seen: list[str] = []

            def watch(event: Event) -> None:
                # F4 while the reasoning streams: its action, run on the app's thread, while
                # the engine's thread waits here (so no more of the stream is read meanwhile).
                if event.type == EventType.REASONING and not seen:
                    seen.append(event.payload["text"])
                    app.call_from_thread(app.action_stop_thinking)

            app.bus.subscribe(watch)
            await pilot.press(*"fix it", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.pause(0.2)
            panels = [b.text for b in app.chat.query(ReasoningBlock)]
            await pilot.press("ctrl+q")
        requests = srv.requests
    assert len(requests) == 2
    assert "chat_template_kwargs" not in requests[0] or requests[0]["chat_template_kwargs"].get(
        "enable_thinking", True
    )
    assert requests[1]["chat_template_kwargs"]["enable_thinking"] is False
    notices = [e.payload for e in rec.of("notice") if e.payload.get("source") == "thinking"]
    assert notices and "asked again with thinking off" in notices[0]["text"]
    # Far less of the reasoning streamed than the model had to say: it was cut short.
    streamed = "".join(e.payload["text"] for e in rec.of("reasoning"))
    assert len(streamed) < len(LONG_THOUGHT) / 4
    # The reasoning panel says how it was ended, after what had streamed.
    assert len(panels) == 1 and panels[0].startswith(seen[0])
    assert panels[0].rstrip().endswith("asked again with thinking off]")
    assert [e.payload["content"] for e in rec.of("assistant_message")][-1] == "the answer"


async def test_f4_between_turns_says_there_is_nothing_to_stop(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock())
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press("f4")
            await pilot.pause(0.2)
            texts = [str(n.text) for n in app.chat.query("NoticeLine")]
            await pilot.press("ctrl+q")
    assert any("no thinking to stop" in t for t in texts)
    assert srv.requests == []
