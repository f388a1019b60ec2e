"""A read-only workspace (issue 21): the state goes to the user state folder when the person asks
(`--state-dir`), and NOTHING is written in the workspace, checked from the host by hashing the
tree before and after. Really read-only: as root a read-only bind mount (EROFS; root ignores
mode bits), as anyone else the folder's write bits removed (EACCES). The scripted server plays
the model, the real `cerveau` CLI runs in a subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.testing.read_only import read_only_tree
from cerveau_tui.testing.scripted_server import ScriptedServer


def tree_digest(root: Path) -> str:
    """Names, kinds, modes, link targets and contents beneath root (lstat: never follows)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted([*dirnames, *filenames]):
            p = Path(dirpath, name)
            st = os.lstat(p)
            h.update(f"{p.relative_to(root)}|{st.st_mode}|{st.st_mtime_ns}".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def ro_ws(tmp_path: Path) -> Iterator[Path]:
    """A workspace that cannot be written, with a file in it (testing/read_only.py)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "hello.py").write_text("print('hello')\n")
    with read_only_tree(src) as ws:
        yield ws


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "CERVEAU_CONFIG": str(tmp_path / "no-user-config.toml"),
    }


def _cli(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cerveau_tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**_env(tmp_path), **(env or {})},
        cwd=tmp_path,
    )


def _run(
    tmp_path: Path, ws: Path, url: str, *extra: str, env: dict[str, str] | None = None
) -> tuple[int, list[dict], str]:
    p = _cli(tmp_path, "run", "--json", "--workspace", str(ws), "--server", url, *extra, env=env)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.strip()], p.stderr


def test_the_workspace_is_really_read_only(ro_ws: Path) -> None:
    with pytest.raises(OSError) as exc:
        (ro_ws / ".cerveau").mkdir()
    assert exc.value.errno in (30, 13)  # EROFS as root on the ro bind, EACCES otherwise


def test_without_a_state_dir_the_run_exits_2_naming_the_alternate_and_the_flag(
    tmp_path: Path, ro_ws: Path
) -> None:
    before = tree_digest(ro_ws)
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        code, events, err = _run(tmp_path, ro_ws, srv.url, "say hi")
        asked = len(srv.requests)
    assert code == 2 and asked == 0
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    alt = tmp_path / "state" / "cerveau" / "workspaces"
    assert str(alt) in lines[0] and "--state-dir user" in lines[0]
    assert events[-1]["type"] == "turn_ended" and events[-1]["payload"]["reason"] == "error"
    assert tree_digest(ro_ws) == before


SCRIPT = {
    "responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"content": "it prints hello"},
    ]
}


def test_with_state_dir_the_session_lives_in_the_alternate_and_nothing_in_the_workspace(
    tmp_path: Path, ro_ws: Path
) -> None:
    before = tree_digest(ro_ws)
    with ScriptedServer(SCRIPT) as srv:
        code, events, err = _run(tmp_path, ro_ws, srv.url, "--state-dir", "user", "what is it")
    assert code == 0, err
    assert events[-1]["payload"]["reason"] == "completed"
    sid = events[0]["session_id"]
    alts = list((tmp_path / "state" / "cerveau" / "workspaces").iterdir())
    assert len(alts) == 1 and alts[0].name.startswith(f"{ro_ws.name}-")
    assert (alts[0] / "sessions" / f"{sid}.jsonl").is_file()
    assert stat.S_IMODE(os.stat(alts[0]).st_mode) == 0o700  # the person's alone
    assert "state is kept in" in err and str(alts[0]) in err
    assert tree_digest(ro_ws) == before
    assert not os.path.lexists(ro_ws / ".cerveau")

    listed = _cli(tmp_path, "sessions", "--workspace", str(ro_ws), "--state-dir", "user", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [sid]
    # Without the flag the workspace's own (absent) folder is read: none listed there.
    bare = _cli(tmp_path, "sessions", "--workspace", str(ro_ws), "--json")
    assert sid not in bare.stdout

    with ScriptedServer({"responses": [{"content": "still hello"}]}) as srv:
        code, events, err = _run(
            tmp_path, ro_ws, srv.url, "--state-dir", "user", "--resume", "last", "and now"
        )
        told = json.dumps(srv.requests[0]["messages"])
    assert code == 0, err
    assert events[0]["session_id"] == sid
    assert any(e["type"] == "session_resumed" for e in events)
    assert "what is it" in told and "print('hello')" in told  # the first turn came back
    assert tree_digest(ro_ws) == before


def test_an_explicit_state_folder_is_used_and_one_inside_the_workspace_refused(
    tmp_path: Path, ro_ws: Path
) -> None:
    mine = tmp_path / "my-state"
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        code, events, err = _run(tmp_path, ro_ws, srv.url, "--state-dir", str(mine), "hi")
        inside = _run(tmp_path, ro_ws, srv.url, "--state-dir", str(ro_ws / "st"), "hi")
    assert code == 0, err
    assert (mine / "sessions" / f"{events[0]['session_id']}.jsonl").is_file()
    assert inside[0] == 2 and "inside (or holding) the workspace" in inside[2]


def test_state_dir_in_the_workspace_config_is_ignored(tmp_path: Path) -> None:
    # A writable workspace whose own config asks for the state elsewhere: not honoured.
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text(f'state_dir = "{tmp_path / "elsewhere"}"\n')
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        code, events, err = _run(tmp_path, ws, srv.url, "hi")
    assert code == 0, err
    assert (ws / ".cerveau" / "sessions" / f"{events[0]['session_id']}.jsonl").is_file()
    assert not (tmp_path / "elsewhere").exists()
    assert "state_dir is ignored there" in err


@pytest.fixture
def visible_state(tmp_path: Path) -> Iterator[Path]:
    """A state root the sandbox WOULD show: outside /tmp (bubblewrap's private /tmp hides it
    anyway) and named in the person's `sandbox_read`, so only the state's own protection keeps a
    command out of it."""
    root = Path(tempfile.mkdtemp(prefix="cerveau-state-", dir="/var/tmp"))
    (tmp_path / "no-user-config.toml").write_text(f"sandbox_read = [{json.dumps(str(root))}]\n")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_commands_and_file_tools_cannot_reach_the_alternate(
    tmp_path: Path, ro_ws: Path, visible_state: Path
) -> None:
    # A first run makes the alternate and its session log; a second (resumed) run's model then
    # tries to read and change it: by a command, by write_file, by read_file. Checked from here.
    env = {"XDG_STATE_HOME": str(visible_state)}
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        code, events, err = _run(tmp_path, ro_ws, srv.url, "--state-dir", "user", "hi", env=env)
    assert code == 0, err
    (alt,) = (visible_state / "cerveau" / "workspaces").iterdir()
    log = alt / "sessions" / f"{events[0]['session_id']}.jsonl"
    assert log.is_file()
    probe = f"ls {alt}/sessions; echo planted > {alt}/sessions/evil.jsonl; head -c 200 {log}"
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": probe}}]},
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {
                            "path": str(alt / "config.toml"),
                            "content": 'sandbox = "full-access"\n',
                        },
                    }
                ]
            },  # fmt: skip
            {"tool_calls": [{"name": "read_file", "arguments": {"path": str(log)}}]},
            {"content": "tried"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, err = _run(tmp_path, ro_ws, srv.url, "--state-dir", "user", "try", env=env)
    assert code == 0, err
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["bash", "write_file", "read_file"]
    bash, write, read = results
    assert (
        "session_started" not in bash["output"]
        and ".jsonl" not in bash["output"].split("cannot")[0]
    ), bash["output"]  # neither its names nor its bytes reached the model
    # Refused outright, not asked (a person could approve an ask): the deny list's refusal.
    assert write["status"] == "denied" and "denied by policy" in write["output"], write
    assert read["status"] == "denied" and "denied by policy" in read["output"], read
    assert not (alt / "sessions" / "evil.jsonl").exists()
    assert not (alt / "config.toml").exists()
