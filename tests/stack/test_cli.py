"""`cerveau stack provision|up|down|status --json` as a person (or CI) runs them: real processes,
an isolated cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cerveau_tui.stack import build as b

from .fakes import pid_gone


def _stack(tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env.update(
        CERVEAU_CACHE_DIR=str(tmp_path / "cache"),
        CERVEAU_CONFIG=str(tmp_path / "no-config.toml"),
        PATH="/usr/bin:/bin",  # no llama-server on PATH: the cache decides
        **(extra_env or {}),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui.stack", *args, "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_dry_run_on_a_cold_cache_lists_every_step_with_the_real_commands(tmp_path: Path) -> None:
    # The source build, asked for: the default takes the prebuilt wheel (test_wheel_provision.py).
    steps = _stack(tmp_path, "provision", "--dry-run", "--jobs", "2", "--source-build")["steps"]
    assert [s["stage"] for s in steps] == [
        "download-model", "extract-model", "download-source", "extract-source",
        "configure", "build", "install",
    ]  # fmt: skip
    by_stage = {s["stage"]: s["argv"] for s in steps}
    assert by_stage["configure"][5:] == list(b.PORTABLE_FLAGS)
    assert by_stage["build"][-3:] == ["--target", "llama-server", "-j2"]


def test_status_on_a_cold_cache_says_not_up_and_has_no_url(tmp_path: Path) -> None:
    status = _stack(tmp_path, "status")
    assert status["up"] is False and "server_url" not in status and status["ready"] is False


@pytest.mark.e2e
def test_up_status_down_round_trip_on_the_real_server(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    binary, model = real_parts
    env = {"CERVEAU_LLAMA_SERVER": str(binary)}
    up = _stack(tmp_path, "up", "--model", str(model), "--n-ctx", "1024", extra_env=env)
    try:
        status = _stack(tmp_path, "status", extra_env=env)
        assert status["server_url"] == up["server_url"] and status["pid"] == up["pid"]
        assert status["n_ctx"] == 1024 and status["server_build_info"]
        again = _stack(tmp_path, "up", "--model", str(model), "--n-ctx", "1024", extra_env=env)
        assert again["already_running"] and again["pid"] == up["pid"]
    finally:
        down = _stack(tmp_path, "down", extra_env=env)
    assert down["stopped"] == [up["pid"]] and pid_gone(up["pid"])
    assert "server_url" not in _stack(tmp_path, "status", extra_env=env)


@pytest.mark.e2e
def test_down_leaves_an_app_owned_server_alone_unless_all(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import managed_for

    binary, model = real_parts
    app_server = managed_for(stack_paths(tmp_path / "cache"), binary, model, n_ctx=1024)
    app_server.start(timeout_s=120)
    try:
        assert _stack(tmp_path, "down")["stopped"] == []
        assert app_server.running()
        assert _stack(tmp_path, "down", "--all")["stopped"] == [app_server.pid]
    finally:
        app_server.stop()


def test_down_stops_an_app_owned_server_whose_app_is_gone(tmp_path: Path) -> None:
    import shutil

    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.state import ServerRecord, boot_id, start_time, write_record

    fake = tmp_path / "llama-server"  # `sleep` under the server's name: what state.py believes
    shutil.copy("/bin/sleep", fake)
    orphan = subprocess.Popen([str(fake), "300"], start_new_session=True)
    alive_owner = subprocess.Popen([str(fake), "300"], start_new_session=True)
    owned = subprocess.Popen([str(fake), "300"], start_new_session=True)
    run_dir = stack_paths(tmp_path / "cache").run_dir
    common = dict(port=1, url="http://127.0.0.1:1", model="m", binary=str(fake), n_ctx=1, log="l",
                  started_at=0.0)  # fmt: skip
    write_record(
        run_dir,
        ServerRecord(
            pid=orphan.pid, owner_pid=2**22 + 1, owner_start="1", **common,
            start=start_time(orphan.pid), boot_id=boot_id(),
        ),
    )  # fmt: skip
    write_record(
        run_dir,
        ServerRecord(
            pid=owned.pid,
            owner_pid=alive_owner.pid,
            owner_start=start_time(alive_owner.pid),
            **common,
            start=start_time(owned.pid),
            boot_id=boot_id(),
        ),
    )
    try:
        assert _stack(tmp_path, "down")["stopped"] == [orphan.pid]
        orphan.wait(timeout=10)
        assert owned.poll() is None  # its app still runs: left alone
    finally:
        for p in (orphan, alive_owner, owned):
            p.kill()
            p.wait()
