"""The person's hooks through `cerveau run --json`, each with a real command, checked on the host."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CERVEAU, Place, answer, call, processes_with, toml_list

PY = "python3"


def test_a_formatter_after_write_rewrites_the_file_in_the_sandbox(place: Place) -> None:
    fmt = "import json,sys; p=json.load(sys.stdin)['tool']['arguments']['path']; t=open(p).read(); open(p,'w').write(t.upper())"  # noqa: E501
    place.config(
        f'[[hooks.post_tool]]\ncommand = {toml_list([PY, "-c", fmt])}\nmatch = "write_file"\n'
    )
    run = place.run([call("write_file", path="a.txt", content="hello\n"), answer()])
    assert run.proc.returncode == 0, run.proc.stderr
    assert (place.ws / "a.txt").read_text() == "HELLO\n"
    (ran,) = run.of("hook_ran")
    assert (ran["event"], ran["outcome"], ran["exit"], ran["where"]) == (
        "post_tool",
        "ok",
        0,
        "sandbox",
    )
    assert ran["tool"] == "write_file" and ran["ms"] >= 0


def test_a_pre_tool_hook_refuses_rm_and_the_model_reads_why(place: Place) -> None:
    rule = "import json,re,sys; c=json.load(sys.stdin)['tool']['arguments']['command']; re.search(r'\\brm\\b', c) and sys.exit(print('rm is not allowed here: use git rm', file=sys.stderr) or 2)"  # noqa: E501
    place.config(
        f'[[hooks.pre_tool]]\ncommand = {toml_list([PY, "-c", rule])}\nmatch = "bash"\nname = "no-rm"\n'
    )
    (place.ws / "keep.txt").write_text("kept")
    run = place.run(
        [call("bash", command="rm -f keep.txt"), call("bash", command="echo hi > b.txt"), answer()]
    )
    assert run.proc.returncode == 0, run.proc.stderr
    assert (place.ws / "keep.txt").read_text() == "kept"  # the refused command never ran
    assert (place.ws / "b.txt").read_text() == "hi\n"  # the same hook let the next one through
    refused, ran = run.of("tool_result")
    assert (
        refused["status"] == "denied" and "rm is not allowed here: use git rm" in refused["output"]
    )
    assert ran["ok"]
    outcomes = [(h["name"], h["outcome"], h["exit"]) for h in run.of("hook_ran")]
    assert outcomes == [("no-rm", "blocked", 2), ("no-rm", "ok", 0)]
    assert "rm is not allowed here" in json.dumps(run.requests[1]["messages"])  # the model read it


def test_model_bytes_with_shell_metacharacters_run_nothing_in_a_host_hook(place: Place) -> None:
    out = place.out
    seen = out / "seen.jsonl"
    record = ["sh", "-c", f"cat >> {seen}; echo >> {seen}"]
    block = ["sh", "-c", f"cat >> {seen}; echo >> {seen}; echo refused >&2; exit 2"]
    place.config(
        f'[[hooks.pre_tool]]\ncommand = {toml_list(block)}\nmatch = "bash"\nwhere = "host"\n'
        f'[[hooks.post_tool]]\ncommand = {toml_list(record)}\nwhere = "host"\n'
        f'[[hooks.post_tool]]\ncommand = "{PY} -c \'import sys; sys.stdin.read()\'"\nwhere = "host"\n'
    )
    command = (
        f"echo $(touch {out}/p1) `touch {out}/p2`; touch {out}/p3\ntouch {out}/p4 "
        f"&& touch {out}/p5 | touch {out}/p6 '; touch {out}/p7' \"$(touch {out}/p8)\""
    )
    path = "$(touch pwned1)`touch pwned2`;touch pwned3&& touch pwned4"
    content = "x\n$(touch pwned5)\n`touch pwned6`\n"
    run = place.run(
        [call("bash", command=command), call("write_file", path=path, content=content), answer()]
    )
    assert run.proc.returncode == 0, run.proc.stderr
    assert [p.name for p in out.iterdir() if p.name != "seen.jsonl"] == []
    assert sorted(p.name for p in place.ws.iterdir() if p.name != ".cerveau") == [path]
    # Control: the hooks ran and were handed those exact bytes.
    events = [json.loads(line) for line in seen.read_text().splitlines() if line]
    assert events[0]["event"] == "pre_tool" and events[0]["tool"]["arguments"]["command"] == command
    assert events[1]["event"] == "post_tool" and events[1]["tool"]["arguments"]["path"] == path
    assert events[1]["tool"]["arguments"]["content"] == content
    assert [h["outcome"] for h in run.of("hook_ran")] == ["blocked", "ok", "ok"]


def test_a_sandboxed_hook_cannot_write_outside_the_workspace(place: Place) -> None:
    out = place.out
    inside = ["sh", "-c", f"cat >/dev/null; echo x > {out}/from-sandbox; echo y > inside.txt"]
    control = ["sh", "-c", f"cat >/dev/null; echo x > {out}/from-host"]
    place.config(
        f"[[hooks.post_tool]]\ncommand = {toml_list(inside)}\n"
        f'[[hooks.post_tool]]\ncommand = {toml_list(control)}\nwhere = "host"\n'
    )
    run = place.run([call("write_file", path="a.txt", content="a"), answer()])
    assert run.proc.returncode == 0, run.proc.stderr
    assert not (out / "from-sandbox").exists()
    assert (place.ws / "inside.txt").read_text() == "y\n"  # it ran, and could write its workspace
    assert (out / "from-host").exists()  # the same write on the person's word lands


def test_a_hanging_hook_is_killed_at_its_timeout_with_its_children(place: Place) -> None:
    hang = ["sh", "-c", "cat >/dev/null; sleep 3600.417 & sleep 3600.419"]
    hang_host = ["sh", "-c", "cat >/dev/null; sleep 3600.427 & sleep 3600.429"]
    place.config(
        f"[[hooks.pre_tool]]\ncommand = {toml_list(hang)}\ntimeout_s = 1\n"
        f'[[hooks.pre_tool]]\ncommand = {toml_list(hang_host)}\ntimeout_s = 1\nwhere = "host"\n'
    )
    run = place.run([call("write_file", path="a.txt", content="a"), answer()])
    assert run.proc.returncode == 0, run.proc.stderr
    assert processes_with("3600.41") == [] and processes_with("3600.42") == []
    ran = run.of("hook_ran")
    assert [(h["outcome"], h["exit"], h["where"]) for h in ran] == [
        ("timeout", None, "sandbox"),
        ("timeout", None, "host"),
    ]
    assert (place.ws / "a.txt").read_text() == "a"  # a hook's failure blocks nothing
    assert ran[0]["message"].startswith("killed after 1 s")


def test_a_workspace_config_hook_is_ignored_until_the_person_trusts_it(place: Place) -> None:
    marker = place.out / "ran"
    (place.ws / ".cerveau").mkdir()
    hook = ["sh", "-c", f"cat >/dev/null; touch {marker}"]
    (place.ws / ".cerveau" / "config.toml").write_text(
        f'[[hooks.pre_tool]]\ncommand = {toml_list(hook)}\nwhere = "host"\n'
    )
    script = [call("write_file", path="a.txt", content="a"), answer()]
    run = place.run(script)
    assert run.proc.returncode == 0, run.proc.stderr
    assert not marker.exists() and run.of("hook_ran") == []
    assert any("not run: hooks.pre_tool" in n["text"] for n in run.of("notice"))
    trusted = place.run(script, "--trust-workspace-config")
    assert trusted.proc.returncode == 0, trusted.proc.stderr
    assert marker.exists() and [h["outcome"] for h in trusted.of("hook_ran")] == ["ok"]


def test_a_user_prompt_hook_refuses_the_prompt_before_the_model_sees_it(place: Place) -> None:
    rule = "import json,sys; 'hunter2' in json.load(sys.stdin)['prompt'] and sys.exit(print('a password in the prompt', file=sys.stderr) or 2)"  # noqa: E501
    place.config(
        f'[[hooks.user_prompt]]\ncommand = {toml_list([PY, "-c", rule])}\nname = "no-secrets"\n'
    )
    run = place.run([answer("should not be asked")], task="my password is hunter2")
    assert run.ended["reason"] == "blocked"
    assert "a password in the prompt" in run.ended["message"]
    assert "hunter2" not in run.sent()


def test_turn_end_runs_after_a_turn_that_ended_otherwise_and_cannot_continue_it(
    place: Place,
) -> None:
    seen = place.out / "ended.json"
    keep = ["sh", "-c", f"cat > {seen}; echo 'keep going' >&2; exit 2"]
    place.config(
        "[[hooks.user_prompt]]\ncommand = \"sh -c 'echo no >&2; exit 2'\"\n"
        f'[[hooks.turn_end]]\ncommand = {toml_list(keep)}\nwhere = "host"\n'
    )
    run = place.run([answer("never asked")])
    assert run.ended["reason"] == "blocked" and run.requests == []
    assert json.loads(seen.read_text())["reason"] == "blocked"
    ended = [h for h in run.of("hook_ran") if h["event"] == "turn_end"]
    assert [(h["outcome"], h["exit"]) for h in ended] == [("error", 2)]
    assert ended[0]["message"].startswith("exit 2 blocks nothing here")


def test_turn_end_sends_the_model_back_at_most_max_continuations_times(place: Place) -> None:
    keep = ["sh", "-c", "cat >/dev/null; echo 'the tests are red: keep going' >&2; exit 2"]
    start = ["sh", "-c", "cat >/dev/null; echo 'this team indents with tabs'"]
    place.config(
        "[hooks]\nmax_continuations = 2\n"
        f"[[hooks.turn_end]]\ncommand = {toml_list(keep)}\n"
        f"[[hooks.session_start]]\ncommand = {toml_list(start)}\n"
    )
    run = place.run([answer("one"), answer("two"), answer("three"), answer("four")])
    assert run.ended["reason"] == "completed" and run.ended["message"] == "three"
    assert len(run.requests) == 3
    assert "this team indents with tabs" in json.dumps(run.requests[0]["messages"])
    assert "the tests are red: keep going" in json.dumps(run.requests[2]["messages"])
    turn_end = [h for h in run.of("hook_ran") if h["event"] == "turn_end"]
    assert [h["outcome"] for h in turn_end] == ["blocked", "blocked", "blocked"]
    assert any("max_continuations" in n["text"] for n in run.of("notice"))


def test_a_hook_that_fails_is_said_and_blocks_nothing(place: Place) -> None:
    place.config("[[hooks.pre_tool]]\ncommand = \"sh -c 'echo broken >&2; exit 3'\"\n")
    run = place.run([call("write_file", path="a.txt", content="a"), answer()])
    assert (place.ws / "a.txt").read_text() == "a"
    (ran,) = run.of("hook_ran")
    assert (ran["outcome"], ran["exit"], ran["message"]) == ("error", 3, "broken")


def test_doctor_lists_the_persons_hooks_and_the_workspace_hooks_it_holds_back(
    place: Place,
) -> None:
    place.config(
        '[[hooks.pre_tool]]\ncommand = ["no-rm", "--strict"]\nmatch = "bash"\ntimeout_s = 5\n'
        '[[hooks.approval_waiting]]\ncommand = "notify-send \'cerveau waits\'"\nwhere = "host"\n'
    )
    (place.ws / ".cerveau").mkdir()
    (place.ws / ".cerveau" / "config.toml").write_text('[[hooks.turn_end]]\ncommand = "x"\n')
    env = {**os.environ, "CERVEAU_CONFIG": str(place.person / "config.toml")}
    with ScriptedServer({"responses": []}) as srv:
        args = [CERVEAU, "doctor", "--workspace", str(place.ws), "--server", srv.url]
        text = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        data = subprocess.run(
            [*args, "--json"], env=env, capture_output=True, text=True, timeout=120
        )
    assert text.returncode == 0, text.stderr
    assert "hooks:     2 from your config" in text.stdout
    assert "pre_tool: no-rm (sandbox, 5 s match 'bash'): no-rm --strict" in text.stdout
    assert "approval_waiting: notify-send (host, 30 s): notify-send 'cerveau waits'" in text.stdout
    hooks = json.loads(data.stdout)["hooks"]
    assert hooks["held_back"] == ["hooks.turn_end"] and len(hooks["run"]) == 2


def test_a_host_hook_running_git_does_not_read_the_models_config_as_its_home(
    place: Place,
) -> None:
    subprocess.run(["git", "init", "-q", str(place.ws)], check=True)
    marker, seen = place.out / "pwned", place.out / "git-ran"
    git = [
        "sh",
        "-c",
        f"cat >/dev/null; git status --short >/dev/null; git rev-parse --is-inside-work-tree > {seen}",
    ]  # noqa: E501
    place.config(
        f'[[hooks.post_tool]]\ncommand = {toml_list(git)}\nwhere = "host"\nmatch = "write_file"\n'
    )  # noqa: E501
    evil = f"[core]\n\tfsmonitor = touch {marker}\n"
    run = place.run(
        [
            call("write_file", path=".gitconfig", content=evil),
            call("write_file", path=".config/git/config", content=evil),
            call("write_file", path=".git/config", content=evil),
            answer(),
        ]
    )
    assert run.proc.returncode == 0, run.proc.stderr
    assert seen.read_text() == "true\n"  # the hook ran git in the workspace
    assert not marker.exists()


def test_env_names_a_host_hooks_variables_and_only_a_host_hooks(place: Place) -> None:
    from cerveau_tui.config import HookConfig

    HookConfig(command="notify", where="host", env=["DBUS_SESSION_BUS_ADDRESS"])
    with pytest.raises(ValueError, match="host"):
        HookConfig(command="fmt", env=["GITHUB_TOKEN"])


def test_without_an_enforced_sandbox_a_sandbox_hook_does_not_run_unconfined(place: Place) -> None:
    out = place.out
    hook = ["sh", "-c", f"cat >/dev/null; touch {out}/sandbox-hook"]
    control = ["sh", "-c", f"cat >/dev/null; touch {out}/host-hook"]
    place.config(
        'sandbox_backend = "none"\n'
        f"[[hooks.post_tool]]\ncommand = {toml_list(hook)}\n"
        f'[[hooks.post_tool]]\ncommand = {toml_list(control)}\nwhere = "host"\n'
    )
    run = place.run([call("write_file", path="a.txt", content="a"), answer()])
    assert run.proc.returncode == 0, run.proc.stderr
    assert not (out / "sandbox-hook").exists() and (out / "host-hook").exists()
    refused, ran = run.of("hook_ran")
    assert (refused["outcome"], refused["where"]) == ("error", "sandbox")
    assert refused["message"].startswith("not run: no sandbox is enforced here")
    assert (ran["outcome"], ran["where"]) == ("ok", "host")
    assert any('hooks marked "sandbox" will not run' in n["text"] for n in run.of("notice"))
