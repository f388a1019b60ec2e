"""The live stack: what already serves on this machine, and commands that would serve on top of it.

Without being told, an agent asked to serve a page reaches for 8080 and takes down the model it is
running on (llama-server's default port). So the system prompt names the ports in use, and a bash
command that would serve on one of them is refused before it runs.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from urllib.parse import urlsplit

from ...redact import redact_url

# Programs that only talk TO a port (or inspect one): `curl localhost:8080` is not serving on it,
# and `lsof -i :8080` is exactly the check we ask for.
_CLIENTS = {
    "curl",
    "wget",
    "http",
    "https",
    "httpie",
    "ssh",
    "scp",
    "telnet",
    "ping",
    "lsof",
    "ss",
    "netstat",
    "fuser",
    "kill",
    "pkill",
    "echo",
    "printf",
    "grep",
    "rg",
    "cat",
    "git",
    "sleep",
    "timeout",
    "mkdir",
    "cp",
    "rsync",
    "tar",
    "ps",
    "pytest",
    "which",
    "type",
}
_SERVE_HINT = re.compile(
    r"http\.server|serve|server|runserver|uvicorn|gunicorn|hypercorn|flask|daphne|waitress|"
    r"streamlit|jupyter|\bnode\b|\bnpm\b|\bnpx\b|yarn|pnpm|deno|\bbun\b|vite|\bnext\b|nuxt|hugo|"
    r"jekyll|\bphp\b|ruby|rails|httpd|nginx|caddy|socat|docker|podman|listen|\bapp\.py|main\.py|"
    r"manage\.py|\bnc\b|ncat|netcat",
    re.I,
)
_PORT_FLAG = re.compile(r"^--?[\w.-]*port$", re.I)  # --port, --http-port, --server.port, -port
_PORT_FLAG_EQ = re.compile(r"^--?[\w.-]*port=(\d{1,5})$", re.I)
_SHORT_FLAGS = {"-p", "-P", "-l", "--listen", "-b", "--bind", "-S"}
_HOSTPORT = re.compile(r"^(?:[\w.-]*|\[[0-9a-fA-F:]*\]):(\d{1,5})(?::\d{1,5})?$")
_LISTEN = re.compile(r"TCP6?4?-LISTEN:(\d{1,5})", re.I)
_ENV_PORT = re.compile(r"^(?:[A-Z_]*_)?PORT=(\d{1,5})$")
_VALUE_FLAGS = {"-b", "--bind", "-d", "--directory", "--protocol", "--host", "-h", "-e"}


def _segments(command: str) -> list[str]:
    return [s for s in re.split(r"&&|\|\||[;|&\n]", command) if s.strip()]


def _split(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def _ports_in(segment: str) -> list[int]:
    toks = _split(segment)
    ports: list[int] = []
    while toks and "=" in toks[0] and not toks[0].startswith("-"):
        if m := _ENV_PORT.match(toks[0]):
            ports.append(int(m.group(1)))
        toks = toks[1:]
    while toks and toks[0] in ("sudo", "env", "nohup", "exec", "time"):
        toks = toks[1:]
    if not toks:
        return []
    prog = os.path.basename(toks[0])
    if prog in _CLIENTS:
        return []
    hinted = bool(_SERVE_HINT.search(segment))
    if prog in ("nc", "ncat", "netcat") and not any(
        t.startswith("-") and not t.startswith("--") and "l" in t for t in toks[1:]
    ):
        return []  # nc without -l connects; it does not listen
    after_http_server = False
    for i, tok in enumerate(toks[1:], start=1):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        prev = toks[i - 1]
        if m := _PORT_FLAG_EQ.match(tok):
            ports.append(int(m.group(1)))
        elif _PORT_FLAG.match(tok) and nxt.isdigit():
            ports.append(int(nxt))
        elif m := _LISTEN.search(tok):
            ports.append(int(m.group(1)))
        elif not hinted:
            continue
        elif tok in _SHORT_FLAGS and nxt:
            if nxt.isdigit():
                ports.append(int(nxt))
            elif m := _HOSTPORT.match(nxt):
                # `-p 8080:80` (docker) publishes the HOST port, the first number.
                first = nxt.split(":")
                ports.append(int(first[0]) if first[0].isdigit() else int(m.group(1)))
        elif re.fullmatch(r"-p\d{2,5}", tok):
            ports.append(int(tok[2:]))
        elif "://" not in tok and (m := _HOSTPORT.match(tok)):
            ports.append(int(m.group(1)))
        elif (
            tok.isdigit()
            and prev not in _VALUE_FLAGS
            and (after_http_server or prog in ("nc", "ncat", "netcat") or prev == "runserver")
        ):
            ports.append(int(tok))
        if tok == "http.server":
            after_http_server = True
    if after_http_server and not ports:
        ports.append(8000)  # python -m http.server's default
    return [p for p in ports if 0 < p < 65536]


def serve_port_conflict(command: str, reserved: Mapping[int, str]) -> int | None:
    """The reserved port this command would serve on, or None."""
    if not reserved:
        return None
    for segment in _segments(command):
        for port in _ports_in(segment):
            if port in reserved:
                return port
    return None


def port_of(url: str) -> int | None:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.port is not None:
            return parts.port
        return {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None


def reserved_ports(services: list[tuple[str, str]]) -> dict[int, str]:
    """{port: service name} from (name, url) pairs."""
    out: dict[int, str] = {}
    for name, url in services:
        port = port_of(url)
        if port is not None:
            out.setdefault(port, name)
    return out


def _free_suggestions(reserved: Mapping[int, str]) -> list[str]:
    picks = [p for p in (8000, 3000, 8888, 5000, 9000, 8001) if p not in reserved]
    return [str(p) for p in picks[:3]]


def live_stack_section(services: list[tuple[str, str]]) -> str:
    """The system-prompt paragraph naming what already runs. Empty when nothing is known: an empty
    section, never a confident invention. It sits in the stable prompt prefix, so it depends only
    on the configured/started services, never on time or order of discovery."""
    if not services:
        return ""
    # Where a service runs, never how to log in to it: a configured URL's password or token
    # was in the system prompt (issue 32). redact.py drops the userinfo, masks token params.
    listed = ", ".join(f"{name} on {redact_url(url)}" for name, url in services)
    a, b, c = (_free_suggestions(reserved_ports(services)) + ["8000", "3000", "8888"])[:3]
    return (
        "Local stack ALREADY RUNNING on this machine (never serve anything on these ports): "
        f"{listed}. When you need to serve something you build, pick a free port such as {a}, {b} "
        f"or {c} and check it is free first."
    )


def port_refusal(command: str, port: int, service: str, reserved: Mapping[int, str]) -> str:
    a, b, c = (_free_suggestions(reserved) + ["8000", "3000", "8888"])[:3]
    return (
        f"Refused, not run: `{' '.join(command.split())[:120]}` would serve on port {port}, where "
        f"{service} is already running (this session depends on it). Serve on a free port such as "
        f"{a}, {b} or {c} instead, and check it is free first (e.g. `ss -ltn | grep :{a}`)."
    )
