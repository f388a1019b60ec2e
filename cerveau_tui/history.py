"""The conversation as the model reads it: ONE History of typed messages, with ONE `append`.

Before, the history was a bare list of dicts appended from eight modules, persisted by diffing the
list before each event (a list replaced wholesale had to be detected by identity), and read back
from its wording: the resume brief found denied calls by matching the dispatcher's sentence. Now
each message says what it is (`origin`: who put it there; `status`: how a call ended), the
session log listens to `append` (session/journal.py), and readers ask the fields, never the text.

The wire dicts the provider sends are derived from each message ONCE, when it is made, and the
same dict object is handed out for every request: the prefix cache needs the bytes of a message
to stay identical from one request to the next (context/window.py), and the token count is
memoised per dict (context/pack.py). A message read back from a log keeps the dict as written.

A History is a read-only `Sequence` of those wire dicts, so the window and the packer read it as
they read a list; it compares equal to the list of its wire dicts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, overload

from .text_safety import inert_markers

Role = Literal["user", "assistant", "tool"]
Wire = dict[str, Any]

#: How the harness's own notes to the model start (the model tells them from the person's words).
HARNESS_MARK = "[harness]"


class Origin(StrEnum):
    """Who put a message in the history."""

    PERSON = "person"  # the turn's request, as typed
    STEER = "steer"  # what the person typed while a turn ran
    MODEL = "model"  # the model's reply, with or without calls
    TOOL = "tool"  # a call's result as the model reads it
    HARNESS = "harness"  # the harness's note to the model (a hook's tell, undo, a cut turn)
    REMINDER = "reminder"  # loop/remind.py's one marked message before a model call
    SHELL = "shell"  # a command the person ran (`!cmd`) and what it printed
    SKILL = "skill"  # a skill the person loaded
    STORED = "stored"  # read back from a log written before origins were recorded


@dataclass(frozen=True)
class CallRef:
    """One tool call of a model reply, as it enters the history (arguments as JSON text)."""

    id: str
    name: str
    arguments: str

    def wire(self) -> Wire:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": inert_markers(self.arguments)},
        }


@dataclass(frozen=True)
class Message:
    """One message. `status` is a tool result's call status ("done", "failed", "denied", or
    "not_run" for a call the turn never ran); empty for the other roles."""

    role: Role
    content: str
    origin: Origin
    calls: tuple[CallRef, ...] = ()
    call_id: str = ""  # a tool result: the call it answers
    status: str = ""
    _wire: Wire = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._wire:
            object.__setattr__(self, "_wire", self._derive())

    def _derive(self) -> Wire:
        # Key order is part of the bytes the server caches: as the loop always wrote them.
        # What a tool returned or a message carries (a file, a server's result, a hook's
        # context) is sent with its chat-template markers broken: llama-server parses special
        # tokens in the rendered prompt, so a raw `<|im_end|>` there ends the message for real
        # (text_safety.inert_markers). `content` keeps what was said.
        if self.role == "tool":
            content = inert_markers(self.content)
            return {"role": "tool", "tool_call_id": self.call_id, "content": content}
        # The model's own text and arguments too: they copy what a file or a server said.
        if self.calls:
            return {
                "role": "assistant",
                "content": inert_markers(self.content),
                "tool_calls": [c.wire() for c in self.calls],
            }
        return {"role": self.role, "content": inert_markers(self.content)}

    @property
    def wire(self) -> Wire:
        """The dict the provider sends: the same object every time (never mutate it)."""
        return self._wire

    # -- the constructors each append site uses ---------------------------------------------------

    @classmethod
    def user(cls, content: str, origin: Origin = Origin.PERSON) -> Message:
        return cls("user", content, origin)

    @classmethod
    def harness(cls, text: str) -> Message:
        """A note from the harness, marked so the model reads it as one."""
        return cls("user", f"{HARNESS_MARK} {text}", Origin.HARNESS)

    @classmethod
    def reply(cls, content: str, calls: Iterable[CallRef] = ()) -> Message:
        return cls("assistant", content, Origin.MODEL, tuple(calls))

    @classmethod
    def result(cls, call_id: str, content: str, status: str) -> Message:
        return cls("tool", content, Origin.TOOL, call_id=call_id, status=status)

    @classmethod
    def from_wire(cls, m: Wire, origin: Origin | str = Origin.STORED, status: str = "") -> Message:
        """A message read back (a log, a test): the dict kept exactly as given, so a resumed
        session's first request is byte-identical to what the server cached before."""
        role = m.get("role")
        if role not in ("user", "assistant", "tool"):
            raise ValueError(f"not a history message role: {role!r}")
        content = m.get("content")
        calls = tuple(
            CallRef(
                str(c.get("id", "")),
                str((c.get("function") or {}).get("name", "")),
                str((c.get("function") or {}).get("arguments", "")),
            )
            for c in m.get("tool_calls") or []
            if isinstance(c, dict)
        )
        try:
            kind = Origin(origin)
        except ValueError:  # a newer version's origin: still a message of the conversation
            kind = Origin.STORED
        return cls(
            role,
            content if isinstance(content, str) else "",
            kind,
            calls,
            str(m.get("tool_call_id") or ""),
            status,
            _wire=dict(m),
        )


Listener = Callable[[Message], None]


class History(Sequence[Wire]):
    """The session's conversation. Appended only through `append`, which tells each listener
    (the session log) in order; `restore` puts back a stored one and tells nobody (it is on disk
    already). Thread-safe: the person's `!cmd` and a loaded skill append between turns."""

    def __init__(self, messages: Iterable[Message | Wire] = ()) -> None:
        self._messages: list[Message] = [_typed(m) for m in messages]
        self._wire: list[Wire] = [m.wire for m in self._messages]
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def append(self, message: Message) -> None:
        if not isinstance(message, Message):
            raise TypeError(f"History.append takes a Message, not {type(message).__name__}")
        with self._lock:
            self._messages.append(message)
            self._wire.append(message.wire)
            listeners = list(self._listeners)
        for listen in listeners:
            listen(message)

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def restore(self, messages: Iterable[Message | Wire]) -> None:
        """A resumed session's history, before its first turn (dicts are read as `from_wire`)."""
        typed = [_typed(m) for m in messages]
        with self._lock:
            self._messages = typed
            self._wire = [m.wire for m in typed]

    @property
    def messages(self) -> Sequence[Message]:
        """The typed messages (what the brief and the resume read)."""
        return tuple(self._messages)

    def wire(self) -> list[Wire]:
        return list(self._wire)

    # -- Sequence of wire dicts -------------------------------------------------------------------

    @overload
    def __getitem__(self, i: int) -> Wire: ...
    @overload
    def __getitem__(self, i: slice) -> list[Wire]: ...
    def __getitem__(self, i: int | slice) -> Wire | list[Wire]:
        return self._wire[i]

    def __len__(self) -> int:
        return len(self._wire)

    def __iter__(self) -> Iterator[Wire]:
        return iter(list(self._wire))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            return self._wire == other._wire
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self._wire == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"History({len(self)} messages)"


def _typed(m: Message | Wire) -> Message:
    return m if isinstance(m, Message) else Message.from_wire(m)


def denied_calls(messages: Sequence[Message]) -> list[str]:
    """Calls the person or the policy refused, by their result's status (not its wording):
    "bash {"command": "rm -rf x"}: the person denied this call"."""
    calls: dict[str, str] = {}
    out: list[str] = []
    for m in messages:
        for c in m.calls:
            calls[c.id] = f"{c.name} {c.arguments[:120]}"
        if m.role == "tool" and m.status == "denied":
            first = (m.content.splitlines() or [""])[0][:160]
            out.append(f"{calls.get(m.call_id, 'a call')}: {first}")
    return out
