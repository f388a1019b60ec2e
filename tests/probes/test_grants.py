"""A grant the person gave is applied to the calls it covers (issue 10: a session grant `a` and the
palette's "Grant network" were accepted, then the next matching command ran without the room and
without the network, and the model was told it was its mistake). Verified on the host: the file
landed where only the grant allows, and a loopback listener on the host saw the connection."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest
from cerveau_tui.sandbox.bubblewrap import find_bwrap
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import call, reply


class Answers:
    """The person, scripted: answers asks in order, records what was asked."""

    def __init__(self, *decisions: str) -> None:
        self.decisions = list(decisions)
        self.asked: list[ApprovalRequest] = []

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(req)
        return ApprovalDecision(self.decisions.pop(0) if self.decisions else "denied", by="person")  # type: ignore[arg-type]


@pytest.fixture
def dirs() -> Iterator[tuple[Path, Path]]:
    if find_bwrap() is None:
        pytest.fail("bubblewrap is not installed: a grant only means something with a sandbox")
    root = Path(tempfile.mkdtemp(prefix="cerveau-grant-", dir="/var/tmp"))
    (root / "ws").mkdir()
    (root / "out").mkdir()
    yield root / "ws", root / "out"
    shutil.rmtree(root, ignore_errors=True)


def _session(ws: Path, url: str, approver: Any) -> Any:
    settings = load_settings(
        ws,
        flags={
            "server_url": url,
            "sandbox": "workspace-write",
            "approval": "on-request",
            "sandbox_backend": "bubblewrap",
        },
        environ={},
        user_config=ws.parent / "user.toml",
    )
    return build_session(settings, approver=approver)


def test_a_refused_write_is_put_to_the_person_once_and_a_session_grant_covers_the_next(
    dirs: tuple[Path, Path],
) -> None:
    ws, out = dirs
    person = Answers("approved_session")
    script = {
        "responses": [
            reply(call("bash", command=f"touch {out}/a")),
            reply(call("bash", command=f"touch {out}/b")),
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        session = _session(ws, srv.url, person)
        try:
            session.engine.run("touch two files")
        finally:
            session.close()
    assert (out / "a").exists() and (out / "b").exists()
    assert len(person.asked) == 1 and "touch" in person.asked[0].scope


def test_a_refused_write_denied_by_the_person_stays_refused(dirs: tuple[Path, Path]) -> None:
    ws, out = dirs
    person = Answers("denied")
    with ScriptedServer(
        {"responses": [reply(call("bash", command=f"touch {out}/a")), {"content": "done"}]}
    ) as srv:
        session = _session(ws, srv.url, person)
        try:
            session.engine.run("touch a file")
        finally:
            session.close()
    assert not (out / "a").exists() and len(person.asked) == 1


def _listener() -> tuple[socket.socket, list[bytes]]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    got: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            got.append(conn.recv(64))
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return srv, got


def test_the_palette_network_grant_reaches_the_next_command(dirs: tuple[Path, Path]) -> None:
    # Boundary IV: the palette's grant is "any host", served by the harness's proxy; the host's
    # own loopback is never among "any host" (the sandbox's point), so the evidence that the
    # grant reached the command is the proxy's refusal the harness sent the model, read from
    # the server's side, and the listener still hears nothing.
    ws, _ = dirs
    listener, got = _listener()
    port = listener.getsockname()[1]
    knock = f"python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/', timeout=3)\""
    script = {
        "responses": [
            reply(call("bash", command=knock)),
            {"content": "done"},
            reply(call("bash", command=knock)),
            {"content": "done"},
        ]
    }
    refused = f"network: refused 127.0.0.1:{port}"
    try:
        with ScriptedServer(script) as srv:
            session = _session(ws, srv.url, Answers())
            try:
                session.engine.run("knock")
                assert got == [] and refused not in str(srv.requests)  # no network, no proxy
                session.set_network(True)
                session.engine.run("knock again")
            finally:
                session.close()
            assert refused in str(srv.requests[-1])
        assert got == []
    finally:
        listener.close()


def test_a_person_who_approves_everything_still_grants_no_kernel_setting(
    dirs: tuple[Path, Path],
) -> None:
    # The dialog offered "more room" at /proc/sys/vm/...: a writable bind of the host's sysctl.
    # Now no room there is offered, and none would be applied; checked on the host's value.
    ws, _ = dirs
    setting = Path("/proc/sys/vm/dirty_expire_centisecs")
    before = setting.read_text()
    other = str(int(before.split()[0]) + 1)
    person = Answers("approved_session", "approved_session", "approved_session")
    script = {
        "responses": [
            reply(call("bash", command=f"echo {other} > {setting}")),
            reply(call("bash", command=f"echo {other} > {setting}")),
            {"content": "done"},
        ]
    }
    try:
        with ScriptedServer(script) as srv:
            session = _session(ws, srv.url, person)
            try:
                session.engine.run("tune the kernel")
            finally:
                session.close()
        after = setting.read_text()
    finally:
        if setting.read_text() != before:
            setting.write_text(before)
    assert after == before
    assert not any("/proc" in str(r.scope) + str(getattr(r, "reason", "")) for r in person.asked)
