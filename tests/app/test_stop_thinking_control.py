"""Stop thinking through the server (loop/thinking.py, provider/reasoning_control.py): against the
scripted llama-server WITH its reasoning control, F4 ends the reasoning in the same stream (one
request, no retry) and the reasoning panel says the server did it; a server that refuses to end
it (a completion it did not arm) falls back to asking again with thinking off, and says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.app.widgets.reasoning import ReasoningBlock
from cerveau_tui.bus import Event
from cerveau_tui.protocol import EventType
from cerveau_tui.testing.scripted_control import ScriptedControl
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, wait_until

LONG_THOUGHT = "Let me think about this very carefully, one step at a time. " * 20
SCRIPT = [{"reasoning": LONG_THOUGHT, "content": "the answer"}, {"content": "asked again"}]


async def _f4_while_reasoning(tmp_path: Path, control: ScriptedControl) -> dict[str, Any]:
    with ScriptedServer({"responses": SCRIPT}, control=control) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock())
        async with app.run_test(size=(140, 45)) as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            seen: list[str] = []

            def watch(event: Event) -> None:
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
    notices = [e.payload["text"] for e in rec.of("notice") if e.payload.get("source") == "thinking"]
    return {
        "requests": requests,
        "notices": notices,
        "panels": panels,
        "seen": seen,
        "answers": [e.payload["content"] for e in rec.of("assistant_message")],
        "streamed": "".join(e.payload["text"] for e in rec.of("reasoning")),
    }


async def test_f4_ends_the_reasoning_through_the_server_in_the_same_stream(
    tmp_path: Path,
) -> None:
    control = ScriptedControl()
    got = await _f4_while_reasoning(tmp_path, control)
    assert len(got["requests"]) == 1 and got["requests"][0]["reasoning_control"] is True
    ends = [r for r in control.requests if "id" in r]
    assert len(ends) == 1 and ends[0]["action"] == "reasoning_end"
    assert got["notices"] == [
        "thinking stopped by the server (reasoning_control): the model goes on to its answer"
    ]
    assert got["answers"][-1] == "the answer"  # the first request's own answer, not a retry's
    assert len(got["streamed"]) < len(LONG_THOUGHT) / 4
    panels = got["panels"]
    assert len(panels) == 1 and panels[0].startswith(got["seen"][0])
    assert panels[0].rstrip().endswith("goes on to its answer]")


async def test_f4_falls_back_and_says_why_when_the_server_refuses(tmp_path: Path) -> None:
    got = await _f4_while_reasoning(tmp_path, ScriptedControl(arms=False))
    assert len(got["requests"]) == 2
    assert got["requests"][1]["chat_template_kwargs"]["enable_thinking"] is False
    assert got["notices"] == [
        "thinking stopped (the server refused: reasoning control not enabled for this "
        "completion): the stream was ended and the model asked again with thinking off"
    ]
    assert got["answers"][-1] == "asked again"
    assert got["panels"][0].rstrip().endswith("asked again with thinking off]")
