"""A shared folder is no workspace (issue 32): the real `cerveau run --json` refuses it with exit
2 and one line on stderr naming the property, and leaves nothing in it (checked from the host:
no `.cerveau` made); a folder of the person's own, under /tmp or any sticky parent, still runs.
As an ordinary user too: their own folder runs, root's folder is another user's."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import ordinary_user

CHECKOUT = Path(__file__).resolve().parents[2]
NOWHERE = "http://127.0.0.1:9"  # refused before any request: nothing must answer


def _refused(ws: Path, property_: str) -> None:
    made = (Path(os.path.realpath(ws)) / ".cerveau").exists()
    code, events, err = run_cli(ws, NOWHERE, "probe", timeout=60)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cerveau: refusing the workspace"), err
    assert property_ in lines[0]
    assert events == []  # refused before a session: no event at all
    if not made:
        assert not (Path(os.path.realpath(ws)) / ".cerveau").exists()


@pytest.fixture
def box() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-shared-", dir="/var/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_tmp_itself_is_refused() -> None:
    _refused(Path("/tmp"), "sticky bit")


def test_dev_shm_is_refused_as_a_shared_scratch_filesystem() -> None:
    if not os.path.ismount("/dev/shm"):
        pytest.skip("no /dev/shm mount here")
    _refused(Path("/dev/shm"), "scratch filesystem every user shares")


def test_a_sticky_world_writable_folder_is_refused(box: Path) -> None:
    ws = box / "drop"
    ws.mkdir()
    ws.chmod(0o1777)
    _refused(ws, "sticky bit, mode 1777")


def test_a_world_writable_folder_is_refused(box: Path) -> None:
    ws = box / "open"
    ws.mkdir()
    ws.chmod(0o777)
    _refused(ws, "writable by every user")


def test_a_folder_owned_by_another_uid_is_refused(box: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    ws = box / "theirs"
    ws.mkdir()
    os.chown(ws, 65534, 65534)
    _refused(ws, "owned by another user")


def test_a_link_to_tmp_is_refused_as_tmp(box: Path) -> None:
    (box / "link").symlink_to("/tmp")
    _refused(box / "link", "refusing the workspace /tmp:")


def _runs(ws: Path) -> None:
    with ScriptedServer({"responses": [{"content": "done."}]}) as srv:
        code, events, err = run_cli(ws, srv.url, "probe", timeout=120)
    assert "refusing" not in err
    assert code == 0, err
    assert any(e["type"] == "session_started" for e in events)


def test_a_folder_of_ones_own_under_tmp_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    _runs(ws)


def test_a_folder_of_ones_own_in_a_sticky_parent_runs(box: Path) -> None:
    # box is mkdtemp's 0700 folder directly inside sticky /var/tmp
    _runs(box)


# -- as an ordinary user ----------------------------------------------------------------------------


#: The ordinary user's home as passwd says it (the sandbox builds its view from it), made fresh
#: by each test and removed after.
USER_HOME = Path("/var/tmp/cerveau-private-home")


def _ordinary_user() -> str | None:
    return ordinary_user("cerveau-private", home=USER_HOME)


def _as_user(user: str, ws: Path, url: str) -> subprocess.CompletedProcess[str]:
    # root's home (where this interpreter may live) is closed to them: the system Python of the
    # same version, with this checkout and the venv's packages on the path.
    system_py = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system_py.exists():
        pytest.skip(f"no {system_py} for the ordinary user")
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    home = USER_HOME
    home.mkdir(mode=0o700, exist_ok=True)
    pw = pwd.getpwnam(user)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    return subprocess.run(
        [shutil.which("runuser") or "runuser", "-u", user, "--", str(system_py), "-m",
         "cerveau_tui", "run", "--json", "--workspace", str(ws), "--server", url, "probe"],
        capture_output=True, text=True, timeout=180, cwd="/",
        env={"HOME": str(home), "PATH": "/usr/bin:/bin",
             "CERVEAU_CONFIG": str(home / "none.toml"),
             "PYTHONPATH": os.pathsep.join([str(CHECKOUT), *site])},
    )  # fmt: skip


def test_as_an_ordinary_user_their_own_folder_runs_and_roots_is_refused(box: Path) -> None:
    user = _ordinary_user()
    if user is None:
        pytest.skip("needs root and runuser to make an ordinary user")
    box.chmod(0o755)
    pw = pwd.getpwnam(user)
    own, roots = box / "own", box / "roots"
    own.mkdir()
    roots.mkdir()
    os.chown(own, pw.pw_uid, pw.pw_gid)
    try:
        refused = _as_user(user, roots, NOWHERE)
        with ScriptedServer({"responses": [{"content": "done."}]}) as srv:
            ran = _as_user(user, own, srv.url)
    finally:
        shutil.rmtree(USER_HOME, ignore_errors=True)
    assert refused.returncode == 2, refused.stderr
    assert "owned by another user (root)" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "refusing" not in ran.stderr
    assert '"session_started"' in ran.stdout, ran.stderr[-2000:]


def test_the_tui_refuses_a_shared_folder_before_it_starts(box: Path) -> None:
    # `cerveau` with no subcommand is the TUI: refused on stderr with exit 2, no screen drawn.
    ws = box / "open"
    ws.mkdir()
    ws.chmod(0o777)
    res = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "--workspace", str(ws), "--server", NOWHERE],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "CERVEAU_CONFIG": str(box / "none.toml")},
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines() == [
        f"cerveau: refusing the workspace {ws}: it is writable by every user of this machine "
        f"(mode 0777), so anyone could change what the model and your commands read; remove "
        f"that right (chmod o-w {ws}) or start cerveau in a folder of your own"
    ]
    assert not (ws / ".cerveau").exists()


def test_doctor_says_why_a_workspace_would_be_refused(box: Path) -> None:
    ws = box / "drop"
    ws.mkdir()
    ws.chmod(0o1777)
    res = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "doctor", "--json", "--workspace", str(ws)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CERVEAU_CONFIG": str(box / "none.toml"), "CERVEAU_SERVER_URL": ""},
    )  # fmt: skip
    info = json.loads(res.stdout)
    assert "sticky bit, mode 1777" in info["workspace_refused"]
