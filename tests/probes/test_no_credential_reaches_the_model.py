"""No credential reaches the model (issue 32, part 7): a password in the `--server` URL and a
password and a `?token=` in a configured `services` URL. Checked where the model looks: the
REQUEST BODIES the server received (the system prompt, every tool result), after a command that
reads everything the model can read of the session (the log under `.cerveau`, the environment),
and every file left in the workspace. The person's own screens show the credential masked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import Box, call, reply

SECRETS = ("s3cret-srv", "hunter2-svc", "abc123tok")
SERVICE = "http://bob:hunter2-svc@127.0.0.1:5439/db?sslmode=off&token=abc123tok"


def _configure(box: Box) -> None:
    box.user_config.parent.mkdir(parents=True, exist_ok=True)
    box.user_config.write_text(f'[[services]]\nname = "warehouse"\nurl = "{SERVICE}"\n')


def _with_password(url: str) -> str:
    return url.replace("http://", "http://alice:s3cret-srv@", 1)


def _run(box: Box) -> tuple[int, list[dict[str, Any]], str, list[dict[str, Any]]]:
    # The attacker's reading: everything of the session a command can see, then said back.
    # Every visible process's argv, the harness's own among them (under Landlock, no PID
    # namespace): a grep for the userinfo, not a `cat` whose output the cap could cut before the
    # harness's pid (the probe passed or failed by the order of /proc). `ali[c]e` so the grep's own
    # argv does not match itself.
    look = (
        "find .cerveau -type f -exec cat {} + 2>/dev/null; env; "
        "grep -a -o -h 'ali[c]e:[^@]*@' /proc/[0-9]*/cmdline"
    )
    script = {"responses": [reply(call("bash", command=look)), {"content": "done."}]}
    with ScriptedServer(script) as srv:
        code, events, err = run_cli(
            box.ws, _with_password(srv.url), "probe", "--sandbox", "workspace-write",
            "--approval", "never", env=box.env(), timeout=180,
        )  # fmt: skip
        return code, events, err, list(srv.requests)


def test_a_server_password_and_a_service_token_never_reach_the_model(box: Box) -> None:
    _configure(box)
    code, events, err, requests = _run(box)
    bodies = json.dumps(requests)
    # The controls: the service is named to the model, and the command did read the session log.
    assert "warehouse on http://127.0.0.1:5439/db?sslmode=off&token=***" in bodies, err
    if box.backend != "none":  # unsandboxed, headless denies every command: nothing was read
        assert "session_started" in bodies, err
    for secret in (*SECRETS, "alice"):
        assert secret not in bodies, secret
    for p in box.ws.rglob("*"):
        if p.is_file() and not p.is_symlink():
            text = p.read_text(errors="replace")
            assert not [s for s in SECRETS if s in text], p


def test_the_json_stream_does_not_carry_the_credentials_either(box: Box) -> None:
    _configure(box)
    code, events, err, _ = _run(box)
    assert events, err
    said = json.dumps(events) + err
    assert not [s for s in SECRETS if s in said]


def _doctor(tmp_path: Path, config: str, url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    (tmp_path / "config.toml").write_text(config)
    env = {**os.environ, "HOME": str(home), "CERVEAU_CONFIG": str(tmp_path / "config.toml")}
    return subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "doctor", "--workspace", str(ws), "--server", url,
         *flags],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_doctor_shows_the_server_credential_masked(tmp_path: Path) -> None:
    config = f'[[services]]\nname = "warehouse"\nurl = "{SERVICE}"\n'
    with ScriptedServer({"responses": []}) as srv:
        host = srv.url.removeprefix("http://")
        text = _doctor(tmp_path, config, _with_password(srv.url))
        info = json.loads(_doctor(tmp_path, config, _with_password(srv.url), "--json").stdout)
    assert f"server:    http://alice:***@{host}" in text.stdout, text.stdout + text.stderr
    assert info["server"]["url"] == f"http://alice:***@{host}"
    assert not [s for s in SECRETS if s in text.stdout + text.stderr + json.dumps(info)]


def test_doctor_warns_of_a_credential_the_person_lets_into_the_sandbox(tmp_path: Path) -> None:
    with ScriptedServer({"responses": []}) as srv:
        text = _doctor(tmp_path, 'env_allow = ["GITHUB_TOKEN", "LANG"]\n', srv.url)
    (line,) = [x for x in text.stdout.splitlines() if "env_allow" in x]
    assert line.endswith("where the model can read them: GITHUB_TOKEN")


def test_the_tui_header_shows_whose_credential_and_masks_its_value() -> None:
    from cerveau_tui.app.widgets.header import facts_of
    from cerveau_tui.config import Settings

    settings = Settings(server_url="http://alice:s3cret-srv@127.0.0.1:9/?token=abc123tok")
    assert facts_of(settings, None).waiting_for == "http://alice:***@127.0.0.1:9/?token=***"
