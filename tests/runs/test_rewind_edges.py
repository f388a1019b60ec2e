"""Rewind's edge cases, from the host (issue 25): one real `cerveau run` turn whose command changes
a mode only, makes files read-only (0444), replaces a link by a file, a file by a folder and a
folder by a file, makes a folder tree and an empty folder, removes an empty folder, and writes
into `.gitignore`d build folders (one at the root, one nested under its own .gitignore), in a
workspace whose .gitignore names `.cerveau/`. `cerveau rewind --to-turn 1` then puts back every
tracked path's kind, bytes and mode as this test recorded them; forward gives the turn's back.

The rule for what a rewind does not track (README, "honest limits"): ignored files are never
touched (the build folders keep what the command wrote), and folders are not tracked for
themselves: a folder goes when the files a rewind removes leave it empty, an empty folder a
command made stays, one it removed is not made again."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from cerveau_tui.testing.scripted_server import ScriptedServer

IGNORED = ("build", "pkg/out")

COMMAND = " && ".join(
    [
        "chmod 755 mode_only.sh",
        "chmod 444 ro.txt",
        "printf 'changed\\n' > ro2.txt && chmod 444 ro2.txt",
        "rm link && printf 'a file now\\n' > link",
        "rm file_to_dir && mkdir file_to_dir && echo in > file_to_dir/in.txt",
        "rm -r dir_to_file && echo now > dir_to_file",
        "mkdir -p tree/x/y && echo leaf > tree/x/y/leaf.txt",
        "mkdir -p empty/deeper && rmdir was_empty",
        "mkdir -p build/obj && echo o > build/obj/o.o && echo again > build/kept.o",
        "mkdir -p pkg/out/gen && echo g > pkg/out/gen/g.txt",
    ]
)


def paths(ws: Path) -> dict[str, tuple[str, str, int]]:
    """Every path outside .cerveau and the ignored folders: kind, sha256 (of a link: its
    target), mode; read by the test from the host, not by the harness."""
    out: dict[str, tuple[str, str, int]] = {}
    for root, dirs, files in os.walk(ws):
        rel_root = Path(root).relative_to(ws).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if d != ".cerveau" and (f"{rel_root}/{d}" if rel_root != "." else d) not in IGNORED
        ]
        for name in [*files, *dirs]:
            p = Path(root, name)
            st = p.lstat()
            rel = p.relative_to(ws).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", hashlib.sha256(os.readlink(p).encode()).hexdigest(), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "", stat.S_IMODE(st.st_mode))
            else:
                body = hashlib.sha256(p.read_bytes()).hexdigest()
                out[rel] = ("file", body, stat.S_IMODE(st.st_mode))
    return out


def ignored(ws: Path) -> dict[str, str]:
    return {
        p.relative_to(ws).as_posix(): p.read_text()
        for top in IGNORED
        for p in (ws / top).rglob("*")
        if p.is_file()
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


def setup(ws: Path) -> None:
    ws.mkdir()
    (ws / ".gitignore").write_text(".cerveau/\nbuild/\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / ".gitignore").write_text("out/\n")
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    for name, mode in (("mode_only.sh", 0o644), ("ro.txt", 0o644), ("ro2.txt", 0o640)):
        (ws / name).write_text(f"{name}\n")
        (ws / name).chmod(mode)
    (ws / "a.txt").write_text("a\n")
    os.symlink("a.txt", ws / "link")
    (ws / "file_to_dir").write_text("was a file\n")
    (ws / "dir_to_file").mkdir()
    (ws / "dir_to_file" / "x.txt").write_text("x\n")
    (ws / "was_empty").mkdir()
    (ws / "build").mkdir()
    (ws / "build" / "kept.o").write_text("the person's build\n")


def test_every_kind_of_change_a_command_makes_comes_back(cli, tmp_path):
    ws = tmp_path / "ws"
    setup(ws)
    before = paths(ws)
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]},
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, _, err = cli(ws, srv.url, "change everything")
        assert code == 0, err[-2000:]
    after = paths(ws)
    built = ignored(ws)
    # The command did what it says (else the rewind below proves nothing).
    assert after["mode_only.sh"][2] == 0o755 and after["ro.txt"][2] == 0o444
    assert after["link"][0] == "file" and after["file_to_dir"][0] == "dir"
    assert after["dir_to_file"][0] == "file" and "was_empty" not in after
    assert built["build/obj/o.o"] == "o\n" and built["pkg/out/gen/g.txt"] == "g\n"

    code, out, err = rewind(ws, "--session", "last", "--to-turn", "1")
    assert code == 0, err
    now = paths(ws)
    # The rule for folders: the empty folder the command made stays, the one it removed is
    # not made again; every other path is as it was, kind, bytes and mode.
    assert now.pop("empty") == after["empty"] and now.pop("empty/deeper") == after["empty/deeper"]
    assert {k: v for k, v in before.items() if k != "was_empty"} == now
    assert ignored(ws) == built  # ignored files are never touched, not even the ones it made

    code, out, err = rewind(ws, "--session", "last", "--forward")
    assert code == 0, err
    assert paths(ws) == after
    assert ignored(ws) == built


def test_a_path_it_cannot_put_back_is_named_and_the_exit_is_1(cli, tmp_path):
    """A file a command replaced by a folder that now holds an ignored build folder: the folder
    cannot go (ignored files are never touched), so the file cannot come back; the rewind does
    the rest, names it, and does not say it succeeded."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("build/\n")
    (ws / "data").write_text("a file\n")
    (ws / "other.txt").write_text("other\n")
    cmd = "rm data && mkdir -p data/build && echo o > data/build/o.o && echo 2 > other.txt"
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]},
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, _, err = cli(ws, srv.url, "make data a folder")
        assert code == 0, err[-2000:]
    code, out, err = rewind(ws, "--session", "last", "--to-turn", "1", "--code-only")
    assert code == 1, (out, err)
    assert "data" in err and "NOT put back" in err
    assert (ws / "other.txt").read_text() == "other\n"  # the rest went back
    assert (ws / "data" / "build" / "o.o").read_text() == "o\n"  # the ignored file untouched


def test_a_persons_edit_while_rewound_is_named_by_forward_and_never_lost(cli, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("before\n")
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo turn > a.txt"}}]},
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, _, err = cli(ws, srv.url, "change a")
        assert code == 0, err[-2000:]
    assert rewind(ws, "--to-turn", "1", "--code-only")[0] == 0
    (ws / "a.txt").write_text("the person's, while rewound\n")
    code, out, err = rewind(ws, "--forward")
    assert code == 1 and "a.txt" in err and "--to-point" in err
    assert (ws / "a.txt").read_text() == "the person's, while rewound\n"
    code, out, err = rewind(ws, "--forward", "--force")
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "turn\n"
    # Overwritten by the forced forward, and still not lost: the point the forward took first.
    code, out, err = rewind(ws, "--list", "--all", "--json")
    last = [p for p in json.loads(out) if p["at"] == "rewind"][-1]
    assert rewind(ws, "--to-point", last["point"], "--code-only")[0] == 0
    assert (ws / "a.txt").read_text() == "the person's, while rewound\n"


def test_a_gitignore_a_command_made_goes_and_what_it_hid_is_tracked_from_then_on(cli, tmp_path):
    """The rule when the .gitignore itself was made by the rewound command: the rewind judges by
    the rules in force when it runs, so the build folder that .gitignore hid is left (ignored
    then), and from then on is tracked like any file: a later rewind to before it removes it,
    its bytes kept (the point after the first rewind has them: forward brings them back)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    cmd = (
        "mkdir -p lib/build && printf 'build/\\n' > lib/.gitignore"
        " && echo o > lib/build/o.o && echo s > lib/src.py"
    )
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]},
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, _, err = cli(ws, srv.url, "make lib")
        assert code == 0, err[-2000:]
    assert rewind(ws, "--to-turn", "1", "--code-only")[0] == 0
    assert not (ws / "lib" / ".gitignore").exists() and not (ws / "lib" / "src.py").exists()
    assert (ws / "lib" / "build" / "o.o").read_text() == "o\n"  # ignored when it ran: left
    assert rewind(ws, "--to-turn", "1", "--code-only")[0] == 0
    assert not (ws / "lib").exists()  # tracked since: created after turn 1 started, removed
    assert rewind(ws, "--forward")[0] == 0
    assert (ws / "lib" / "build" / "o.o").read_text() == "o\n"  # and not lost
