"""Choose the enforcement backend by running each one FOR REAL, not by reading feature flags.

A kernel can advertise user namespaces and still refuse them (a sysctl, an AppArmor profile, a
container), so the only honest check is: run `true` through the backend, then a write outside the
workspace that must fail and must not land on the host, then a write inside that must land.

Never read from a file. The answer used to be cached in the cache dir; a command overwrote that
file (a symlink race) and every later session ran commands on the host while reporting
`enforced: true`. The probe costs a few process starts (measured on this 2-core machine under
load: about 90-120 ms for bubblewrap, 200 ms the first time in a process while the seccomp filter
is built; about 90 ms for Landlock), so it runs at every start, and nothing read from disk can
claim a boundary.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Unpack

from .base import Bounds, Runner
from .bubblewrap import BubblewrapRunner, bwrap_version, find_bwrap
from .command import CommandSpec
from .landlock import LandlockRunner, landlock_abi
from .none import NoSandbox
from .protect import STATE_DIR

#: Host-global kernel settings the self-check tries to write (their own value, back).
SYSCTL_PROBES = ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness")
CACHE_NAME = "sandbox-check.json"  # no longer read or written; kept so old files are known
CHECK_VERSION = 2
BACKENDS: tuple[str, ...] = ("bubblewrap", "landlock")


@dataclass
class SandboxStatus:
    backend: str  # "bubblewrap" | "landlock" | "none"
    enforced: bool
    notes: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    # False when the self-check proved a sandboxed process cannot write host kernel settings;
    # None when no backend ran (nothing was proved).
    privileged: bool | None = None
    # What of the person's home a command sees (the toolchain folders, read-only).
    home_visible: list[str] = field(default_factory=list)

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


def _make(backend: str, env_allow: Sequence[str] = (), **bounds: Unpack[Bounds]) -> Runner:
    if backend == "bubblewrap":
        return BubblewrapRunner(env_allow=tuple(env_allow), **bounds)
    if backend == "landlock":
        return LandlockRunner(env_allow=tuple(env_allow), **bounds)
    if backend == "none":
        return NoSandbox(tuple(env_allow))
    raise ValueError(f"unknown sandbox backend {backend!r}")


@dataclass
class ProbeResult:
    problem: str | None  # None when the backend confines
    gaps: list[str] = field(default_factory=list)


def probe(backend: str, scratch: Path) -> str | None:
    """Run the backend for real; None when it confines, else what went wrong."""
    return run_probe(backend, scratch).problem


def run_probe(backend: str, scratch: Path) -> ProbeResult:
    """The live check, plus the runner's declared gaps and any protection seen failing live."""
    try:
        runner = _make(backend)
    except (OSError, RuntimeError, ValueError) as exc:
        return ProbeResult(f"unavailable: {exc}")
    gaps = list(getattr(runner, "gaps", []))
    ws = scratch / "ws"
    outside = scratch / "outside"
    ws.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    try:
        ok = runner.run(CommandSpec("true", workspace=ws, timeout=20, output_cap=2000))
    except Exception as exc:  # noqa: BLE001 - any failure to start means "not this backend"
        return ProbeResult(f"cannot start: {exc}")
    if ok.exit_code != 0:
        return ProbeResult(f"`true` failed (exit {ok.exit_code}): {ok.output.strip()[:200]}")
    target = outside / "escaped"
    state = ws / STATE_DIR / "probe"
    # One process for two checks: the outside write decides the exit code; the write into the
    # state folder is only looked at from here.
    bad = runner.run(
        CommandSpec(
            f"echo escaped > '{target}'; s=$?; echo x > '{state}' 2>/dev/null; exit $s",
            workspace=ws,
            timeout=20,
            output_cap=2000,
        )
    )
    if target.exists():
        return ProbeResult("a write outside the workspace landed on the host: NOT a boundary")
    if bad.exit_code == 0:
        return ProbeResult("a write outside the workspace reported success")
    if os.path.lexists(state) and not any(".cerveau" in g for g in gaps):
        gaps.append("the read-only .cerveau/ did not hold in the self-check")
    # Root inside must not be root outside: /proc/sys checks the uid, not a capability, so a
    # command of a root session could set kernel.core_pattern and have the kernel run its
    # program as host root. Each setting's own value is written back: harmless if it lands.
    priv = runner.run(
        CommandSpec(
            "for f in " + " ".join(SYSCTL_PROBES) + '; do [ -e "$f" ] || continue; '
            'v=$(cat "$f" 2>/dev/null) || continue; '
            '(printf "%s\\n" "$v" > "$f") 2>/dev/null && echo "WROTE $f"; done; exit 0',
            workspace=ws,
            timeout=20,
            output_cap=2000,
        )
    )
    wrote = [line[6:] for line in priv.output.splitlines() if line.startswith("WROTE ")]
    if wrote:
        return ProbeResult(
            "a sandboxed process could write host kernel settings (" + ", ".join(wrote) + "): "
            "root inside is root outside, NOT a boundary"
        )
    inside = runner.run(
        CommandSpec("echo ok > probe.txt", workspace=ws, timeout=20, output_cap=2000)
    )
    if inside.exit_code != 0 or not (ws / "probe.txt").exists():
        return ProbeResult(f"a write inside the workspace failed: {inside.output.strip()[:200]}")
    return ProbeResult(None, gaps)


def self_check(
    cache_dir: Path | None = None, *, backends: Sequence[str] = BACKENDS, use_cache: bool = False
) -> SandboxStatus:
    """Probe the backends in order of strength, live, every time. `cache_dir` is only where the
    probe's scratch folders go; `use_cache` is accepted for old callers and ignored: nothing is
    read from disk (see the module docstring)."""
    del use_cache
    notes: list[str] = []
    status: SandboxStatus | None = None
    # Not under /tmp: bubblewrap gives commands a private /tmp, so a probe target there would
    # "not land" even without a boundary.
    base = cache_dir if cache_dir is not None else Path("/var/tmp")
    base.mkdir(parents=True, exist_ok=True)
    for backend in backends:
        scratch = Path(tempfile.mkdtemp(prefix="cerveau-selfcheck-", dir=base))
        started = time.monotonic()
        try:
            result = run_probe(backend, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        ms = (time.monotonic() - started) * 1000
        if result.problem is None:
            notes.append(f"{backend}: self-check passed (live, {ms:.0f} ms)")
            status = SandboxStatus(backend, True, notes, result.gaps, privileged=False)
            status.home_visible = _home_visible()
            break
        notes.append(f"{backend}: {result.problem}")
    if status is None:
        status = SandboxStatus(
            "none",
            False,
            [
                *notes,
                "no backend confines commands: every command in read-only and workspace-write mode is asked",
            ],
            list(NoSandbox.gaps),
        )
    return status


def _home_visible() -> list[str]:
    """What of the person's home a command sees: the toolchain folders (read-only); the rest
    of the home is an empty private folder."""
    from .view import machine_view

    view = machine_view()
    return [str(p) for p in view.toolchains if any(h in p.parents for h in view.homes)]


def backends_for(settings: Any) -> tuple[str, ...]:
    """The backends to try for `settings.sandbox_backend`: all in order of strength ("auto"), one
    the person named, or none at all ("none": every command then crosses, said so)."""
    chosen = getattr(settings, "sandbox_backend", "auto")
    if chosen == "auto":
        return BACKENDS
    return () if chosen == "none" else (chosen,)


def select_runner(
    settings: Any, status: SandboxStatus | None = None, deny_read: list[Path] | None = None
) -> Runner:
    """The runner for this session: bubblewrap > landlock > NoSandbox (enforced False, said so).

    `settings` is cerveau_tui.config.Settings (uses resolved_cache_dir(), env_allow, deny_read,
    sandbox_tmp_mb, sandbox_max_procs). `deny_read`: the resolved paths, when the caller has
    the list the file tools are refused too (the session adds the person's real config dir), so
    what the sandbox masks and what the policy refuses are one list."""
    from ..deny_read import deny_read_paths

    status = status or self_check(settings.resolved_cache_dir(), backends=backends_for(settings))
    runner = _make(
        status.backend,
        settings.env_allow,
        deny_read=deny_read if deny_read is not None else deny_read_paths(settings.deny_read),
        tmp_mb=settings.sandbox_tmp_mb,
        max_procs=settings.sandbox_max_procs,
        read_allow=[Path(os.path.expanduser(p)) for p in getattr(settings, "sandbox_read", [])],
    )
    runner.status = status  # type: ignore[attr-defined]
    return runner


def doctor_info(settings: Any | None = None, cache_dir: Path | None = None) -> dict[str, Any]:
    """For `cerveau doctor --json`: {"backend", "enforced", "notes", "gaps", "label"}."""
    if cache_dir is None and settings is not None:
        cache_dir = settings.resolved_cache_dir()
    status = self_check(
        cache_dir, backends=backends_for(settings) if settings is not None else BACKENDS
    )
    return {**asdict(status), "label": status.label}
