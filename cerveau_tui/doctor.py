"""`cerveau doctor`: what this harness would run on, stated plainly."""

from __future__ import annotations

import json
import sys
from typing import Any

from . import __version__
from .config import Settings, user_config_path
from .text_safety import visible


def collect(settings: Settings) -> dict[str, Any]:
    info: dict[str, Any] = {
        "version": __version__,
        "workspace": str(settings.workspace),
        "config": {
            "user": str(user_config_path()),
            "workspace": str(settings.workspace_config_path),
            "loaded": settings.sources,
        },
        "settings": {
            "sandbox": settings.sandbox,
            "approval": settings.approval,
            "max_tokens": settings.max_tokens,
            "action_mode": settings.action_mode,
            # Off by default: no benefit measured for their tokens (benchmarks/defaults_cost.py).
            "turn_close": settings.turn_close,
            "explore": settings.delegate,
        },
    }
    from .workspace.private import refuse_shared

    # Said, not refused: doctor is where a person asks why a session would not start here.
    info["workspace_refused"] = refuse_shared(settings.workspace)
    # The person's own screen (and whatever a script pastes it into): whose credential, not its
    # value. And a variable the person lets into the sandbox that holds a credential is the
    # model's to read (`echo $GITHUB_TOKEN`): their explicit choice stands, doctor says it.
    from .redact import redact_url, secret_env_names

    shown = redact_url(settings.server_url, person=True) if settings.server_url else None
    server: dict[str, Any] = {"url": shown, "reachable": False}
    info["env_allow_secrets"] = secret_env_names(settings.env_allow)
    if settings.server_url:
        from .provider.llama import LlamaProvider

        provider = LlamaProvider(
            settings.server_url, action_mode=settings.action_mode, max_retries=0
        )
        server["reachable"] = provider.health()
        props = provider.props()
        server.update(
            n_ctx=props.n_ctx,
            model=props.model_path,
            build_info=props.build_info,
            supports_tools=props.supports_tools,
        )
        from .context.tokens import TokenCounter

        server["tokenizer"] = TokenCounter(provider, props.model_path).source
        if server["reachable"]:
            from .stack.capabilities import cache_reuse
            from .stack.keys import headers_for

            url = settings.server_url.rstrip("/")
            server["cache_reuse"] = cache_reuse(url, headers_for(url))
        if settings.max_tokens is None and props.n_ctx:
            from .context.budget import reply_cap

            # Unset, the cap is derived from the server's window: say the figure that is sent.
            info["settings"]["max_tokens"] = reply_cap(props.n_ctx, None)
            info["settings"]["max_tokens_source"] = "derived from n_ctx"
    else:
        from .stack.cli import doctor_info

        server.update(doctor_info(settings))
        server["embedded"] = embedded_state(server)
        server["cache_reuse"] = "yes"  # stack/server.py starts it with --cache-reuse
        server["reachable"] = server["embedded"] == "running"
    info["server"] = server
    info["template"] = template_info(settings.server_url or server.get("server_url"))
    from .sandbox.select import doctor_info as sandbox_info

    info["sandbox"] = sandbox_info(settings)
    from .mcp.manage import check_servers

    info["mcp"] = check_servers(settings)  # each started in the sandbox, its tools, stopped
    info["gate"] = gate_info(settings)
    from .person_hooks import describe_hooks, held_back

    info["hooks"] = {"run": describe_hooks(settings.hooks), "held_back": held_back(settings)}
    from .tools.ripgrep import status as search_status

    info["search"] = search_status()
    from .workspace.fingerprint.watch import doctor_info as fingerprint_info

    info["fingerprint"] = fingerprint_info(settings.workspace)
    from .session.rewind.gc import store_size

    size = store_size(settings.workspace)
    info["rewind"] = {
        "blobs": size.blobs,
        "bytes": size.bytes,
        "max_age_days": settings.rewind.max_age_days,
        "max_mb": settings.rewind.max_mb,
    }
    return info


def embedded_state(server: dict[str, Any]) -> str:
    """What the embedded stack is doing, said as such: "reachable=False" for a server that is
    only started when a session needs it read as a broken install. "running" (a verified record
    of one of ours answers), "starts on demand" (provisioned, nothing runs yet), or "not
    provisioned" (`cerveau stack provision` first)."""
    if server.get("server_url"):
        return "running"
    if server.get("ready"):
        return "starts on demand"
    return "not provisioned"


def template_info(url: str | None) -> dict[str, Any]:
    """Whether the model's chat template rewrites earlier turns (provider/template_check.py):
    per kind of message, "stable", "rewritten" (with the tokens re-read and what the harness does
    about it) or "unavailable"; nothing running: unavailable, never a guess."""
    if not url:
        return {"state": "unavailable", "why": "no server running to render with", "kinds": []}
    from .provider.template_check import WHAT_WE_DO, check_template, http_post

    results = check_template(http_post(url))
    kinds = [
        {
            "kind": r.kind,
            "state": r.state,
            "reread_tokens": r.reread_tokens,
            "detail": r.detail,
            **({"harness": WHAT_WE_DO[r.kind]} if r.state == "rewritten" else {}),
        }
        for r in results
    ]
    states = {r.state for r in results}
    state = (
        "rewrites" if "rewritten" in states else "stable" if states == {"stable"} else "unavailable"
    )
    return {"state": state, "kinds": kinds}


def template_lines(t: dict[str, Any]) -> list[str]:
    if not t["kinds"]:
        return [f"template:  unavailable ({t.get('why', '')})"]
    stable = [k["kind"] for k in t["kinds"] if k["state"] == "stable"]
    kept = f"keeps earlier {', '.join(stable)} byte-stable" if stable else "rewrites earlier turns"
    lines = [f"template:  {kept}"]
    for k in t["kinds"]:
        if k["state"] == "rewritten":
            lines.append(
                f"  - rewrites earlier {k['kind']}: ~{k['reread_tokens']} tokens re-read per "
                f"request ({k['detail']}); {k['harness']}"
            )
        elif k["state"] == "unavailable":
            lines.append(f"  - {k['kind']}: unavailable ({k['detail']})")
    return lines


def gate_info(settings: Settings) -> dict[str, Any]:
    """What the done gate would be for a run here: the detected stack and its usual check, the
    `[done] gate` setting, and which check is in force (the written criteria win)."""
    from .adapters.registry import resolve_stack_for_run

    stack = resolve_stack_for_run(settings.workspace, settings, run=_proof(settings))
    criteria = [c.command for c in settings.done.criteria] if stack.source == "criteria" else []
    return {
        "stack": stack.adapter.name,
        "detected": stack.detected,
        "setting": stack.setting,
        "source": stack.source,
        "in_use": stack.in_use,
        "command": stack.command,
        "criteria": criteria,
        "protected": list(stack.protected),
        "why": stack.why,
        "origin": stack.origin,  # where the detected check was read: tox.ini, Makefile, ...
        "cannot_run": stack.cannot_run,  # "No module named pytest": proved in the sandbox
    }


def _proof(settings: Settings) -> Any:
    """The runner a session's check would get, to prove the detected check runs there (issue 33:
    doctor called a check "in use" that was "No module named pytest"); None without a sandbox."""
    from .done.sandboxed import proof_runner
    from .sandbox.select import select_runner

    try:
        return proof_runner(select_runner(settings), settings.workspace, settings.sandbox)
    except Exception:  # noqa: BLE001 - doctor reports; a runner it cannot build proves nothing
        return None


def feature_line(settings: dict[str, Any]) -> str:
    """Turn close and explore: which are on (the palette switches each for a session; the
    config's `[memory] turn_close` and `delegate` for every session)."""
    tc, ex = ("on" if settings[k] else "off" for k in ("turn_close", "explore"))
    return (
        f"memory:    turn close {tc} ([memory] turn_close), explore {ex} (delegate); "
        "the palette switches each for a session"
    )


def doctor(settings: Settings, *, as_json: bool) -> int:
    """0, or 1 when the server named with --server (or server_url) does not answer: a script
    checking `cerveau doctor && cerveau run ...` must not go on to a run that cannot start."""
    info = collect(settings)
    code = 1 if settings.server_url and not info["server"]["reachable"] else 0
    if as_json:
        print(json.dumps(info, indent=2, default=str))
        return code

    # The server's answers (model path, build info) and the workspace config's gate are other
    # people's text: their control characters shown, never sent to the terminal.
    def say(line: str) -> None:
        print(visible(line))

    s, sb = info["server"], info["sandbox"]
    say(f"cerveau {info['version']}  workspace {info['workspace']}")
    if info["workspace_refused"]:
        say(f"  - {info['workspace_refused']}")
    if info["env_allow_secrets"]:
        say(
            "  - env_allow lets credential-like variables into every command, where the model "
            f"can read them: {', '.join(info['env_allow_secrets'])}"
        )
    if s.get("url"):
        say(f"server:    {s['url']}  reachable={s.get('reachable')}")
    else:
        state = s["embedded"]
        if state == "running":
            state += f" at {s['server_url']}" + (f" (pid {s['pid']})" if s.get("pid") else "")
        elif state == "not provisioned":
            state += " (`cerveau stack provision` gets llama-server and the model)"
        say(f"server:    embedded (managed llama-server): {state}")
    for key in (
        "source",  # wheel, build or path: where the embedded server comes from
        "llama_cpp_build",  # from the wheel's version when build_info says b0-unknown
        "model",
        "n_ctx",
        "build_info",
        "supports_tools",
        "tokenizer",
        "binary",
        "model_path",
    ):
        if s.get(key) is not None:
            say(f"  {key}: {s[key]}")
    if s.get("cache_reuse"):
        say(f"  cache reuse: {cache_reuse_line(s['cache_reuse'], embedded=not s.get('url'))}")
    enforced = "enforced" if sb.get("enforced") else "NOT enforced"
    say(f"sandbox:   {sb.get('backend')} ({enforced})")
    for note in sb.get("notes", []) + sb.get("gaps", []):
        say(f"  - {note}")
    if sb.get("privileged") is False:
        say("  - privileged: no (a sandboxed write of a host kernel setting was refused)")
    home = sb.get("home_visible") or []
    say(
        "  - home: an empty private folder"
        + (", plus read-only: " + ", ".join(home) if home else "")
    )
    from .mcp.manage import doctor_lines

    for line in doctor_lines(info["mcp"]):
        say(line)
    fi = info["fingerprint"]
    say(f"fingerprint: {fi['method']} ({fi['watches']:,} folders watched)"
        if fi["method"] == "inotify"
        else f"fingerprint: walk, every command reads the whole tree ({fi['reason']})")  # fmt: skip
    rw = info["rewind"]
    say(f"rewind:    {rw['blobs']:,} blobs, {rw['bytes'] / 1e6:.1f} MB in the store (kept"
        f" {rw['max_age_days']:g} days, at most {rw['max_mb']:g} MB)")  # fmt: skip
    se = info["search"]
    say(f"search:    {se['engine']}" + (f" ({se['rg']})" if se["engine"] == "ripgrep" else ""))
    say(feature_line(info["settings"]))
    if se.get("reason"):
        say(f"  - {se['reason']}")
    g = info["gate"]
    detected = f"`{g['detected']}`" if g["detected"] else "no usual check"
    if g["detected"] and g.get("origin"):
        detected += f" (from {g['origin']})"
    if g.get("cannot_run"):
        detected += f", which cannot run here: {g['cannot_run']}"
    in_force = g["command"] or ", ".join(g["criteria"]) or "none"
    for line in template_lines(info["template"]):
        say(line)
    say(f"gate:      {g['stack']} stack, {detected} detected; in use: {in_force} ({g['why']})")
    hk = info["hooks"]
    say(f"hooks:     {len(hk['run'])} from your config" if hk["run"] else "hooks:     none")
    for line in hk["run"]:
        say(f"  - {line}")
    if hk["held_back"]:
        say(f"  - not run (the workspace config is not trusted): {', '.join(hk['held_back'])}")
    say(f"config:    user {info['config']['user']}; workspace {info['config']['workspace']}")
    if code:
        print(f"cerveau doctor: nothing answers at {s['url']}", file=sys.stderr)
    return code


def cache_reuse_line(state: str, *, embedded: bool) -> str:
    """After a compaction the kept part of the conversation is the cached one with a block before
    it dropped (issue 36): a server that does not shift it reads all of it again."""
    from .stack.capabilities import CACHE_REUSE_TOKENS

    if embedded:
        return f"yes (the app's own server runs with --cache-reuse {CACHE_REUSE_TOKENS})"
    if state == "yes":
        return "yes (measured: a kept part was shifted into place after a dropped block)"
    if state == "no":
        return (
            "no: after each compaction this server reads the kept conversation again (measured); "
            f"a llama-server takes `--cache-reuse {CACHE_REUSE_TOKENS}`"
        )
    return "unknown (the server sent no cache figures)"
