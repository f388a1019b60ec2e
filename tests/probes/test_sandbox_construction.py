"""Boundary II, by construction: unprivileged inside, a private view of the machine by allow list,
the harness's own files out of reach, Landlock at parity where it can be. Each probe is a member
of its class that no list named, played through the real runner or the real `cerveau run --json`,
and checked from the HOST afterwards (the kernel setting's value, files, processes, the events
and the server's requests), never from what the command printed."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi

from .conftest import SECRET, Box, call, ordinary_user, reply

BACKENDS = [
    *(["bubblewrap"] if find_bwrap() else []),
    *(["landlock"] if landlock_abi() > 0 else []),
]


def _runner(backend: str, **kw: object) -> BubblewrapRunner | LandlockRunner:
    return BubblewrapRunner(**kw) if backend == "bubblewrap" else LandlockRunner(**kw)  # type: ignore[arg-type]


@pytest.fixture
def ws() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-construct-", dir="/var/tmp"))
    (root / "ws").mkdir()
    yield root / "ws"
    shutil.rmtree(root, ignore_errors=True)


# -- unprivileged inside ------------------------------------------------------------------------


def _sysctl(path: str) -> str:
    return Path(path).read_text()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "setting", ["/proc/sys/vm/dirty_expire_centisecs", "/proc/sys/kernel/sched_child_runs_first"]
)
def test_a_command_cannot_change_a_host_kernel_setting(
    backend: str, setting: str, ws: Path
) -> None:
    if not os.path.exists(setting):
        pytest.skip(f"{setting} not on this kernel")
    before = _sysctl(setting)
    other = str(int(before.split()[0]) + 1)
    try:
        _runner(backend).run(CommandSpec(f"echo {other} > {setting}", workspace=ws, timeout=20))
        after = _sysctl(setting)
    finally:
        if _sysctl(setting) != before and os.geteuid() == 0:
            Path(setting).write_text(before)  # put the host back before failing
    assert after == before


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b == "bubblewrap"])
def test_no_kernel_interface_is_writable_inside(backend: str, ws: Path) -> None:
    # bubblewrap only: Landlock checks at open, not in access(2), so `[ -w ]` says nothing there
    # (the landing tests above cover it). access(W_OK) honours a read-only mount: these are what a uid-0 process without capabilities
    # could still write if they were writable. Checked on the host: nothing printed is trusted
    # except the list of names, which the command cannot make shorter than the truth by lying
    # about a write that would have landed (the sysctl test above covers landing).
    names = (
        "/proc/sysrq-trigger /proc/sys/kernel/core_pattern /sys/kernel/mm /proc/self/oom_score_adj"
    )
    res = _runner(backend).run(
        CommandSpec(
            f"for f in {names}; do [ -w $f ] && echo WRITABLE $f; done; true",
            workspace=ws,
            timeout=20,
        )
    )
    assert "WRITABLE" not in res.output, res.output


def test_a_core_pattern_write_does_not_land(ws: Path) -> None:
    path = "/proc/sys/kernel/core_pattern"
    before = _sysctl(path)
    marker = ws / "ran-as-host-root"
    try:
        _runner(BACKENDS[0]).run(
            CommandSpec(
                f"printf '#!/bin/sh\\ntouch {marker}\\n' > evil; chmod +x evil; echo '|{ws}/evil' > {path}",
                workspace=ws,
                timeout=20,
            )
        )
        after = _sysctl(path)
    finally:
        if _sysctl(path) != before and os.geteuid() == 0:
            Path(path).write_text(before)
    assert after == before and not marker.exists()


# -- a private view by allow list ------------------------------------------------------------------


# Kinds of secrets no list of ours names: the class is "anything in a home or in /etc".
PLANTED_HOME = (
    ".config/acme-cli/token.json",
    ".local/share/fish/fish_history",
    ".mozilla/firefox/abc.default/logins.json",
    ".cargo/credentials.toml",
    ".pyenv/../.pypi-token",
    "projects/other-client/.env",
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_of_a_home_reaches_a_command(backend: str, ws: Path) -> None:
    home = ws.parent / "home"
    for rel in PLANTED_HOME:
        p = Path(os.path.normpath(home / rel))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{SECRET}-{rel}\n")
    (home / ".pyenv").mkdir(exist_ok=True)  # a toolchain folder: visible, read-only
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        runner = _runner(backend)
        paths = " ".join(str(home / rel) for rel in PLANTED_HOME)
        res = runner.run(
            CommandSpec(
                f"for f in {paths}; do cat $f; done; cp -r {home} stolen; grep -r PROBE / 2>/dev/null | head -5",
                workspace=ws,
                timeout=60,
            )
        )
    finally:
        if old is None:
            os.environ.pop("HOME")
        else:
            os.environ["HOME"] = old
    assert SECRET not in res.output
    stolen = (
        [p for p in (ws / "stolen").rglob("*") if p.is_file()] if (ws / "stolen").exists() else []
    )
    assert not any(SECRET in p.read_text(errors="replace") for p in stolen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_etc_file_no_allow_list_names_is_absent(backend: str, ws: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("planting in /etc needs root")
    planted = Path("/etc") / f"cerveau-probe-{uuid.uuid4().hex[:8]}.key"
    planted.write_text(SECRET + "\n")
    planted.chmod(0o600)
    try:
        res = _runner(backend).run(
            CommandSpec(
                f"cat {planted}; cat /etc/shadow /etc/gshadow; ls /etc/ssl/private",
                workspace=ws,
                timeout=20,
            )
        )
    finally:
        planted.unlink()
    shadow_first = (
        Path("/etc/shadow").read_text().splitlines()[0] if Path("/etc/shadow").exists() else "@@"
    )
    assert SECRET not in res.output and shadow_first not in res.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_toolchain_still_works_inside(backend: str, ws: Path) -> None:
    # The control: an allow list so short that nothing runs would pass every test above.
    (ws / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    res = _runner(backend).run(
        CommandSpec(
            f"{sys.executable} -m pytest -q -p no:cacheprovider test_ok.py && git --version && echo ok > made.txt",
            workspace=ws,
            timeout=120,
        )
    )
    assert res.exit_code == 0, res.output
    assert (ws / "made.txt").read_text() == "ok\n"


def test_a_file_tool_read_of_a_home_secret_is_asked_not_silent(box: Box) -> None:
    # Through the real CLI: headless denies every crossing, so the bytes never reach the model.
    target = box.home / ".config" / "acme-cli" / "token.json"
    target.parent.mkdir(parents=True)
    target.write_text(SECRET)
    box.run(
        reply(call("read_file", path=str(target))),
        reply(call("search", pattern="PROBE", path=str(box.home))),
    )
    assert box.leaked() == []


# -- the harness's own files --------------------------------------------------------------------


def _run_in(ws: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    """`cerveau run` in `ws` against a server that is not there: a refusal comes first."""
    argv = [sys.executable, "-m", "cerveau_tui", "run", *flags, "--workspace", str(ws)]
    return subprocess.run(
        [*argv, "--server", "http://127.0.0.1:9", "hi"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_workspace_holding_the_persons_config_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "cerveau").mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(tmp_path / "elsewhere"),
        "CERVEAU_CONFIG": str(home / ".config" / "cerveau" / "config.toml"),
    }
    for ws in (home, home / ".config"):
        res = _run_in(ws, env, "--json")
        assert res.returncode == 2, res.stderr
        assert "refusing the workspace" in res.stderr and len(res.stderr.strip().splitlines()) == 1
        assert not (ws / ".cerveau").exists()


def test_the_persons_home_is_refused_as_a_workspace(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "CERVEAU_CONFIG": str(tmp_path / "x" / "c.toml")}
    res = _run_in(tmp_path, env)
    assert res.returncode == 2 and "home folder" in res.stderr
    assert not (tmp_path / ".cerveau").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_command_cannot_reach_the_persons_config_elsewhere(backend: str, box: Box) -> None:
    box.user_config.parent.mkdir(parents=True, exist_ok=True)
    box.user_config.write_text('sandbox = "workspace-write"\n')
    before = box.user_config.read_bytes()
    evil = 'sandbox = \\"full-access\\"'
    box.run(
        reply(
            call(
                "bash", command=f'echo "{evil}" > {box.user_config}; cat {box.user_config.parent}/*'
            )
        ),
        reply(call("write_file", path=str(box.user_config), content='sandbox = "full-access"\n')),
    )
    assert box.user_config.read_bytes() == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_harness_package_is_not_writable_even_inside_the_workspace(
    backend: str, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cerveau on its own checkout: the package the next start imports lies in the workspace.
    if backend == "landlock":
        pytest.skip("Landlock cannot make a folder inside the workspace read-only (said in gaps)")
    pkg = ws / "cerveau_tui"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("# the harness\n")
    from cerveau_tui.sandbox import view

    real = view.runtime_paths
    monkeypatch.setattr(view, "runtime_paths", lambda: [*real(), pkg])
    _runner(backend).run(
        CommandSpec(
            "echo 'import os; os.system(\"touch /tmp/pwned\")' >> cerveau_tui/__init__.py; "
            "mv cerveau_tui gone; rm -rf cerveau_tui",
            workspace=ws,
            timeout=20,
        )
    )
    assert (pkg / "__init__.py").read_text() == "# the harness\n"


# -- Landlock parity ------------------------------------------------------------------------------


def _alive(marker: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    out.append(int(pid))
            except OSError:
                pass
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["nohup {s} &", "({s} &) ; true", "setsid -f {s}"])
def test_no_process_outlives_its_command(backend: str, how: str, ws: Path) -> None:
    runner = _runner(backend)
    if backend == "landlock" and runner.cap.mode != "cgroup":
        pytest.skip("no pids cgroup here (said in gaps)")
    marker = f"cerveau-outlive-{uuid.uuid4().hex[:8]}"
    runner.run(
        CommandSpec(
            how.format(s=f"sh -c 'sleep 30' {marker} >/dev/null 2>&1"), workspace=ws, timeout=20
        )
    )
    deadline = time.monotonic() + 5
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_datagram_reaches_a_host_listener(backend: str, ws: Path) -> None:
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.bind((host, 0))
        except OSError:
            continue
        s.settimeout(1.5)
        port = s.getsockname()[1]
        fam = "AF_INET" if family == socket.AF_INET else "AF_INET6"
        _runner(backend).run(
            CommandSpec(
                f"{sys.executable} -c \"import socket; socket.socket(socket.{fam}, socket.SOCK_DGRAM).sendto(b'x', ('{host}', {port}))\"",
                workspace=ws,
                timeout=20,
            )
        )
        with pytest.raises(TimeoutError):
            s.recvfrom(16)
        s.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_allowed_socket_families_open(backend: str, ws: Path) -> None:
    # AF_VSOCK ignores network namespaces and reaches a VM's host; AF_PACKET, AF_ALG, AF_KEY are
    # kernel surfaces no build needs. Only those the host itself can open say anything.
    fams = {"AF_VSOCK": 40, "AF_ALG": 38, "AF_KEY": 15, "AF_TIPC": 30, "AF_RDS": 21}
    can = []
    for name, num in fams.items():
        try:
            socket.socket(
                num, socket.SOCK_SEQPACKET if name != "AF_KEY" else socket.SOCK_RAW
            ).close()
            can.append((name, num))
        except OSError:
            continue
    if not can:
        pytest.skip("the host opens none of these families")
    lines = ["import socket"]
    for name, num in can:
        kind = socket.SOCK_RAW if name == "AF_KEY" else socket.SOCK_SEQPACKET
        lines += ["try:", f"    socket.socket({num}, {int(kind)})", f"    print('OPENED {name}')"]
        lines += ["except OSError:", "    pass"]
    (ws / "families.py").write_text("\n".join(lines) + "\n")
    res = _runner(backend).run(
        CommandSpec(f"{sys.executable} families.py", workspace=ws, timeout=20)
    )
    assert "OPENED" not in res.output, res.output


# -- as an ordinary user ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_an_ordinary_user_a_home_secret_and_the_host_stay_out_of_reach(backend: str) -> None:
    user = ordinary_user()
    if user is None:
        pytest.skip("needs root and runuser to make an ordinary user")
    # The ordinary user cannot enter root's home (where this interpreter may live): the system
    # Python of the same version, with this checkout and its venv's packages on the path.
    system_py = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system_py.exists():
        pytest.skip(f"no {system_py} for the ordinary user")
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    root = Path(tempfile.mkdtemp(prefix="cerveau-user-", dir="/var/tmp"))
    try:
        home, ws, out = root / "home", root / "ws", root / "out"
        for d in (home / ".config" / "tool", ws, out):
            d.mkdir(parents=True)
        (home / ".config" / "tool" / "token").write_text(SECRET)
        pw = pwd.getpwnam(user)
        for dirpath, dirnames, filenames in os.walk(root):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.chown(n, pw.pw_uid, pw.pw_gid)
        root.chmod(0o755)
        script = (
            "import sys; from pathlib import Path; "
            f"sys.path.insert(0, {str(Path(__file__).parents[2])!r}); "
            f"from cerveau_tui.sandbox.{'bubblewrap' if backend == 'bubblewrap' else 'landlock'} import "
            f"{'BubblewrapRunner as R' if backend == 'bubblewrap' else 'LandlockRunner as R'}; "
            "from cerveau_tui.sandbox.command import CommandSpec; "
            f"r = R({'' if backend == 'bubblewrap' else repr(str(system_py)).join(['python=', ''])}).run(CommandSpec('cat {home}/.config/tool/token; echo x > {out}/escaped; echo ok > in.txt', "
            f"Path({str(ws)!r}), timeout=30)); print(r.exit_code); print(r.output)"
        )
        res = subprocess.run(
            [shutil.which("runuser") or "runuser", "-u", user, "--", str(system_py), "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            env={
                "HOME": str(home),
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *site]),
            },
        )
        if "Operation not permitted" in res.stderr and "setting up uid map" in res.stderr:
            pytest.skip("unprivileged user namespaces are off here")
        assert (ws / "in.txt").exists(), res.stdout + res.stderr  # the control: it did run
        assert SECRET not in res.stdout and not (out / "escaped").exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- what the person allows --------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_folder_the_person_allows_is_readable_and_a_repository_cannot_allow_one(
    backend: str, ws: Path
) -> None:
    from cerveau_tui.config import load_settings
    from cerveau_tui.sandbox.select import select_runner, self_check

    shared = ws.parent / "datasets"
    shared.mkdir()
    (shared / "table.csv").write_text("a,b\n1,2\n")
    user = ws.parent / "user.toml"
    user.write_text(f'sandbox_read = ["{shared}"]\nsandbox_backend = "{backend}"\n')
    status = self_check(ws.parent, backends=(backend,))
    settings = load_settings(ws, environ={}, user_config=user)
    res = select_runner(settings, status).run(
        CommandSpec(f"cat {shared}/table.csv", workspace=ws, timeout=20)
    )
    assert res.exit_code == 0 and "1,2" in res.output, res.output
    # The same line in the repository's own config is held back, and the folder stays unseen.
    user.write_text(f'sandbox_backend = "{backend}"\n')
    (ws / ".cerveau").mkdir(exist_ok=True)
    (ws / ".cerveau" / "config.toml").write_text(f'sandbox_read = ["{shared}"]\n')
    settings = load_settings(ws, environ={}, user_config=user)
    assert "sandbox_read" in " ".join(str(h) for h in settings.workspace_held_back)
    res = select_runner(settings, status).run(
        CommandSpec(f"cat {shared}/table.csv", workspace=ws, timeout=20)
    )
    assert "1,2" not in res.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_grant_of_a_kernel_interface_or_the_harness_files_is_never_applied(
    backend: str, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerveau_tui.sandbox.base import Grant

    config = ws.parent / "person" / "config.toml"
    config.parent.mkdir()
    config.write_text('sandbox = "workspace-write"\n')
    monkeypatch.setenv("CERVEAU_CONFIG", str(config))
    setting = Path("/proc/sys/vm/dirty_expire_centisecs")
    before = setting.read_text()
    other = str(int(before.split()[0]) + 1)
    grant = Grant(extra_writable=(setting.parent, Path("/sys/fs"), config.parent))
    try:
        _runner(backend).run(
            CommandSpec(
                f"echo {other} > {setting}; echo x > /sys/fs/cgroup/probe; echo pwn >> {config}",
                workspace=ws,
                timeout=20,
                grant=grant,
            )
        )
        after = setting.read_text()
    finally:
        if setting.read_text() != before:
            setting.write_text(before)
    landed = Path("/sys/fs/cgroup/probe")
    if landed.exists():
        landed.unlink()  # leave the host as it was, then fail
        pytest.fail("a write through a granted /sys/fs landed in the host's cgroup folder")
    assert after == before
    assert config.read_text() == 'sandbox = "workspace-write"\n'


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_outside_fails_loudly_never_vanishes(backend: str, ws: Path) -> None:
    # /var/tmp was a link to the private /tmp: `touch /var/tmp/x` exited 0 and the file
    # vanished with the command, so neither the model nor the person learnt it had not landed.
    name = f"cerveau-vanish-{uuid.uuid4().hex[:8]}"
    targets = [Path("/var/tmp") / name, ws.parent / name, Path("/srv") / name]
    cmd = "; ".join(f"touch {t} && echo LANDED {t}" for t in targets) + "; true"
    res = _runner(backend).run(CommandSpec(cmd, workspace=ws, timeout=20))
    assert "LANDED" not in res.output, res.output
    assert not any(t.exists() for t in targets)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_harness_cache_inside_the_workspace_cannot_be_rewritten(backend: str, ws: Path) -> None:
    # The cache holds the llama-server the next start runs. Under bubblewrap it is a read-only
    # bind; Landlock cannot make it read-only inside the workspace, so that session is NOT
    # enforced and the command is asked (headless: denied). Checked on the host: the bytes.
    from cerveau_tui.testing.cli import run_cli
    from cerveau_tui.testing.scripted_server import ScriptedServer

    binary = ws / "cache" / "llama-server" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho the real server\n")
    evil = f"printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > {binary}"
    script = {"responses": [reply(call("bash", command=evil)), {"content": "done."}]}
    env = {"CERVEAU_CACHE_DIR": str(ws / "cache"), "CERVEAU_SANDBOX_BACKEND": backend}
    with ScriptedServer(script) as srv:
        _, events, _ = run_cli(ws, srv.url, "update the server", env=env)
    started = next(e["payload"] for e in events if e["type"] == "session_started")
    assert binary.read_text() == "#!/bin/sh\necho the real server\n"
    if backend == "landlock":
        assert started["sandbox"]["enforced"] is False


@pytest.mark.parametrize("folder", ["/etc", "/usr", "/var", "/home"])
def test_a_system_folder_is_refused_as_a_workspace(folder: str, tmp_path: Path) -> None:
    env = {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "c" / "config.toml")}
    res = _run_in(Path(folder), env, "--json")
    assert res.returncode == 2 and "system's own folders" in res.stderr, res.stderr
    assert not (Path(folder) / ".cerveau").exists()
