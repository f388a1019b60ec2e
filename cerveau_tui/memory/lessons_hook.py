"""LessonsHook: lessons mined at the end of each turn, recalled at the start of the next session.

It follows the bus (every event, keeping only the bounded part mining needs: memory/lessons.py's
`observe`), mines after the turn ended (`after_turn`, off the answer's path), stores new pairs and
says so (`lessons` event), and at the first model call of a session puts the relevant stored
ones in the reminder (never the system prompt: the cached prefix must not change with memory).

Placed first among the hooks: the gate's red precheck runs in its `on_turn_start`, and its check
event (the errors the session starts with, which recall ranks by) must reach a subscriber that
is already listening.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from .. import protocol as P
from ..bus import Emitter
from ..hooks import Hook, Stop, TurnContext
from ..protocol import Event
from .lessons import Lesson, Seen, consolidate_lessons, observe, recall, render_recall, words_of
from .store import LessonStore

#: Events kept for mining: a long session keeps its most recent ones.
KEEP_EVENTS = 4000


class LessonsHook(Hook):
    name = "lessons"

    def __init__(
        self,
        workspace: Path,
        *,
        stack: Callable[[Path], str] = lambda _ws: "",
        opener: Callable[[Path], LessonStore] = LessonStore,
        max_lines: int = 5,
        max_chars: int = 1200,
    ) -> None:
        self.workspace = Path(workspace)
        self._stack_of = stack
        self._stack: str | None = None
        self._opener = opener
        self._store: LessonStore | None = None
        self.max_lines = max_lines
        self.max_chars = max_chars
        self._seen: deque[Seen] = deque(maxlen=KEEP_EVENTS)
        self._lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        self._bus: Emitter | None = None
        self._task = ""
        self._recalled = False
        self._stored: set[str] = set()  # keys stored (or counted again) by this session

    # --- following the session ----------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        seen = observe(event)
        if seen is not None:
            with self._lock:
                self._seen.append(seen)

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        if self._unsubscribe is None:
            self._bus = ctx.bus
            self._unsubscribe = ctx.bus.subscribe(self)
        self._task = task
        return None

    def stack(self) -> str:
        if self._stack is None:
            try:
                self._stack = self._stack_of(self.workspace)
            except Exception:  # noqa: BLE001 - an unknown stack only weakens relevance
                self._stack = ""
        return self._stack

    # --- recall ---------------------------------------------------------------------------------

    def reminders(self, ctx: TurnContext) -> list[str]:
        if self._recalled:
            return []
        self._recalled = True
        if self._store is None and not LessonStore.exists(self.workspace):
            return []  # nothing learnt here yet; reading must not create the database
        with self._lock:
            keys = {k for s in self._seen if s.kind == "check" for k in s.keys}
        chosen = recall(
            self._open().lessons(),
            stack=self.stack(),
            words=words_of(self._task),
            error_keys=keys,
            max_lines=self.max_lines,
            max_chars=self.max_chars,
        )
        text = render_recall(chosen)
        return [text] if text else []

    # --- mining ---------------------------------------------------------------------------------

    def after_turn(self, ctx: TurnContext, reason: str) -> None:
        with self._lock:
            seen = list(self._seen)
        drafts = [d for d in consolidate_lessons(seen, self.stack()) if d.key not in self._stored]
        if not drafts:
            return
        store = self._open()
        new: list[Lesson] = []
        for d in drafts:
            stored = store.add(d)
            self._stored.add(d.key)
            if stored is not None and stored[1]:
                new.append(stored[0])
        for aside in store.take_set_aside():  # aborted or corrupt mid-session: said once
            ctx.emit(P.NoticePayload(text=str(aside), level="warning", source="boundary"))
        if new:
            ctx.emit(
                P.LessonsPayload(
                    stored=[P.StoredLesson(id=x.id, kind=x.kind, text=x.text) for x in new],
                    text="learnt: " + "; ".join(x.text for x in new),
                ),
            )

    # --- the person's view ----------------------------------------------------------------------

    def lessons(self) -> list[Lesson]:
        if self._store is None and not LessonStore.exists(self.workspace):
            return []
        return self._open().lessons()

    def forget(self, lesson_id: int) -> bool:
        if self._store is None and not LessonStore.exists(self.workspace):
            return False
        return self._open().forget(lesson_id)

    def _open(self) -> LessonStore:
        # The turn's background mining and the person's palette may both be first to ask.
        with self._open_lock:
            if self._store is None:
                self._store = self._opener(self.workspace)
                for moved in self._store.moved_aside:  # a planted link: said, as the session does
                    if self._bus is not None:
                        self._bus.emit(
                            P.NoticePayload(text=str(moved), level="warning", source="boundary"),
                        )
            return self._store

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._store is not None:
            self._store.close()
            self._store = None
