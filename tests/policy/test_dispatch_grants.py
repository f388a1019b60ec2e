"""How the dispatcher applies a person's decision: the scope they chose, which grant let a call
through (on its tool_result), no rerun that adds no room, and a refused rerun shown as denied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest
from cerveau_tui.loop.dispatch import Dispatcher
from cerveau_tui.loop.events import TurnEvents
from cerveau_tui.loop.schedule import ToolExecution
from cerveau_tui.loop.state import EngineState
from cerveau_tui.policy import Policy
from cerveau_tui.policy.verdict import Verdict
from cerveau_tui.sandbox.base import Grant
from cerveau_tui.tools.base import Declared, Tool, ToolContext, ToolResult


class _Args(BaseModel):
    command: str


class FakeBash(Tool):
    """Fails like the sandbox's DNS refusal unless told to succeed; records the room it got."""

    name: ClassVar[str] = "bash"
    description: ClassVar[str] = "fake"
    Args: ClassVar[type[BaseModel]] = _Args
    runs_command: ClassVar[bool] = True

    def __init__(self, output: str = "curl: (6) Could not resolve host: a.example", ok=False):
        self.output, self.ok, self.rooms = output, ok, []

    def declare(self, args: BaseModel, ctx: ToolContext) -> Declared:
        return Declared(
            reads=[ctx.workspace], writes=[ctx.workspace], command=args.command, network=True
        )  # type: ignore[attr-defined]

    def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        self.rooms.append(ctx.grant)
        return ToolResult(self.ok, self.output, exit_code=0 if self.ok else 6)


class Answers:
    def __init__(self, *decisions: ApprovalDecision) -> None:
        self.decisions, self.asked = list(decisions), []

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(req)
        return self.decisions.pop(0)


def _run(ws: Path, policy, tool: FakeBash, approver: Answers, command: str):
    bus = Emitter()
    rec = Recorder(bus)
    d = Dispatcher(
        registry=None,  # type: ignore[arg-type]
        judge=policy,
        approver=approver,
        events=TurnEvents(bus, ws),
        hooks=[],
        state=EngineState(),
        tool_context=lambda g: ToolContext(workspace=ws, state=EngineState().tools, grant=g),
    )
    ex = ToolExecution(
        0, "c1", "bash", {"command": command}, tool=tool, args=_Args(command=command)
    )
    ex.declared = tool.declare(ex.args, ToolContext(workspace=ws, state=EngineState().tools))  # type: ignore[arg-type]
    done = d.run_one(ex)
    d.events.result(done, done.result.output if done.result else "")
    return done, rec


def _policy(ws: Path) -> Policy:
    return Policy(
        ws, "workspace-write", "on-request", [], network_grant=lambda: False, enforced=True
    )


def test_an_approved_network_call_that_fails_on_dns_is_not_asked_again(ws: Path) -> None:
    approver = Answers(ApprovalDecision("approved"))
    done, _ = _run(ws, _policy(ws), FakeBash(), approver, "curl http://a.example/")
    assert len(approver.asked) == 1
    assert done.status == "failed"


def test_a_refused_rerun_is_denied_not_failed(ws: Path, outside: Path) -> None:
    class Refused(FakeBash):
        def declare(self, args, ctx):  # no network: a write the sandbox refused
            return Declared(reads=[ctx.workspace], writes=[ctx.workspace], command=args.command)

    policy = Policy(
        ws, "workspace-write", "on-failure", [], network_grant=lambda: False, enforced=True
    )
    tool = Refused(f"touch: cannot touch '{outside}/x': Read-only file system")
    approver = Answers(ApprovalDecision("denied"))
    done, rec = _run(ws, policy, tool, approver, f"touch {outside}/x")
    assert len(approver.asked) == 1 and "rerun" in approver.asked[0].reason
    assert done.status == "denied"
    assert rec.of("tool_result")[-1].payload["status"] == "denied"
    assert "the person denied" in done.result.output  # type: ignore[union-attr]


def test_the_chosen_scope_is_granted_named_and_shown_on_the_next_card(ws: Path) -> None:
    policy = _policy(ws)
    approver = Answers(ApprovalDecision("approved_session", scope_key="command:curl@a.example"))
    tool = FakeBash("ok", ok=True)
    _, rec = _run(ws, policy, tool, approver, "curl -s http://a.example/one")
    resolved = rec.of("approval_resolved")[-1].payload
    assert resolved["scope"] == "commands starting with `curl` to a.example only"
    assert [k for k, _ in approver.asked[0].choices][-1] == "command:curl"  # the default, broadest
    done, rec = _run(ws, policy, tool, Answers(), "curl http://a.example/two")
    assert done.status == "done" and tool.rooms[-1].network
    assert "a.example only" in rec.of("tool_result")[-1].payload["granted_by"]
    _, _ = _run(
        ws, policy, tool, other := Answers(ApprovalDecision("denied")), "curl http://b.example/"
    )
    assert len(other.asked) == 1  # another host asks again


def test_always_keeps_a_rule_and_never_denies_from_then_on(ws: Path, tmp_path: Path) -> None:
    import secrets

    from cerveau_tui.policy.rules_store import LastingRules

    store, key = tmp_path / "cfg" / "rules.json", secrets.token_bytes(32)
    policy = Policy(ws, "workspace-write", "on-request", [], network_grant=lambda: False,
                    enforced=True, lasting=LastingRules(ws, store, key))  # fmt: skip
    tool = FakeBash("ok", ok=True)
    always = ApprovalDecision("approved_always", scope_key="command:curl@a.example")
    _run(ws, policy, tool, Answers(always), "curl http://a.example/")
    _run(ws, policy, tool, Answers(ApprovalDecision("denied_always", scope_key="exact:curl http://b.example/")), "curl http://b.example/")  # fmt: skip
    later = Policy(ws, "workspace-write", "on-request", [], network_grant=lambda: False,
                   enforced=True, lasting=LastingRules(ws, store, key))  # fmt: skip
    v: Verdict = later.evaluate("bash", tool.declare(_Args(command="curl http://a.example/z"), ToolContext(workspace=ws, state=EngineState().tools)))  # fmt: skip
    assert v.action == "allow" and "always" in v.granted_by
    d = Declared(reads=[ws], writes=[ws], command="curl http://b.example/", network=True)
    assert later.evaluate("bash", d).action == "deny"
    # Boundary IV: the rule's network is its host only (was Grant(network=True): any host).
    assert Grant(network=True, hosts=("a.example",)) == v.grant
    assert len(json.loads(store.read_text())["rules"]) == 2


def test_the_dialog_names_the_outside_folder_not_the_workspace(ws: Path, outside: Path) -> None:
    class Writes(FakeBash):
        def declare(self, args, ctx):
            return Declared(
                reads=[ctx.workspace], writes=[ctx.workspace, outside / "x"], command=args.command
            )

    approver = Answers(ApprovalDecision("denied"))
    _run(ws, _policy(ws), Writes(), approver, f"touch {outside}/x")
    assert approver.asked[0].paths == [str(outside), str(outside / "x")]  # the room, then the file
