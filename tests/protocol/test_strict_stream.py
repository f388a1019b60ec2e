"""The `--json` stream of a long scripted session, validated event by event against the closed
protocol: every event's type is in EVENT_MODELS, its payload fits the model with extra="forbid",
it is exactly what the model dumps, and it carries its `ts` float. Real CLI, real pytest, the
scripted server: a plan, reads, a refused crossing, a drift, a repeat; then the done gate's
ladder to a park; then a resumed session that fixes the code, checkpoints the step and ends passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.protocol import EVENT_MODELS, EventType
from cerveau_tui.testing.scripted_server import ScriptedServer

from .scenario import call, project, run

#: What the scenario must at least have said, so the test cannot pass on a short stream.
EXPECTED = {
    "session_started", "session_resumed", "turn_started", "iteration_started",
    "assistant_message", "tool_call", "tool_started", "tool_result", "approval_resolved",
    "usage", "notice", "plan_committed", "plan_updated", "checkpoint", "drift", "check",
    "escalation", "parked", "verification", "turn_ended",
}  # fmt: skip


def strictly(event: dict[str, Any]) -> None:
    model = EVENT_MODELS[EventType(event["type"])]
    assert isinstance(event["ts"], float), event
    parsed = model.model_validate(event["payload"])  # extra="forbid": an unknown key raises
    assert parsed.wire() == event["payload"], (event["type"], event["payload"])


def test_every_event_of_a_long_session_fits_the_closed_protocol(tmp_path: Path) -> None:
    ws = project(tmp_path / "ws")
    outside = tmp_path / "outside.txt"
    first = [
        call("commit_plan", steps=[{"id": "1", "title": "fix add", "files": ["calc.py"]}]),
        call("update_plan", step_id="1", status="in_progress"),
        call("read_file", path="calc.py"),
        call("write_file", path=str(outside), content="x"),
        call("write_file", path="notes.txt", content="a note\n"),
        call("bash", command="cat calc.py"),
        call("bash", command="cat calc.py"),
        call("bash", command="cat calc.py"),  # the repeat guard ends this turn
    ]
    with ScriptedServer(first) as srv:
        events = run(ws, srv.url, "make the tests pass")
    # The gate's ladder: 2 stalls per rung, R1..R3, then park.
    stalls = [{"content": f"I believe it is done ({i})."} for i in range(8)]
    with ScriptedServer(stalls) as srv:
        events += run(ws, srv.url, "make the tests pass", "--resume", "last")
    second = [
        call("edit_file", path="calc.py", old="a - b", new="a + b"),
        call("update_plan", step_id="1", status="done"),
        {"content": "Fixed."},
        {"content": "Fixed."},
    ]
    with ScriptedServer(second) as srv:
        events += run(ws, srv.url, "continue", "--resume", "last")
    for event in events:
        strictly(event)
    seen = {e["type"] for e in events}
    assert EXPECTED <= seen, sorted(EXPECTED - seen)
    assert not outside.exists()
