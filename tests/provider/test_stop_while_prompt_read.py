"""Stop while the server reads the prompt (issue 33: Ctrl+C then took 25.8 s): the server sends
nothing at all, not even its headers, so a flag checked between reads is never looked at. The
connection is shut from another thread (provider/hangup.py): the call ends, and the server sees
the hang-up (a real llama-server then drops the task and frees the slot).

No timing assertion: the bounds below fail only on a hang (the server stays silent for far
longer than any of them)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import ErrorClass, ProviderError
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

ASK = [{"role": "user", "content": "Do it."}]
SILENT_S = 20.0  # the prefill the stop interrupts; every bound below is well under it
HUNG_S = 10.0


def silent_server() -> ScriptedServer:
    return ScriptedServer({"responses": [{"content": "read at last", "silent_s": SILENT_S}]})


def wait_for(cond: Any, within_s: float = HUNG_S) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return bool(cond())


def test_a_stop_during_a_silent_prompt_read_ends_the_call_as_cancelled() -> None:
    cancel = threading.Event()
    box: list[Any] = []
    with silent_server() as srv:
        p = LlamaProvider(srv.url, max_retries=0, sleep=lambda _s: None)

        def run() -> None:
            try:
                box.append(p.complete(ASK, [], max_tokens=16, cancel=cancel))
            except BaseException as exc:  # noqa: BLE001 - the test inspects whatever escaped
                box.append(exc)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        time.sleep(0.3)
        cancel.set()
        t.join(HUNG_S)
        assert not t.is_alive(), "the call still waits on the silent server"
        got = box[0]
        assert isinstance(got, ProviderError) and got.error_class == ErrorClass.CANCELLED
        assert wait_for(lambda: srv.state.hung_up == 1), "the server never saw the hang-up"
        # Dropped, not retried: one request reached the server.
        assert len(srv.requests) == 1


def test_without_a_stop_the_silent_server_is_waited_for() -> None:
    # The control: the same silence, shorter, and no stop; the answer arrives and nobody hung up.
    with ScriptedServer({"responses": [{"content": "read at last", "silent_s": 0.5}]}) as srv:
        done = LlamaProvider(srv.url, max_retries=0).complete(ASK, [], max_tokens=16)
        assert done.content == "read at last" and srv.state.hung_up == 0


def test_an_interrupt_during_a_silent_prompt_read_returns_the_engine(tmp_path: Path) -> None:
    with silent_server() as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
        session = build_session(
            settings, bus=Emitter(), approver=ApproveAll(), provider=LlamaProvider(srv.url)
        )
        try:
            t = threading.Thread(target=session.engine.run, args=("read this",), daemon=True)
            t.start()
            assert wait_for(lambda: len(srv.requests) == 1), "the request never reached the server"
            time.sleep(0.3)
            session.engine.interrupt()
            t.join(HUNG_S)
            assert not t.is_alive(), "the engine still waits on the silent server"
            assert wait_for(lambda: srv.state.hung_up == 1), "the server never saw the hang-up"
        finally:
            session.close()
