"""The fallback source build's own steps: unpack the vendored llama.cpp, prove a built binary runs
on this CPU, and install it into its keyed folder by rename. Split from provision.py, which
decides what to get; since issue 34 this runs only where the prebuilt wheel does not install.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import time
from pathlib import Path

from cerveau_tui import host_process
from cerveau_tui.stack import build as b
from cerveau_tui.stack.errors import ProvisionError
from cerveau_tui.stack.paths import StackPaths

#: What `llama-server --version` needs of our environment to load at all (its GPU libraries).
SERVER_RUNTIME_ENV = ("LD_LIBRARY_PATH", "CUDA_*", "GGML_*")
SIGILL_CODES = (-4, 132)  # killed by SIGILL as seen by Popen, or as a shell reports it


def extract_source(sdist: Path, root: Path) -> None:
    """Unpack the vendored llama.cpp (and the .git it refers to) under `root`, atomically."""
    wanted = tuple(f"{b.SDIST_TOP}/{d}/" for d in b.SDIST_EXTRACT_SUBDIRS)
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(sdist, "r:gz") as tf:
        members = []
        for m in tf.getmembers():
            if m.name.startswith(wanted):
                m.name = m.name[len(b.SDIST_TOP) + 1 :]
                members.append(m)
        tf.extractall(tmp, members=members, filter="data")
    if not (tmp / b.SDIST_SOURCE_SUBDIR / "CMakeLists.txt").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise ProvisionError(f"{sdist} has no {b.SDIST_TOP}/{b.SDIST_SOURCE_SUBDIR}/CMakeLists.txt")
    shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)


def version_text(binary: Path, timeout: float = 30.0) -> str:
    """`llama-server --version` output; also the proof that the binary runs on this CPU."""
    try:
        proc = host_process.run(
            [str(binary), "--version"], text=True, timeout=timeout, inherit=SERVER_RUNTIME_ENV
        )
    except (OSError, host_process.TimeoutExpired) as exc:
        raise ProvisionError(f"{binary} --version failed: {exc}") from exc
    if proc.returncode in SIGILL_CODES:
        raise ProvisionError(
            f"{binary} died with an illegal instruction: it was built for a CPU with features this "
            "machine cannot run (a non-portable build). Rebuild with the portable flags."
        )
    if proc.returncode != 0:
        raise ProvisionError(f"{binary} --version exited {proc.returncode}: {proc.stderr[-500:]}")
    return (proc.stdout + proc.stderr).strip()


def install_binary(paths: StackPaths, built: Path, origin: str) -> None:
    """Copy a binary built with PORTABLE_FLAGS into its keyed dir by rename."""
    if not built.is_file():
        raise ProvisionError(f"no binary at {built}")
    parent = paths.server_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f".tmp-{paths.key}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        target = staging / b.BINARY_NAME
        shutil.copy2(built, target)
        target.chmod(0o755)
        info = {
            "version": b.LLAMA_CPP_PYTHON_VERSION,
            "flags": list(b.PORTABLE_FLAGS),
            "flags_digest": b.flags_digest(),
            "origin": origin,
            "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "version_text": version_text(target),
        }
        (staging / "build_info.json").write_text(json.dumps(info, indent=2) + "\n")
        if paths.server_dir.exists():  # re-adopting: swap the old one out, then drop it
            old = parent / f".old-{paths.key}-{os.getpid()}"
            os.rename(paths.server_dir, old)
            shutil.rmtree(old, ignore_errors=True)
        os.rename(staging, paths.server_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
