"""The guards as hooks: what the model reads, what the bus carries, when the turn stops."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import Settings
from cerveau_tui.history import History
from cerveau_tui.hooks import CallRecord, Stop, TurnContext
from cerveau_tui.loop.guards.turn_hooks import BreakerHook, PortHook, ProgressHook
from cerveau_tui.protocol import CallStatus, GuardTripped
from cerveau_tui.tools.base import ToolState


def _ctx(tmp_path: Path) -> tuple[TurnContext, Recorder]:
    bus = Emitter()
    rec = Recorder(bus)
    ctx = TurnContext(
        turn_id="t1",
        iteration=1,
        workspace=tmp_path,
        bus=bus,
        state=ToolState(),
        history=History(),
        settings=Settings(workspace=tmp_path),
    )
    return ctx, rec


def _bash(iteration: int, command: str, exit_code: int, output: str) -> CallRecord:
    return CallRecord(
        iteration=iteration,
        call_id=f"c{iteration}",
        name="bash",
        arguments={"command": command},
        ok=exit_code == 0,
        output=output,
        exit_code=exit_code,
        command=command,
    )


def test_breaker_hook_replaces_the_third_failure_with_a_question(tmp_path: Path) -> None:
    ctx, rec = _ctx(tmp_path)
    hook = BreakerHook(3)
    hook.on_turn_start(ctx, "task")
    out = "ModuleNotFoundError: No module named 'leftpadx'\n[exit code 1]"
    assert hook.on_tool_result(ctx, _bash(1, "python3 -c 'import leftpadx'", 1, out)) is None
    assert (
        hook.on_tool_result(ctx, _bash(2, "python3 -m leftpadx", 1, "No module named leftpadx"))
        is None
    )
    told = hook.on_tool_result(ctx, _bash(3, "leftpadx", 127, "bash: leftpadx: command not found"))
    assert told is not None and "leftpadx" in told
    [event] = rec.of("guard_tripped")
    payload = GuardTripped.model_validate(event.payload)
    assert (payload.guard, payload.reason, payload.iteration, payload.told) == (
        "breaker",
        "missing dependency: leftpadx",
        3,
        told,
    )


def test_breaker_hook_ignores_other_tools_and_refused_commands(tmp_path: Path) -> None:
    ctx, rec = _ctx(tmp_path)
    hook = BreakerHook(2)
    read = CallRecord(
        iteration=1,
        call_id="r",
        name="read_file",
        arguments={"path": "x"},
        ok=False,
        output="x: No such file or directory",
    )
    refused = _bash(1, "cat x", 1, "cat: x: No such file or directory")
    refused.status = CallStatus.DENIED  # one vocabulary (protocol CallStatus): refused is denied
    for record in (read, read, refused, refused):
        assert hook.on_tool_result(ctx, record) is None
    assert rec.of("guard_tripped") == []


def test_progress_hook_stops_a_still_turn_naming_the_reads(tmp_path: Path) -> None:
    ctx, rec = _ctx(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    hook = ProgressHook(lambda: (tmp_path / "a.py").read_text(), limit=3)
    hook.on_turn_start(ctx, "task")
    result = None
    for i in (1, 2, 3):
        ctx.iteration = i
        ctx.calls.append(
            CallRecord(
                iteration=i,
                call_id=str(i),
                name="read_file",
                arguments={"path": "a.py"},
                ok=True,
                output="x = 1",
            )
        )
        result = hook.after_iteration(ctx)
        if i < 3:
            assert result is None
    assert isinstance(result, Stop) and result.reason == "stalled"
    assert "read_file x3 (a.py)" in result.message
    [event] = rec.of("guard_tripped")
    assert event.payload["guard"] == "stall" and event.payload["iteration"] == 3


def test_progress_hook_lets_a_writing_turn_run(tmp_path: Path) -> None:
    ctx, rec = _ctx(tmp_path)
    f = tmp_path / "a.py"
    f.write_text("0")
    hook = ProgressHook(f.read_text, limit=2)
    hook.on_turn_start(ctx, "task")
    for i in range(1, 6):
        ctx.iteration = i
        f.write_text(str(i))
        assert hook.after_iteration(ctx) is None
    assert rec.of("guard_tripped") == []


def test_port_hook_refuses_serving_on_the_model_port(tmp_path: Path) -> None:
    ctx, rec = _ctx(tmp_path)
    hook = PortHook({8080: "LLM server (llama.cpp)"})
    told = hook.before_tool(ctx, "bash", {"command": "python3 -m http.server 8080"})
    assert told is not None and "8080" in told and "LLM server" in told
    assert hook.before_tool(ctx, "bash", {"command": "python3 -m http.server 8888"}) is None
    assert hook.before_tool(ctx, "write_file", {"path": "p", "content": "8080"}) is None
    [event] = rec.of("guard_tripped")
    assert event.payload["guard"] == "port"


def test_port_hook_puts_the_live_stack_in_the_system_prompt() -> None:
    hook = PortHook({8080: "LLM server (llama.cpp)"})
    [section] = hook.system_sections()
    assert "LLM server (llama.cpp) on http://127.0.0.1:8080" in section
    assert hook.system_sections() == [section]  # stable: it is the cache prefix


def test_port_hook_without_services_adds_no_section() -> None:
    assert PortHook({}).system_sections() == []


def test_a_tripped_shape_reaches_the_resume_brief_as_what_failed(tmp_path: Path) -> None:
    from cerveau_tui.loop.model_call import resume_brief
    from cerveau_tui.loop.state import EngineState

    ctx, _ = _ctx(tmp_path)
    hook = BreakerHook(threshold=3)
    assert hook.resume_brief() == []
    for i in range(1, 4):
        hook.on_tool_result(ctx, _bash(i, "pip install leftpadx", 1, "No matching distribution"))
    state = EngineState(task="add leftpad")
    brief = resume_brief(4, state=state, workspace=tmp_path, hooks=[hook])
    failed = brief.split("What already failed", 1)[1].split("\n\n", 1)[0]
    assert "pip" in failed and "kept failing the same way" in failed, brief
