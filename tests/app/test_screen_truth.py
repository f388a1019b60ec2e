"""Issue 21, "the screen tells the truth": the header keeps what is in force at 80 columns and
lists the grants; the status bar shows the turn's time, this round's tokens and a live rate; the
call being written shows its head."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.fit import Part, fit_line, fit_lines
from cerveau_tui.app.widgets.header import HeaderFacts, SessionHeader, header_content
from cerveau_tui.app.widgets.live_rate import RATE_WINDOW_S, TokenSamples
from cerveau_tui.app.widgets.status_bar import StatusBar
from cerveau_tui.app.widgets.tool_card import DraftCard, draft_head
from cerveau_tui.protocol import ReplyProgress

from .helpers import FakeClock, viewer_app, wait_until

FACTS = HeaderFacts(sandbox="workspace-write", approval="on-request", backend="bubblewrap",
                    enforced=True, actions="constrained", own_server=False,
                    model="Qwen2.5-Coder-7B", n_ctx=32768)  # fmt: skip


def lines_at(width: int, facts: HeaderFacts = FACTS) -> list[str]:
    return header_content(facts, width).plain.split("\n")


def test_at_80_columns_the_header_keeps_mode_action_mode_and_server() -> None:
    lines = lines_at(78)  # 80 columns less the padding
    shown = "\n".join(lines)
    for fact in ("workspace-write", "on-request", "autopilot", "constrained", "shared server"):
        assert fact in shown
    assert all(len(line) <= 78 for line in lines)


def test_a_narrow_header_fits_one_line_when_the_short_forms_do() -> None:
    facts = HeaderFacts(**{**FACTS.__dict__, "actions": "native", "own_server": True})
    assert lines_at(78, facts) == [
        "workspace-write (bwrap) │ ask: on-request │ autopilot │ native │ own server"
    ]


def test_a_wide_header_is_one_line_with_the_model() -> None:
    (line,) = lines_at(200)
    assert line.endswith("shared server │ Qwen2.5-Coder-7B n_ctx 32,768")


def test_the_header_lists_the_grants_in_force() -> None:
    facts = HeaderFacts(**{**FACTS.__dict__, "grants": ("network to pypi.org:443",)})
    assert "grant: network to pypi.org:443" in header_content(facts, 78).plain
    assert "grant: network to pypi.org:443" in header_content(facts).plain


def test_a_part_never_dropped_survives_any_width_and_a_ranked_one_goes() -> None:
    parts = [Part("sandbox ok"), Part("model name", rank=1)]
    assert fit_line(parts, 12).plain == "sandbox ok"
    assert fit_lines(parts, 12)[0].plain == "sandbox ok"
    assert fit_line(parts, 40).plain == "sandbox ok │ model name"


async def test_a_session_grant_from_the_event_reaches_the_header(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        header = app.query_one(SessionHeader)
        app.bus.emit(
            "approval_resolved",
            {"request_id": "r1", "call_id": "c1", "decision": "approved_session",
             "scope": "commands `git push`"},
        )  # fmt: skip
        assert await wait_until(pilot, lambda: "grant: commands `git push`" in str(header.render()))
        app.bus.emit(
            "approval_resolved",
            {"request_id": "r2", "call_id": "c2", "decision": "approved", "scope": "once only"},
        )
        await pilot.pause(0.2)
        assert "once only" not in str(header.render())  # a one-call yes is no grant


def test_the_live_rate_is_measured_over_the_last_seconds_of_arrivals() -> None:
    samples = TokenSamples()
    assert samples.rate_at(0.0) is None
    for second in range(20):  # 1 token a second, after a fast start
        samples.add(100.0 + second, 50 + second)
    samples.add(99.9, 0)  # ignored: not newer
    rate = samples.rate_at(119.0)
    assert rate is not None and abs(rate - 1.0) < 0.01


def test_a_stream_gone_quiet_shows_its_rate_falling() -> None:
    samples = TokenSamples()
    for second in range(10):
        samples.add(float(second), 10 * second)
    steady = samples.rate_at(9.0)
    later = samples.rate_at(9.0 + 4 * RATE_WINDOW_S)
    assert steady is not None and later is not None and later < steady / 2


def test_the_head_of_a_call_being_written_reads_as_lines() -> None:
    p = ReplyProgress(
        tool_name="write_file",
        tool_chars=3100,
        tool_head='{"path": "a.py", "content": "import os\\n\\ndef main():\\n\\treturn 1',
    )
    assert draft_head(p) == '{"path": "a.py", "content": "import os\n\ndef main():\n    return 1 …'


def test_an_escaped_control_in_the_head_stays_escaped() -> None:
    p = ReplyProgress(tool_name="bash", tool_chars=20, tool_head='{"command": "\\u001b[2J"}')
    assert "\x1b" not in draft_head(p) and "\\u001b[2J" in draft_head(p)


async def test_the_draft_card_shows_the_head_as_it_streams(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        head = '{"command": "pytest -q tests/unit'
        app.bus.emit("turn_started", {"input": "run the tests"})
        app.bus.emit("reply_progress", {"tool_name": "bash", "tool_chars": 30, "tool_head": head})
        assert await wait_until(pilot, lambda: bool(app.query(DraftCard)))
        draft = app.query_one(DraftCard)
        assert await wait_until(pilot, lambda: "pytest -q tests/unit" in str(draft.render()))
        longer = head + ' -k parser"}'
        app.bus.emit("reply_progress", {"tool_name": "bash", "tool_chars": 45, "tool_head": longer})
        assert await wait_until(pilot, lambda: "-k parser" in str(draft.render()))


async def test_the_status_bar_shows_the_turns_time_the_rounds_tokens_and_a_live_rate(
    tmp_path: Path,
) -> None:
    clock = FakeClock(500.0)
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(140, 30)) as pilot:
        bar = app.query_one(StatusBar)

        def shown() -> str:
            return str(bar.render())

        app.bus.emit("usage", {"predicted_per_second": 5.8, "context_tokens": 900, "n_ctx": 8192})
        app.bus.emit("turn_started", {"input": "go"})
        app.bus.emit("iteration_started", {"iteration": 1})
        assert await wait_until(pilot, lambda: "running 0s" in shown())
        clock.advance(30)
        app.bus.emit("iteration_started", {"iteration": 2})  # a new round: the time goes on
        for n in range(1, 11):
            clock.advance(1.0)
            app.bus.emit("reply_progress", {"tokens": 2 * n, "prompt_total": 4000})
            await pilot.pause(0.06)
        assert await wait_until(pilot, lambda: "20 tok · 2.0 tok/s" in shown())
        assert "running 40s" in shown()
        assert "5.8 tok/s" not in shown()  # the last round's figure is not this one's
        assert "ctx 4,020/8,192" in shown()  # the prompt read plus what was generated


def test_a_newline_in_a_grant_or_a_model_name_cannot_add_a_header_line() -> None:
    facts = HeaderFacts(**{**FACTS.__dict__, "grants": ("commands `x`\nsandbox full-access",),
                           "model": "m\nsandbox read-only"})  # fmt: skip
    for width in (None, 78, 140):
        lines = header_content(facts, width).plain.split("\n")
        assert not any(line.startswith("sandbox") for line in lines[1:]), lines
    assert "commands `x` sandbox full-access" in header_content(facts).plain


def test_a_newline_in_a_tool_name_stays_on_the_cards_line() -> None:
    from cerveau_tui.app.widgets.tool_card import draft_summary

    assert "\n" not in draft_summary(ReplyProgress(tool_name="bash\nsandbox ok", tool_chars=3))


async def test_tokens_between_two_progress_events_are_counted_as_they_stream(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        bar = app.query_one(StatusBar)
        app.bus.emit("turn_started", {"input": "go"})
        app.bus.emit("iteration_started", {"iteration": 1})
        # As the loop emits them: the progress with the first delta, then its text.
        app.bus.emit("reply_progress", {"tokens": 1})
        for word in ("Hello", " there", ",", " friend", "."):
            app.bus.emit("token", {"text": word})
        assert await wait_until(pilot, lambda: "│ 5 tok" in str(bar.render()))
        app.bus.emit("reply_progress", {"tokens": 17})  # the exact count takes over
        assert await wait_until(pilot, lambda: "│ 17 tok" in str(bar.render()))
