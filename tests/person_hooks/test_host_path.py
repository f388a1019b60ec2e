"""A host hook never runs a program the model put in the workspace by way of PATH: the harness's
PATH may name the workspace (`PATH=bin:$PATH`, `$PWD/bin`, a direnv habit), and a host hook runs
with the workspace as its cwd. Checked by a marker the planted program would write on the host."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CERVEAU, Place, answer, call


@pytest.mark.parametrize("entry", ["bin", "{ws}/bin", "{link}"])
def test_a_host_hook_does_not_find_the_models_programs_on_path(place: Place, entry: str) -> None:
    marker = place.out / "pwned"
    link = place.out / "tools"  # outside the workspace, a link into it
    os.symlink(place.ws / "bin", link)
    # An absolute argv: the wrapper's own plumbing (mktemp, head, rm) was found on PATH.
    place.config('[[hooks.post_tool]]\ncommand = ["/usr/bin/true"]\nwhere = "host"\n')
    planted = f'#!/bin/sh\necho ran on the host > {marker}\nexec /usr/bin/mktemp "$@"\n'
    script = [
        call("write_file", path="bin/mktemp", content=planted),
        call("bash", command="chmod +x bin/mktemp"),
        answer(),
    ]
    path = entry.format(ws=place.ws, link=link) + os.pathsep + os.environ["PATH"]
    env = {**os.environ, "CERVEAU_CONFIG": str(place.person / "config.toml"), "PATH": path}
    with ScriptedServer({"responses": script}) as srv:
        proc = subprocess.run(
            [CERVEAU, "run", "--json", "--workspace", str(place.ws), "--server", srv.url, "go"],
            env=env, capture_output=True, text=True, timeout=300, cwd=place.ws,
        )  # fmt: skip
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    ran = [e["payload"]["outcome"] for e in events if e["type"] == "hook_ran"]
    assert os.access(place.ws / "bin" / "mktemp", os.X_OK)  # the control: it was planted
    assert ran == ["ok", "ok"], proc.stderr[-2000:]  # the hook itself ran, after both calls
    assert not marker.exists()
