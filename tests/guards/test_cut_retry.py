"""A truncated call changes the next round (issue 24: `commit_plan` was cut off at the 1,024-token
cap three times and offered again each time at the same cap). Rules in guards/cut_retry.py; the
scenarios run the real CLI on the scripted server and read the requests it captured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.loop.guards.cut_retry import FEW_ITEMS, MIN_CHARS, CutRetries, narrowed_schema
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.tools.plan_tools import CommitPlan

CUT_PLAN = {
    "name": "commit_plan",
    "raw_arguments": '{"steps": [{"id": "1", "title": "read the failing test and',
    "finish_reason": "length",
}


def _run(tmp_path: Path, n_ctx: int, cuts: int, *extra: str, **srv: Any) -> list[dict[str, Any]]:
    script = {"responses": [CUT_PLAN] * cuts + [{"content": "stopped"}]}
    with ScriptedServer(script, n_ctx=n_ctx, **srv) as server:
        code, _, err = run_cli(tmp_path, server.url, "plan the fix", "--max-tokens", "1024", *extra)
        assert code == 0, err[-2000:]
        return list(server.requests)


def _offer(body: dict[str, Any]) -> tuple[int, str, str]:
    """What a request offers the model: its cap, its action schema (constrained mode's grammar),
    and what it was told last. Never its tools: those stay the same (issue 36)."""
    told = body["messages"][-1].get("content") or ""
    return body["max_tokens"], json.dumps(body.get("response_format"), sort_keys=True), told


def _plan_tool(body: dict[str, Any]) -> dict[str, Any]:
    for t in body["tools"]:
        if t["function"]["name"] == "commit_plan":
            params: dict[str, Any] = t["function"]["parameters"]
            return params
    raise AssertionError("commit_plan not offered")


def test_with_room_in_the_window_the_retry_after_a_cut_gets_a_larger_cap(tmp_path: Path) -> None:
    requests = _run(tmp_path, 32768, 1)
    assert [r["max_tokens"] for r in requests[:2]] == [1024, 2048]


def test_three_identical_cuts_never_get_the_same_request_twice(tmp_path: Path) -> None:
    requests = _run(tmp_path, 4096, 3)
    offers = [_offer(r) for r in requests[:4]]
    assert len(set(offers)) == len(offers), [o[0] for o in offers]


def test_without_room_the_cut_tool_is_bounded_in_words_and_the_tools_sent_stay(
    tmp_path: Path,
) -> None:
    """4k window: 1,024 -> 2,048 (half the window), then no larger cap: commit_plan bounded. The
    schema is the prompt's prefix in native mode: the bound is said, the tools stay the same."""
    requests = _run(tmp_path, 4096, 2)
    assert [r["max_tokens"] for r in requests[:3]] == [1024, 2048, 2048]
    assert requests[2]["tools"] == requests[0]["tools"]
    assert _plan_tool(requests[2])["properties"]["steps"]["maxItems"] > FEW_ITEMS
    told = requests[2]["messages"][-1]["content"]
    assert f"holds at most {FEW_ITEMS} items a list" in told


def test_the_bound_reaches_the_constrained_grammar_and_the_system_message_stays(
    tmp_path: Path,
) -> None:
    """Constrained mode's grammar is a field outside the prompt: narrowing it costs no cache."""
    requests = _run(tmp_path, 4096, 2, supports_tools=False)
    schemas = [json.dumps(r["response_format"]) for r in requests[:3]]
    assert '"maxItems": 3' not in schemas[1] and '"maxItems": 3' in schemas[2]
    systems = {json.dumps(r["messages"][0]) for r in requests[:3]}
    assert len(systems) == 1


def test_the_model_is_told_the_new_cap(tmp_path: Path) -> None:
    requests = _run(tmp_path, 32768, 1)
    said = json.dumps(requests[1]["messages"])
    assert "up to 2048 tokens" in said


# --- the rules, pure ---------------------------------------------------------------------------


def test_the_cap_doubles_while_the_window_has_room() -> None:
    cuts = CutRetries()
    assert cuts.after_cut("write_file", 1024, 32768, 2000).max_tokens == 2048
    assert cuts.after_cut("write_file", 2048, 32768, 2000).max_tokens == 4096


def test_the_cap_never_passes_the_room_the_prompt_leaves() -> None:
    assert CutRetries().after_cut("write_file", 1024, 32768, 30000).max_tokens == 2048
    retry = CutRetries().after_cut("write_file", 1024, 32768, 31000)  # 1,512 left: not enough
    assert retry.max_tokens == 1024 and retry.chars == 2048


def test_each_further_cut_halves_the_bound_then_withholds_the_tool() -> None:
    cuts = CutRetries()
    bounds = [cuts.after_cut("write_file", 100, 0, 0) for _ in range(3)]
    assert [b.chars for b in bounds[:2]] == [200, 100]  # 50 would be under MIN_CHARS
    assert MIN_CHARS > 50 and bounds[2].withheld and not bounds[1].withheld
    offered = cuts.request([CommitPlan.schema(), {"name": "write_file", "parameters": {}}])
    assert [s["name"] for s in offered] == ["commit_plan"]
    assert cuts.withheld == {"write_file"}  # its round refuses it (loop/narrow.py)
    assert [s["name"] for s in cuts.request([{"name": "write_file", "parameters": {}}])] == [
        "write_file"
    ]  # withheld for one request only
    assert cuts.withheld == set()


def test_a_narrowed_schema_only_adds_bounds_and_fits_the_characters() -> None:
    plan = narrowed_schema(CommitPlan.schema(), 1800)
    step = plan["parameters"]["properties"]["steps"]
    # 3 steps x (id, title, check, 3 files) = 18 text fields share the 1,800 characters
    assert step["maxItems"] == 3 and step["items"]["properties"]["title"]["maxLength"] == 100
    assert CommitPlan.schema()["parameters"]["properties"]["steps"]["maxItems"] == 20


def test_the_person_reads_the_new_cap_in_the_guard_line(tmp_path: Path) -> None:
    script = {"responses": [CUT_PLAN, {"content": "stopped"}]}
    with ScriptedServer(script, n_ctx=32768) as server:
        _, events, _ = run_cli(tmp_path, server.url, "plan the fix", "--max-tokens", "1024")
    (trip,) = [e["payload"] for e in events if e["type"] == "guard_tripped"]
    assert trip["guard"] == "truncation" and "the retry may take 2048 tokens" in trip["reason"]


UNNAMED_CUT = {
    "error": {
        "status": 500,
        "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] "
        "parse error at line 1, column 40: syntax error while parsing value - invalid string: "
        "missing closing quote; last read: '\"def add'",
        "type": "server_error",
    }
}


def test_cuts_the_server_did_not_name_never_get_the_same_request_twice(tmp_path: Path) -> None:
    """A 4k window at a 2,048 cap has no room for a larger one: the same request went out three
    times until the turn ended on model errors. Now every tool is bounded, tighter each time."""
    script = {"responses": [UNNAMED_CUT] * 3 + [{"content": "stopped"}]}
    with ScriptedServer(script, n_ctx=4096) as server:
        run_cli(tmp_path, server.url, "fix it", "--max-tokens", "2048")
        requests = list(server.requests)
    offers = [_offer(r) for r in requests[:3]]
    assert len(offers) == 3 and len(set(offers)) == 3, [o[0] for o in offers]
    assert all(r["tools"] == requests[0]["tools"] for r in requests)


def test_an_unnamed_cut_without_room_narrows_every_tool_and_says_so() -> None:
    cuts = CutRetries()
    retry = cuts.after_cut("", 2048, 4096, 1500)
    assert retry.max_tokens == 2048 and retry.chars == 4096
    assert "every tool" in retry.reason and "None" not in retry.reason
    assert "every tool call holds" in retry.told
    offered = cuts.request([CommitPlan.schema()])
    assert offered[0]["parameters"]["properties"]["steps"]["maxItems"] == FEW_ITEMS
    assert cuts.after_cut("", 2048, 4096, 1500).chars == 2048  # halved again: never the same
