"""The start-up self-check: real runs at every start, nothing trusted from a file, honest when
nothing works."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cerveau_tui.config import Settings
from cerveau_tui.sandbox import select
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
from cerveau_tui.sandbox.select import (
    CACHE_NAME,
    SandboxStatus,
    cache_key,
    doctor_info,
    select_runner,
    self_check,
)

from .conftest import needs_landlock, require_bwrap


def test_bubblewrap_is_chosen_first_when_it_works(tmp_path: Path) -> None:
    require_bwrap()
    status = self_check(tmp_path)
    assert status.backend == "bubblewrap" and status.enforced
    assert status.label == "sandbox: bubblewrap"


@needs_landlock
def test_landlock_is_the_fallback_and_carries_its_gaps(tmp_path: Path) -> None:
    status = self_check(tmp_path, backends=("landlock",))
    assert status.backend == "landlock" and status.enforced
    assert any("PID namespace" in g for g in status.gaps)


def test_nothing_available_is_said_not_hidden(tmp_path: Path) -> None:
    status = self_check(tmp_path, backends=())
    assert status.backend == "none" and not status.enforced
    assert status.label == "sandbox: NOT enforced"
    assert status.gaps


def test_a_backend_that_does_not_start_is_skipped_with_a_note(tmp_path: Path) -> None:
    status = self_check(tmp_path, backends=("nonexistent-backend",))
    assert status.backend == "none"
    assert any("nonexistent-backend: unavailable" in n for n in status.notes)


def test_a_backend_that_runs_but_does_not_confine_is_rejected(tmp_path: Path) -> None:
    # The self-check runs a write outside the workspace for real: the unconfined runner lets it
    # land, so it is refused as a boundary (feature flags would not have caught that).
    status = self_check(tmp_path, backends=("none",))
    assert status.backend == "none" and not status.enforced
    assert any("landed on the host" in n for n in status.notes)


def test_a_cache_file_claiming_enforcement_is_never_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was "the answer is cached under the current key": a command overwrote that file through a
    # symlink race and later sessions ran on the host reporting `enforced: true`. Now a planted
    # file under the current key changes nothing: the live probe (made to fail here) decides.
    fake = SandboxStatus("bubblewrap", True, ["from cache"], [])
    (tmp_path / CACHE_NAME).write_text(json.dumps({"key": cache_key(), "status": fake.__dict__}))
    monkeypatch.setattr(select, "run_probe", lambda b, s: select.ProbeResult("broken (test)"))
    status = self_check(tmp_path)
    assert status.enforced is False and status.backend == "none"
    assert "from cache" not in status.notes


def test_the_live_probe_runs_at_every_self_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counting(backend: str, scratch: Path) -> select.ProbeResult:
        calls.append(backend)
        return select.ProbeResult(None, ["a gap"])

    monkeypatch.setattr(select, "run_probe", counting)
    self_check(tmp_path)
    self_check(tmp_path)
    assert calls == ["bubblewrap", "bubblewrap"]


def test_the_self_check_writes_no_file_a_later_session_would_read(tmp_path: Path) -> None:
    self_check(tmp_path, backends=("none",))
    assert os.listdir(tmp_path) == []


def test_the_status_carries_the_backends_gaps(tmp_path: Path) -> None:
    require_bwrap()
    status = self_check(tmp_path, backends=("bubblewrap",))
    assert status.gaps == BubblewrapRunner(bwrap="/usr/bin/bwrap").gaps


def test_select_runner_from_settings(tmp_path: Path) -> None:
    require_bwrap()
    settings = Settings(workspace=tmp_path, cache_dir=tmp_path / "cache", env_allow=["MY_TOKEN"])
    runner = select_runner(settings)
    assert runner.backend == "bubblewrap" and runner.enforced
    assert runner.env_allow == ("MY_TOKEN",)  # type: ignore[attr-defined]


def test_select_runner_wires_the_deny_list_and_bounds_from_settings(tmp_path: Path) -> None:
    require_bwrap()
    secret = tmp_path / "secrets"
    secret.mkdir()
    settings = Settings(
        workspace=tmp_path,
        cache_dir=tmp_path / "cache",
        deny_read=[str(secret)],
        sandbox_tmp_mb=64,
        sandbox_max_procs=100,
    )
    runner = select_runner(settings, status=SandboxStatus("bubblewrap", True))
    assert runner.deny_read == [secret]  # type: ignore[attr-defined]
    assert runner.tmp_mb == 64 and runner.cap.max_procs == 100  # type: ignore[attr-defined]


def test_select_runner_without_a_backend_is_unenforced(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, cache_dir=tmp_path)
    runner = select_runner(settings, status=SandboxStatus("none", False))
    assert runner.backend == "none" and runner.enforced is False


def test_doctor_info_shape(tmp_path: Path) -> None:
    info = doctor_info(cache_dir=tmp_path)
    assert set(info) >= {"backend", "enforced", "notes", "gaps"}
    assert info["backend"] in ("bubblewrap", "landlock", "none")
    assert isinstance(info["enforced"], bool)
