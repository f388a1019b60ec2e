"""Supervise one llama-server: start it on a free loopback port, wait until /health says the model
is loaded, read /props, stop it with its whole process group.

`ensure_server` is what the app and `cerveau run` call: a configured server that answers is used
as is (that is how a person outgrows this machine: the model runs elsewhere, the harness stays
here); otherwise the default stack is provisioned and a managed server started.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from cerveau_tui import host_process
from cerveau_tui.redact import redact_url
from cerveau_tui.stack import keys, wheel
from cerveau_tui.stack.capabilities import CACHE_REUSE_TOKENS, Capabilities, check
from cerveau_tui.stack.paths import StackPaths, stack_paths
from cerveau_tui.stack.provision import SIGILL_CODES, Progress, StackError, no_progress, provision
from cerveau_tui.stack.reach import RETRY_DELAYS as RETRY_DELAYS
from cerveau_tui.stack.reach import bindable as bindable
from cerveau_tui.stack.reach import free_port as free_port
from cerveau_tui.stack.reach import http_get as http_get
from cerveau_tui.stack.reach import probe as probe
from cerveau_tui.stack.reach import wait_until_answers as wait_until_answers
from cerveau_tui.stack.state import (
    ServerRecord,
    boot_id,
    live_records,
    remove_record,
    start_time,
    terminate_group,
    write_record,
)
from cerveau_tui.stack.watchdog import watch

if TYPE_CHECKING:
    from cerveau_tui.config import Settings


#: Our environment as llama-server sees it (host_process.host_env: `X_*` is a prefix). Its model
#: cache and -hf downloads (HOME, XDG_CACHE_HOME, HF_*), its GPU runtimes (CUDA_*, HIP_*, ROCR_*,
#: HSA_*, GGML_*, and LD_LIBRARY_PATH where the person's CUDA libraries are), its threads (OMP_*).
SERVER_ENV = (
    "HOME", "TMPDIR", "XDG_CACHE_HOME", "LD_LIBRARY_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "LLAMA_*", "GGML_*", "HF_*", "CUDA_*", "HIP_*", "ROCR_*", "HSA_*", "OMP_*",
)  # fmt: skip


class ServerStartError(StackError):
    pass


class PortTakenError(ServerStartError):
    pass


def log_tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


def exit_explanation(code: int) -> str:
    if code in SIGILL_CODES:
        return (
            "llama-server died with an illegal instruction: the binary uses CPU features this "
            "machine cannot run (a non-portable build, e.g. -DGGML_NATIVE=ON on a VM advertising "
            "AMX). Rebuild with `cerveau stack provision` (portable flags) or point "
            "CERVEAU_LLAMA_SERVER at a portable build."
        )
    return f"llama-server exited with code {code} before it was ready."


class ManagedServer:
    def __init__(
        self,
        binary: Path,
        model: Path,
        *,
        n_ctx: int = 8192,
        port: int | None = None,
        prefer_port: int | None = None,
        port_file: Path | None = None,
        host: str = "127.0.0.1",
        log_path: Path | None = None,
        run_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        slot_dir: Path | None = None,
        cache_reuse: int = CACHE_REUSE_TOKENS,
        detached: bool = False,
        api_key: bool = True,
        check_capabilities: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # Absolute now: the server runs from "/", a relative path meant our working directory.
        self.binary = Path(binary) if os.sep not in str(binary) else Path(binary).absolute()
        self.model, self.n_ctx = Path(model).absolute(), n_ctx
        self.host, self.port = host, port or bindable(prefer_port, host) or free_port(host)
        self._auto_port = port is None
        self.log_path = log_path or Path(f"/tmp/llama-server-{self.port}.log")
        self.run_dir, self.extra_args, self.detached = run_dir, tuple(extra_args), detached
        self.slot_dir = slot_dir  # --slot-save-path: where a session's slot is saved and restored
        self.cache_reuse = cache_reuse  # --cache-reuse: 0 leaves it off (a benchmark's control)
        self.port_file = port_file  # where the port is kept for the next start to prefer
        self._clock, self._sleep = clock, sleep
        self.proc: host_process.Popen[bytes] | None = None
        self._watchdog: host_process.Popen[bytes] | None = None
        self.props: dict[str, Any] = {}
        # A new key each start (keys.py); False only for a test server that reads no stdin.
        self._use_key, self.api_key = api_key, ""
        self.check_capabilities = check_capabilities
        self.capabilities: Capabilities | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def argv(self) -> list[str]:
        # One slot: a slot gets n_ctx / np, and the harness sends one request at a time; more
        # slots would silently shrink the window the model actually has.
        slots = ["--slot-save-path", str(self.slot_dir)] if self.slot_dir is not None else []
        # The key on stdin, read as a file by llama-server and by the wheel's runner alike.
        key = ["--api-key-file", "/dev/stdin"] if self._use_key else []
        reuse = ["--cache-reuse", str(self.cache_reuse)] if self.cache_reuse > 0 else []
        return [
            *self.launcher(), "-m", str(self.model), "--host", self.host, "--port", str(self.port),
            "-c", str(self.n_ctx), "--jinja", "-np", "1", *slots, *reuse, *key, *self.extra_args,
        ]  # fmt: skip

    def launcher(self) -> list[str]:
        """The program part of argv: the binary, or for the wheel's extension our runner in an
        isolated interpreter (the same one that imports the wheel)."""
        if wheel.is_extension(self.binary):
            return host_process.python_argv(wheel.RUNNER_MODULE)
        return [str(self.binary)]

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout_s: float = 120.0, progress: Progress = no_progress) -> str:
        if self.running():
            return self.url
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            try:
                self._spawn_and_wait(timeout_s, progress)
                break
            except PortTakenError:
                # free_port() is a check, not a reservation: with several people starting servers
                # on one machine, another process can bind the port between the check and us.
                if not self._auto_port or attempt == 2:
                    raise
                self.port = free_port(self.host)
        if self.run_dir is not None:
            write_record(self.run_dir, self.record())
            if self.api_key and self.proc is not None:
                keys.write_key(self.run_dir, self.proc.pid, self.api_key)
        if self.port_file is not None:
            self.port_file.write_text(str(self.port))
        progress("ready", None, f"llama-server ready at {self.url}")
        return self.url

    def _spawn_and_wait(self, timeout_s: float, progress: Progress) -> None:
        argv = self.argv()
        # argv[0] and the flags, not the runner's bootstrap code: a line a person can read.
        shown = argv
        if wheel.is_extension(self.binary):
            shown = ["(wheel)", *argv[argv.index("-m") :]]
        progress("start", None, " ".join(shown))
        self.api_key = keys.new_key() if self._use_key else ""
        with open(self.log_path, "ab") as log:
            # Own session: stop() signals the whole group, and the terminal's Ctrl-C (meant for
            # the TUI) does not kill the model mid-turn.
            # cwd "/": a ggml built with loadable backends also looks for libggml-*.so in its
            # working directory, which was the workspace. The environment: what llama.cpp and
            # its GPU runtimes read (LLAMA_ARG_* sets any option), nothing else of ours.
            self.proc = host_process.spawn(
                argv, stdout=log, stderr=host_process.STDOUT, start_new_session=True,
                inherit=SERVER_ENV, stdin=host_process.PIPE if self._use_key else host_process.DEVNULL,
            )  # fmt: skip
        if self._use_key:
            self._send_key()
        if not self.detached:
            atexit.register(self.stop)
            self._watchdog = watch(self.proc.pid)
        try:
            self._wait_healthy(timeout_s, progress)
            if self.api_key:
                keys.remember(self.url, self.api_key)
            self.props = http_get(self.url + "/props", 10.0).json()
            if self.check_capabilities:
                self.capabilities = check(self.url, keys.headers_for(self.url), self.slot_dir)
                progress("check", None, self.capabilities.summary())
        except BaseException:
            self.stop()
            raise

    def _send_key(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(self.api_key.encode() + b"\n")
            self.proc.stdin.close()  # EOF: the server's file read ends
        except BrokenPipeError:
            pass  # it died before reading; _wait_healthy reports why from its log

    def _wait_healthy(self, timeout_s: float, progress: Progress) -> None:
        assert self.proc is not None
        deadline = self._clock() + timeout_s
        last = ""
        while True:
            code = self.proc.poll()
            if code is not None:
                tail = log_tail(self.log_path, 5)
                if "couldn't bind" in tail and f"port: {self.port}" in tail:
                    raise PortTakenError(f"port {self.port} is taken")
                raise ServerStartError(
                    f"{exit_explanation(code)}\n--- {self.log_path} (tail) ---\n{log_tail(self.log_path)}"
                )
            try:
                r = http_get(self.url + "/health", 2.0)
                if r.status_code == 200:
                    return
                # 503 "Loading model" while the GGUF is mapped and warmed up.
                status = f"{r.status_code} {r.text[:80]}"
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            if status != last:
                progress("start", None, f"/health: {status}")
                last = status
            if self._clock() >= deadline:
                raise ServerStartError(
                    f"llama-server did not become healthy within {timeout_s:.0f}s (last: {status})"
                    f"\n--- {self.log_path} (tail) ---\n{log_tail(self.log_path)}"
                )
            self._sleep(0.1)

    def record(self) -> ServerRecord:
        assert self.proc is not None
        n_ctx = self.props.get("default_generation_settings", {}).get("n_ctx", self.n_ctx)
        return ServerRecord(
            pid=self.proc.pid, port=self.port, url=self.url, model=str(self.model),
            binary=str(self.binary), n_ctx=int(n_ctx), log=str(self.log_path),
            started_at=time.time(), detached=self.detached,
            owner_pid=None if self.detached else os.getpid(),
            owner_start=None if self.detached else start_time(os.getpid()),
            start=start_time(self.proc.pid), boot_id=boot_id(),
        )  # fmt: skip

    def stop(self, grace_s: float = 5.0) -> None:
        atexit.unregister(self.stop)
        proc, self.proc = self.proc, None
        if proc is None:
            return
        keys.forget(self.url)
        if self.run_dir is not None:
            remove_record(self.run_dir, proc.pid)
        if proc.poll() is None:
            terminate_group(proc.pid, grace_s, alive=lambda _pid: proc.poll() is None)
        try:
            proc.wait(timeout=5.0)
        except host_process.TimeoutExpired:
            pass
        dog, self._watchdog = self._watchdog, None
        if dog is not None:  # the server is gone: its EOF finds nothing to stop
            if dog.stdin is not None:
                dog.stdin.close()
            try:
                dog.wait(timeout=5.0)
            except host_process.TimeoutExpired:
                dog.kill()

    def __enter__(self) -> ManagedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _prune_logs(logs_dir: Path, keep: int = 20) -> None:
    # One log per port, and ports are random: without pruning the dir grows by one file a start.
    if not logs_dir.is_dir():
        return
    logs = sorted(logs_dir.glob("llama-server-*.log"), key=lambda p: p.stat().st_mtime)
    for old in logs[:-keep]:
        old.unlink(missing_ok=True)


def managed_for(
    paths: StackPaths, binary: Path, model: Path, n_ctx: int, detached: bool = False
) -> ManagedServer:
    _prune_logs(paths.logs_dir)
    paths.slots_dir.mkdir(parents=True, exist_ok=True)
    server = ManagedServer(
        binary,
        model,
        n_ctx=n_ctx,
        # The app's own server comes back on its last port when it is free: the system prompt
        # names the port (the reserved-ports section), so a server back on a new one changed
        # the first message and every resume read the whole conversation again, a restored
        # slot included.
        prefer_port=None if detached else _last_port(paths),
        port_file=None if detached else paths.last_port_file,
        run_dir=paths.run_dir,
        slot_dir=paths.slots_dir,
        detached=detached,
    )
    server.log_path = paths.logs_dir / f"llama-server-{server.port}.log"
    return server


def _last_port(paths: StackPaths) -> int | None:
    try:
        return int(paths.last_port_file.read_text().strip())
    except (OSError, ValueError):
        return None


def ensure_server(
    settings: Settings,
    progress: Progress = no_progress,
    *,
    fallback_to_embedded: bool = True,
    start_timeout_s: float = 120.0,
) -> tuple[str, ManagedServer | None]:
    """(url, managed). `managed` is the server this call started (the caller stops it on exit);
    None when an existing server is used. Order: the configured `server_url` if it answers; a
    `cerveau stack up` server with the same model and n_ctx; else provision and start one."""
    if settings.server_url:
        if probe(settings.server_url):
            return settings.server_url.rstrip("/"), None
        if not fallback_to_embedded:
            raise ServerStartError(
                f"the configured server {redact_url(settings.server_url, person=True)} does not answer"
            )
        progress(
            "probe", None,
            f"{redact_url(settings.server_url, person=True)} does not answer; using the local stack",
        )  # fmt: skip
    paths = stack_paths(settings.cache_dir)
    loc = provision(paths.root, settings.model_path, progress=progress)
    assert loc.binary is not None and loc.model is not None
    for rec in live_records(paths.run_dir):
        # Only a `stack up` server is shared: an app's own server dies with that app.
        if rec.detached and rec.model == str(loc.model) and rec.n_ctx == settings.n_ctx:
            keys.adopt(paths.run_dir, rec.pid, rec.url)
            if probe(rec.url):
                progress("ready", None, f"using the running server at {rec.url}")
                return rec.url, None
    server = managed_for(paths, loc.binary, loc.model, settings.n_ctx)
    url = server.start(start_timeout_s, progress)
    return url, server
