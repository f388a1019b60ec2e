"""What the model and the person read about a call names who stopped it: the person's interrupt is
not a wrong call, the repeat guard is not the person refusing, a flood killed at its cap says so."""

from __future__ import annotations

import threading
from pathlib import Path

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll, DenyAll
from cerveau_tui.loop.dispatch import shape_failure
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.sandbox.base import CommandResult
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.process import run_process
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.tools.base import RetryClass, ToolContext, ToolResult, ToolState
from cerveau_tui.tools.bash import Bash

SAME = {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}


class Canned:
    backend, enforced = "none", False

    def __init__(self, result: CommandResult) -> None:
        self.result = result

    def run(self, spec: CommandSpec) -> CommandResult:
        return self.result

    def kill_background(self) -> None:
        pass


def bash_result(tmp_path: Path, res: CommandResult) -> ToolResult:
    ctx = ToolContext(workspace=tmp_path, state=ToolState(), runner=Canned(res), bash_timeout=30)
    return Bash().run(Bash.Args(command="sleep 30"), ctx)


def test_an_interrupted_command_is_not_a_call_to_fix(tmp_path: Path) -> None:
    r = bash_result(tmp_path, CommandResult(exit_code=None, output="", interrupted=True))
    assert r.error_class is None and "the person interrupted it" in r.output
    shown = shape_failure(r, retried=False, interrupted=True)
    assert "fix the call" not in shown and "Interrupted by the person" in shown


def test_a_wrong_call_still_reads_fix_the_call() -> None:
    r = ToolResult(False, "no such file", error_class=RetryClass.ARGS)
    assert shape_failure(r, retried=False).startswith("Error (fix the call)")


def test_an_interrupt_during_a_command_reaches_the_model_as_the_persons(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}
    script = {"responses": [call, {"content": "ok"}, {"content": "ok"}]}
    with ScriptedServer(script) as srv:
        settings = load_settings(
            tmp_path, environ={"CERVEAU_APPROVAL": '"never"'}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        running = threading.Event()
        bus.subscribe(lambda e: running.set() if e.payload.get("status") == "running" else None)
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        t = threading.Thread(target=s.engine.run, args=("wait",))
        t.start()
        assert running.wait(30)
        s.engine.interrupt()
        t.join(60)
        s.engine.run("go on")
        s.close()
    told = [m for m in srv.requests[-1]["messages"] if m["role"] == "tool"][0]["content"]
    assert "fix the call" not in told and "Interrupted by the person" in told


def test_a_call_the_repeat_guard_stopped_is_not_labelled_denied(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    with ScriptedServer({"responses": [SAME, SAME, SAME, {"content": "ok"}]}) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, approver=DenyAll(), provider=LlamaProvider(srv.url))
        out = s.engine.run("read")
        s.close()
    assert out.reason == "repeat"
    last = rec.of("tool_result")[-1].payload
    assert last["status"] == "guarded" and "same read_file call" in last["output"]


def test_an_output_flood_killed_at_its_cap_says_so(tmp_path: Path) -> None:
    res = run_process(
        ["yes", "flood"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        output_cap=1000,
        cancel=None,
        flood_bytes=256 * 1024,
    )
    assert res.exit_code is None and res.truncated
    r = bash_result(tmp_path, res)
    assert "killed: output flood" in r.output and "the cap is 0.2 MiB" in r.output


def test_a_reply_interrupted_mid_stream_reaches_the_next_request_as_the_persons(
    tmp_path: Path,
) -> None:
    script = {
        "responses": [{"content": "I will start by reading every file " * 20}, {"content": "ok"}]
    }
    with ScriptedServer(script) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
        bus = Emitter()
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        stop = bus.subscribe(lambda e: s.engine.interrupt() if e.type == "token" else None)
        out = s.engine.run("look around")
        stop()
        s.engine.run("go on")
        s.close()
    assert out.reason == "interrupted"
    said = [m["content"] for m in srv.requests[-1]["messages"] if m["role"] == "assistant"]
    assert (
        said
        and said[-1].startswith("I will")
        and said[-1].endswith("[the person interrupted this reply]")
    )
