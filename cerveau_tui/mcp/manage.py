"""`cerveau mcp list|add|remove` and doctor's MCP section.

`add` and `remove` write the person's own config (the user config.toml, never a workspace's):
the one place a server starts from without a further yes. `list` shows what is in force, what a
workspace config asks for and is held back until trusted, and what a repository's `.mcp.json`
suggests; `--check` (and doctor) start each server in the sandbox as a session would, list its
tools, and stop it.
"""

from __future__ import annotations

import argparse
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from ..config import McpServerConfig, Settings, user_config_path
from ..text_safety import visible
from .suggest import suggested


def add_mcp_parser(sub: Any) -> None:  # argparse's private _SubParsersAction
    mcp = sub.add_parser("mcp", help="list, add or remove MCP servers (your own config)")
    verbs = mcp.add_subparsers(dest="mcp_cmd", required=True)
    ls = verbs.add_parser("list", help="the servers in force, held back and suggested")
    ls.add_argument("--json", action="store_true", help="a JSON list, each with `name`")
    ls.add_argument("--check", action="store_true", help="start each (sandboxed), list its tools")
    ls.add_argument("--workspace", "-w", type=Path, default=None)
    add = verbs.add_parser(
        "add",
        help="add a server: [OPTIONS] NAME -- COMMAND [ARGS...] (stdio), or --url URL NAME",
        description="The options come before NAME; everything after `--` is the command.",
    )
    add.add_argument("--url", default="", help="a remote server (streamable HTTP)")
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument(
        "--network", action="append", default=[], metavar="HOST",
        help="a host the server may reach through the sandbox's proxy (repeat; `*`: any)",
    )  # fmt: skip
    add.add_argument(
        "--read-only", action="store_true", help="every tool of it is read-only (no dialog)"
    )
    add.add_argument(
        "--read-only-tool", action="append", default=[], metavar="TOOL",
        help="this tool is read-only (repeat)",
    )  # fmt: skip
    add.add_argument("--timeout", type=float, default=None, help="seconds per call")
    add.add_argument("name")
    add.add_argument("command", nargs="*", help="-- COMMAND [ARGS...]")
    rm = verbs.add_parser("remove", help="remove a server from your config")
    rm.add_argument("name")


def mcp_command(args: argparse.Namespace, settings_for: Any) -> int:
    if args.mcp_cmd == "add":
        return _add(args)
    if args.mcp_cmd == "remove":
        return _remove(args.name)
    settings: Settings = settings_for(args.workspace)
    rows = listing(settings, check=args.check)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        print("no MCP servers (add one: cerveau mcp add NAME -- COMMAND [ARGS...])")
    for r in rows:
        what = r["url"] or " ".join([r["command"], *r["args"]])
        print(visible(f"{r['name']:16} {r['source']:34} {what}"))
        if r.get("tools") is not None:
            print(visible(f"{'':16} tools: {', '.join(r['tools']) or 'none'}"))
        if r.get("error"):
            print(visible(f"{'':16} error: {r['error']}"))
    return 0


def _row(name: str, cfg: McpServerConfig, source: str) -> dict[str, Any]:
    return {
        "name": name,
        "source": source,
        "transport": "http" if cfg.url else "stdio",
        "command": cfg.command,
        "args": list(cfg.args),
        "env": sorted(cfg.env),  # the names: a value may be a token
        "url": cfg.url,
        "network": list(cfg.network),
        "read_only": cfg.read_only,
        "enabled": cfg.enabled,
    }


def listing(settings: Settings, *, check: bool = False) -> list[dict[str, Any]]:
    rows = [_row(n, c, "in force") for n, c in settings.mcp.servers.items()]
    for held in settings.workspace_held_back:
        if held["key"] == "mcp.servers" and isinstance(held["asked"], dict):
            for name, raw in held["asked"].items():
                if name not in settings.mcp.servers and isinstance(raw, dict):
                    try:
                        cfg = McpServerConfig.model_validate(raw)
                    except ValueError:
                        continue
                    rows.append(_row(name, cfg, "workspace config: held back (not trusted)"))
    for name, entry in suggested(settings.workspace).items():
        if any(r["name"] == name for r in rows):
            continue
        try:
            cfg = McpServerConfig.model_validate(
                {k: entry[k] for k in ("command", "args", "env", "url") if k in entry}
            )
        except ValueError:
            continue
        rows.append(_row(name, cfg, ".mcp.json: a suggestion, not started"))
    if check:
        found = {s["name"]: s for s in check_servers(settings)}
        for r in rows:
            if r["name"] in found and r["source"] == "in force":
                r.update(tools=found[r["name"]]["tools"], error=found[r["name"]]["error"])
    return rows


def check_servers(settings: Settings) -> list[dict[str, Any]]:
    """Start every enabled server in the sandbox as a session would, note its tools, stop it."""
    if not settings.mcp.servers:
        return []
    from ..deny_read import deny_read_paths
    from ..sandbox.select import backends_for, select_runner, self_check
    from .hook import runner_factory
    from .hub import McpHub

    deny = deny_read_paths(settings.deny_read)
    status = self_check(settings.resolved_cache_dir(), backends=backends_for(settings))
    runner = select_runner(settings, status, deny)
    hub = McpHub(
        settings.mcp.servers,
        Path(os.path.realpath(settings.workspace)),
        runner_factory(settings, runner, deny),
        mode=settings.sandbox,
    )
    try:
        return hub.start().status()
    finally:
        hub.close()
        runner.kill_background()


def doctor_lines(servers: list[dict[str, Any]]) -> list[str]:
    if not servers:
        return ["mcp:       no servers configured"]
    out = ["mcp:"]
    for s in servers:
        if s["error"]:
            out.append(f"  {s['name']}: NOT started: {s['error']}")
        else:
            out.append(
                f"  {s['name']}: started ({s['transport']}, {s['start_ms']:.0f} ms), "
                f"{len(s['tools'])} tools: {', '.join(s['tools'])}"
            )
    return out


# -- the person's config, written --------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _save(path: Path, data: dict[str, Any]) -> None:
    Settings.model_validate({**data, "workspace": Path.cwd()})  # never write a broken config
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_bytes(tomli_w.dumps(data).encode())
    os.replace(tmp, path)


def _add(args: argparse.Namespace) -> int:
    command = list(args.command)
    entry: dict[str, Any] = {}
    if args.url:
        entry["url"] = args.url
    elif command:
        entry["command"], entry["args"] = command[0], command[1:]
    env = dict(kv.split("=", 1) for kv in args.env if "=" in kv)
    if env:
        entry["env"] = env
    if args.network:
        entry["network"] = args.network
    if args.read_only or args.read_only_tool:
        entry["read_only"] = True if args.read_only else list(args.read_only_tool)
    if args.timeout:
        entry["timeout_s"] = args.timeout
    path = user_config_path()
    data = _load(path)
    servers = data.setdefault("mcp", {}).setdefault("servers", {})
    servers[args.name] = entry
    try:
        _save(path, data)
    except ValueError as exc:
        print(f"cerveau: not added: {exc}")
        return 2
    print(f"added MCP server {args.name} to {path}")
    return 0


def _remove(name: str) -> int:
    path = user_config_path()
    data = _load(path)
    servers = data.get("mcp", {}).get("servers", {})
    if name not in servers:
        print(f"no MCP server {name!r} in {path}")
        return 1
    del servers[name]
    _save(path, data)
    print(f"removed MCP server {name} from {path}")
    return 0
