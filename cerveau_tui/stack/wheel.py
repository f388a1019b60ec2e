"""llama.cpp's server from a prebuilt wheel (`xllamacpp`), the embedded default since issue 34.

Building llama-server from the llama-cpp-python sdist took 10-13 minutes on 2 cores and needed
cmake, g++ and make from apt, which a person without sudo cannot install: for them the embedded
default never started. `xllamacpp` ships llama.cpp's own HTTP server inside a CPU wheel (portable
features: AVX2/FMA/F16C/BMI2, no AVX-512/AMX, so the "Illegal instruction" a native build met on
these VMs does not apply). It has no `llama-server` executable: `wheel_server.py` holds the server
in a Python process of its own, started like the binary (same argv after the prefix), so the
lifecycle, watchdog, records and slot files are the ones a binary gets.

Nothing here imports the extension (102 MB, model-free but slow to load): the version comes from
the distribution's metadata, the path from its RECORD.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from pathlib import Path

DIST = "xllamacpp"
# Pinned: llama.cpp's server changed its parsers and routes across builds (llama-server.md), and
# the build number is read from this version (the extension's build_info says "b0-unknown").
VERSION = "2026.10.11549"
REQ = f"{DIST}=={VERSION}"
#: The module that holds the server as its own process (python_argv runs it isolated).
RUNNER_MODULE = "cerveau_tui.stack.wheel_server"
EXTENSION_PREFIX = "xllamacpp"


def build_number(version: str = VERSION) -> int | None:
    """llama.cpp's build number from the wheel's version `YYYY.M.<build>`."""
    try:
        return int(version.rsplit(".", 1)[1])
    except (IndexError, ValueError):
        return None


def unsupported_reason(machine: str | None = None, system: str | None = None) -> str | None:
    """Why no wheel can install here (it is published for x86-64 Linux only), else None."""
    machine = machine or platform.machine()
    system = system or sys.platform
    if system != "linux" or machine not in ("x86_64", "AMD64"):
        return f"{REQ} has CPU wheels for x86-64 Linux only (this is {system} {machine})"
    return None


def installed_version() -> str | None:
    try:
        return importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        return None


def extension_path() -> Path | None:
    """The installed extension (`xllamacpp/xllamacpp.abi3.so`) when the PINNED version is
    installed, else None. It stands for "the binary" in the stack's records and `doctor`."""
    if installed_version() != VERSION:
        return None
    try:
        files = importlib.metadata.files(DIST) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.parent.name == DIST and f.name.startswith(EXTENSION_PREFIX) and f.suffix == ".so":
            path = Path(str(f.locate())).resolve()
            if path.is_file():
                return path
    return None


def is_extension(binary: Path) -> bool:
    """True when `binary` names the wheel's extension rather than an executable llama-server."""
    return binary.suffix == ".so" and binary.name.startswith(EXTENSION_PREFIX)


def build_info() -> dict[str, object]:
    """What `doctor` and `stack status` say about the wheel's server."""
    return {
        "version": VERSION,
        "origin": f"wheel {REQ}",
        "llama_cpp_build": build_number(),
    }


def pip_install_argv(python: str = sys.executable) -> list[str]:
    # The interpreter's own pip: the runner is started with this interpreter, so the wheel must
    # land where it imports from. --no-deps: xllamacpp requires nothing at run time.
    return [
        python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", REQ,
    ]  # fmt: skip
