"""`cerveau stack provision|up|down|status [--json]` and the stack's part of `cerveau doctor`.

The main CLI mounts their grammar with `add_stack_parser(subparsers)` (args.py) and dispatches with
`run_stack_command(args)`; `python -m cerveau_tui.stack ...` runs them alone (the test script uses
that, so it does not depend on the rest of the CLI being importable).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import httpx

from cerveau_tui.config import ConfigError, Settings, load_settings
from cerveau_tui.redact import redact_url
from cerveau_tui.stack import keys
from cerveau_tui.stack.args import add_stack_parser
from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import ProvisionError, StackError, locate, plan, provision
from cerveau_tui.stack.server import http_get, managed_for, probe
from cerveau_tui.stack.state import (
    ServerRecord,
    is_recorded_process,
    live_records,
    owner_gone,
    remove_record,
    scan_records,
    terminate_group,
)
from cerveau_tui.text_safety import visible


class ConsoleProgress:
    """Progress for a terminal or a CI log: one line per stage, build percentages in steps of 5
    (a CI log with 300 `[ 47%]` lines hides the error that matters), the rest of the tool output
    only with --verbose."""

    def __init__(self, out: TextIO | None = None, verbose: bool = False) -> None:
        self.out, self.verbose = out or sys.stderr, verbose
        self.stage, self.pct, self.t0 = "", -100, time.monotonic()

    def __call__(self, stage: str, fraction: float | None, line: str) -> None:
        elapsed = time.monotonic() - self.t0
        if stage != self.stage:
            self.stage, self.pct = stage, -100
            print(f"[stack {elapsed:6.1f}s] {stage}: {line}", file=self.out, flush=True)
            return
        if fraction is not None:
            pct = int(fraction * 100)
            if pct >= self.pct + 5 or pct == 100 and self.pct != 100:
                self.pct = pct
                print(f"[stack {elapsed:6.1f}s] {stage}: {pct:3d}%", file=self.out, flush=True)
        elif self.verbose or line.startswith(
            ("/health", "using", "llama-server ready", "missing", "the prebuilt")
        ):
            print(f"[stack {elapsed:6.1f}s] {stage}: {line}", file=self.out, flush=True)


def _settings(args: argparse.Namespace) -> Settings:
    flags: dict[str, Any] = {}
    if getattr(args, "n_ctx", None):
        flags["n_ctx"] = args.n_ctx
    if getattr(args, "model", None):
        flags["model_path"] = str(Path(args.model).resolve())
    settings = load_settings(workspace=getattr(args, "workspace", None), flags=flags)
    for warning in settings.warnings:
        print(visible(f"cerveau: warning: {warning}"), file=sys.stderr)
    return settings


def _props(url: str) -> dict[str, Any]:
    try:
        r = http_get(url.rstrip("/") + "/props", 3.0)
        return dict(r.json()) if r.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}


def doctor_info(settings: Settings) -> dict[str, Any]:
    """The stack's facts for `cerveau doctor`: what would run, what runs, and its build."""
    paths = stack_paths(settings.cache_dir)
    info: dict[str, Any] = {"cache_dir": str(paths.root), "cache_key": paths.key}
    # The app's own and `stack up` servers save session slots here (--slot-save-path).
    info["slot_save_path"] = str(paths.slots_dir)
    try:
        loc = locate(paths, settings.model_path)
        info.update(
            binary=str(loc.binary) if loc.binary else None,
            binary_source=loc.binary_source,
            source=loc.source,
            model=str(loc.model) if loc.model else None,
            model_source=loc.model_source,
            build_info=loc.build_info,
            ready=loc.ready,
        )
    except ProvisionError as exc:
        info.update(ready=False, error=str(exc))
    scan = scan_records(paths.run_dir)
    servers = scan.live
    for rec in servers:  # their keys, so /props below is answered (keys.py)
        keys.adopt(paths.run_dir, rec.pid, rec.url)
    info["servers"] = [r.model_dump() for r in servers]
    info["unverified_records"] = [r.model_dump() for r in scan.unverified]
    configured = settings.server_url
    # Said to the person: whose credential is configured, never its value (redact.py).
    info["configured_server_url"] = (
        redact_url(configured, person=True) if configured else configured
    )
    if configured:
        info["configured_server_answers"] = probe(configured)
    url = configured if configured and info["configured_server_answers"] else None
    url = url or (servers[0].url if servers else None)
    info["server_url"] = url
    info["pid"] = servers[0].pid if servers and url == servers[0].url else None
    if url:
        props = _props(url)
        info["server_build_info"] = props.get("build_info")
        info["n_ctx"] = props.get("default_generation_settings", {}).get("n_ctx")
        info["server_model_path"] = props.get("model_path")
    info["llama_cpp_build"] = llama_cpp_build(info.get("server_build_info"), info.get("build_info"))
    return info


def llama_cpp_build(server_build_info: object, recorded: object) -> int | None:
    """The llama.cpp build number: from the running server's `build_info` (`b4567-abcdef0`),
    else from what provisioning recorded (the wheel's version: its extension says `b0-unknown`,
    build 0, which is no build at all)."""
    if isinstance(server_build_info, str) and server_build_info.startswith("b"):
        number = server_build_info[1:].split("-", 1)[0]
        if number.isdigit() and int(number) > 0:
            return int(number)
    if isinstance(recorded, dict):
        build = recorded.get("llama_cpp_build")
        if isinstance(build, int):
            return build
        text = recorded.get("version_text")
        if isinstance(text, str) and "version: " in text:
            number = text.split("version: ", 1)[1].split()[0]
            return int(number) if number.isdigit() and int(number) > 0 else None
    return None


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    print(json.dumps(data, indent=2, default=str) if args.json else text, flush=True)


def _provision(args: argparse.Namespace, settings: Settings) -> int:
    paths = stack_paths(settings.cache_dir)
    if args.dry_run:
        steps = plan(paths, settings.model_path, jobs=args.jobs, prebuilt_from=args.adopt,
                     downloads_from=args.downloads_from,
                     use_wheel=not args.source_build)  # fmt: skip
        data: dict[str, Any] = {
            "steps": [{"stage": s.stage, "detail": s.detail, "argv": list(s.argv)} for s in steps]
        }
        lines = [f"{s.stage}: {' '.join(s.argv) if s.argv else s.detail}" for s in steps]
        _emit(args, data, "\n".join(lines) or "nothing to do: the stack is ready")
        return 0
    loc = provision(paths.root, settings.model_path, jobs=args.jobs, prebuilt_from=args.adopt,
                    downloads_from=args.downloads_from, use_wheel=not args.source_build,
                    progress=ConsoleProgress(verbose=args.verbose))  # fmt: skip
    data = {"binary": str(loc.binary), "binary_source": loc.binary_source, "source": loc.source,
            "model": str(loc.model),
            "model_source": loc.model_source, "build_info": loc.build_info,
            "cache_dir": str(paths.root)}  # fmt: skip
    _emit(args, data, f"llama-server: {loc.binary} ({loc.binary_source})\nmodel: {loc.model}")
    return 0


def _up(args: argparse.Namespace, settings: Settings) -> int:
    paths = stack_paths(settings.cache_dir)
    progress = ConsoleProgress(verbose=args.verbose)
    loc = provision(paths.root, settings.model_path, progress=progress)
    assert loc.binary is not None and loc.model is not None
    for rec in live_records(paths.run_dir):
        if rec.detached and rec.model == str(loc.model) and rec.n_ctx == settings.n_ctx:
            _emit(args, {"server_url": rec.url, "pid": rec.pid, "already_running": True},
                  f"already running: {rec.url} (pid {rec.pid})")  # fmt: skip
            return 0
    server = managed_for(paths, loc.binary, loc.model, settings.n_ctx, detached=True)
    url = server.start(args.timeout, progress)
    assert server.pid is not None
    data = {"server_url": url, "pid": server.pid, "log": str(server.log_path),
            "n_ctx": server.record().n_ctx, "build_info": server.props.get("build_info"),
            "source": loc.source, "key_file": str(keys.key_path(paths.run_dir, server.pid)),
            "capabilities": server.capabilities.summary() if server.capabilities else None,
            }  # fmt: skip
    _emit(args, data, f"llama-server up: {url} (pid {server.pid}, log {server.log_path})")
    return 0


def _unverified_line(rec: ServerRecord) -> str:
    return (
        f"not stopped: pid {rec.pid} (record {rec.url}) has no start time or boot id; it may be"
        " another process that reuses the number. Stop it yourself if it is yours."
    )


def _down(args: argparse.Namespace, settings: Settings) -> int:
    paths = stack_paths(settings.cache_dir)
    stopped = []
    scan = scan_records(paths.run_dir)
    for rec in scan.live:
        # An app's own server is stopped by that app; killing it here would break its turn. One
        # whose app is gone (killed before its watchdog existed, or the watchdog killed too) is
        # nobody's: it only holds the machine's memory.
        if not (rec.detached or args.all or owner_gone(rec)):
            continue
        # Verified again at each signal: the record names a process, not a number.
        alive = lambda _pid, rec=rec: is_recorded_process(rec)  # noqa: E731
        if terminate_group(rec.pid, started=rec.start, alive=alive):
            remove_record(paths.run_dir, rec.pid)
            stopped.append(rec.pid)
    unverified = [r.pid for r in scan.unverified]
    text = [f"stopped {len(stopped)} server(s)", *map(_unverified_line, scan.unverified)]
    _emit(args, {"stopped": stopped, "unverified": unverified}, "\n".join(text))
    return 0


def _status(args: argparse.Namespace, settings: Settings) -> int:
    info = doctor_info(settings)
    info["up"] = info.get("server_url") is not None
    if not info["up"]:
        info.pop("server_url", None)  # present only when a server answers
    build = info.get("llama_cpp_build")
    text = [f"server: {info.get('source')}" + (f", llama.cpp build {build}" if build else ""),
            f"binary: {info.get('binary')} ({info.get('binary_source')})",
            f"model:  {info.get('model')}",
            f"url:    {info.get('server_url') or 'not running'}",
            *(_unverified_line(ServerRecord.model_validate(r))
              for r in info["unverified_records"])]  # fmt: skip
    _emit(args, info, "\n".join(text))
    return 0


def run_stack_command(args: argparse.Namespace) -> int:
    handlers = {"provision": _provision, "up": _up, "down": _down, "status": _status}
    try:
        settings = _settings(args)
        return handlers[args.stack_command](args, settings)
    except ConfigError as exc:
        print(visible(f"cerveau: {exc}"), file=sys.stderr)
        return 2
    except StackError as exc:
        print(f"cerveau stack {args.stack_command}: {exc}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cerveau_tui.stack")
    add_stack_parser(parser.add_subparsers(dest="command", required=True))
    args = sys.argv[1:] if argv is None else argv
    return run_stack_command(parser.parse_args(["stack", *args]))
