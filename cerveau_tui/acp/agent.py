"""The ACP agent: a client's sessions, each one of our Sessions, each prompt one turn of the engine.

Two entry paths, one engine (seed 003): the headless runner and the TUI differ in who supplies the
next instruction; so does this. `build_session` makes the session exactly as `cerveau run` does,
with the client as its approver (approver.py), and the bus's events go out as `session/update`s
(updates.py). The engine runs on a worker thread; the connection's loop only sends and receives.

The boundary stays ours. The client may offer to read and write files and to run commands for us
(`fs/*`, `terminal/*`): never used, whatever it advertises. Every command runs in our sandbox and
every write goes through our own tools; the client is told what ran. MCP servers the client names
in session/new are suggestions, said in a notice, never started: a client's list is not the
person's config, and a server started here would run outside the boundary.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp import schema as S
from acp.interfaces import Client

from .. import __version__
from ..bus import Emitter
from ..config import ConfigError, Settings
from ..protocol import (
    TURN_ERROR,
    NoticePayload,
    PlanReported,
    StopReason,
    TurnStarted,
    payload_of,
)
from ..protocol.base import Event
from ..session import Session
from ..text_safety import visible
from .approver import ClientApprover
from .inputs import prompt_text, suggestions, unsent
from .updates import Translator, Update, plan_update

if TYPE_CHECKING:  # the stack is imported at the first session that needs a server
    from ..stack.server import ManagedServer

#: A session's settings for a workspace, refused as the CLI refuses it (ConfigError).
SettingsFor = Callable[[Path], Settings]

DISCUSS, AUTOPILOT = "discuss", "autopilot"
MODES = S.SessionModeState(
    current_mode_id=AUTOPILOT,
    available_modes=[
        S.SessionMode(
            id=AUTOPILOT, name="Autopilot", description="the agent reads, edits and runs commands"
        ),
        S.SessionMode(
            id=DISCUSS, name="Discussion", description="read and plan only: no edits, no commands"
        ),
    ],
)

#: Our stop reasons as ACP's. A turn the harness stopped (a guard, the gate) ended its turn: its
#: reason is said in the answer; an error is a JSON-RPC error, never a quiet "end_turn".
STOP_REASONS: dict[StopReason, str] = {
    StopReason.COMPLETED: "end_turn",
    StopReason.INTERRUPTED: "cancelled",
    StopReason.STOPPED: "cancelled",
    StopReason.MAX_ITERATIONS: "max_turn_requests",
    StopReason.TOKEN_CEILING: "max_tokens",
}


@dataclass
class Live:
    """One ACP session: our Session, the updates on their way out, and a turn at a time."""

    session: Session
    approver: ClientApprover
    translator: Translator
    queue: asyncio.Queue[Update] = field(default_factory=asyncio.Queue)
    held: list[Update] = field(default_factory=list)  # before the client knows the session
    opened: bool = False
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)
    cancelled: bool = False  # this prompt was cancelled (maybe before its turn had begun)
    sender: asyncio.Task[None] | None = None

    @property
    def id(self) -> str:
        return self.session.bus.session_id

    def put(self, update: Update) -> None:
        if self.opened:
            self.queue.put_nowait(update)
        else:
            self.held.append(update)

    def open(self) -> None:
        if not self.opened:
            self.opened = True
            for u in self.held:
                self.queue.put_nowait(u)
            self.held.clear()


class CerveauAgent:
    """The Agent side of the SDK's connection (acp.interfaces.Agent)."""

    def __init__(self, settings_for: SettingsFor, *, pinned: Path | None = None) -> None:
        self.settings_for = settings_for
        self.pinned = Path(os.path.realpath(pinned)) if pinned is not None else None
        self.conn: Client | None = None
        self.live: dict[str, Live] = {}
        # The llama-servers this agent started, by what they load: one for every session, not
        # one per session/new (an editor opens a session per thread; each stays open until the
        # client hangs up, and each server held its model and window).
        self.servers: dict[tuple[str, str, int], str] = {}
        self.managed: list[ManagedServer] = []
        self._starting = asyncio.Lock()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # --- the protocol -----------------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
        **kwargs: Any,
    ) -> S.InitializeResponse:  # fmt: skip
        # What the client offers (fs, terminal) is read and left: our tools do the work.
        return S.InitializeResponse(
            protocol_version=1,
            agent_capabilities=S.AgentCapabilities(
                load_session=True,
                prompt_capabilities=S.PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=S.McpCapabilities(http=False, sse=False),
                session_capabilities=S.SessionCapabilities(list=S.SessionListCapabilities()),
            ),
            auth_methods=[],
            agent_info=S.Implementation(name="cerveau", title="cerveau", version=__version__),
        )

    async def new_session(
        self, cwd: str, additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None, **kwargs: Any,
    ) -> S.NewSessionResponse:  # fmt: skip
        live = await self._open(cwd, None, mcp_servers or [], additional_directories or [])
        return S.NewSessionResponse(session_id=live.id, modes=self._modes(live))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None, **kwargs: Any,
    ) -> S.LoadSessionResponse:  # fmt: skip
        if session_id in self.live:
            raise RequestError.invalid_params({"details": f"session {session_id} is open already"})
        live = await self._open(cwd, session_id, mcp_servers or [], additional_directories or [])
        # The conversation as it was, then its plan as it stands now: sent before the answer,
        # as ACP asks of session/load.
        replay = Translator(live.translator.workspace, replay=True)
        for ev in live.session.transcript():
            try:
                for u in replay(payload_of(ev)):
                    live.queue.put_nowait(u)
            except ValueError:  # a line of an older version: skipped, as the TUI skips it
                continue
        report = live.session.report()
        if report.steps:
            live.queue.put_nowait(plan_update(PlanReported.model_validate(report.to_json())))
        live.open()
        await live.queue.join()
        return S.LoadSessionResponse(modes=self._modes(live))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> S.ListSessionsResponse:
        from ..session.listing import list_sessions

        # Refused as session/new refuses it: relative, another folder than --workspace (its
        # titles are its person's first words), a folder the CLI refuses.
        where, _ = self._workspace(cwd or str(self.pinned or Path.cwd()))
        found = await asyncio.to_thread(list_sessions, where)
        return S.ListSessionsResponse(
            sessions=[
                S.SessionInfo(
                    session_id=s.id,
                    cwd=str(where),
                    title=visible(s.first_task) or None,  # an embedded file's text, maybe
                    updated_at=s.last_active,
                )
                for s in found
                if not s.foreign  # never resumed: not offered
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> S.SetSessionModeResponse:
        live = self._get(session_id)
        if mode_id not in (DISCUSS, AUTOPILOT):
            raise RequestError.invalid_params({"details": f"no mode {mode_id!r}"})
        live.session.set_discuss(mode_id == DISCUSS)  # the next turn's tools; said as a notice
        return S.SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> S.PromptResponse:
        live = self._get(session_id)
        if live.busy.locked():
            raise RequestError.invalid_request({"details": "a turn is running in this session"})
        async with live.busy:
            live.cancelled = False
            live.open()
            text = prompt_text(prompt, Path(live.translator.workspace))
            if (left := unsent(prompt, Path(live.translator.workspace))) is not None:
                live.session.bus.emit(NoticePayload(text=left, level="warning", source="acp"))
            outcome = await asyncio.to_thread(live.session.engine.run, text)
            await live.queue.join()  # every update of the turn is out before its answer
        if outcome.reason == TURN_ERROR:
            raise RequestError.internal_error({"details": outcome.message or "the turn failed"})
        usage = outcome.usage
        stop = STOP_REASONS.get(outcome.reason, "end_turn")
        return S.PromptResponse(
            stop_reason=stop,  # type: ignore[arg-type]
            usage=S.Usage(
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.completion_tokens,
                total_tokens=usage.prompt_tokens + usage.completion_tokens,
                cached_read_tokens=usage.cached_tokens or None,
            ),
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.live.get(session_id)
        if live is None:
            return
        live.cancelled = True
        live.session.engine.interrupt()  # kills a running command; denies a waiting dialog

    async def authenticate(self, method_id: str, **kwargs: Any) -> S.AuthenticateResponse:
        return S.AuthenticateResponse()

    async def close(self) -> None:
        """The client went away: every session closed (its log fsync'd, its server stopped)."""
        for live in list(self.live.values()):
            live.session.engine.interrupt()
            if live.sender is not None:
                live.sender.cancel()
            await asyncio.to_thread(live.session.close)
        self.live.clear()
        for server in self.managed:
            await asyncio.to_thread(server.stop)
        self.managed.clear()

    # --- sessions ---------------------------------------------------------------------------

    def _get(self, session_id: str) -> Live:
        live = self.live.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"details": f"no open session {session_id!r}"})
        return live

    def _modes(self, live: Live) -> S.SessionModeState:
        current = DISCUSS if live.session.settings.discuss else AUTOPILOT
        return MODES.model_copy(update={"current_mode_id": current})

    def _workspace(self, cwd: str) -> tuple[Path, Settings]:
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params({"details": f"cwd must be absolute: {cwd!r}"})
        ws = Path(os.path.realpath(cwd))
        if self.pinned is not None and ws != self.pinned:
            raise RequestError.invalid_params(
                {"details": f"cerveau acp was started for {self.pinned} (--workspace), not {ws}"}
            )
        try:
            return ws, self.settings_for(ws)
        except ConfigError as exc:  # the CLI's own refusals: /, a home, /tmp, a shared folder
            raise RequestError.invalid_params({"details": str(exc)}) from None

    async def _shared_server(self, settings: Settings) -> None:
        """The session's model server: the configured one, else the one this agent started for
        the same model and window (started here at the first session that needs it, and stopped
        when the client hangs up)."""
        if settings.server_url:
            return
        from ..stack.server import ensure_server, probe

        key = (str(settings.cache_dir), str(settings.model_path), settings.n_ctx)
        async with self._starting:
            known = self.servers.get(key)
            if known is None or not await asyncio.to_thread(probe, known):
                url, managed = await asyncio.to_thread(ensure_server, settings)
                if managed is not None:
                    self.managed.append(managed)
                self.servers[key] = known = url
        settings.server_url = known

    async def _open(
        self, cwd: str, resume: str | None, mcp: list[Any], extra_dirs: list[str]
    ) -> Live:
        from ..session import build_session
        from ..session.listing import ResumeError, resolve_session

        ws, settings = self._workspace(cwd)
        if resume is not None:
            try:
                resolved = resolve_session(ws, resume)  # a foreign log refused, as --resume does
            except ResumeError as exc:
                raise RequestError.invalid_params({"details": f"cannot resume: {exc}"}) from None
            if resolved != resume:  # "" and "last" are --continue's; ACP names the session
                raise RequestError.invalid_params(
                    {"details": f"no session {resume!r}: session/list gives their ids"}
                )
        loop = asyncio.get_running_loop()
        bus = Emitter()
        holder: list[Live] = []
        early: list[Update] = []
        translator = Translator(ws)

        def deliver(update: Update) -> None:  # on the loop: to the session once it exists
            if holder:
                holder[0].put(update)
            else:
                early.append(update)

        def sink(ev: Event) -> None:  # on whatever thread emits: the engine's, the builder's
            p = payload_of(ev)
            if isinstance(p, TurnStarted) and holder and holder[0].cancelled:
                holder[0].session.engine.interrupt()  # a cancel that came before it began
            for u in translator(p):
                loop.call_soon_threadsafe(deliver, u)

        bus.subscribe(sink)
        approver = ClientApprover(
            self._asker(loop, lambda: holder[0].id if holder else bus.session_id),
            bus,
            str(ws),
            timeout_s=settings.approval_timeout_s,
        )
        try:
            await self._shared_server(settings)
            session = await asyncio.to_thread(
                build_session, settings, bus=bus, approver=approver, resume=resume
            )
        except Exception as exc:  # noqa: BLE001 - a dead server, a held log: said to the client
            raise RequestError.internal_error(
                {"details": f"could not start a session: {exc}"}
            ) from None
        live = Live(session=session, approver=approver, translator=translator, held=early)
        approver.on_stop = session.engine.interrupt
        holder.append(live)  # on the loop, as `deliver` runs: nothing falls between the two
        for text in suggestions(mcp, extra_dirs, set(settings.mcp.servers)):
            bus.emit(NoticePayload(text=text, level="warning", source="acp"))
        live.sender = asyncio.create_task(self._send(live))
        self.live[live.id] = live
        return live

    def _asker(
        self, loop: asyncio.AbstractEventLoop, session_id: Callable[[], str]
    ) -> Callable[..., concurrent.futures.Future[Any]]:
        def ask(
            tool_call: S.ToolCallUpdate, options: list[S.PermissionOption]
        ) -> concurrent.futures.Future[Any]:
            assert self.conn is not None

            async def request() -> S.RequestPermissionResponse:
                live = self.live.get(session_id())
                if live is not None:
                    await live.queue.join()  # the call's own card reaches the client first
                assert self.conn is not None
                return await self.conn.request_permission(
                    session_id=session_id(), tool_call=tool_call, options=options
                )

            return asyncio.run_coroutine_threadsafe(request(), loop)

        return ask

    async def _send(self, live: Live) -> None:
        while True:
            update = await live.queue.get()
            try:
                if self.conn is not None:
                    await self.conn.session_update(session_id=live.id, update=update)
            except Exception:  # noqa: BLE001 - the client is gone; the turn still ends cleanly
                pass
            finally:
                live.queue.task_done()
