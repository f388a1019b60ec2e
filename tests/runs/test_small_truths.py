"""Issue 21's small untruths, each through the real CLI where the person meets it: what a screen
or a JSON line says must be what happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

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


def _bash_output(cli, ws, command, *extra):
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"content": "done."},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, err = cli(ws, srv.url, "run it", *extra)
    assert code == 0, err[-2000:]
    (result,) = [e["payload"] for e in events if e["type"] == "tool_result"]
    return result["output"], events


def test_a_capped_log_card_counts_every_line_not_shown_not_only_the_kept_ones(cli, tmp_path):
    from cerveau_tui.app.widgets.tool_card import MAX_OUTPUT_LINES, clip_output

    ws = tmp_path / "ws"
    ws.mkdir()
    output, _ = _bash_output(cli, ws, "seq 1 20000")
    assert len(output) < 20_000  # the output cap cut it before the card saw it
    shown = clip_output(output)
    first, *rest = shown.splitlines()
    assert rest[-1] == "[exit code 0]" and rest[-2] == "20000"
    assert len(rest) == MAX_OUTPUT_LINES
    # 20,000 lines of output and the exit line: all but the last 40 were not shown.
    assert first == f"… {20_001 - MAX_OUTPUT_LINES:,} earlier lines not shown"


def _sessions(ws, *flags):
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "sessions", "--workspace", str(ws), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_sessions_leaves_out_a_session_without_a_turn_and_says_so(cli, tmp_path):
    from cerveau_tui.bus import Emitter
    from cerveau_tui.plan.persist import SessionLog

    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedServer({"responses": [{"content": "hi."}]}) as srv:
        code, events, err = cli(ws, srv.url, "say hi")
    assert code == 0, err[-2000:]
    talked = events[0]["session_id"]
    opened = SessionLog(ws, "openedonly")  # the app opened and closed without a word
    Emitter("openedonly").subscribe(opened)
    opened.close()
    text = _sessions(ws)
    assert talked in text and "openedonly" not in text
    assert "1 session(s) without a turn not listed" in text
    listed = {s["id"]: s["turns"] for s in json.loads(_sessions(ws, "--json"))}
    assert listed == {talked: 1, "openedonly": 0}


def test_sessions_header_names_the_columns_each_row_has(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedServer({"responses": [{"content": "hi."}]}) as srv:
        code, events, err = cli(ws, srv.url, "say hi")
    assert code == 0, err[-2000:]
    header, row = _sessions(ws).splitlines()[:2]
    (summary,) = json.loads(_sessions(ws, "--json"))
    names = header.split()
    assert names[:5] == ["ID", "STARTED", "LAST", "ACTIVE", "TURNS"]
    assert row.split()[:4] == [summary["id"], summary["started"], summary["last_active"], "1"]


def _doctor(tmp_path, *flags):
    """`cerveau doctor` on the embedded stack: a llama-server binary and a model in place (files
    only: nothing is started), and no server named."""
    ws, person = tmp_path / "ws", tmp_path / "person"
    ws.mkdir(exist_ok=True)
    person.mkdir(exist_ok=True)
    binary = person / "llama-server"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    (person / "m.gguf").write_bytes(b"GGUF")
    config = person / "config.toml"
    config.write_text(f'model_path = "{person / "m.gguf"}"\ncache_dir = "{person / "cache"}"\n')
    env = {
        **os.environ,
        "CERVEAU_CONFIG": str(config),
        "CERVEAU_LLAMA_SERVER": str(binary),
        "CERVEAU_SERVER_URL": "",
        # Its own cache, so no record of a server another test (or CI's shared cache, which
        # .ci/run exports as CERVEAU_CACHE_DIR) left running is read.
        "CERVEAU_CACHE_DIR": str(person / "cache"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "doctor", "--workspace", str(ws), *flags],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_doctor_says_the_embedded_stack_starts_on_demand_not_unreachable(tmp_path):
    text = _doctor(tmp_path)
    (server,) = [line for line in text.splitlines() if line.startswith("server:")]
    assert "embedded" in server and "starts on demand" in server
    assert "reachable=False" not in text
    info = json.loads(_doctor(tmp_path, "--json"))
    assert info["server"]["embedded"] == "starts on demand"


def _unshare_ok() -> bool:
    import shutil

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def _run_on_a_read_only_workspace(ws, url, config):
    """`cerveau run --json` with the workspace bind-mounted read-only in a private mount
    namespace: the kernel refuses the writes (EROFS), as on a mounted image or a read-only share."""
    import shlex

    run = [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
    run += ["--server", url, "say hi"]
    script = (
        f"mount --bind {shlex.quote(str(ws))} {shlex.quote(str(ws))} && "
        f"mount -o remount,ro,bind {shlex.quote(str(ws))} && exec {shlex.join(run)}"
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CERVEAU_CONFIG": str(config)},
    )


@pytest.mark.skipif(not _unshare_ok(), reason="needs root and unshare for a read-only mount")
@pytest.mark.parametrize("had_state_dir", [False, True], ids=["fresh", "checkout-had-cerveau"])
def test_a_read_only_workspace_is_refused_in_one_line_naming_what_to_do(tmp_path, had_state_dir):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    if had_state_dir:
        (ws / ".cerveau").mkdir()
    before = sorted(p.name for p in ws.rglob("*"))
    with ScriptedServer({"responses": [{"content": "hi."}]}) as srv:
        proc = _run_on_a_read_only_workspace(ws, srv.url, tmp_path / "no-user-config.toml")
        asked = list(srv.requests), dict(srv.state.hits)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"cerveau: cannot keep this session's state in {ws / '.cerveau'}")
    assert "writable copy" in line and "OSError" not in line and "Errno" not in line
    events = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [e["type"] for e in events] == ["error", "turn_ended"]
    # Refused before anything started: the server was not even asked for its props (an embedded
    # one would have loaded its model first), and the workspace is as it was.
    assert asked == ([], {})
    assert sorted(p.name for p in ws.rglob("*")) == before


def _bwrap_ok() -> bool:
    import shutil

    return shutil.which("bwrap") is not None


PRIVATE_TMP = "commands run with a private /tmp"


def _notices(events):
    return [e["payload"].get("text", "") for e in events if e["type"] == "notice"]


@pytest.mark.skipif(not _bwrap_ok(), reason="the private /tmp is bubblewrap's")
def test_the_person_is_told_once_that_tmp_is_private_when_a_command_writes_there(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"/tmp/cerveau-private-tmp-{os.getpid()}.log"
    calls = [
        {"name": "bash", "arguments": {"command": f"echo one > {marker}"}},
        {"name": "bash", "arguments": {"command": f"echo two >> {marker}; cat {marker}"}},
    ]
    script = {"responses": [{"tool_calls": [c]} for c in calls] + [{"content": "done."}]}
    with ScriptedServer(script) as srv:
        code, events, err = cli(
            ws, srv.url, "log to tmp", env={"CERVEAU_SANDBOX_BACKEND": "bubblewrap"}
        )
    assert code == 0, err[-2000:]
    started = [e["payload"] for e in events if e["type"] == "session_started"][0]
    assert started["sandbox"]["backend"] == "bubblewrap"
    assert not os.path.exists(marker)  # the host's /tmp never had it: private indeed
    assert len([n for n in _notices(events) if n.startswith(PRIVATE_TMP)]) == 1


@pytest.mark.skipif(not _bwrap_ok(), reason="the private /tmp is bubblewrap's")
def test_a_command_that_never_names_tmp_says_nothing_about_it(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "bash", "arguments": {"command": "ls ./tmp build/tmp; true"}}
                ]
            },
            {"content": "done."},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, err = cli(ws, srv.url, "list", env={"CERVEAU_SANDBOX_BACKEND": "bubblewrap"})
    assert code == 0, err[-2000:]
    assert not [n for n in _notices(events) if n.startswith(PRIVATE_TMP)]


def test_doctor_names_each_embedded_state_for_what_it_is():
    from cerveau_tui.doctor import embedded_state

    assert embedded_state({"server_url": "http://127.0.0.1:8080", "ready": True}) == "running"
    assert embedded_state({"server_url": None, "ready": True}) == "starts on demand"
    assert embedded_state({"server_url": None, "ready": False}) == "not provisioned"
