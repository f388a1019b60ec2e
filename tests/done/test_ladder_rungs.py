"""The ladder changes what the model can do, not only what it is told: R1's round refuses any
call but a read (the tools sent stay the same), R2 turns the server's reasoning switch on when its
/props shows one, else raises the token cap. Through the CLI, asserting on what the scripted
server received."""

from __future__ import annotations

from types import SimpleNamespace

from cerveau_tui.done.ladder import READ_ONLY_TOOLS, reasoning_switch
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_BROKEN, of, run_cli
from .test_scenarios import edit, write

QWEN3_LIKE = (
    "{%- if enable_thinking is defined and enable_thinking is false %}<think></think>{% endif %}"
)


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def test_r1_keeps_the_tools_sent_and_says_only_the_read_tools_run(project) -> None:
    """Offering only the read tools changed the prompt's prefix (native tools are rendered into
    it): each rung re-read the whole prompt (issue 36). The rung says it and refuses instead."""
    ws = project(extra_config="max_stall_cycles = 1\n")
    script = [{"content": "done"}, {"content": "The diagnosis: add subtracts."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        requests = srv.requests
    assert of(events, "escalation")[0]["rung"] == "R1"
    assert "write_file" in offered(requests[0])
    assert [r["tools"] for r in requests[1:3]] == [requests[0]["tools"]] * 2
    told = requests[1]["messages"][-1]["content"]
    assert f"only the read tools run ({', '.join(READ_ONLY_TOOLS)})" in told


def test_a_write_in_r1s_round_is_refused_even_when_the_model_names_it(project) -> None:
    ws = project(extra_config="max_stall_cycles = 1\n")
    fixed = CALC_BROKEN.replace("a - b", "a + b")
    script = [{"content": "done"}, write("calc.py", fixed), {"content": "x"}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        after = srv.requests[2]["messages"]
    assert (ws / "calc.py").read_text() == CALC_BROKEN
    results = [m["content"] for m in after if m["role"] == "tool"]
    assert results and results[-1].startswith("refused: this round is read-only")


def test_r2_turns_reasoning_on_when_the_servers_template_has_the_switch(project) -> None:
    ws = project(extra_config="max_stall_cycles = 1\n")
    script = [{"content": "done"}] * 3
    with ScriptedServer(script, props={"chat_template": QWEN3_LIKE}) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        requests = srv.requests
    r2 = of(events, "escalation")[1]
    assert r2["rung"] == "R2" and "reasoning on" in r2["change"]
    assert requests[2]["chat_template_kwargs"] == {"enable_thinking": True}
    assert "chat_template_kwargs" not in requests[1]
    # Reasoning instead of a larger cap: the cap stays what it was.
    assert requests[2]["max_tokens"] == requests[0]["max_tokens"]


def test_r2_raises_the_token_cap_on_a_server_without_the_switch_and_says_so(project) -> None:
    ws = project(extra_config="max_stall_cycles = 1\n")
    with ScriptedServer([{"content": "done"}] * 3) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        requests = srv.requests
    r2 = of(events, "escalation")[1]
    assert "token cap" in r2["change"] and "chat_template_kwargs" not in requests[2]
    assert requests[2]["max_tokens"] == 2 * requests[0]["max_tokens"]
    told = requests[2]["messages"][-1]["content"]
    assert "raised from" in told


def test_the_switch_is_read_from_caps_or_template_and_absent_otherwise() -> None:
    def props(template: str = "", **caps: object) -> SimpleNamespace:
        return SimpleNamespace(chat_template=template, raw={"chat_template_caps": caps})

    assert reasoning_switch(props(supports_enable_thinking=True)) == (
        {"chat_template_kwargs": {"enable_thinking": True}},
        "reasoning on (chat_template_kwargs.enable_thinking)",
    )
    extra, said = reasoning_switch(props("{{ reasoning_effort }}")) or ({}, "")
    assert extra == {"chat_template_kwargs": {"reasoning_effort": "high"}} and "high" in said
    assert reasoning_switch(props("{# ChatML #}", supports_tools=True)) is None
    assert reasoning_switch(SimpleNamespace(chat_template=None, raw=None)) is None


def test_edits_come_back_after_the_read_only_round_and_can_fix_it(project) -> None:
    ws = project(extra_config="max_stall_cycles = 1\n")
    script = [{"content": "done"}, {"content": "It subtracts."}]
    script += [edit("calc.py", "a - b", "a + b"), {"content": "Fixed."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert of(events, "turn_ended")[0]["verification"] == "passed"


def test_r3_with_no_file_to_name_makes_its_round_read_only(tmp_path) -> None:
    # `test -f DONE` fails with no output, and nothing was written: no file can be named, and a
    # lock on "one file" without one would only be a message. The round writes nowhere instead.
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text("[done]\nmax_stall_cycles = 1\n")
    (ws / "calc.py").write_text(CALC_BROKEN)
    script = [{"content": "done"}] * 3 + [write("DONE", "yes\n"), {"content": "x"}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the check pass", "--gate", "test -f DONE")
        requests = srv.requests
    r3 = of(events, "escalation")[2]
    assert r3["rung"] == "R3" and "read-only" in r3["change"]
    assert requests[3]["tools"] == requests[0]["tools"]  # refused, not withheld: prefix kept
    assert not (ws / "DONE").exists()
    results = [m["content"] for m in requests[4]["messages"] if m["role"] == "tool"]
    assert results and results[-1].startswith("refused: this round is read-only (escalation R3")
    assert "write_file" in offered(requests[4])
