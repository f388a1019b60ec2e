"""When a call is given up: after a window with nothing new from the server, never at a total.

Measured: a server streaming `prompt_progress` for 7 minutes (a long prompt on a CPU) was stopped
at 302 s by a total deadline of 300 s and the turn was lost, while a server sending only
keep-alive comments ran to that same total. Now real progress (the prompt read further, a token,
reasoning, a tool call's bytes) restarts the window; a keep-alive comment, a repeated figure or a
token past the cap does not. A stream that progresses is bounded by the token cap and the reply's
byte caps (ReplyLimits), not by a clock.

Time is the injected clock's: the tests run a seven-minute prefill in virtual time. QuietWatch
alone has a thread (a silent server blocks the reading one).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlparse

from .constrained import ActionProgress, AnswerStream
from .sse import StreamAssembler
from .types import Completion, Delta, ErrorClass, ProviderError

#: From this much quiet on, the person is told (reply_progress `quiet_s`) before the call gives up.
QUIET_SHOWN_S = 15.0


@dataclass
class Deadline:
    """The no-progress window of one call, on the injected clock (retries share one: a retry
    does not restart it, only progress does). A call that never progresses (an extras request,
    a reply sent in one body) is thereby bounded by `window_s` in total."""

    window_s: float
    clock: Callable[[], float]
    last: float = field(init=False)  # the clock's reading at the last progress (or the start)
    comments: int = 0  # keep-alive comments since then

    def __post_init__(self) -> None:
        self.last = self.clock()

    def passed(self) -> bool:
        return self.quiet_s() > self.window_s

    def quiet_s(self) -> float:
        return max(0.0, self.clock() - self.last)

    def progressed(self) -> None:
        self.last = self.clock()
        self.comments = 0

    def commented(self) -> None:
        self.comments += 1


def server_name(base_url: str, llama: bool) -> str:
    """ "llama-server at 127.0.0.1:8080", or "the server at ..." when `/props` did not say."""
    parsed = urlparse(base_url)
    # Host and port only: a URL's user:password must not reach the chat and the session log.
    host = parsed.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    where = f"{host}:{parsed.port}" if parsed.port else host
    return f"{'llama-server' if llama else 'the server'} at {where}"


def last_said(done: Completion, prompt: tuple[int, int] | None, generated: int) -> str:
    """What the server last said that counted: the call being written, the tokens, the prompt."""
    if done.tool_calls:
        call = done.tool_calls[-1]
        return f"{call.name or 'a tool call'}, {len(call.arguments):,} characters of arguments"
    if generated:
        return f"{generated:,} tokens of the reply"
    if prompt is not None and prompt[1]:
        return f"prompt {min(prompt):,}/{prompt[1]:,}"
    return "nothing since the request was sent"


def quiet_error(
    deadline: Deadline, name: str, said: str, partial: Completion | None
) -> ProviderError:
    pinged = f", then {deadline.comments:,} keep-alive comment(s)" if deadline.comments else ""
    return ProviderError(
        f"{name} sent nothing new for {deadline.window_s:g} s; last: {said}{pinged}. Stopped: "
        "keep-alive comments are not progress. If the model is only slow and the server says "
        "nothing while it works, raise request_timeout_s",
        ErrorClass.DEADLINE,
        partial=partial,
    )


def shown_delta(
    delta: Delta, asm: StreamAssembler, answer: AnswerStream | None, action: ActionProgress | None
) -> Delta:
    """What the person sees of one chunk: the text, and where the reply stands. Constrained,
    the action is one JSON text: an answer's characters are shown, a tool call's progress."""
    shown = asm.progress(Delta(content=delta.content, reasoning=delta.reasoning, raw=asm.fresh))
    if answer is not None and action is not None:
        action.feed(delta.content)
        shown.content = answer.feed(delta.content)
        shown.tool_name, shown.tool_chars, shown.tool_head = action.name, action.chars, action.head
    return shown


def quiet_reporter(
    on_delta: Callable[[Delta], None] | None,
    asm: StreamAssembler,
    action: ActionProgress | None,
) -> Callable[[float], None] | None:
    """How the person hears of a quiet server: a progress that says where the reply stands (as
    the last one did) and, new, `quiet_s`."""
    if on_delta is None:
        return None

    def report(quiet: float) -> None:
        shown = asm.progress(Delta(quiet_s=quiet))
        if action is not None:
            shown.tool_name, shown.tool_chars, shown.tool_head = (
                action.name,
                action.chars,
                action.head,
            )
        on_delta(shown)

    return report


class QuietWatch:
    """Tells `report` how long the server has been quiet, from QUIET_SHOWN_S on and at most once
    a whole second: at each keep-alive comment, and from a thread of its own every `every_s`,
    because a server that sends nothing at all (vLLM reading a prompt, llama-server between its
    30 s pings) leaves the reading thread blocked in a read, and the person saw only a spinner.

    `with watch:` runs the thread for one call; without a `report` there is no thread."""

    def __init__(
        self, deadline: Deadline, report: Callable[[float], None] | None, every_s: float = 1.0
    ) -> None:
        self.deadline = deadline
        self._report = report
        self._every_s = every_s
        self._shown = 0  # the whole seconds of quiet last reported
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> QuietWatch:
        if self._report is not None:
            self._thread = threading.Thread(target=self._run, name="quiet-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a thread's traceback would be printed over the TUI
                return  # the call goes on; only the quiet is no longer told

    def progressed(self) -> None:
        with self._lock:
            self.deadline.progressed()
            self._shown = 0

    def commented(self) -> None:
        self.deadline.commented()
        self.check()

    def check(self) -> None:
        with self._lock:
            quiet = self.deadline.quiet_s()
            due = quiet >= QUIET_SHOWN_S and int(quiet) > self._shown
            if due:
                self._shown = int(quiet)
        if due and self._report is not None and not self._stop.is_set():
            self._report(quiet)
