"""Choose the enforcement backend by running each one FOR REAL, not by reading feature flags.

A kernel can advertise user namespaces and still refuse them (a sysctl, an AppArmor profile, a
container), so the only honest check is: run `true` through the backend, then a write outside the
workspace that must fail and must not land on the host. The answer is cached, keyed by kernel
release + bwrap version + Landlock ABI, because the check costs a few process starts.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .base import Runner
from .bubblewrap import BubblewrapRunner, bwrap_version, find_bwrap
from .landlock import LandlockRunner, landlock_abi, landlock_gaps
from .none import NoSandbox

CACHE_NAME = "sandbox-check.json"
CHECK_VERSION = 1  # bump when the probes change, so old cached answers are not trusted
BACKENDS: tuple[str, ...] = ("bubblewrap", "landlock")


@dataclass
class SandboxStatus:
    backend: str  # "bubblewrap" | "landlock" | "none"
    enforced: bool
    notes: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """For the status bar: "sandbox: bubblewrap" or "sandbox: NOT enforced"."""
        return f"sandbox: {self.backend}" if self.enforced else "sandbox: NOT enforced"


def cache_key() -> str:
    bwrap = find_bwrap()
    return "|".join(
        [
            f"v{CHECK_VERSION}",
            platform.release(),
            bwrap_version(bwrap) if bwrap else "no-bwrap",
            f"landlock{landlock_abi()}",
        ]
    )


def _make(backend: str, env_allow: Sequence[str] = ()) -> Runner:
    if backend == "bubblewrap":
        return BubblewrapRunner(env_allow=tuple(env_allow))
    if backend == "landlock":
        return LandlockRunner(env_allow=tuple(env_allow))
    if backend == "none":
        return NoSandbox(tuple(env_allow))
    raise ValueError(f"unknown sandbox backend {backend!r}")


def probe(backend: str, scratch: Path) -> str | None:
    """Run the backend for real; None when it confines, else what went wrong."""
    try:
        runner = _make(backend)
    except (OSError, RuntimeError, ValueError) as exc:
        return f"unavailable: {exc}"
    ws = scratch / "ws"
    outside = scratch / "outside"
    ws.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    try:
        ok = runner.run("true", workspace=ws, timeout=20, output_cap=2000)
    except Exception as exc:  # noqa: BLE001 - any failure to start means "not this backend"
        return f"cannot start: {exc}"
    if ok.exit_code != 0:
        return f"`true` failed (exit {ok.exit_code}): {ok.output.strip()[:200]}"
    target = outside / "escaped"
    bad = runner.run(f"echo escaped > '{target}'", workspace=ws, timeout=20, output_cap=2000)
    if target.exists():
        return "a write outside the workspace landed on the host: NOT a boundary"
    if bad.exit_code == 0:
        return "a write outside the workspace reported success"
    inside = runner.run("echo ok > probe.txt", workspace=ws, timeout=20, output_cap=2000)
    if inside.exit_code != 0 or not (ws / "probe.txt").exists():
        return f"a write inside the workspace failed: {inside.output.strip()[:200]}"
    return None


def self_check(
    cache_dir: Path | None = None, *, backends: Sequence[str] = BACKENDS, use_cache: bool = True
) -> SandboxStatus:
    key = cache_key()
    cache_file = cache_dir / CACHE_NAME if cache_dir else None
    if use_cache and cache_file is not None and tuple(backends) == BACKENDS:
        cached = _read_cache(cache_file, key)
        if cached is not None:
            return cached
    notes: list[str] = []
    status: SandboxStatus | None = None
    # Not under /tmp: bubblewrap gives commands a private /tmp, so a probe target there would
    # "not land" even without a boundary.
    base = cache_dir if cache_dir is not None else Path("/var/tmp")
    base.mkdir(parents=True, exist_ok=True)
    for backend in backends:
        scratch = Path(tempfile.mkdtemp(prefix="cerveau-selfcheck-", dir=base))
        try:
            problem = probe(backend, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if problem is None:
            gaps = (
                landlock_gaps(landlock_abi())
                if backend == "landlock"
                else list(BubblewrapRunner.gaps)
            )
            status = SandboxStatus(backend, True, [*notes, f"{backend}: self-check passed"], gaps)
            break
        notes.append(f"{backend}: {problem}")
    if status is None:
        status = SandboxStatus(
            "none",
            False,
            [
                *notes,
                "no backend confines commands: every command in read-only and workspace-write mode is asked",
            ],
            [
                "commands run with your full rights; only the approval policy stands between them and your files"
            ],
        )
    if cache_file is not None and tuple(backends) == BACKENDS:
        _write_cache(cache_file, key, status)
    return status


def _read_cache(path: Path, key: str) -> SandboxStatus | None:
    try:
        data = json.loads(path.read_text())
        if data.get("key") != key:
            return None
        return SandboxStatus(**data["status"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write_cache(path: Path, key: str, status: SandboxStatus) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": key, "status": asdict(status)}, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache we cannot write only costs the check again next start


def select_runner(settings: Any, status: SandboxStatus | None = None) -> Runner:
    """The runner for this session: bubblewrap > landlock > NoSandbox (enforced False, said so).

    `settings` is cerveau_tui.config.Settings (uses resolved_cache_dir() and env_allow)."""
    status = status or self_check(settings.resolved_cache_dir())
    runner = _make(status.backend, settings.env_allow)
    runner.status = status  # type: ignore[attr-defined]
    return runner


def doctor_info(settings: Any | None = None, cache_dir: Path | None = None) -> dict[str, Any]:
    """For `cerveau doctor --json`: {"backend", "enforced", "notes", "gaps", "label"}."""
    if cache_dir is None and settings is not None:
        cache_dir = settings.resolved_cache_dir()
    status = self_check(cache_dir)
    return {**asdict(status), "label": status.label}
