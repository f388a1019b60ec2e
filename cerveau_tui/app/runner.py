"""The engine's thread: builds the session, then runs the person's turns and `!` commands one at
a time, and tears everything down on quit.

A plain, non-daemon `threading.Thread` rather than a Textual thread worker, because the app must
JOIN it on exit: a looping thread worker can keep the process alive after quit (an open Textual
issue), and a daemon thread would be killed with a llama-server child still running.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..protocol.describe import progress_text
from .messages import Item, JobDone, JobKind, Provisioning, SessionFailed, SessionReady

if TYPE_CHECKING:  # the session's machinery is imported when the engine thread builds it
    from ..session import Session

SessionFactory = Callable[["StartupProgress"], "Session"]


class Cancelled(Exception):
    """Raised from the progress callback when the person quits while the stack provisions."""


@dataclass(frozen=True)
class Job:
    """One thing for the engine thread to do to the session, in order with the turns: its kind
    (a failure's line names it), the action, and whether its end is said (a turn or a `!cmd`
    ends the app's `busy`; the others say only a failure)."""

    kind: JobKind
    act: Callable[[Session], object]
    said: bool = False


def _resolved_mode(session: Session) -> str:
    try:
        return session.engine.provider.resolved_mode()
    except Exception:  # the server's /props unreadable: say what was asked, not a guess
        return "auto"


class StartupProgress:
    """The progress callback handed to the factory (stack.errors.Progress: stage, fraction,
    line), shown as the chat's provisioning line, with a `sleep` that quitting interrupts: a
    start-up waiting for a server that does not answer must not hold the app's exit for 15 s."""

    def __init__(self, put: Callable[[Item], None], stopping: threading.Event) -> None:
        self._put, self._stopping = put, stopping

    def __call__(self, stage: str, fraction: float | None, line: str) -> None:
        if self._stopping.is_set():
            raise Cancelled("quit while provisioning")
        self._put(Provisioning(progress_text(stage, fraction, line)))

    def sleep(self, seconds: float) -> None:
        if self._stopping.wait(seconds):
            raise Cancelled("quit while waiting for the server")


class SessionRunner:
    def __init__(
        self,
        factory: SessionFactory,
        put: Callable[[Item], None],
        cancel_approvals: Callable[[], None] = lambda: None,
    ) -> None:
        self._factory = factory
        self._put = put
        self._cancel_approvals = cancel_approvals
        self._jobs: queue.Queue[Job | None] = queue.Queue()  # None: stop
        self._stopping = threading.Event()
        self.session: Session | None = None
        self._closed = False
        self._close_lock = threading.Lock()
        self.thread = threading.Thread(target=self._main, name="cerveau-engine", daemon=False)

    def start(self) -> None:
        self.thread.start()

    # --- UI thread ---------------------------------------------------------------------------
    def run(self, text: str) -> None:
        self._jobs.put(Job("run", lambda s: s.engine.run(text), said=True))

    def exec(self, command: str) -> None:
        self._jobs.put(Job("exec", lambda s: s.engine.exec(command), said=True))

    def compact(self) -> None:
        self._jobs.put(Job("compact", lambda s: s.engine.compact()))

    def set_network(self, on: bool) -> None:
        self._jobs.put(Job("network", lambda s: s.set_network(on)))

    def set_discuss(self, on: bool) -> None:
        self._jobs.put(Job("discuss", lambda s: s.set_discuss(on)))

    def call(self, action: Callable[[Session], object]) -> None:
        """Any other session action that must not race a turn (load a skill, set the gate)."""
        self._jobs.put(Job("call", action))

    def steer(self, text: str) -> bool:
        if self.session is None:
            return False
        self.session.engine.steer(text)
        return True

    def interrupt(self) -> None:
        # Approvals first: a turn blocked on the modal would otherwise wait for its timeout.
        self._cancel_approvals()
        if self.session is not None:
            self.session.engine.interrupt()

    def stop_thinking(self) -> None:
        if self.session is not None:
            self.session.engine.stop_thinking()

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Cancel the turn, close the session (background processes, managed server), join.
        Returns True when the thread is gone."""
        self._stopping.set()
        # Drop queued jobs: quitting must not start a turn nobody will see.
        while True:
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        self._jobs.put(None)
        self.interrupt()
        if self.thread.is_alive():
            self.thread.join(timeout_s)
        if self.thread.is_alive() and self.session is not None:
            # Stuck inside a request: closing the session kills the server and its sockets.
            self._close_session()
            self.thread.join(timeout_s)
        return not self.thread.is_alive()

    # --- engine thread -----------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self.session = self._factory(StartupProgress(self._put, self._stopping))
        except Cancelled:
            return
        except Exception as exc:  # shown in the chat; the app stays usable to read it and quit
            self._put(SessionFailed(f"{type(exc).__name__}: {exc}"))
            return
        try:
            try:
                status = dict(self.session.status())
            except Exception as exc:
                status = {"error": str(exc)}
            if status.get("action_mode") == "auto":  # the header says what runs, not "auto"
                status["action_mode"] = _resolved_mode(self.session)
            self._put(SessionReady(status))
            while not self._stopping.is_set():
                job = self._jobs.get()
                if job is None:
                    break
                self._do(job)
        finally:
            self._close_session()

    def _do(self, job: Job) -> None:
        assert self.session is not None
        try:
            job.act(self.session)
        except Exception as exc:
            self._put(JobDone(job.kind, error=f"{type(exc).__name__}: {exc}"))
        else:
            if job.said:
                self._put(JobDone(job.kind))

    def _close_session(self) -> None:
        with self._close_lock:
            if self._closed or self.session is None:
                return
            self._closed = True
        try:
            self.session.close()
        except Exception:
            pass
