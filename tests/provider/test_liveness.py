"""A call ends when the server has said nothing new for `request_timeout_s`, never at a fixed total.

Measured before: a server streaming `prompt_progress` for 7 minutes was stopped at 302 s by a
total deadline of 300 s (the turn lost), and a server sending only keep-alive comments ran to
that same total. Each case runs over real loopback HTTP against the scripted server, in virtual
time: the provider's clock is injected and moves a step at every look, so a seven-minute prefill
takes a fraction of a second and nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.liveness import QUIET_SHOWN_S, Deadline, server_name
from cerveau_tui.provider.sse import StreamAssembler
from cerveau_tui.provider.types import Completion, Delta, ErrorClass, ProviderError
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .test_hostile_server import HUNG_AFTER_S, provider

WINDOW_S = 120.0
#: Virtual seconds per look at the clock: a few looks per chunk, far under the window.
STEP_S = 5.0


class StepClock:
    """Time that passes only when someone looks: each reading is STEP_S after the last."""

    def __init__(self, step: float = STEP_S) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


#: A prompt long enough for 9,000 tokens: no prompt has more tokens than its request has bytes,
#: and a figure past that is not believed (a server counting up forever is not progress).
LONG = [{"role": "user", "content": "Read all of this. " * 2_500}]


def outcome(p: Any, **kw: Any) -> Any:
    """What one call ended with, on a thread so a call that hangs fails instead of hanging."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(p.complete(LONG, [], max_tokens=64, **kw))
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever escaped
            box.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HUNG_AFTER_S)
    assert not t.is_alive(), "the call did not end"
    return box[0]


def serve(script: dict[str, Any], **kw: Any) -> ScriptedServer:
    return ScriptedServer(script, n_ctx=32768, **kw)


def slow_prefill(total: int = 9000, batch: int = 64, **reply: Any) -> dict[str, Any]:
    return {"prefill": {"total": total, "batch": batch, "every_s": 0.001}, **reply}


def liveness_provider(url: str, clock: StepClock, **kw: Any) -> Any:
    return provider(url, clock=clock, timeout_s=600.0, deadline_s=WINDOW_S, **kw)


def test_a_prefill_that_streams_progress_past_the_window_completes() -> None:
    clock = StepClock()
    with serve({"responses": [slow_prefill(content="the answer")]}) as srv:
        got = outcome(liveness_provider(srv.url, clock))
    assert isinstance(got, Completion) and got.content == "the answer"
    # Longer than the window and than the old 300 s total: only progress kept it going.
    assert clock.now > 7 * 60 > WINDOW_S


def test_a_keepalive_only_stream_ends_after_the_window() -> None:
    clock = StepClock()
    with serve({"responses": [{"keepalive": 0.01}]}) as srv:
        got = outcome(liveness_provider(srv.url, clock))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    assert not got.retryable
    assert f"sent nothing new for {WINDOW_S:g} s" in got.message
    assert "last: nothing since the request was sent" in got.message


def test_the_reason_names_the_server_and_what_it_last_said() -> None:
    clock = StepClock()
    quiet_after_reading = {"keepalive": 0.01, "prefill": {"total": 9000, "batch": 4096}}
    with serve({"responses": [quiet_after_reading]}) as srv:
        p = liveness_provider(srv.url, clock)
        p.props()  # as every session does first: now the provider knows it is llama-server
        got = outcome(p)
        where = srv.url.split("://", 1)[1]
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    assert f"llama-server at {where} sent nothing new for 120 s; last: prompt 9,000/9,000" in (
        got.message
    )
    assert "keep-alive comment(s)" in got.message


def test_a_server_without_props_is_named_as_the_server() -> None:
    clock = StepClock()
    with serve({"responses": [{"keepalive": 0.01}]}, extras=False) as srv:
        p = liveness_provider(srv.url, clock)
        p.props()
        got = outcome(p)
    assert isinstance(got, ProviderError) and "the server at 127.0.0.1:" in got.message


def test_keepalive_comments_are_reported_as_quiet_before_the_call_gives_up() -> None:
    clock = StepClock()
    seen: list[Delta] = []
    with serve({"responses": [{"keepalive": 0.01}]}) as srv:
        got = outcome(liveness_provider(srv.url, clock), on_delta=seen.append)
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    quiet = [d.quiet_s for d in seen]
    assert quiet and quiet == sorted(quiet)
    assert quiet[0] >= QUIET_SHOWN_S and quiet[-1] <= WINDOW_S + 3 * STEP_S


def test_tokens_past_the_cap_do_not_keep_a_stream_alive() -> None:
    """A server ignoring the token cap is stopped by the window, long before the byte cap."""
    clock = StepClock()
    with serve({"responses": [{"endless": "more "}]}) as srv:
        got = outcome(liveness_provider(srv.url, clock))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    assert "tokens of the reply" in got.message


def test_a_repeated_prompt_figure_is_not_progress() -> None:
    asm = StreamAssembler()
    figure = {"choices": [], "prompt_progress": {"total": 9000, "processed": 512}}
    asm.feed(figure)
    assert asm.advanced
    asm.feed(figure)
    assert not asm.advanced and asm.moved


def test_a_prompt_figure_past_its_first_total_is_not_progress() -> None:
    asm = StreamAssembler()
    asm.feed({"prompt_progress": {"total": 100, "processed": 100}})
    asm.feed({"prompt_progress": {"total": 10**9, "processed": 200}})
    assert not asm.advanced


def test_progress_restarts_the_window_and_comments_do_not() -> None:
    now = [0.0]
    d = Deadline(3.0, lambda: now[0])
    now[0] = 2.5
    d.commented()
    assert not d.passed()
    now[0] = 3.5
    assert d.passed()  # the comment did not restart it
    d.progressed()
    now[0] = 6.0
    assert not d.passed() and d.quiet_s() == 2.5


# -- a whole turn ----------------------------------------------------------------------------


def run_turn(tmp_path: Path, entry: dict[str, Any]) -> tuple[Recorder, str]:
    """One headless turn against the scripted server, in virtual time; (events, server url)."""
    with serve({"responses": [entry, {"content": "never asked"}]}) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none")
        bus = Emitter()
        rec = Recorder(bus)
        p = liveness_provider(srv.url, StepClock(), max_retries=0)
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=p)
        s.engine.run("Read all of this. " * 2_500)
        s.close()
        return rec, srv.url


def test_a_turn_survives_a_prefill_longer_than_the_window(tmp_path: Path) -> None:
    rec, _ = run_turn(tmp_path, slow_prefill(content="read it all"))
    ended = rec.of("turn_ended")[-1].payload
    assert ended["reason"] == "completed", ended
    assert "".join(e.payload["text"] for e in rec.of("token")) == "read it all"


def test_a_keepalive_only_turn_ends_with_the_named_reason_after_saying_quiet(
    tmp_path: Path,
) -> None:
    rec, url = run_turn(tmp_path, {"keepalive": 0.01})
    quiet = [e.payload["quiet_s"] for e in rec.of("reply_progress") if e.payload.get("quiet_s")]
    assert quiet and quiet[0] >= QUIET_SHOWN_S
    ended = rec.of("turn_ended")[-1].payload
    where = url.split("://", 1)[1]
    assert f"llama-server at {where} sent nothing new for 120 s" in ended["message"], ended


def test_a_server_that_sends_nothing_at_all_is_reported_quiet() -> None:
    """No byte, not even a keep-alive, for a whole (virtual) window: the person still hears it."""
    clock = StepClock()
    seen: list[Delta] = []
    with serve({"responses": [{"keepalive": 1.0}]}) as srv:  # the first byte after 1 s (real)
        p = liveness_provider(srv.url, clock, quiet_every_s=0.01)
        got = outcome(p, on_delta=seen.append)
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    assert "keep-alive" not in got.message.split("Stopped")[0]  # none was read before the end
    quiet = [d.quiet_s for d in seen]
    assert quiet and quiet[0] >= QUIET_SHOWN_S and quiet == sorted(quiet)


def test_the_servers_name_never_carries_the_urls_credentials() -> None:
    assert server_name("http://me:secret@10.0.0.5:8000/v1", llama=False) == (
        "the server at 10.0.0.5:8000"
    )
    assert server_name("http://[::1]:8080", llama=True) == "llama-server at [::1]:8080"
