"""The doctor's template check against the scripted server's /apply-template and /tokenize."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.config import load_settings
from cerveau_tui.doctor import collect, template_lines
from cerveau_tui.provider.template_check import check_template, http_post
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_a_template_that_keeps_earlier_turns_is_stable_for_every_kind() -> None:
    with ScriptedServer({"responses": []}) as srv:
        results = check_template(http_post(srv.url))
    assert [(r.kind, r.state) for r in results] == [
        ("plain turns", "stable"),
        ("tool calls and results", "stable"),
        ("reasoning", "stable"),
    ]


def test_a_template_that_drops_earlier_reasoning_is_found_with_the_tokens_it_rereads() -> None:
    with ScriptedServer({"responses": []}) as srv:
        srv.state.drops_reasoning = True
        results = {r.kind: r for r in check_template(http_post(srv.url))}
    assert results["reasoning"].state == "rewritten"
    assert results["reasoning"].reread_tokens > 0 and "<think>" in results["reasoning"].detail
    assert results["plain turns"].state == results["tool calls and results"].state == "stable"


def test_a_server_that_cannot_render_is_unavailable_never_stable() -> None:
    with ScriptedServer({"responses": []}, extras=False) as srv:
        results = check_template(http_post(srv.url))
    assert {r.state for r in results} == {"unavailable"}


def test_doctor_says_which_kind_is_rewritten_and_what_the_harness_does(tmp_path: Path) -> None:
    with ScriptedServer({"responses": []}) as srv:
        srv.state.drops_reasoning = True
        settings = load_settings(
            tmp_path, flags={"server_url": srv.url}, environ={}, user_config=tmp_path / "n.toml"
        )
        info = collect(settings)
    assert info["template"]["state"] == "rewrites"
    text = "\n".join(template_lines(info["template"]))
    assert "rewrites earlier reasoning" in text and "sends no reasoning back" in text
    assert "keeps earlier plain turns, tool calls and results byte-stable" in text
