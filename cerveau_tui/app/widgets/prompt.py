"""The multi-line prompt: Enter sends, Shift+Enter or Ctrl+J inserts a newline, Up/Down at the
edges walk the history, `?` on an empty prompt opens the help (typed anywhere else it is a
character: the prompt has focus nearly always, and questions end in `?`). Keys typed while a
dialog was still arming are replayed here (`replay_key`, screens/armed.py), so a person who kept
typing loses nothing.

The history is kept per workspace in `.cerveau/prompt-history` (HISTORY_REL): a person who
restarts the app in the same project gets their earlier prompts back with Up. Written atomically
beneath the workspace, never through a link; bounded (HISTORY_LIMIT entries, HISTORY_MAX_BYTES
read); a file that cannot be read or written costs the history, never the prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from ...state_home import locate
from ...workspace.io.beneath import atomic_write_beneath, read_bytes_beneath

HISTORY_REL = ".cerveau/prompt-history"
HISTORY = "prompt-history"  # in the workspace's state (state_home.locate): HISTORY_REL by default
HISTORY_LIMIT = 500
HISTORY_MAX_BYTES = 1 << 20


@dataclass
class PromptHistory:
    entries: list[str]
    limit: int = HISTORY_LIMIT
    workspace: Path | None = None  # where it persists; None: this run only
    problem: str = ""  # why it could not be read or saved, once
    _pos: int | None = None  # None: editing a new entry
    _draft: str = field(default="", repr=False)

    @classmethod
    def load(cls, workspace: Path, limit: int = HISTORY_LIMIT) -> PromptHistory:
        history = cls([], limit, workspace)
        try:
            raw = json.loads(read_bytes_beneath(*locate(workspace, HISTORY), HISTORY_MAX_BYTES))
        except FileNotFoundError:
            return history
        except (OSError, ValueError) as exc:
            history.problem = f"prompt history not read: {exc}"
            return history
        if isinstance(raw, list):
            history.entries = [e for e in raw if isinstance(e, str)][-limit:]
        return history

    def add(self, text: str) -> None:
        if text and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
            self._save()
        self._pos = None

    def _save(self) -> None:
        if self.workspace is None:
            return
        data = json.dumps(self.entries, ensure_ascii=False)
        while len(data.encode()) > HISTORY_MAX_BYTES and self.entries:
            del self.entries[: max(1, len(self.entries) // 10)]  # a few huge pastes
            data = json.dumps(self.entries, ensure_ascii=False)
        try:
            atomic_write_beneath(*locate(self.workspace, HISTORY), data)
        except OSError as exc:
            self.problem = f"prompt history not saved: {exc}"
            self.workspace = None  # said once; this run keeps it in memory

    def older(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self._pos is None:
            self._draft, self._pos = current, len(self.entries)
        if self._pos == 0:
            return None
        self._pos -= 1
        return self.entries[self._pos]

    def newer(self) -> str | None:
        if self._pos is None:
            return None
        self._pos += 1
        if self._pos >= len(self.entries):
            self._pos = None
            return self._draft
        return self.entries[self._pos]


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput { height: auto; max-height: 10; min-height: 3; border: tall $panel;
                  background: $surface; }
    PromptInput:focus { border: tall $primary; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class HelpAsked(Message):
        """`?` on an empty prompt."""

    def __init__(self) -> None:
        super().__init__(
            id="prompt",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Ask (Enter sends, Ctrl+J newline, ? or F1 help). While it works, typing steers. !cmd runs a command.",
        )
        self.past = PromptHistory([])
        self.cursor_blink = False  # a blinking cursor makes every snapshot differ

    def on_mount(self) -> None:
        settings = getattr(self.app, "settings", None)
        workspace = getattr(settings, "workspace", None)
        if isinstance(workspace, Path) and workspace.is_dir():
            self.past = PromptHistory.load(workspace)
            self._say_problem()

    def _say_problem(self) -> None:
        if self.past.problem:
            self.notify(self.past.problem, severity="warning")
            self.past.problem = ""

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "question_mark" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.HelpAsked())
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "up" and self.cursor_location[0] == 0:
            entry = self.past.older(self.text)
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(entry)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            entry = self.past.newer()
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(entry)
            return
        await super()._on_key(event)

    def submit(self) -> None:
        text = self.text
        if text.strip():
            self.past.add(text)
            self._say_problem()
            self.clear()
            self.post_message(self.Submitted(text))

    def replay_key(self, key: str, character: str | None) -> bool:
        """Apply a key typed while a dialog was arming, as if it had been typed here. Keys that
        carry no text (arrows, Tab, Esc) are not replayed: False."""
        if key == "enter":
            self.submit()
        elif key in ("shift+enter", "ctrl+j"):
            self._type("\n")
        elif key == "backspace":
            self.action_delete_left()
        elif character is not None and len(character) == 1 and character.isprintable():
            self._type(character)
        else:
            return False
        return True

    def replay_paste(self, text: str) -> None:
        self._type(text)

    def _type(self, text: str) -> None:
        # What typing does: replace the selection, cursor after the text.
        self.replace(text, *self.selection, maintain_selection_offset=False)

    def _replace_all(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
