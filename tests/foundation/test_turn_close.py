from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.memory.store import MemoryStore
from cerveau_tui.memory.turn_close import RECALL_HEADER, TurnCloseHook, age, curate, parse_distill
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_a_parse_failure_degrades_to_nothing():
    assert parse_distill('{"facts": ["cut off') == parse_distill("") == parse_distill("[]")
    assert parse_distill('{"facts": ["a"], "lessons": [1, "b"]}').lessons == ["b"]


def test_curate_keeps_specific_short_notes():
    assert curate(
        ["Tests run with python3 -m pytest -q", "ok", "It is a good project and nice"]
    ) == ["Tests run with python3 -m pytest -q"]


def test_memory_store_deduplicates_by_normalised_text(tmp_path):
    m = MemoryStore(tmp_path)
    assert m.add("fact", "Config lives in app/config.py")
    assert not m.add("fact", "config lives in  app/config.py.")
    assert m.recent() == [("fact", "Config lives in app/config.py")]


def test_turn_close_stores_notes_and_the_next_session_is_briefed(tmp_path):
    note = "The entry point is main.py and it reads settings.toml"
    script = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "main.py", "content": "print(1)\n"},
                    }
                ]
            },
            {"content": "done"},
            {"content": '{"facts": ["' + note + '"], "lessons": []}'},  # the distill
            {"content": "second session"},
        ]
    }
    with ScriptedServer(script) as srv:
        settings = load_settings(
            tmp_path, flags={"turn_close": True}, environ={}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        s.engine.run("write main.py")
        s.close()
        assert any("remembered" in e.payload["text"] for e in rec.of("notice"))
        s2 = build_session(settings, provider=LlamaProvider(srv.url))
        s2.engine.run("next")
        s2.close()
        last = srv.requests[-1]
    # the distill continues the session's cached conversation (memory/test_turn_close_continues)
    assert (
        srv.requests[2]["max_tokens"] == 1024
        and srv.requests[2]["tools"] == srv.requests[0]["tools"]
    )
    # the distill is a request of the session too: it opens with the session's system message
    assert srv.requests[2]["messages"][0] == srv.requests[0]["messages"][0]
    assert note in str(last["messages"])
    assert last["messages"][0] == srv.requests[0]["messages"][0]  # the stable prefix did not move


NOTE = "The entry point is main.py and it reads settings.toml"
WRITE_THEN_DONE = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.py", "content": "1\n"}}]},
    {"content": "done"},
]
DISTILL = {"content": '{"facts": ["' + NOTE + '"], "lessons": []}'}


def _settings(tmp_path):
    return load_settings(
        tmp_path, flags={"turn_close": True}, environ={}, user_config=tmp_path / "n"
    )


def test_turn_ended_is_emitted_before_the_distill_reaches_the_server(tmp_path):
    with ScriptedServer({"responses": [*WRITE_THEN_DONE, DISTILL]}) as srv:
        bus = Emitter()
        seen_at_end: list[int] = []
        bus.subscribe(
            lambda e: seen_at_end.append(len(srv.requests)) if e.type == "turn_ended" else None
        )
        s = build_session(_settings(tmp_path), bus=bus, provider=LlamaProvider(srv.url))
        s.engine.run("write main.py")
        s.engine.settle()
        n_requests = len(srv.requests)
        s.close()
    # Two requests for the turn were in when turn_ended went out; the distill came after.
    assert seen_at_end == [2] and n_requests == 3


def test_notes_are_recalled_once_with_their_age_as_a_reminder(tmp_path):
    clock = [1_000_000.0]
    store = MemoryStore(tmp_path, clock=lambda: clock[0])
    store.add("fact", NOTE)
    clock[0] += 3 * 3600 + 5
    hook = TurnCloseHook(provider=None, store=store)
    ctx = None  # reminders() reads nothing of the turn
    first, again = hook.reminders(ctx), hook.reminders(ctx)  # type: ignore[arg-type]
    store.close()
    assert first == [f"{RECALL_HEADER}\n- 3 h ago: (fact) {NOTE}"] and again == []


def test_a_note_made_during_the_session_is_not_recalled_to_it(tmp_path):
    store = MemoryStore(tmp_path)
    hook = TurnCloseHook(provider=None, store=store)
    store.add("fact", NOTE)
    assert hook.reminders(None) == []  # type: ignore[arg-type]
    store.close()


def test_the_recall_is_a_reminder_after_the_history_not_a_prefix_change(tmp_path):
    MemoryStore(tmp_path).add("fact", NOTE)
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(_settings(tmp_path), bus=bus, provider=LlamaProvider(srv.url))
        s.engine.run("hello")
        s.close()
        messages = srv.requests[0]["messages"]
    assert NOTE not in messages[0]["content"]
    assert messages[-1]["role"] == "user" and "just now: (fact) " + NOTE in messages[-1]["content"]
    assert rec.of("reminder")[0].payload["sources"] == ["turn_close"]


def test_age_is_coarse():
    assert [age(s) for s in (5, 61, 3 * 3600 + 59, 2 * 86400)] == [
        "just now",
        "1 min ago",
        "3 h ago",
        "2 d ago",
    ]


def test_the_person_lists_and_forgets_notes_through_the_session(tmp_path):
    store = MemoryStore(tmp_path)
    store.add("fact", NOTE)
    store.add("lesson", "Run python3 -m pytest before saying done")
    store.close()
    with ScriptedServer({"responses": []}) as srv:
        s = build_session(_settings(tmp_path), provider=LlamaProvider(srv.url))
        listed = {n.text: n.id for n in s.notes()}
        forgot = s.forget_note(listed[NOTE])
        forgot_again = s.forget_note(listed[NOTE])
        left = [n.text for n in s.notes()]
        s.close()
    assert forgot and not forgot_again
    assert left == ["Run python3 -m pytest before saying done"]
