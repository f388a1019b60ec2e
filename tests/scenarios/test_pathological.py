"""The pathological-model suite: each failure mode of a small model, scripted, through the real
harness (`cerveau run --json` against the scripted server on loopback, real bash in a tmp
workspace). For each: which guard acted, at which iteration, and how the turn ended; and the
legitimate scenarios (8-11) must run to completion with no guard acting at all.
"""

from __future__ import annotations

import json

import pytest
from scenario_runner import ScenarioRun, run_scenario, scenario_files

SCENARIOS = {p.stem: p for p in scenario_files()}

# Gaps of the engine that these scenarios expose; strict, so the fix turns them into failures to
# remove from this list.
ENGINE_GAPS: dict[str, str] = {}  # scenarios the engine cannot pass yet (none now)

_runs: dict[str, ScenarioRun] = {}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    def get(name: str) -> ScenarioRun:
        if name not in _runs:
            ws = tmp_path_factory.mktemp(name) / "ws"
            _runs[name] = run_scenario(SCENARIOS[name], ws)
        return _runs[name]

    return get


def _marks(name: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.xfail(strict=True, reason=ENGINE_GAPS[name])] if name in ENGINE_GAPS else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in SCENARIOS])
def test_the_expected_guards_act_at_the_expected_iterations(run, name: str) -> None:
    r = run(name)
    assert r.turn_ended, f"no turn_ended event; stderr: {r.stderr[-2000:]}"
    expected = [(g["guard"], g["iteration"]) for g in r.expect["guards"]]
    assert [(g["guard"], g["iteration"]) for g in r.guards] == expected
    for want, got in zip(r.expect["guards"], r.guards, strict=False):
        if "reason" in want:
            assert got["reason"] == want["reason"]
    assert (r.turn_ended["reason"], r.turn_ended["iterations"]) == (
        r.expect["turn_end"],
        r.expect["end_iteration"],
    )


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in SCENARIOS
        if json.loads(SCENARIOS[n].read_text())["scenario"]["expect"].get("files")
    ],
)
def test_the_work_lands_in_the_workspace(run, name: str) -> None:
    r = run(name)
    for rel, text in r.expect["files"].items():
        assert (r.workspace / rel).read_text() == text


def test_the_model_reads_the_breakers_question_instead_of_the_third_error(run) -> None:
    r = run("01_missing_dependency")
    trip = r.guards[0]
    results = [e for e in r.of("tool_result") if e["name"] == "bash"]
    assert results[2]["output"] == trip["told"]
    assert "No module named" in results[0]["output"]  # the first errors are shown as they are
    assert "leftpadx" in trip["told"] and "ask the person" in trip["told"]


def test_the_stall_message_names_what_the_model_did(run) -> None:
    r = run("02_calm_uselessness")
    message = r.turn_ended["message"]
    assert "8 iterations without changing any file" in message
    assert "read_file x" in message and "search x" in message


def test_cut_off_arguments_never_reach_the_server_again(run) -> None:
    r = run("04_truncated_write")
    assert len(r.requests) == 4
    for body in r.requests[1:]:
        for msg in body["messages"]:
            for call in msg.get("tool_calls") or []:
                json.loads(call["function"]["arguments"])  # raises on cut-off JSON
    told = r.guards[0]["told"]
    assert "512 tokens" in told
    assert any(told in (m.get("content") or "") for m in r.requests[1]["messages"])


def test_a_printed_call_is_run_and_disclosed(run) -> None:
    r = run("05_text_tool_call")
    assert [c["name"] for c in r.of("tool_call")] == ["write_file"]
    assert any("write_file" in n.get("text", "") for n in r.of("notice"))


def test_a_hallucinated_tool_gets_the_real_list(run) -> None:
    r = run("06_hallucinated_tool")
    told = r.guards[0]["told"]
    assert "run_shell_command" in told and "list_files" in told and "bash" in told


def test_the_live_stack_is_in_the_system_prompt(run) -> None:
    r = run("07_serve_on_model_port")
    system = r.requests[0]["messages"][0]["content"]
    assert "Local stack ALREADY RUNNING" in system
    assert f"127.0.0.1:{r.port}" in system


@pytest.mark.parametrize("name", ["07_serve_on_model_port"])
def test_serving_on_the_model_port_is_refused_before_it_runs(run, name: str) -> None:
    r = run(name)
    bash = [e for e in r.of("tool_result") if e["name"] == "bash"]
    assert bash and "Refused, not run" in bash[0]["output"]
    assert "timed out" not in bash[0]["output"]  # it never ran (a served http.server blocks)


def test_three_failures_of_different_shapes_reach_the_model_as_errors(run) -> None:
    r = run("10_three_shapes")
    outputs = [e["output"] for e in r.of("tool_result") if e["name"] == "bash"]
    assert "No module named" in outputs[0]
    assert "No such file or directory" in outputs[1]
    assert "SyntaxError" in outputs[2]
    assert outputs[3].startswith("6")


def test_scenario_workspaces_are_fresh(run) -> None:
    # The runner writes only the scenario's files: a leftover would let one scenario pass on
    # another's work.
    r = run("06_hallucinated_tool")
    names = {p.name for p in r.workspace.iterdir() if not p.name.startswith(".")}
    assert names == {"notes.txt"}
