"""The hostile server's escape as an ordinary user (`runuser -u`), where most people run cerveau:
the user's planted home secret never in the result, nothing written outside the workspace, a
loopback listener never reached without a grant. Checked from the host after the run."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cerveau_tui.testing.listeners import Quiet

from ..probes.conftest import ordinary_user
from .conftest import BACKENDS, SECRET

SCRIPT = """
import json, sys
from pathlib import Path
from cerveau_tui.config import McpServerConfig, load_settings
from cerveau_tui.deny_read import deny_read_paths
from cerveau_tui.mcp.hook import runner_factory
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.sandbox.{module} import {cls} as R
ws, evil, home, outside, port = sys.argv[1:6]
s = load_settings(ws, user_config=Path(home) / "none.toml")
hub = McpHub({{"evil": McpServerConfig(command=evil)}}, Path(ws),
             runner_factory(s, R({extra}), deny_read_paths(s.deny_read))).start()
try:
    a = hub.call("evil", "escape", {{"home": home, "outside": outside}}, 16000).text
    b = hub.call("evil", "connect", {{"host": "127.0.0.1", "port": int(port)}}, 16000).text
    print(json.dumps({{"status": hub.status(), "escape": a, "connect": b}}))
finally:
    hub.close()
"""


@pytest.fixture
def as_user() -> tuple[str, Path]:
    """An ordinary user, and the system Python of this version to run the harness with."""
    py = Path("/usr/bin") / f"python{sys.version_info.major}.{sys.version_info.minor}"
    user = ordinary_user() if py.exists() else None
    if user is None:
        pytest.skip("needs root, runuser and the system Python of this version")
    return user, py


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_an_ordinary_user_the_server_stays_inside(
    backend: str, as_user: tuple[str, Path]
) -> None:
    user, system_py = as_user
    quiet = Quiet()
    root = Path(tempfile.mkdtemp(prefix="cerveau-mcp-user-", dir="/var/tmp"))
    try:
        ws, home, outside, srv = root / "ws", root / "home", root / "outside", root / "srv"
        for d in (ws, home / ".ssh", outside, srv):
            d.mkdir(parents=True)
        (home / ".ssh" / "id_rsa").write_text(f"{SECRET}\n")
        (home / ".bashrc").write_text("# theirs\n")
        evil = srv / "evil-mcp"
        evil.write_text(
            "#!/usr/bin/python3\n" + Path(__file__).with_name("evil_server.py").read_text()
        )
        evil.chmod(0o755)
        pw = pwd.getpwnam(user)
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.chown(name, pw.pw_uid, pw.pw_gid)
        root.chmod(0o755)
        module, cls = (
            ("bubblewrap", "BubblewrapRunner")
            if backend == "bubblewrap"
            else ("landlock", "LandlockRunner")
        )
        extra = "" if backend == "bubblewrap" else f"python={str(system_py)!r}"
        site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
        args = [str(ws), str(evil), str(home), str(outside), str(quiet.port)]
        res = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", user, "--", str(system_py), "-c",
             SCRIPT.format(module=module, cls=cls, extra=extra), *args],
            capture_output=True, text=True, timeout=180,
            env={"HOME": str(home), "PATH": "/usr/bin:/bin",
                 "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *site])},
        )  # fmt: skip
        if "setting up uid map" in res.stderr + res.stdout:
            pytest.skip("unprivileged user namespaces are off here")
        assert res.returncode == 0, res.stderr[-3000:]
        out = json.loads(res.stdout.strip().splitlines()[-1])
        assert out["status"][0]["error"] is None  # the control: it ran, as that user
        assert "refused" in out["connect"]
        assert SECRET not in out["escape"]
        assert (home / ".bashrc").read_text() == "# theirs\n"
        assert not (outside / "escaped.txt").exists()
        assert not quiet.reached()
    finally:
        quiet.sock.close()
        shutil.rmtree(root, ignore_errors=True)
