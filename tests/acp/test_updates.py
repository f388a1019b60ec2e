"""What a client is told, event by event (updates.py), and what it is asked (approver.py): pure."""

from __future__ import annotations

import concurrent.futures
import threading
from pathlib import Path

from acp import schema as S

from cerveau_tui.acp.approver import ClientApprover, choices_for
from cerveau_tui.acp.updates import Translator, diff_contents, fenced
from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.loop.approver import ApprovalRequest
from cerveau_tui.protocol import (
    AssistantMessage,
    NoticePayload,
    PlanReported,
    StackProgress,
    TokenPayload,
    ToolResultPayload,
    TurnStarted,
)
from cerveau_tui.protocol.base import CallStatus
from cerveau_tui.protocol.gate import PlanReportStep
from cerveau_tui.tools.files import unified_diff

WS = Path("/w")


def test_a_diff_is_the_hunks_old_and_new_text_per_file() -> None:
    old = "".join(f"line {i}\n" for i in range(20))
    new = old.replace("line 2\n", "line two\n").replace("line 17\n", "")
    [d] = diff_contents(unified_diff("src/a.py", old, new), WS)
    assert d.path == "/w/src/a.py"
    assert "line 2\n" in d.old_text and "line two\n" not in d.old_text
    assert "line two\n" in d.new_text and "line 17\n" not in d.new_text
    assert "…\n" in d.new_text  # two hunks apart: marked, not glued


def test_a_removed_line_that_reads_like_a_header_stays_a_line() -> None:
    diff = unified_diff("a.md", "--- x\nkeep\n", "keep\n")
    [d] = diff_contents(diff, WS)
    assert d.old_text == "--- x\nkeep\n" and d.new_text == "keep\n"


def test_a_new_file_has_no_old_text_and_an_outside_path_stays_absolute() -> None:
    [d] = diff_contents(unified_diff("/etc/x", "", "hi\n"), WS)
    assert (d.path, d.old_text, d.new_text) == ("/etc/x", None, "hi\n")


def test_a_fence_no_backtick_run_inside_can_close() -> None:
    assert fenced("a ```` b").startswith("`````\n")


def test_tokens_stream_live_and_a_stored_answer_only_on_replay() -> None:
    live, replay = Translator(WS), Translator(WS, replay=True)
    answer = AssistantMessage(content="hello", reasoning="hm")
    assert [u.session_update for u in live(TokenPayload(text="he"))] == ["agent_message_chunk"]
    assert live(answer) == [] and live(TurnStarted(input="hi")) == []
    assert [u.session_update for u in replay(answer)] == [
        "agent_thought_chunk",
        "agent_message_chunk",
    ]
    assert [u.content.text for u in replay(TurnStarted(input="hi"))] == ["hi"]


def test_model_text_reaches_a_terminal_client_inert() -> None:
    [u] = Translator(WS)(TokenPayload(text="\x1b]52;c;cHduZWQ=\x07"))
    assert "\x1b" not in u.content.text and "\\x1b" in u.content.text


def test_a_denied_call_is_failed_with_its_reason() -> None:
    denied = ToolResultPayload(call_id="c", name="bash", ok=False, output="denied: no answer",
                               status=CallStatus.DENIED)  # fmt: skip
    [u] = Translator(WS)(denied)
    assert (u.status, u.raw_output["status"]) == ("failed", "denied")
    assert "denied: no answer" in u.content[0].content.text


def test_the_plan_goes_whole_with_acps_statuses() -> None:
    steps = [
        PlanReportStep(id="1", title="a", status="done"),
        PlanReportStep(id="2", title="b", status="pending"),
        PlanReportStep(id="3", title="c", status="changed"),
    ]
    [u] = Translator(WS)(PlanReported(steps=steps, current="2"))
    assert [(e.content, e.status) for e in u.entries] == [
        ("a", "completed"), ("b", "in_progress"), ("c (changed since done)", "pending"),
    ]  # fmt: skip


def test_a_notice_is_a_line_of_the_answer_and_server_progress_is_not_said() -> None:
    [u] = Translator(WS)(NoticePayload(text="held back", level="warning"))
    assert "held back" in u.content.text
    assert Translator(WS)(StackProgress(stage="load", line="x")) == []


def _req(choices: list[tuple[str, str]]) -> ApprovalRequest:
    return ApprovalRequest(call_id="c1", tool="bash", summary="curl x.org", reason="network",
                           scope=choices[1][1], choices=choices)  # fmt: skip


def test_options_are_once_then_a_session_grant_per_scope_then_deny_then_never() -> None:
    cs = choices_for(_req([("k1", "curl x.org"), ("k2", "curl to x.org"), ("k3", "curl")]))
    assert [c.option.kind for c in cs] == [
        "allow_once", "allow_always", "allow_always", "allow_always", "reject_once", "reject_always",
    ]  # fmt: skip
    assert [c.scope_key for c in cs[1:4]] == ["k1", "k2", "k3"]
    assert (cs[-1].decision, cs[-1].scope_key) == ("denied_always", "k2")  # the policy's default
    assert len({c.option.option_id for c in cs}) == len(cs)


def _approver(answer: concurrent.futures.Future[S.RequestPermissionResponse], timeout_s: float):  # type: ignore[no-untyped-def]
    bus = Emitter()
    rec = Recorder(bus)
    return ClientApprover(lambda _c, _o: answer, bus, "/w", timeout_s=timeout_s), rec


def test_the_clients_choice_is_our_decision_with_its_scope() -> None:
    answer: concurrent.futures.Future[S.RequestPermissionResponse] = concurrent.futures.Future()
    answer.set_result(S.RequestPermissionResponse(
        outcome=S.AllowedOutcome(outcome="selected", option_id="session-2")))  # fmt: skip
    approver, rec = _approver(answer, 5)
    d = approver.approve(_req([("k1", "a"), ("k2", "b"), ("k3", "c")]))
    assert (d.decision, d.scope_key, d.by) == ("approved_session", "k3", "person")
    assert len(rec.of("approval_requested")) == 1  # the log holds the question


def test_silence_is_denied_after_the_timeout_and_said() -> None:
    answer: concurrent.futures.Future[S.RequestPermissionResponse] = concurrent.futures.Future()
    approver, rec = _approver(answer, 0.05)
    d = approver.approve(_req([("k1", "a"), ("k2", "b")]))
    assert (d.decision, d.by) == ("denied", "timeout")
    assert answer.cancelled()  # the request withdrawn
    assert "no answer within 0.05 s" in rec.of("notice")[0].payload["text"]


def test_cancel_all_stops_a_waiting_request() -> None:
    answer: concurrent.futures.Future[S.RequestPermissionResponse] = concurrent.futures.Future()
    approver, _ = _approver(answer, 60)
    out = []
    t = threading.Thread(
        target=lambda: out.append(approver.approve(_req([("k", "a"), ("k", "a")])))
    )
    t.start()
    while not approver.pending:
        threading.Event().wait(0.01)
    approver.cancel_all("interrupted")
    t.join(5)
    assert out and out[0].decision == "stopped"


def test_an_option_never_offered_is_a_denial_said_in_the_turn() -> None:
    answer: concurrent.futures.Future[S.RequestPermissionResponse] = concurrent.futures.Future()
    answer.set_result(S.RequestPermissionResponse(
        outcome=S.AllowedOutcome(outcome="selected", option_id="allow-everything")))  # fmt: skip
    approver, rec = _approver(answer, 5)
    d = approver.approve(_req([("k1", "a"), ("k2", "b")]))
    assert d.decision == "denied" and "never offered" in rec.of("notice")[0].payload["text"]
