"""`cerveau acp` on the REAL llama-server and SmolLM2-135M, driven by the ACP SDK's client: a turn
whose crossings are put to the client and answered there, a cancel mid-answer, then a second
process that lists and loads the session. Bounded by work (rounds and a reply cap), never a clock;
what a 135M model decides is not asserted, only what the harness guarantees about it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from acp import text_block

from cerveau_tui.testing.acp_client import RecordingClient, cerveau_acp, pick

pytestmark = pytest.mark.e2e

ENV = {
    "CERVEAU_TEMPERATURE": "0",
    "CERVEAU_LIMITS__MAX_ITERATIONS": "2",
    "CERVEAU_MAX_TOKENS": "64",
}
#: SmolLM2 at temperature 0 answers this with write_file calls, each a crossing under untrusted.
TASK = "Use the write_file tool to create hello.txt containing the word hello"
#: How far into the second turn the cancel comes: inside its first model call (two calls of up
#: to 64 tokens and a tool), whichever phase that is; benchmarks/acp.py measures each phase.
CANCEL_INTO_S = 0.3


def test_a_turn_a_dialog_a_cancel_and_a_load_on_the_real_model(
    real_stack: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first, second = RecordingClient(answer=pick("allow_once")), RecordingClient()
    took: list[float] = []

    async def go() -> tuple[str, str, str]:
        flags = ("--server", real_stack, "--approval", "untrusted")
        with open(tmp_path / "stderr.txt", "w") as err:
            async with cerveau_acp(first, *flags, stderr=err, env=ENV, config_beside=ws) as conn:
                sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
                turn = await conn.prompt(session_id=sid, prompt=[text_block(TASK)])
                story = asyncio.ensure_future(
                    conn.prompt(session_id=sid, prompt=[text_block("Tell me a long story.")])
                )
                await asyncio.sleep(CANCEL_INTO_S)
                assert not story.done()
                pressed = time.monotonic()
                await conn.cancel(session_id=sid)
                stopped = await story
                took.append(time.monotonic() - pressed)
            async with cerveau_acp(second, *flags, env=ENV, config_beside=ws) as conn:
                listed = await conn.list_sessions(cwd=str(ws))
                assert sid in [s.session_id for s in listed.sessions]
                await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        return sid, turn.stop_reason, stopped.stop_reason

    sid, turn, stopped = asyncio.run(go())
    assert turn in ("end_turn", "max_turn_requests")
    # The model's crossings were put to the client (untrusted: every write and command asks),
    # each answered there, and what ran was reported and never run through the client.
    assert first.asked, [u.session_update for _, _, u in first.updates]
    done = [u for u in first.of("tool_call_update") if u.status in ("completed", "failed")]
    asked_ids = {a.tool_call.tool_call_id for a in first.asked}
    assert asked_ids <= {u.tool_call_id for u in done}
    assert all(u.raw_output["status"] != "denied" for u in done if u.tool_call_id in asked_ids)
    wrote = [p for u in done for p in u.raw_output["wrote"]]
    assert all((ws / p).is_file() for p in wrote)  # from the host: our tool wrote them
    assert first.forbidden == [] and second.forbidden == []
    print(f"real model: cancel -> the turn's answer {took[0]:.2f} s")
    assert stopped == "cancelled"
    # The second process replayed the session: the person's first prompt as theirs.
    assert second.text("user_message_chunk").startswith(TASK)


def _agent_pid() -> int:
    """The `cerveau acp` child of this test process."""
    import os

    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
            argv = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and argv[-2:] == [b"acp", b""]:
            return int(p)
    raise AssertionError("no cerveau acp child")


def _servers_under(pid: int) -> list[int]:
    """The model servers among `pid`'s descendants, read from /proc."""
    import os

    children: dict[int, list[int]] = {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(p))
    found, todo = [], [pid]
    while todo:
        for kid in children.get(todo.pop(), []):
            todo.append(kid)
            try:
                argv = Path(f"/proc/{kid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"cerveau_tui.stack.wheel_server" in argv or argv[0].endswith(b"llama-server"):
                found.append(kid)
    return found


def test_sessions_of_one_client_share_the_server_the_agent_started(
    real_stack: str, tmp_path: Path
) -> None:
    """Without --server each session/new started its own llama-server (373 MB resident each,
    measured), kept until the client hung up: an editor opens a session per thread. One now,
    counted from /proc; a turn in a session that did not start it is answered (its key known)."""
    del real_stack  # provisioned and tested: the agent starts its own from the same cache
    dirs = [tmp_path / f"ws{i}" for i in range(3)]
    for d in dirs:
        d.mkdir()
    client = RecordingClient()
    counts: list[int] = []

    async def go() -> str:
        async with cerveau_acp(client, env=ENV, config_beside=dirs[0]) as conn:
            sids = []
            for d in dirs:
                sids.append((await conn.new_session(cwd=str(d), mcp_servers=[])).session_id)
                counts.append(len(_servers_under(_agent_pid())))
            answer = await conn.prompt(session_id=sids[-1], prompt=[text_block("Say hi.")])
            return answer.stop_reason

    stop = asyncio.run(go())
    assert counts == [1, 1, 1]
    assert stop in ("end_turn", "max_turn_requests")
