"""The embedded server from the prebuilt `xllamacpp` wheel (issue 34): found before the source
build, installed by pip when missing, the source build only as the fallback (with a line saying
why), run as its own process by our runner, and spoken to with a key the harness holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import pytest

from cerveau_tui.stack import keys, wheel
from cerveau_tui.stack.cli import llama_cpp_build
from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import locate, plan, provision
from cerveau_tui.stack.server import ManagedServer
from cerveau_tui.stack.state import pid_runs_llama_server, remove_record
from cerveau_tui.stack.wheel_server import parse, read_keys, slot_dir

from .fakes import FakeCmake, executable

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed wheel, as far as locate can tell: the pinned version's extension file."""
    ext = tmp_path / "site" / "xllamacpp" / "xllamacpp.abi3.so"
    ext.parent.mkdir(parents=True)
    ext.write_bytes(b"\x7fELF")
    monkeypatch.delenv("CERVEAU_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(wheel, "extension_path", lambda: ext)
    return ext


@pytest.fixture
def wheel_installable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No wheel installed yet, on a machine it installs on."""
    monkeypatch.delenv("CERVEAU_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(wheel, "extension_path", lambda: None)
    monkeypatch.setattr(wheel, "unsupported_reason", lambda: None)


def nothing_on_path(name: str) -> str | None:
    return None


class FakePip(FakeCmake):
    """FakeCmake that also plays `pip install xllamacpp`: succeeds (the extension appears) or
    fails with pip's own words."""

    def __init__(self, installs: bool, on_install: Callable[[], None]) -> None:
        super().__init__()
        self.installs, self.on_install = installs, on_install

    def __call__(
        self, argv: Sequence[str], cwd: Path | None, on_line: Callable[[str], None]
    ) -> int:
        if list(argv[1:4]) == ["-m", "pip", "install"]:
            self.calls.append(list(argv))
            if not self.installs:
                on_line(f"ERROR: No matching distribution found for {wheel.REQ}")
                return 1
            self.on_install()
            return 0
        return super().__call__(argv, cwd, on_line)


def test_the_pin_in_pyproject_is_the_pin_the_code_runs() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    pins = re.findall(r"xllamacpp==([0-9.]+)", text)
    assert pins and set(pins) == {wheel.VERSION}


def test_the_llama_cpp_build_number_is_read_from_the_wheel_version() -> None:
    assert wheel.build_number("2026.10.11549") == 11549
    assert wheel.build_number("garbage") is None


def test_other_platforms_get_a_reason_not_a_wheel() -> None:
    assert wheel.unsupported_reason("x86_64", "linux") is None
    assert "x86-64 Linux only" in (wheel.unsupported_reason("aarch64", "linux") or "")
    assert "x86-64 Linux only" in (wheel.unsupported_reason("x86_64", "darwin") or "")


def test_an_installed_wheel_is_the_server_with_its_build_number(
    tmp_path: Path, fake_extension: Path
) -> None:
    loc = locate(stack_paths(tmp_path / "cache"), which=nothing_on_path)
    assert loc.binary == fake_extension and loc.source == "wheel"
    assert loc.build_info["llama_cpp_build"] == 11549


def test_a_llama_server_on_path_comes_before_the_wheel(
    tmp_path: Path, fake_extension: Path
) -> None:
    own = executable(tmp_path / "llama-server", "#!/bin/sh\n")
    loc = locate(stack_paths(tmp_path / "cache"), which=lambda name: str(own))
    assert loc.binary == own and loc.source == "path"


def test_the_wheel_comes_before_a_cached_source_build(tmp_path: Path, fake_extension: Path) -> None:
    paths = stack_paths(tmp_path / "cache")
    paths.server_dir.mkdir(parents=True)
    executable(paths.server_binary, "#!/bin/sh\n")
    paths.build_info_file.write_text("{}")
    assert locate(paths, which=nothing_on_path).source == "wheel"
    assert locate(paths, which=nothing_on_path, use_wheel=False).source == "build"


def test_a_cold_cache_plans_the_wheel_and_no_compile(
    tmp_path: Path, downloads: Path, wheel_installable: None
) -> None:
    steps = plan(stack_paths(tmp_path / "cache"), downloads_from=[downloads], which=nothing_on_path)
    assert [s.stage for s in steps] == ["extract-model", "install-wheel"]
    argv = steps[-1].argv
    assert argv[1:4] == ("-m", "pip", "install") and wheel.REQ in argv and "-q" in argv


def test_provision_installs_the_wheel_and_runs_no_compile(
    tmp_path: Path, downloads: Path, wheel_installable: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ext = tmp_path / "site" / "xllamacpp" / "xllamacpp.abi3.so"

    def install() -> None:
        ext.parent.mkdir(parents=True)
        ext.write_bytes(b"\x7fELF")
        monkeypatch.setattr(wheel, "extension_path", lambda: ext)

    runner = FakePip(installs=True, on_install=install)
    loc = provision(tmp_path / "cache", runner=runner, downloads_from=[downloads],
                    which=nothing_on_path)  # fmt: skip
    assert loc.source == "wheel" and loc.binary == ext
    assert [c[2:4] for c in runner.calls] == [["pip", "install"]]  # and no cmake


def test_a_wheel_that_does_not_install_falls_back_to_the_build_and_says_why(
    tmp_path: Path, downloads: Path, wheel_installable: None
) -> None:
    seen: list[tuple[str, str]] = []
    runner = FakePip(installs=False, on_install=lambda: None)
    loc = provision(tmp_path / "cache", runner=runner, downloads_from=[downloads],
                    which=nothing_on_path, jobs=2,
                    progress=lambda s, f, line: seen.append((s, line)))  # fmt: skip
    assert loc.source == "build"
    assert [c[:2] for c in runner.calls if c[0] == "cmake"] == [
        ["cmake", "-B"],
        ["cmake", "--build"],
    ]
    fallback = [line for stage, line in seen if stage == "fallback"]
    assert len(fallback) == 1 and "install-wheel failed (exit 1)" in fallback[0]
    assert "cmake, g++ and make" in fallback[0]


def test_the_wheels_server_runs_our_runner_isolated_with_the_key_off_argv(tmp_path: Path) -> None:
    ext = tmp_path / "xllamacpp.abi3.so"
    server = ManagedServer(ext, Path("/m.gguf"), n_ctx=4096, port=5555, slot_dir=tmp_path)
    argv = server.argv()
    assert argv[0] == sys.executable and "-I" in argv and wheel.RUNNER_MODULE in argv
    runner_args = parse(argv[argv.index(wheel.RUNNER_MODULE) + 1 :])
    assert (runner_args.host, runner_args.port, runner_args.ctx_size) == ("127.0.0.1", 5555, 4096)
    assert runner_args.api_key_file == "/dev/stdin"


def test_a_binary_gets_the_same_arguments_after_its_path(tmp_path: Path) -> None:
    argv = ManagedServer(Path("/b/llama-server"), Path("/m.gguf"), port=5555).argv()
    assert argv[0] == "/b/llama-server" and argv[argv.index("--api-key-file") + 1] == "/dev/stdin"


def test_the_slot_folder_gets_the_separator_the_wheel_does_not_add() -> None:
    assert slot_dir("/c/slots") == "/c/slots/" and slot_dir("/c/slots/") == "/c/slots/"
    assert slot_dir("") == ""


def test_the_runner_reads_one_key_a_line(tmp_path: Path) -> None:
    (tmp_path / "k").write_text("abc\n\n def \n")
    assert read_keys(str(tmp_path / "k")) == ["abc", "def"] and read_keys(None) == []


def test_headers_carry_a_remembered_key_to_that_server_only() -> None:
    keys.remember("http://127.0.0.1:5901", "k1")
    try:
        assert keys.headers_for("http://127.0.0.1:5901/v1") == {"Authorization": "Bearer k1"}
        assert keys.headers_for("http://localhost:5901") == {"Authorization": "Bearer k1"}
        assert keys.headers_for("http://127.0.0.1:5902") == {}
    finally:
        keys.forget("http://127.0.0.1:5901")
    assert keys.headers_for("http://127.0.0.1:5901") == {}


def test_a_key_file_is_private_and_goes_with_its_record(tmp_path: Path) -> None:
    path = keys.write_key(tmp_path, 4242, "secret")
    assert path.stat().st_mode & 0o777 == 0o600 and keys.read_key(tmp_path, 4242) == "secret"
    remove_record(tmp_path, 4242)
    assert not path.exists()


def test_the_build_number_says_the_wheels_when_build_info_is_unknown() -> None:
    assert llama_cpp_build("b0-unknown", wheel.build_info()) == 11549
    assert llama_cpp_build("b6123-0c1e570", wheel.build_info()) == 6123
    assert llama_cpp_build(None, {"version_text": "version: 7001 (abc)"}) == 7001
    assert llama_cpp_build(None, {}) is None


def test_a_runner_process_is_recognised_as_a_server_and_a_look_alike_is_not() -> None:
    code = "import time; time.sleep(30)"
    ours = subprocess.Popen([sys.executable, "-c", code, wheel.RUNNER_MODULE])
    other = subprocess.Popen([sys.executable, "-c", code, "cerveau_tui.stack.other"])
    try:
        time.sleep(0.2)
        assert pid_runs_llama_server(ours.pid) and not pid_runs_llama_server(other.pid)
    finally:
        for p in (ours, other):
            p.kill()
            p.wait()


# -- the real wheel ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel_server(real_parts: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory):
    binary, model = real_parts
    if not wheel.is_extension(binary):
        pytest.skip(f"the real stack is not the wheel here ({binary})")
    d = tmp_path_factory.mktemp("wheel")
    server = ManagedServer(binary, model, n_ctx=2048, log_path=d / "log", slot_dir=d / "slots",
                           run_dir=d / "run")  # fmt: skip
    (d / "slots").mkdir()
    server.start(timeout_s=120)
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.e2e
def test_the_wheels_server_refuses_a_caller_without_the_key(wheel_server: ManagedServer) -> None:
    url = wheel_server.url
    assert httpx.get(url + "/props").status_code == 401
    assert httpx.get(url + "/props", headers=keys.headers_for(url)).status_code == 200


@pytest.mark.e2e
def test_the_key_is_in_neither_argv_nor_environment(wheel_server: ManagedServer) -> None:
    pid, key = wheel_server.pid, wheel_server.api_key.encode()
    assert key and pid is not None
    assert key not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert key not in Path(f"/proc/{pid}/environ").read_bytes()


@pytest.mark.e2e
def test_the_wheels_server_has_everything_the_harness_checks(wheel_server: ManagedServer) -> None:
    caps = wheel_server.capabilities
    assert caps is not None and caps.missing == [], caps.summary()
    assert "slot save/restore" in caps.have and "reasoning control" in caps.have


@pytest.mark.e2e
def test_the_wheels_server_listens_on_loopback_only(wheel_server: ManagedServer) -> None:
    port = f"{wheel_server.port:04X}"
    listening = [
        line.split()[1]
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        if os.path.exists(table)
        for line in Path(table).read_text().splitlines()[1:]
        if line.split()[1].endswith(":" + port) and line.split()[3] == "0A"
    ]
    assert listening == ["0100007F:" + port]


def test_a_process_handed_only_the_url_finds_the_key_beside_a_live_record(tmp_path: Path) -> None:
    from cerveau_tui.stack.state import ServerRecord, boot_id, start_time, write_record

    code = "import time; time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code, wheel.RUNNER_MODULE])
    url = "http://127.0.0.1:59321"
    try:
        time.sleep(0.2)
        rec = ServerRecord(
            pid=proc.pid, port=59321, url=url, model="m", binary="b", n_ctx=1, log="l",
            started_at=0.0, start=start_time(proc.pid), boot_id=boot_id(),
        )  # fmt: skip
        write_record(tmp_path, rec)
        keys.write_key(tmp_path, proc.pid, "from-file")
        assert keys.headers_for(url, tmp_path) == {"Authorization": "Bearer from-file"}
        keys.forget(url)
    finally:
        proc.kill()
        proc.wait()
    # The process gone, its record is stale: its key is no one's.
    assert keys.headers_for(url, tmp_path) == {}
    assert not keys.key_path(tmp_path, proc.pid).exists()
