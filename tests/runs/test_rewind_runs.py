"""Rewind (issue 25), from the host: three real `cerveau run` turns on the scripted server (file
tools; a command that rewrites and deletes; a command that creates a folder tree), through the
real sandbox, then `cerveau rewind` to each turn's start, every file's bytes and mode compared
with what this test recorded itself just before that turn; a person's edit named and kept;
forward; and `cerveau run --resume last` after a rewind sending the cut history."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from cerveau_tui.testing.scripted_server import ScriptedServer


def state(ws: Path) -> dict[str, tuple[str, int]]:
    """Every file outside .cerveau: sha256 and mode, read by the test, not by the harness."""
    out = {}
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".cerveau"]
        for f in files:
            p = Path(root, f)
            out[p.relative_to(ws).as_posix()] = (
                hashlib.sha256(p.read_bytes()).hexdigest(),
                stat.S_IMODE(p.lstat().st_mode),
            )
    return out


def dirs(ws: Path) -> set[str]:
    return {
        Path(r).relative_to(ws).as_posix()
        for r, d, _ in os.walk(ws)
        if ".cerveau" not in Path(r).relative_to(ws).parts
    }


def rewind(ws: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    p = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "rewind", "--workspace", str(ws), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return p.returncode, p.stdout, p.stderr


def bash(cmd: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]}


TURNS = [
    (
        "edit the files",
        [
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "one", "new": "uno"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "n\n"}}]},
            {"content": "edited"},
        ],
    ),
    (
        "rewrite and delete by command",
        [bash("printf 'rewritten\\n' > a.txt && rm b.txt && chmod 755 run.sh"), {"content": "done"}],
    ),
    (
        "make a tree",
        [bash("mkdir -p tree/x/y && echo leaf > tree/x/y/leaf.txt && echo t > tree/t.txt"), {"content": "ok"}],
    ),
]  # fmt: skip


def run_turn(cli, ws: Path, task: str, responses: list, resume: bool) -> list:
    with ScriptedServer({"responses": responses}) as srv:
        extra = ("--resume", "last") if resume else ()
        code, events, err = cli(ws, srv.url, task, *extra)
        assert code == 0, err[-2000:]
        return srv.requests


def three_turns(cli, ws: Path) -> tuple[list[dict], list[set[str]], list[list]]:
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    (ws / "b.txt").write_text("bee\n")
    (ws / "run.sh").write_text("echo hi\n")
    (ws / "run.sh").chmod(0o644)
    seen, trees, requests = [], [], []
    for i, (task, responses) in enumerate(TURNS):
        seen.append(state(ws))
        trees.append(dirs(ws))
        requests.append(run_turn(cli, ws, task, responses, resume=i > 0))
    seen.append(state(ws))
    return seen, trees, requests


def test_rewind_to_each_turn_puts_every_file_back_and_forward_undoes_it(cli, tmp_path):
    ws = tmp_path / "ws"
    seen, trees, _ = three_turns(cli, ws)
    # The turns did what they say (else the rewinds below prove nothing).
    assert seen[2]["a.txt"] != seen[1]["a.txt"] and "b.txt" not in seen[2]
    assert seen[2]["run.sh"][1] == 0o755 and "tree/x/y/leaf.txt" in seen[3]

    code, out, err = rewind(ws, "--list", "--session", "last", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["turn"] for r in rows] == [1, 2, 3]
    assert [r["task"] for r in rows] == [t for t, _ in TURNS]
    assert [r["files_changed"] for r in rows] == [2, 3, 2]

    for n in (3, 2, 1):  # each rewind is from the state the previous one left
        code, out, err = rewind(ws, "--session", "last", "--to-turn", str(n), "--code-only")
        assert code == 0, err
        assert state(ws) == seen[n - 1], n
        assert dirs(ws) == trees[n - 1], n  # the command's folder tree went with its files
    # Forward: the rewind to turn 1 undone, the workspace as the rewind found it.
    code, out, err = rewind(ws, "--session", "last", "--forward")
    assert code == 0, err
    assert state(ws) == seen[1]
    # Every point, by id: the turns, and the rewinds themselves (each one a point).
    code, out, err = rewind(ws, "--list", "--all", "--json")
    points = json.loads(out)
    assert [p["at"] for p in points].count("turn") == 3 and "rewind" in [p["at"] for p in points]
    first = next(p["point"] for p in points if p["at"] == "turn")
    code, out, err = rewind(ws, "--to-point", first, "--code-only")
    assert code == 0, err
    assert state(ws) == seen[0]


def test_a_person_edit_since_is_named_and_kept_unless_forced(cli, tmp_path):
    ws = tmp_path / "ws"
    seen, _, _ = three_turns(cli, ws)
    (ws / "a.txt").write_text("the person's own words\n")  # after turn 3, in their editor
    (ws / "mine.txt").write_text("mine\n")
    before = state(ws)
    code, out, err = rewind(ws, "--session", "last", "--to-turn", "2", "--json")
    assert code == 1
    refused = json.loads(out)
    assert refused["outside"] == ["a.txt", "mine.txt"] and "a.txt" in err
    assert state(ws) == before  # nothing touched
    code, out, err = rewind(ws, "--session", "last", "--to-turn", "2", "--force")
    assert code == 0, err
    assert state(ws) == seen[1]
    code, out, err = rewind(ws, "--session", "last", "--forward")
    assert code == 0, err
    assert state(ws) == before  # the person's edit is back: nothing they did is lost


def test_run_resume_after_a_rewind_sends_the_cut_history(cli, tmp_path):
    ws = tmp_path / "ws"
    _, _, requests = three_turns(cli, ws)
    turn2_first = requests[1][0]["messages"]  # system + turn 1 + turn 2's task
    code, out, err = rewind(ws, "--session", "last", "--to-turn", "2")
    assert code == 0, err
    after = run_turn(cli, ws, "another way", [{"content": "fine"}], resume=True)
    sent = after[0]["messages"]
    # Exactly the history before turn 2 started, then the new task: a prefix the server has
    # evaluated (turn 2's first request began with it), nothing of turns 2 and 3. (The system
    # message names each scripted server's own port, so it is compared apart.)
    assert sent[0]["role"] == "system" == turn2_first[0]["role"]
    assert sent[1 : len(turn2_first) - 1] == turn2_first[1:-1]
    assert sent[len(turn2_first) - 1] == {"role": "user", "content": "another way"}
    assert len(sent) == len(turn2_first)
    text = json.dumps(sent)
    assert "rewrite and delete" not in text and "make a tree" not in text


def test_run_resume_after_a_rewind_and_forward_sends_the_whole_history(cli, tmp_path):
    ws = tmp_path / "ws"
    _, _, requests = three_turns(cli, ws)
    last = requests[2][-1]["messages"]  # turn 3's last request: every turn so far
    for args in (("--to-turn", "2", "--conversation-only"), ("--forward",)):
        code, out, err = rewind(ws, "--session", "last", *args)
        assert code == 0, err
    after = run_turn(cli, ws, "another way", [{"content": "fine"}], resume=True)
    sent = after[0]["messages"]
    # The conversation before the rewind, whole, with no note of the rewind (forward put both
    # back together), then turn 3's answer and the new task.
    assert sent[1 : len(last)] == last[1:]
    assert sent[len(last)]["role"] == "assistant"
    assert sent[len(last) + 1 :] == [{"role": "user", "content": "another way"}]
    assert "[harness]" not in json.dumps(sent[len(last) - 1 :])
