"""The two hooks a headless run cannot show: approval_waiting (a dialog must be waiting, so the
session is built here with the TUI's approver) and pre_compact (the person's /compact)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, BusApprover
from cerveau_tui.protocol import Event
from cerveau_tui.session import Session, build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import Place, answer, call, toml_list

#: How long a test waits for a file a hook writes: the bound of a broken run, not a measurement.
PATIENCE_S = 60.0


@contextmanager
def session(
    place: Place, responses: list[dict[str, Any]], bus: Emitter, approver: Any = None
) -> Iterator[Session]:
    with ScriptedServer({"responses": responses}) as srv:
        settings = load_settings(
            place.ws,
            flags={"server_url": srv.url},
            environ={},
            user_config=place.person / "config.toml",
        )
        s = build_session(settings, bus=bus, approver=approver)
        try:
            yield s
        finally:
            s.close()


def _wait_for(path: Any) -> bool:
    deadline = time.monotonic() + PATIENCE_S
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_approval_waiting_notifies_on_the_host_without_delaying_the_dialog(place: Place) -> None:
    out = place.out
    # The notifier holds on until the test says go, which it says only once the dialog is up:
    # a notifier run before the dialog would keep it from ever opening (and time out).
    notify = [
        "sh",
        "-c",
        f"cat > {out}/notified.json; while [ ! -e {out}/go ]; do sleep 0.02; done",
    ]
    place.config(
        f"[[hooks.approval_waiting]]\ncommand = {toml_list(notify)}\n"
        f'where = "host"\ntimeout_s = {PATIENCE_S}\nmatch = "write_file"\n'
    )
    bus = Emitter()
    approver = BusApprover(bus, timeout_s=PATIENCE_S)
    seen: list[Event] = []
    facts: dict[str, Any] = {}

    def person(request_id: str) -> None:
        facts["notified_while_open"] = _wait_for(out / "notified.json")
        facts["ran_before_go"] = [e for e in seen if e.type == "hook_ran"]
        (out / "go").touch()
        approver.resolve(request_id, ApprovalDecision("denied", "no"))

    def listen(e: Event) -> None:
        seen.append(e)
        if e.type == "approval_requested":
            threading.Thread(target=person, args=(e.payload["request_id"],)).start()

    bus.subscribe(listen)
    target = out / "elsewhere.txt"
    script = [call("write_file", path=str(target), content="x"), answer()]
    with session(place, script, bus, approver) as s:
        s.engine.run("go")
        # The notifier ends on its own once told go; the session's close would kill it.
        deadline = time.monotonic() + PATIENCE_S
        while not any(e.type == "hook_ran" for e in seen) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert facts == {"notified_while_open": True, "ran_before_go": []}
    assert not target.exists()  # denied
    event = json.loads((out / "notified.json").read_text())
    assert event["event"] == "approval_waiting" and event["tool"]["name"] == "write_file"
    assert str(target) in event["approval"]["summary"] + " ".join(event["approval"]["paths"])
    (ran,) = [e.payload for e in seen if e.type == "hook_ran"]
    assert (ran["event"], ran["outcome"], ran["where"]) == ("approval_waiting", "ok", "host")


def test_pre_compact_runs_before_a_compaction_and_its_stdout_reaches_the_model(
    place: Place,
) -> None:
    out = place.out
    hook = ["sh", "-c", f"cat > {out}/compact.json; echo 'keep in mind: the API is frozen'"]
    place.config(f'[[hooks.pre_compact]]\ncommand = {toml_list(hook)}\nwhere = "host"\n')
    bus = Emitter()
    script = [
        call("write_file", path="a.txt", content="a"),
        call("write_file", path="b.txt", content="b"),
        answer("first done"),
        answer("a summary of the earlier rounds"),  # the compaction's own summary call
        answer("second done"),
        answer("spare"),
    ]
    requests: list[dict[str, Any]] = []
    with ScriptedServer({"responses": script}) as srv:
        settings = load_settings(
            place.ws, flags={"server_url": srv.url}, environ={},
            user_config=place.person / "config.toml",
        )  # fmt: skip
        s = build_session(settings, bus=bus)
        try:
            s.engine.run("first")
            s.engine.compact(keep_rounds=1)
            s.engine.run("second")
        finally:
            s.close()
        requests = list(srv.requests)
    event = json.loads((out / "compact.json").read_text())
    assert (event["event"], event["reason"]) == ("pre_compact", "person")
    assert "keep in mind: the API is frozen" in json.dumps(requests[-1]["messages"])
