"""Every process a real session starts on the host, recorded from inside the harness (issue 32).

tests/test_host_process_contract.py reads the package's source; a process started by the standard
library or a dependency on our behalf (`ctypes.util.find_library` ran `ldconfig` and `gcc`) is not
in that source. So here the real `cerveau run --json` runs a session (a command, a write, a search,
in a git repository, under each backend) with every way Python starts a process wrapped: each start
is written to a file outside the workspace, and checked from the host afterwards. The harness's cwd
is the workspace and its environment points into it (PYTHONPATH, PYTHONSTARTUP, LD_PRELOAD,
BASH_ENV, an unrelated variable that an allow list drops), as when a person starts cerveau in a
folder the model has written to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import Box, call, reply
from .test_host_helpers_isolated import plant

#: Wraps Popen, posix_spawn, fork, system, popen; then runs the CLI as `cerveau` would (no cwd on
#: sys.path: a console script's path[0] is its own folder).
SPY = r"""
import json, os, subprocess, sys, runpy, traceback
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
out = sys.argv[1]
planted = json.loads(sys.argv[2])
def note(kind, argv, cwd, env, close_fds=True):
    with open(out, "a") as f:
        f.write(json.dumps({"kind": kind, "argv": [os.fsdecode(a) for a in argv],
            "cwd": os.fsdecode(cwd) if cwd is not None else os.getcwd(),
            "env": None if env is None else sorted(os.fsdecode(k) for k in env),
            "close_fds": close_fds, "by": [f"{fr.filename}:{fr.lineno}" for fr in
            traceback.extract_stack()[:-2] if "subprocess" not in fr.filename][-4:]}) + "\n")
orig = subprocess.Popen._execute_child
def child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest):
    note("popen", [args] if isinstance(args, (str, bytes)) else list(args), cwd, env, close_fds)
    return orig(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest)
subprocess.Popen._execute_child = child
for name in ("posix_spawn", "posix_spawnp"):
    real = getattr(os, name)
    def wrap(path, argv, env, *a, _real=real, **k):
        note(name, list(argv), None, env)
        return _real(path, argv, env, *a, **k)
    setattr(os, name, wrap)
real_fork = os.fork
def fork():
    note("fork", [], None, None)
    return real_fork()
os.fork = fork
real_system = os.system
os.system = lambda cmd: (note("system", [cmd], None, None), real_system(cmd))[1]
os.environ.update(planted)
sys.argv = ["cerveau", *sys.argv[3:]]
runpy.run_module("cerveau_tui", run_name="__main__")
"""

#: Variables the harness's environment holds that no host child may receive.
NEVER = {
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONWARNINGS",
    "LD_PRELOAD",
    "BASH_ENV",
    "CERVEAU_PROBE_UNRELATED",
}
#: Programs that run in the workspace by construction, and why.
IN_WORKSPACE = {
    "git": "git's upward repository search starts from the folder asked about",
    "rg": "the workspace's .gitignore patterns are relative to rg's working directory",
    "sh": "the sandbox launcher (the cgroup wrapper execs bwrap or the Landlock helper)",
    "bwrap": "the sandbox launcher",
    "python": "the Landlock helper / die_exec, which apply the boundary and exec the command",
}


def _session(box: Box, spy_out: Path, replies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    planted = plant(box.ws, box.root / "marks")
    planted.update(LD_PRELOAD=str(box.ws / "evil.so"), BASH_ENV=str(box.ws / "startup.py"))
    planted["CERVEAU_PROBE_UNRELATED"] = "x"
    script = {"responses": [*replies, {"content": "done."}]}
    with ScriptedServer(script) as srv:
        argv = [sys.executable, "-I", "-c", SPY, str(spy_out), json.dumps(planted), "run", "--json"]
        argv += ["--workspace", str(box.ws), "--server", srv.url]
        argv += ["--sandbox", "workspace-write", "--approval", "never", "probe"]
        env = {**os.environ, **box.env(), "CERVEAU_CONFIG": str(box.root / "user.toml")}
        res = subprocess.run(argv, cwd=box.ws, env=env, capture_output=True, text=True, timeout=300)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    assert results, res.stdout[-2000:] + res.stderr[-2000:]  # the control: the session ran
    return [json.loads(line) for line in spy_out.read_text().splitlines()]


def _program(argv: list[str]) -> str:
    name = os.path.basename(argv[0]) if argv else ""
    return "python" if name.startswith("python") else name


def test_every_host_process_a_session_starts_is_isolated(box: Box) -> None:
    (box.root / "marks").mkdir()
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True, capture_output=True)
    spy_out = box.root / "starts.jsonl"
    spy_out.touch()
    starts = _session(
        box,
        spy_out,
        [
            reply(call("bash", command="echo hi > made.txt; ls")),
            reply(call("write_file", path="w.txt", content="written\n")),
            reply(call("search", pattern="written")),
        ],
    )
    # The command ran (under `none` headless refuses it: nobody to ask), and the starts were seen.
    assert starts and ((box.ws / "made.txt").exists() or box.backend == "none")
    problems = []
    for s in starts:
        prog = _program(s["argv"])
        leaked = NEVER & set(s["env"] or ())
        if s["kind"] != "popen" or s["env"] is None:
            problems.append(f"{s['kind']} {prog}: not through host_process (env inherited)")
        if leaked:
            problems.append(f"{prog}: received {sorted(leaked)}")
        if not s["close_fds"]:
            problems.append(f"{prog}: inherits descriptors")
        # The sandbox's self-check runs its probe commands in a workspace it made for them.
        own = s["cwd"] == str(box.ws) or "/cerveau-selfcheck-" in s["cwd"]
        if s["cwd"] != "/" and not (own and prog in IN_WORKSPACE):
            problems.append(f"{prog}: started in {s['cwd']} by {s['by']}")
        if prog == "python" and "-I" not in s["argv"][1:3]:
            problems.append(f"python not isolated: {s['argv'][:4]}")
    assert problems == [], problems
    assert sorted(p.name for p in (box.root / "marks").iterdir()) == []
