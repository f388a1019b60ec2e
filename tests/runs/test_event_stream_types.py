"""The `--json` stream is an interface: every tool and turn event of a whole scenario (a write, a
command, a crossing denied, a plain answer) is exactly an instance of its payload model in
protocol.py, no field missing, none extra, none of another type."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from cerveau_tui.protocol import (
    ApprovalResolved,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
)
from cerveau_tui.testing.scripted_server import ScriptedServer

MODELS: dict[str, type[BaseModel]] = {
    "tool_call": ToolCallPayload,
    "tool_started": ToolStartedPayload,
    "tool_result": ToolResultPayload,
    "approval_resolved": ApprovalResolved,
    "turn_ended": TurnEnded,
}


def strictly(model: type[BaseModel], payload: dict[str, Any]) -> None:
    """extra="forbid" semantics over models that allow extras: every key is a declared field, and
    the payload is what the model dumps of itself."""
    unknown = set(payload) - set(model.model_fields)
    assert not unknown, f"{model.__name__}: fields not in the model: {sorted(unknown)}"
    parsed = model.model_validate(payload)
    assert parsed.model_dump(mode="json", exclude_unset=True) == payload


def test_a_whole_scenario_streams_only_typed_payloads(cli, tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-outside.txt")
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "one\n"}}
                ]
            },
            {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": str(outside), "content": "x"}}
                ]
            },
            {"content": "Wrote a.txt; the outside write was refused."},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "write a.txt, show it, then write outside")
    seen = {t: [e["payload"] for e in events if e["type"] == t] for t in MODELS}
    for type_, payloads in seen.items():
        assert payloads, f"the scenario emitted no {type_}"
        for payload in payloads:
            strictly(MODELS[type_], payload)
    assert [p["name"] for p in seen["tool_call"]] == ["write_file", "bash", "write_file"]
    assert seen["approval_resolved"][-1]["decision"] == "denied"
    assert seen["turn_ended"][-1]["reason"] == "completed" and code == 0
    assert not outside.exists()
