"""`cerveau acp` driven by a client nobody here wrote: the ACP SDK's own client side, over the real
process's stdin and stdout, against the scripted server. What is claimed of the boundary is read
from the host: the namespace a command ran in, the files on disk, the processes alive; and the
client offers its file system and terminal and records any use of them (there must be none)."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp import schema as S

from cerveau_tui.testing.acp_client import RecordingClient, cerveau_acp, pick, silent
from cerveau_tui.testing.proc_scan import sleeping
from cerveau_tui.testing.scripted_server import ScriptedServer


@pytest.fixture
def ws() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-acp-", dir="/var/tmp"))
    (root / "ws").mkdir()
    try:
        yield root / "ws"
    finally:
        import shutil

        shutil.rmtree(root, ignore_errors=True)


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def drive(
    ws: Path,
    script: list[dict[str, Any]],
    client: RecordingClient,
    *flags: str,
    prompts: tuple[str, ...] = ("go",),
    env: dict[str, str] | None = None,
    during: Any = None,
) -> tuple[ScriptedServer, list[S.PromptResponse]]:
    """One `cerveau acp` process, one session in `ws`, the prompts in turn; `during(conn, sid,
    prompt_task)` runs beside the first prompt (a cancel)."""
    answers: list[S.PromptResponse] = []

    async def go(srv: ScriptedServer) -> None:
        with open(ws.parent / "stderr.txt", "a") as err:
            async with cerveau_acp(
                client, "--server", srv.url, *flags, stderr=err, env=env, config_beside=ws
            ) as conn:
                sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
                for i, text in enumerate(prompts):
                    task = asyncio.ensure_future(
                        conn.prompt(session_id=sid, prompt=[text_block(text)])
                    )
                    if during is not None and i == 0:
                        await during(conn, sid, task)
                    answers.append(await task)

    with ScriptedServer({"responses": script}) as srv:
        asyncio.run(go(srv))
    return srv, answers


def results(client: RecordingClient) -> list[Any]:
    return [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]


def test_a_command_runs_in_our_sandbox_not_the_clients_terminal(ws: Path) -> None:
    client = RecordingClient(answer=pick("allow_once"))
    command = "readlink /proc/self/ns/pid > ns.txt"
    _, [answer] = drive(ws, [bash(command), {"content": "done"}], client)
    assert answer.stop_reason == "end_turn"
    # From the host: the file the command wrote names a PID namespace that is not ours.
    theirs = (ws / "ns.txt").read_text().strip()
    assert theirs.startswith("pid:[") and theirs != os.readlink("/proc/self/ns/pid")
    # Offered a terminal and a file system, the agent used neither.
    assert client.forbidden == []
    [start] = client.of("tool_call")
    assert (start.kind, start.status, start.raw_input) == (
        "execute",
        "pending",
        {"command": command},
    )
    [done] = results(client)
    assert done.status == "completed" and done.raw_output["wrote"] == ["ns.txt"]
    assert "done" in client.text()


def test_a_write_is_reported_as_a_diff_of_our_own_tool(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\n")
    client = RecordingClient(answer=pick("allow_once"))
    script = [call("edit_file", path="a.py", old="y = 2", new="y = 3"), {"content": "ok"}]
    drive(ws, script, client, "--approval", "untrusted")
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"  # written by us, on the host
    assert client.forbidden == []
    [asked] = client.asked
    shown = [c for c in asked.tool_call.content or [] if c.type == "diff"]
    assert shown and shown[0].path == str(ws / "a.py")  # the dialog shows what it would write
    [done] = results(client)
    [diff] = [c for c in done.content if c.type == "diff"]
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(ws / "a.py"), "x = 1\ny = 2\n", "x = 1\ny = 3\n",
    )  # fmt: skip
    assert client.of("tool_call")[0].kind == "edit"


def test_the_dialog_offers_our_scopes_narrowest_first(ws: Path) -> None:
    client = RecordingClient(answer=pick("reject_once"))
    drive(ws, [bash("touch made.txt"), {"content": "ok"}], client, "--approval", "untrusted")
    [asked] = client.asked
    kinds = [o.kind for o in asked.options]
    assert kinds[0] == "allow_once" and kinds[-2:] == ["reject_once", "reject_always"]
    assert set(kinds[1:-2]) == {"allow_always"}  # one per scope the policy offers
    assert all(o.name.startswith("Allow for this session: ") for o in asked.options[1:-2])
    assert asked.options[-1].name.startswith("Never in this workspace: ")
    [done] = results(client)
    assert done.status == "failed" and done.raw_output["status"] == "denied"
    assert not (ws / "made.txt").exists()


def test_allow_for_the_session_is_a_grant_the_next_call_does_not_ask_for(ws: Path) -> None:
    client = RecordingClient(answer=pick("allow_always"))
    script = [bash("echo one >> log.txt"), bash("echo one >> log.txt"), {"content": "ok"}]
    drive(ws, script, client, "--approval", "untrusted")
    assert len(client.asked) == 1  # the second identical command ran on the session's grant
    assert (ws / "log.txt").read_text() == "one\none\n"
    assert [r.raw_output["granted_by"].split(" (")[0] for r in results(client)] == [
        "approved for this session", "approved for this session",
    ]  # fmt: skip


def test_a_path_outside_the_workspace_is_refused_and_the_host_file_unchanged(ws: Path) -> None:
    outside = ws.parent / "outside.txt"
    outside.write_text("the person's\n")
    client = RecordingClient(answer=pick("reject_once"))
    script = [
        call("write_file", path=str(outside), content="pwned\n"),
        bash(f"echo pwned > {outside}"),
        {"content": "ok"},
    ]
    drive(ws, script, client)
    assert outside.read_text() == "the person's\n"
    assert [r.status for r in results(client)] == ["failed", "failed"]
    assert client.forbidden == []


def test_silence_denies_after_the_approvers_timeout_and_says_why(ws: Path) -> None:
    env = {"CERVEAU_APPROVAL_TIMEOUT_S": "1"}
    client = RecordingClient(answer=silent)
    drive(
        ws, [bash("touch made.txt"), {"content": "ok"}], client, "--approval", "untrusted", env=env
    )
    assert not (ws / "made.txt").exists()
    assert len(client.asked) == 1
    # ACP's answer has no room for a reason: the turn says it.
    assert "denied, no answer within 1 s" in client.text()


TOKEN = "30.0391"  # a sleep no other process sleeps for


def test_a_cancel_stops_a_running_command_and_the_turn(ws: Path) -> None:
    client = RecordingClient()
    took: list[float] = []

    async def cancel_when_running(conn: Any, sid: str, task: asyncio.Future[Any]) -> None:
        while not sleeping(TOKEN):
            await asyncio.sleep(0.02)
        pressed = time.monotonic()
        await conn.cancel(session_id=sid)
        await asyncio.wait([task])
        took.append(time.monotonic() - pressed)

    _, [answer] = drive(ws, [bash(f"sleep {TOKEN}"), {"content": "never"}], client,
                        during=cancel_when_running)  # fmt: skip
    assert answer.stop_reason == "cancelled"
    assert sleeping(TOKEN) == []  # from the host: the command is gone
    print(f"cancel -> the turn's answer: {took[0]:.2f} s")
    assert took[0] < 10  # a bound on a hang, not a timing: benchmarks/acp.py has the figure


def test_a_cancel_denies_a_waiting_dialog(ws: Path) -> None:
    client = RecordingClient(answer=silent)

    async def cancel_when_asked(conn: Any, sid: str, task: asyncio.Future[Any]) -> None:
        while not client.asked:
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=sid)

    _, [answer] = drive(ws, [bash("touch made.txt"), {"content": "never"}], client,
                        "--approval", "untrusted", during=cancel_when_asked)  # fmt: skip
    assert answer.stop_reason == "cancelled"
    assert not (ws / "made.txt").exists()


def test_the_plan_is_sent_whole_as_acps_plan(ws: Path) -> None:
    steps = [{"id": "1", "title": "write a.py", "files": ["a.py"]}, {"id": "2", "title": "test"}]
    client = RecordingClient(answer=pick("allow_once"))
    drive(ws, [call("commit_plan", steps=steps), {"content": "planned"}], client)
    plans = client.of("plan")
    assert plans, [u.session_update for _, _, u in client.updates]
    assert [e.content for e in plans[-1].entries] == ["write a.py", "test"]
    assert {e.status for e in plans[-1].entries} <= {"pending", "in_progress"}


def test_discussion_mode_refuses_the_next_turns_command(ws: Path) -> None:
    async def discuss(conn: Any, sid: str, task: asyncio.Future[Any]) -> None:
        await task
        await conn.set_session_mode(session_id=sid, mode_id="discuss")

    client = RecordingClient(answer=pick("allow_once"))
    script = [{"content": "a"}, bash("touch made.txt"), {"content": "b"}]
    drive(ws, script, client, prompts=("one", "two"), during=discuss)
    assert not (ws / "made.txt").exists()  # from the host: the command never ran
    assert [r.status for r in results(client)] == ["failed"]
    assert client.asked == []  # refused by the mode, not put to the person


def test_mcp_servers_a_client_names_are_never_started(ws: Path) -> None:
    marker = ws.parent / "started.txt"
    server = S.McpServerStdio(
        name="planted", command="/bin/sh", args=["-c", f"touch {marker}"], env=[]
    )
    client = RecordingClient()

    async def go(srv: ScriptedServer) -> None:
        async with cerveau_acp(client, "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])

    with ScriptedServer({"responses": [{"content": "hello"}]}) as srv:
        asyncio.run(go(srv))
    assert not marker.exists()
    said = client.text()
    assert "suggested MCP servers (planted): not started" in said
    assert "cerveau mcp add planted -- /bin/sh -c" in said  # how the person would make it theirs


def test_a_session_is_listed_and_loaded_with_its_conversation(ws: Path) -> None:
    first, second = RecordingClient(), RecordingClient()

    async def go(srv: ScriptedServer) -> tuple[str, S.ListSessionsResponse]:
        async with cerveau_acp(first, "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("remember kiwi")])
        async with cerveau_acp(second, "--server", srv.url, config_beside=ws) as conn:
            listed = await conn.list_sessions(cwd=str(ws))
            await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
            await conn.prompt(session_id=sid, prompt=[text_block("which fruit?")])
        return sid, listed

    script = [{"content": "noted: kiwi"}, {"content": "kiwi"}]
    with ScriptedServer({"responses": script}) as srv:
        sid, listed = asyncio.run(go(srv))
    assert [(s.session_id, s.title) for s in listed.sessions] == [(sid, "remember kiwi")]
    # Replayed before load answered: the person's turn as theirs, the answer as the agent's.
    assert second.text("user_message_chunk").startswith("remember kiwi")
    assert "noted: kiwi" in second.text()
    # The resumed turn's request holds the first turn's conversation (from the server's side).
    said = [m.get("content") for m in srv.requests[-1]["messages"]]
    assert "remember kiwi" in said and "noted: kiwi" in said


@pytest.mark.parametrize("where", ["/tmp", "home", "relative"])
def test_session_new_refuses_what_the_cli_refuses(ws: Path, where: str) -> None:
    cwd = {"/tmp": "/tmp", "home": os.path.expanduser("~"), "relative": "ws"}[where]

    async def go() -> None:
        async with cerveau_acp(RecordingClient(), "--server", "http://127.0.0.1:9",
                               config_beside=ws) as conn:  # fmt: skip
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=cwd, mcp_servers=[])
            assert "refusing the workspace" in str(refused.value.data) or where == "relative"

    asyncio.run(go())


def test_a_pinned_workspace_refuses_another_cwd(ws: Path) -> None:
    other = ws.parent / "other"
    other.mkdir()

    async def go() -> None:
        async with cerveau_acp(RecordingClient(), "--workspace", str(ws), "--server",
                               "http://127.0.0.1:9", config_beside=ws) as conn:  # fmt: skip
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=str(other), mcp_servers=[])
            assert "--workspace" in str(refused.value.data)

    asyncio.run(go())
    assert not (other / ".cerveau").exists()


@pytest.mark.parametrize("cwd", ["other", "relative"])
def test_session_list_is_refused_beyond_the_pinned_workspace(ws: Path, cwd: str) -> None:
    """session/list of another folder than --workspace gave its sessions' titles (the person's
    first words there); a relative cwd was read against the agent's own cwd."""
    other = ws.parent / "other"
    other.mkdir()
    secret = "the other folder's first words"

    async def go(srv: ScriptedServer) -> None:
        async with cerveau_acp(RecordingClient(), "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(other), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block(secret)])
        async with cerveau_acp(RecordingClient(), "--workspace", str(ws), "--server", srv.url,
                               config_beside=ws) as conn:  # fmt: skip
            with pytest.raises(RequestError) as refused:
                await conn.list_sessions(cwd=str(other) if cwd == "other" else "other")
            assert secret not in str(refused.value.data)
            assert (await conn.list_sessions()).sessions == []  # its own: none yet

    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        asyncio.run(go(srv))
    assert list((other / ".cerveau" / "sessions").iterdir())  # from the host: it is there


def test_an_overlong_line_is_dropped_with_an_error_and_the_agent_answers_on(ws: Path) -> None:
    """The SDK's reader joins a line's chunks with no bound: a client's 100 MB line was held
    and parsed whole (780 MB resident). Now it is dropped past 8 MiB, answered as an error, and
    the next request is answered; the agent's memory is read from /proc."""
    import json
    import subprocess
    import sys

    from cerveau_tui.acp.stdio import MAX_LINE

    env = {k: v for k, v in os.environ.items() if k.startswith(("CERVEAU_", "PYTHON", "LANG"))}
    env["CERVEAU_CONFIG"] = str(ws.parent / "no-config.toml")
    proc = subprocess.Popen(
        [sys.executable, "-m", "cerveau_tui", "acp", "--workspace", str(ws), "--server",
         "http://127.0.0.1:9"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        head = b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":{"cwd":"'
        proc.stdin.write(head + b"a" * (8 * MAX_LINE) + b'"}}\n')
        proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n')
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        rss_kb = int(
            next(
                line.split()[1]
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        )
        second = json.loads(proc.stdout.readline())
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    # Answered as the request it was (its id read from the line's head): the client's call fails
    # at once instead of waiting for an answer that would never come.
    assert first["id"] == 1 and "dropped unread" in first["error"]["data"]["details"]
    assert second == {"jsonrpc": "2.0", "id": 2, "result": {"sessions": []}}
    assert rss_kb * 1024 < 4 * MAX_LINE + 200 * 1024 * 1024, rss_kb  # never the line's 64 MiB x n


def test_what_the_model_wrote_reaches_the_client_with_its_controls_shown(ws: Path) -> None:
    """The tool call's raw_input (every byte of the model's arguments) went out as sent: an
    OSC 52 (the terminal's clipboard) and a bidi override reached a client that draws it."""
    hostile = "echo hi \x1b]52;c;cm0gLXJmIH4K\x07 \u202e > \"$(printf 'n\\033[2Jm')\""
    client = RecordingClient(answer=pick("allow_once"))
    script = [bash(hostile), call("write_file", path="a\x1b[2Jb\u202e.txt", content="x"),
              {"content": "ok"}]  # fmt: skip
    drive(ws, script, client, "--approval", "untrusted")
    sent = [u.raw_input for u in client.of("tool_call")]
    sent += [a.tool_call.raw_input for a in client.asked]
    assert len(sent) >= 3, sent
    wrote = [u.raw_output["wrote"] for u in results(client)]
    assert any(wrote), wrote  # the command's own file name, as the client got it
    sent += wrote
    import json

    for raw in sent:
        shown = json.dumps(raw, ensure_ascii=False)  # the strings as the client decodes them
        assert "\\u001b" not in shown and "\\u0007" not in shown and "\u202e" not in shown, shown


def test_a_listed_sessions_title_has_its_controls_shown(ws: Path) -> None:
    """A title is the session's first prompt, which may be an embedded file's text."""

    async def go(srv: ScriptedServer) -> S.ListSessionsResponse:
        async with cerveau_acp(RecordingClient(), "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("fix \x1b]0;owned\x07 this")])
            return await conn.list_sessions(cwd=str(ws))

    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        [listed] = asyncio.run(go(srv)).sessions
    assert listed.title is not None and listed.title.startswith("fix ")
    assert "\x1b" not in listed.title and "\x07" not in listed.title


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b'{"jsonrpc":"2.0","id":99,"method":"session/prompt","params":{"x', 99),
        (b'{"jsonrpc": "2.0", "method": "session/prompt", "id": "a-1", "params"', "a-1"),
        (b'{"params":{"id":5},"id":7}', None),  # an id inside params is not the request's
        (b'{"jsonrpc":"2.0","method":"x","params":{"sessionId":"s","id":3', None),
    ],
)
def test_a_dropped_lines_answer_names_only_its_own_id(head: bytes, found: object) -> None:
    from cerveau_tui.acp.stdio import request_id

    assert request_id(head) == found


@pytest.mark.parametrize("spec", ["", "last"])
def test_session_load_takes_an_id_not_continues_spec(ws: Path, spec: str) -> None:
    """session/load "" or "last" opened the latest session under another id than the one asked
    (the client then had no name for it, and a second load of it was not seen as open)."""

    async def go(srv: ScriptedServer) -> None:
        async with cerveau_acp(RecordingClient(), "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        client = RecordingClient()
        async with cerveau_acp(client, "--server", srv.url, config_beside=ws) as conn:
            with pytest.raises(RequestError) as refused:
                await conn.load_session(cwd=str(ws), session_id=spec, mcp_servers=[])
            assert "session/list" in str(refused.value.data)
            assert client.updates == []  # nothing of the session replayed
            await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])  # its id: loads

    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        asyncio.run(go(srv))


def test_a_model_servers_key_never_reaches_the_model_or_the_client(ws: Path) -> None:
    """The run folder (llama-server keys, stack/keys.py) was hidden from commands but not from
    the file tools: read_file of a key, approved by the client as a read outside the workspace,
    sent it to the model and in the tool's update. Read from the host: the scripted server's
    requests and every update the client got."""
    from cerveau_tui.stack.paths import stack_paths

    cache = ws.parent / "cache"
    run = stack_paths(cache).run_dir
    run.mkdir(parents=True)
    token = "key-" + os.urandom(8).hex()
    (run / "server-4242.key").write_text(token + "\n")
    client = RecordingClient(answer=pick("allow_once"))
    script = [
        call("read_file", path=str(run / "server-4242.key")),
        call("search", pattern="key", path=str(run)),
        call("list_files", path=str(cache)),
        {"content": "ok"},
    ]
    srv, _ = drive(ws, script, client, env={"CERVEAU_CACHE_DIR": str(cache)})
    assert token not in repr(srv.requests)
    assert token not in repr(client.updates) and token not in repr(client.asked)
    assert [r.status for r in results(client)] == ["failed", "failed", "failed"]


def test_what_the_prompt_carried_that_the_model_never_gets_is_said(ws: Path) -> None:
    """An image or a binary file in a prompt was dropped without a word: the person believed
    the model had seen it. The model's request (read at the scripted server) holds neither."""
    client = RecordingClient()

    async def go(srv: ScriptedServer) -> None:
        async with cerveau_acp(client, "--server", srv.url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            blob = S.BlobResourceContents(uri=f"file://{ws}/logo.png", blob="QUJD")
            await conn.prompt(
                session_id=sid,
                prompt=[
                    text_block("what is this?"),
                    S.ImageContentBlock(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
                    S.EmbeddedResourceContentBlock(type="resource", resource=blob),
                ],
            )

    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        asyncio.run(go(srv))
    assert "QUJD" not in repr(srv.requests) and "iVBORw0KGgo" not in repr(srv.requests)
    said = client.text()
    assert "not sent to the model (it reads text only): an image, the binary file logo.png" in said
