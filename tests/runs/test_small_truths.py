"""Issue 21's small untruths, each through the real CLI where the person meets it: what a screen
or a JSON line says must be what happened."""

from __future__ import annotations

import json
import time

from cerveau_tui.testing.scripted_server import ScriptedServer


def test_every_json_event_of_a_run_carries_ts_seconds_since_the_epoch(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}
                ]
            },
            {"content": "done."},
        ]
    }
    before = time.time()
    with ScriptedServer(script) as srv:
        code, events, err = cli(ws, srv.url, "write a.txt")
    after = time.time()
    assert code == 0, err[-2000:]
    assert len(events) > 5
    stamps = [e.get("ts") for e in events]
    assert all(isinstance(t, float) for t in stamps), [e["type"] for e in events if "ts" not in e]
    assert before <= stamps[0] and stamps[-1] <= after
    assert stamps == sorted(stamps)  # stamped in seq order, under the bus's lock


def test_the_session_log_lines_carry_the_same_ts_as_the_json_events(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedServer({"responses": [{"content": "hi."}]}) as srv:
        code, events, err = cli(ws, srv.url, "say hi")
    assert code == 0, err[-2000:]
    (log,) = (ws / ".cerveau" / "sessions").glob("*.jsonl")
    logged = {}
    for line in log.read_text().splitlines():
        obj = json.loads(line)
        if "seq" in obj and "type" in obj:
            logged[obj["seq"]] = obj.get("ts")
    printed = {e["seq"]: e["ts"] for e in events if e["seq"] in logged}
    assert printed and all(logged[s] == t for s, t in printed.items())
