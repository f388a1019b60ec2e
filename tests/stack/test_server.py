"""Supervising llama-server: start on a free port, wait for /health, explain a death, stop the
whole process group; and choosing between a configured server and the embedded one."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cerveau_tui.config import Settings
from cerveau_tui.stack.keys import headers_for
from cerveau_tui.stack.server import (
    ManagedServer,
    PortTakenError,
    ServerStartError,
    ensure_server,
    free_port,
    probe,
)

from .fakes import executable, fake_http_server, pid_gone


def test_free_port_is_bindable_on_loopback() -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_argv_serves_loopback_with_jinja_one_slot_and_the_context(tmp_path: Path) -> None:
    argv = ManagedServer(Path("/b/llama-server"), Path("/m.gguf"), n_ctx=4096, port=5555).argv()
    assert argv[:3] == ["/b/llama-server", "-m", "/m.gguf"]
    assert (
        argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == "5555"
    )
    assert argv[argv.index("-c") + 1] == "4096" and argv[argv.index("-np") + 1] == "1"
    assert "--jinja" in argv


def test_illegal_instruction_is_explained_as_a_non_portable_build(tmp_path: Path) -> None:
    binary = executable(tmp_path / "llama-server", "#!/bin/sh\necho warming up\nkill -ILL $$\n")
    server = ManagedServer(binary, tmp_path / "m.gguf", log_path=tmp_path / "log")
    with pytest.raises(ServerStartError, match="non-portable") as err:
        server.start(timeout_s=30)
    assert "warming up" in str(err.value)  # the log tail is in the message


def test_early_exit_shows_the_tail_of_the_server_log(tmp_path: Path) -> None:
    script = "#!/bin/sh\necho 'error: failed to load model m.gguf'\nexit 1\n"
    server = ManagedServer(
        executable(tmp_path / "s", script), tmp_path / "m.gguf", log_path=tmp_path / "log"
    )
    with pytest.raises(ServerStartError, match="exited with code 1") as err:
        server.start(timeout_s=30)
    assert "failed to load model" in str(err.value)


def test_a_server_never_healthy_times_out_and_is_killed(tmp_path: Path) -> None:
    binary = executable(tmp_path / "s", "#!/bin/sh\nexec sleep 300\n")
    server = ManagedServer(binary, tmp_path / "m.gguf", log_path=tmp_path / "log")
    with pytest.raises(ServerStartError, match="did not become healthy"):
        server.start(timeout_s=0.5)
    assert server.proc is None


def test_start_reads_props_and_stop_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    binary = fake_http_server(tmp_path / "llama-server", pidfile)
    server = ManagedServer(binary, tmp_path / "m.gguf", n_ctx=2048, log_path=tmp_path / "log")
    server.start(timeout_s=30)
    pid, child = server.pid, int(pidfile.read_text())
    assert server.props["default_generation_settings"]["n_ctx"] == 2048
    server.stop()
    assert pid is not None and pid_gone(pid) and pid_gone(child)


def test_stop_twice_is_harmless(tmp_path: Path) -> None:
    binary = fake_http_server(tmp_path / "llama-server", tmp_path / "child.pid")
    server = ManagedServer(binary, tmp_path / "m.gguf", log_path=tmp_path / "log")
    server.start(timeout_s=30)
    server.stop()
    server.stop()
    assert not server.running()


class _Handler(http.server.BaseHTTPRequestHandler):
    paths: dict[str, int] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(self.paths.get(self.path, 404))
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def _serve(paths: dict[str, int]) -> Iterator[str]:
    handler = type("H", (_Handler,), {"paths": paths})
    httpd = http.server.HTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def live_llama_like() -> Iterator[str]:
    yield from _serve({"/health": 200})


@pytest.fixture
def openai_only() -> Iterator[str]:
    yield from _serve({"/v1/models": 200})


def test_probe_accepts_a_server_with_only_v1_models(openai_only: str) -> None:
    assert probe(openai_only) and probe(openai_only + "/v1")


def test_probe_rejects_nothing_listening() -> None:
    assert not probe(f"http://127.0.0.1:{free_port()}", timeout_s=1.0)


def test_ensure_server_uses_a_configured_live_url_as_is(
    live_llama_like: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # If it fell through to provisioning, this unusable binary would raise instead.
    monkeypatch.setenv("CERVEAU_LLAMA_SERVER", str(tmp_path / "missing"))
    url, managed = ensure_server(Settings(server_url=live_llama_like + "/", cache_dir=tmp_path))
    assert (url, managed) == (live_llama_like, None)


def test_ensure_server_without_fallback_reports_a_dead_configured_url(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ServerStartError, match="does not answer"):
        ensure_server(Settings(server_url=dead, cache_dir=tmp_path), fallback_to_embedded=False)


@pytest.mark.e2e
def test_real_server_starts_answers_and_stops_without_leftovers(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    binary, model = real_parts
    server = ManagedServer(
        binary, model, n_ctx=2048, log_path=tmp_path / "log", run_dir=tmp_path / "run"
    )
    server.start(timeout_s=120)
    pid = server.pid
    try:
        assert httpx.get(server.url + "/health").json() == {"status": "ok"}
        props = httpx.get(server.url + "/props", headers=headers_for(server.url)).json()
        assert props["default_generation_settings"]["n_ctx"] == 2048
        assert (tmp_path / "run" / f"server-{pid}.json").is_file()
    finally:
        server.stop()
    assert pid is not None and pid_gone(pid)
    assert list((tmp_path / "run").iterdir()) == []


@pytest.mark.e2e
def test_real_stack_fixture_serves_the_default_model(real_stack: str) -> None:
    props = httpx.get(real_stack + "/props", headers=headers_for(real_stack)).json()
    assert props["model_path"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert props["default_generation_settings"]["n_ctx"] == 8192


@pytest.mark.e2e
def test_ensure_server_starts_the_embedded_stack_when_nothing_is_configured(
    real_parts: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary, model = real_parts
    monkeypatch.setenv("CERVEAU_LLAMA_SERVER", str(binary))
    settings = Settings(cache_dir=tmp_path, model_path=str(model), n_ctx=1024)
    url, managed = ensure_server(settings)
    try:
        assert managed is not None and probe(url)
        assert managed.props["default_generation_settings"]["n_ctx"] == 1024
    finally:
        if managed:
            managed.stop()


def test_loopback_probe_ignores_proxy_settings(
    live_llama_like: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, dead_proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert probe(live_llama_like)


def test_probe_of_a_malformed_url_is_false_not_a_crash() -> None:
    assert not probe("http://[not-a-host", timeout_s=0.5)


@pytest.mark.e2e
def test_a_taken_explicit_port_is_reported_as_such(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    binary, model = real_parts
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        server = ManagedServer(binary, model, n_ctx=512, port=port, log_path=tmp_path / "log")
        with pytest.raises(PortTakenError):
            server.start(timeout_s=60)


@pytest.mark.e2e
def test_an_auto_port_taken_meanwhile_is_replaced_by_another(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    binary, model = real_parts
    server = ManagedServer(binary, model, n_ctx=512, log_path=tmp_path / "log")
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", server.port))  # someone grabs the port we were handed
        squatter.listen()
        taken = server.port
        try:
            server.start(timeout_s=60)
            assert server.port != taken and probe(server.url)
        finally:
            server.stop()


def test_a_managed_server_saves_slots_under_the_cache_dir(tmp_path: Path) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths(tmp_path / "cache")
    argv = managed_for(paths, Path("/b/llama-server"), Path("/m.gguf"), 4096).argv()
    assert argv[argv.index("--slot-save-path") + 1] == str(tmp_path / "cache" / "slots")
    assert (tmp_path / "cache" / "slots").is_dir()


def test_a_server_without_a_slot_folder_gets_no_slot_flag() -> None:
    argv = ManagedServer(Path("/b/llama-server"), Path("/m.gguf"), port=5555).argv()
    assert "--slot-save-path" not in argv


def test_the_apps_server_comes_back_on_its_last_port_when_it_is_free(tmp_path: Path) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import free_port, managed_for

    paths = stack_paths(tmp_path / "cache")
    paths.root.mkdir(parents=True)
    port = free_port()
    paths.last_port_file.write_text(str(port))
    assert managed_for(paths, Path("/b/llama-server"), Path("/m.gguf"), 4096).port == port


def test_a_last_port_someone_else_holds_is_passed_over(tmp_path: Path) -> None:
    import socket

    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths(tmp_path / "cache")
    paths.root.mkdir(parents=True)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        paths.last_port_file.write_text(str(taken))
        assert managed_for(paths, Path("/b/llama-server"), Path("/m.gguf"), 4096).port != taken


def test_the_apps_server_shifts_cached_chunks_after_a_compaction(tmp_path: Path) -> None:
    """Issue 36: a compaction drops one block after the system message and keeps the rest
    byte-identical; without --cache-reuse llama-server re-reads all of the kept part."""
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import CACHE_REUSE_TOKENS, managed_for

    argv = managed_for(
        stack_paths(tmp_path / "c"), Path("/b/llama-server"), Path("/m"), 4096
    ).argv()
    assert argv[argv.index("--cache-reuse") + 1] == str(CACHE_REUSE_TOKENS)
    off = ManagedServer(Path("/b/llama-server"), Path("/m.gguf"), port=5555, cache_reuse=0)
    assert "--cache-reuse" not in off.argv()


def test_the_wheels_runner_passes_cache_reuse_to_the_server(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    from cerveau_tui.stack import wheel
    from cerveau_tui.stack.server import CACHE_REUSE_TOKENS
    from cerveau_tui.stack.wheel_server import params, parse

    server = ManagedServer(tmp_path / "xllamacpp.abi3.so", Path("/m.gguf"), port=5555)
    argv = server.argv()
    args = parse(argv[argv.index(wheel.RUNNER_MODULE) + 1 :])
    assert params(args, []).n_cache_reuse == CACHE_REUSE_TOKENS


def test_a_server_that_reads_a_kept_part_again_is_measured_as_no_cache_reuse() -> None:
    """The scripted server reuses only a common prefix, as a llama-server without cache reuse
    does: doctor says so, with the flag that fixes it."""
    from cerveau_tui.doctor import cache_reuse_line
    from cerveau_tui.stack.capabilities import cache_reuse
    from cerveau_tui.testing.scripted_server import ScriptedServer

    with ScriptedServer({"responses": [{"content": "a"}, {"content": "b"}]}) as srv:
        state = cache_reuse(srv.url, {})
    assert state == "no"
    assert "--cache-reuse" in cache_reuse_line(state, embedded=False)


def test_a_server_without_cache_figures_is_unknown_not_yes() -> None:
    from cerveau_tui.stack.capabilities import cache_reuse

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": "x"}}]})

    client = httpx.Client(transport=httpx.MockTransport(reply))
    assert cache_reuse("http://server", {}, client) == "unknown"
