"""The rewind store is bounded (session/rewind/gc.py): what no kept point references goes once
it is older than the grace; a kept point keeps every blob it needs; past the age or the size,
the oldest points expire, and a rewind to one says so without touching a file."""

from __future__ import annotations

import time

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.session.rewind import Rewinder, RewindError
from cerveau_tui.session.rewind.gc import GRACE_S, collect, store_size
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.workspace.restore.store import BlobStore


def write(content: str) -> dict:
    return {
        "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": content}}]
    }


def two_turns(tmp_path) -> str:
    script = {"responses": [write("1\n"), {"content": "a"}, write("2\n"), {"content": "b"}]}
    with ScriptedServer(script) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
        s = build_session(
            settings, bus=Emitter(), approver=ApproveAll(), provider=LlamaProvider(srv.url)
        )
        try:
            s.engine.run("one")
            s.engine.run("two")
            return s.bus.session_id
        finally:
            s.close()


def rewinder(tmp_path, sid):
    return Rewinder.for_session(tmp_path, sid, log=SessionLog(tmp_path, sid))


def test_an_orphan_goes_after_the_grace_and_kept_points_keep_their_blobs(tmp_path):
    sid = two_turns(tmp_path)
    orphan = BlobStore(tmp_path).put(b"referenced by no point")
    assert collect(tmp_path, max_age_days=30, max_mb=2048).removed == 0  # within the grace
    later = time.time() + GRACE_S + 60
    done = collect(tmp_path, max_age_days=30, max_mb=2048, now=later)
    assert not BlobStore(tmp_path).has(orphan) and done.removed >= 1
    rw = rewinder(tmp_path, sid)
    try:
        rw.rewind(2, "code")
    finally:
        rw.log.close()
    assert (tmp_path / "a.txt").read_text() == "1\n"


@pytest.mark.parametrize("bound", ["age", "size"])
def test_past_its_bound_a_point_expires_and_a_rewind_to_it_touches_nothing(tmp_path, bound):
    sid = two_turns(tmp_path)
    later = time.time() + (40 * 86400 if bound == "age" else GRACE_S + 60)
    max_mb = 2048 if bound == "age" else 1e-9
    collect(tmp_path, max_age_days=30, max_mb=max_mb, now=later)
    assert store_size(tmp_path).blobs == 0
    rw = rewinder(tmp_path, sid)
    try:
        with pytest.raises(RewindError, match="expired"):
            rw.rewind(1, "code")
    finally:
        rw.log.close()
    assert (tmp_path / "a.txt").read_text() == "2\n"
