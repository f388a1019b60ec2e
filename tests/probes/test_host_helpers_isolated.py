"""Host helpers never run code from the workspace (issue 32, "one way to start a process").

The attack: the search-index builder and the stack watchdog were started as `python -m ...` with
the workspace as their working directory, so a `subprocess.py` the model wrote at the workspace
root ran on the host at the next start. Each probe here plants a member of that class in the
workspace (module files shadowing what the helpers import, `sitecustomize`/`usercustomize`, a
`.pth`, a warnings filter naming a planted module, `PYTHONPATH`/`PYTHONSTARTUP`/`PYTHONUSERBASE`
pointing into it, programs first on PATH), starts the helper exactly as the harness does, and
checks from the host that no planted code ran: every planted file writes a marker outside the
workspace when it runs. A control starts the helper the old way and sees the markers, so the
plants are live and the probes can fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui import host_process

from .conftest import ordinary_user

#: Module names the helpers (or the interpreter starting them) import; `os` is frozen in 3.11
#: and cannot be shadowed, planted anyway as the one the brief names.
SHADOWS = (
    "subprocess", "json", "os", "signal", "struct", "runpy", "blake3", "threading", "select",
    "weakref", "atexit", "typing", "pathlib", "dataclasses", "enum", "functools", "re",
    "sitecustomize", "usercustomize", "planted_warning",
)  # fmt: skip
PROGRAMS = (
    "python3",
    "python",
    "git",
    "rg",
    "llama-server",
    "sh",
    "cmake",
    "gcc",
    "cc",
    "ld",
    "objdump",
)


def _marker(marks: Path, name: str) -> str:
    return f"open({str(marks / name)!r}, 'w').close()\n"


def plant(ws: Path, marks: Path) -> dict[str, str]:
    """Plant every member in `ws`; returns the environment that points the harness into it."""
    for name in SHADOWS:
        (ws / f"{name}.py").write_text(_marker(marks, name))
    (ws / "planted.pth").write_text("import os; " + _marker(marks, "pth"))
    (ws / "startup.py").write_text(_marker(marks, "pythonstartup"))
    user_site = ws / "ub" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    user_site = user_site / "site-packages"
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(_marker(marks, "user-site-usercustomize"))
    (user_site / "planted.pth").write_text("import os; " + _marker(marks, "user-site-pth"))
    bin_dir = ws / "bin"
    bin_dir.mkdir()
    for prog in PROGRAMS:
        for d in (ws, bin_dir):
            p = d / prog
            p.write_text(f"#!/bin/sh\ntouch {marks}/program-{prog}\nexit 0\n")
            p.chmod(0o755)
    return {
        "PYTHONPATH": str(ws),
        "PYTHONSTARTUP": str(ws / "startup.py"),
        "PYTHONUSERBASE": str(ws / "ub"),
        "PYTHONWARNINGS": "ignore::planted_warning.Planted",
        "PYTHONINSPECT": "",
        "PATH": f".:{ws}:{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


@pytest.fixture
def room(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, Path]]:
    """(workspace, markers, root): the harness's cwd is the workspace and its environment points
    into it, as when the person starts cerveau in a folder the model has written to."""
    root = Path(tempfile.mkdtemp(prefix="cerveau-hostproc-", dir="/var/tmp"))
    ws, marks, home = root / "ws", root / "marks", root / "home"
    for d in (ws, marks, home):
        d.mkdir()
    for key, value in plant(ws, marks).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("CERVEAU_CONFIG", str(home / "cerveau.toml"))
    monkeypatch.chdir(ws)
    try:
        yield ws, marks, root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _ran(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


def _start_watchdog_and_end_it() -> int:
    """The harness's way: watch() a server group; the app's end closes the pipe."""
    from cerveau_tui.stack.watchdog import watch

    server = subprocess.Popen(["/bin/sleep", "60"], start_new_session=True)
    dog = watch(server.pid)
    assert dog.stdin is not None
    dog.stdin.close()
    code = dog.wait(timeout=60)
    # The watchdog did its job (the control that it ran at all): the server's group is gone.
    assert server.wait(timeout=30) != 0
    return code


def test_the_watchdog_runs_no_planted_code(room: tuple[Path, Path, Path]) -> None:
    ws, marks, _ = room
    assert _start_watchdog_and_end_it() == 0
    assert _ran(marks) == []


def test_control_the_old_way_runs_the_planted_code(room: tuple[Path, Path, Path]) -> None:
    # `python -m` from the workspace with our environment, as both helpers were started.
    ws, marks, _ = room
    subprocess.run(
        [sys.executable, "-m", "cerveau_tui.stack.watchdog", "1", "0"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert _ran(marks) != []


def test_programs_planted_first_on_path_are_not_the_ones_run(
    room: tuple[Path, Path, Path],
) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.tools import ripgrep
    from cerveau_tui.workspace.git import view as git_view
    from cerveau_tui.workspace.git.config_rules import find_git

    ws, marks, root = room
    # The control: our PATH does lead to the plants.
    assert shutil.which("git") in ("./git", str(ws / "git"))
    for name in ("git", "rg", "python3", "llama-server"):
        found = host_process.which(name)
        assert found is None or not found.startswith(str(ws)), found
    assert not (find_git() or "").startswith(str(ws))
    assert not (ripgrep.find_rg() or "").startswith(str(ws))
    loc = locate(stack_paths(root / "cache"), environ={})
    assert loc.binary is None or not str(loc.binary).startswith(str(ws))
    # By bare name, as a child of ours would run a program: the child's PATH is the system's.
    for prog in ("git", "sh"):
        host_process.run([prog, "--version"], timeout=30)
    git_view.view([str(ws)])
    _start_watchdog_and_end_it()
    assert _ran(marks) == []


def test_a_library_lookup_runs_no_program_from_path(room: tuple[Path, Path, Path]) -> None:
    import ctypes.util

    ws, marks, _ = room
    assert ctypes.util.find_library is host_process.find_library  # installed by the package
    assert ctypes.util.find_library("cerveauprobenolib") is None
    assert _ran(marks) == []


def test_control_the_standard_library_lookup_runs_the_planted_gcc(
    room: tuple[Path, Path, Path],
) -> None:
    import ctypes.util
    import importlib

    ws, marks, _ = room
    try:
        importlib.reload(ctypes.util)  # the standard function, as pyseccomp called it
        ctypes.util.find_library("cerveauprobenolib")
    finally:
        host_process.install_find_library()
    assert "program-gcc" in _ran(marks) or "program-cc" in _ran(marks)


def test_a_helper_inherits_no_descriptor_but_its_streams() -> None:
    r, w = os.pipe()  # not inheritable by default; made so, as a careless caller might
    os.set_inheritable(w, True)
    try:
        out = host_process.run(
            host_process.python_argv(Path("/dev/stdin"), site=False),
            input=b"import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))",
            timeout=30,
        )
    finally:
        os.close(r)
        os.close(w)
    fds = eval(out.stdout)  # noqa: S307 - our own child's output: a list of ints
    assert w not in fds and max(fds) <= 3, fds  # 0-2, and the listing's own descriptor


def test_a_helper_starts_from_the_root_not_our_working_directory(
    room: tuple[Path, Path, Path],
) -> None:
    out = host_process.run(["/bin/pwd"], timeout=30, text=True)
    assert out.stdout.strip() == "/"


def test_a_helper_environment_holds_only_the_allow_list(room: tuple[Path, Path, Path]) -> None:
    out = host_process.run(["/usr/bin/env"], timeout=30, text=True, inherit=("HOME",))
    names = {line.split("=", 1)[0] for line in out.stdout.splitlines()}
    assert names <= {"PATH", "LANG", "HOME"}, names
    assert f"PATH={host_process.SYSTEM_PATH}" in out.stdout.splitlines()


# -- as an ordinary user ----------------------------------------------------------------------


def test_as_an_ordinary_user_the_watchdog_runs_no_planted_code() -> None:
    user = ordinary_user()
    if user is None:
        pytest.skip("needs root and runuser to make an ordinary user")
    # The ordinary user cannot enter root's home (where this interpreter may live): the system
    # Python of the same version, with this checkout and the venv's packages on its path.
    system_py = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system_py.exists():
        pytest.skip(f"no {system_py} for the ordinary user")
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    repo = str(Path(__file__).resolve().parents[2])
    root = Path(tempfile.mkdtemp(prefix="cerveau-hostproc-user-", dir="/var/tmp"))
    try:
        ws, marks = root / "ws", root / "marks"
        ws.mkdir()
        marks.mkdir()
        planted = plant(ws, marks)
        pw = pwd.getpwnam(user)
        for dirpath, dirnames, filenames in os.walk(root):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.chown(n, pw.pw_uid, pw.pw_gid)
        root.chmod(0o755)
        # The harness (this driver) started normally; then its environment points into the
        # workspace and its cwd is the workspace, and it starts the watchdog as it does.
        script = (
            "import sys; sys.path.remove('')  # a console script has no cwd on its path\n"
            "import os, subprocess\n"
            "from cerveau_tui.stack.watchdog import watch\n"
            f"os.environ.update({planted!r})\n"
            f"os.chdir({str(ws)!r})\n"
            "server = subprocess.Popen(['/bin/sleep', '60'], start_new_session=True)\n"
            "dog = watch(server.pid); dog.stdin.close()\n"
            "print('dog', dog.wait(timeout=60), 'server', server.wait(timeout=30))\n"
        )
        res = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", user, "--", str(system_py), "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            env={
                "HOME": str(root),
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": os.pathsep.join([repo, *site]),
            },
        )
        assert res.stdout.startswith("dog 0 server -"), res.stdout + res.stderr  # it ran
        assert _ran(marks) == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
