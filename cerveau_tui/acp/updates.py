"""Our typed events as ACP `session/update`s: pure, one event in, the updates it says out.

What a client is told, and nothing it could act on for us: a tool call is REPORTED (its kind,
status, the diff our own tool wrote, a command's output as text), never handed over; the client's
terminal and file system are never named. Mapping, by event:

- `token` -> `agent_message_chunk`; `reasoning` -> `agent_thought_chunk`; a stored
  `assistant_message` only when a session is replayed (live, its tokens already went out, and
  the same answer twice is what a person would see).
- `tool_call` -> `tool_call` (pending; kind from the tool: bash is `execute`, the file tools
  `read`/`edit`, search and listing `search`, the plan tools `think`); `tool_started` ->
  `tool_call_update` pending (waiting for approval) or in_progress; `tool_result` ->
  `tool_call_update` completed or failed, with the output and, for a write, one `diff` per file:
  the hunks of our own unified diff, old and new text (the snippets an editor shows).
- `plan_report` -> `plan` (ACP wants every entry each time; the report is the whole plan).
- `usage` -> `usage_update` (the window: tokens in it, and its size).
- what the chat says in a line of its own (protocol/describe.py: a notice, a guard, a check, the
  turn's end when it did not complete) -> a message chunk on its own line: a warning a person
  must see is not hidden among thoughts.

Text from the model or a command is passed through `visible` (a tool call's raw_input too, every
string in it): a terminal client (toad) draws it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp import schema as S

from ..protocol import (
    AssistantMessage,
    ErrorPayload,
    Payload,
    PlanReported,
    ReasoningPayload,
    StackProgress,
    TokenPayload,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
    TurnStarted,
    UsagePayload,
)
from ..protocol.base import CallStatus
from ..protocol.describe import describe, result_status, summarize_arguments
from ..text_safety import visible, visible_data

Update = (
    S.AgentMessageChunk
    | S.AgentThoughtChunk
    | S.UserMessageChunk
    | S.ToolCallStart
    | S.ToolCallProgress
    | S.AgentPlanUpdate
    | S.UsageUpdate
)
Kind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]

#: ACP's tool kinds for ours (a tool not named here, an MCP tool say, is `other`).
KINDS: dict[str, Kind] = {
    "bash": "execute",
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "list_files": "search",
    "search": "search",
    "explore": "search",
    "commit_plan": "think",
    "update_plan": "think",
    "load_skill": "read",
}

#: A tool's output as the client gets it: the tail past this is cut (the model got its own cut).
OUTPUT_CHARS = 16_000

_PLAN_STATUS: dict[str, Literal["pending", "in_progress", "completed"]] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
    "done_unconfirmed": "completed",
    "changed": "pending",  # its files changed since: to be done again
    "missing": "pending",
}


def kind_of(tool: str) -> Kind:
    return KINDS.get(tool, "other")


def message(text: str) -> S.AgentMessageChunk:
    return S.AgentMessageChunk(
        session_update="agent_message_chunk", content=S.TextContentBlock(type="text", text=text)
    )


def said_line(text: str) -> S.AgentMessageChunk:
    """A harness line (a notice, a denial, a turn's end) as its own paragraph of the answer."""
    return message(f"\n\n*cerveau:* {visible(text)}\n\n")


def fenced(text: str) -> str:
    """`text` in a code fence no backtick run inside it can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def diff_contents(diff: str, workspace: Path) -> list[S.FileEditToolCallContent]:
    """Each file of a unified diff as ACP's `diff` content: its hunks' old and new text (context
    lines in both; hunks apart joined by a line `…`), the path absolute as ACP wants it. A hunk
    is read by its header's counts, so a removed line that reads `--- x` is a line, not a file.
    Nothing readable: [] (the caller shows the diff as text instead)."""
    out: list[S.FileEditToolCallContent] = []
    path: str | None = None
    old: list[str] = []
    new: list[str] = []
    left = [0, 0]  # old and new lines the current hunk still holds

    def close() -> None:
        if path is not None and (old or new):
            out.append(
                S.FileEditToolCallContent(
                    type="diff",
                    path=visible(path),
                    old_text=visible("".join(old)) if old else None,
                    new_text=visible("".join(new)),
                )
            )

    for line in diff.splitlines(keepends=True):
        if left[0] > 0 or left[1] > 0:
            tag, body = line[:1], line[1:]
            if tag == "\\":  # "\ No newline at end of file"
                continue
            if tag in (" ", "-"):
                old.append(body)
                left[0] -= 1
            if tag in (" ", "+"):
                new.append(body)
                left[1] -= 1
            continue
        if line.startswith("+++ "):
            close()
            name = line[4:].rstrip("\n")
            name = name[2:] if name.startswith("b/") else name
            path = name if name.startswith("/") else str(workspace / name)
            old, new = [], []
        elif (m := _HUNK.match(line)) is not None and path is not None:
            if old or new:
                old.append("…\n")
                new.append("…\n")
            left = [int(m.group(1) or 1), int(m.group(2) or 1)]
    close()
    return out


def _text(text: str) -> S.ContentToolCallContent:
    return S.ContentToolCallContent(
        type="content", content=S.TextContentBlock(type="text", text=text)
    )


def _locations(paths: list[str], workspace: Path) -> list[S.ToolCallLocation] | None:
    seen: list[str] = []
    for p in paths:
        full = p if p.startswith("/") else str(workspace / p)
        if full not in seen:
            seen.append(full)
    return [S.ToolCallLocation(path=visible(p)) for p in seen[:20]] or None


def plan_update(report: PlanReported) -> S.AgentPlanUpdate:
    entries = []
    for step in report.steps:
        status = _PLAN_STATUS[step.status]
        if step.id == report.current and status == "pending":
            status = "in_progress"
        note = {"changed": " (changed since done)", "missing": " (its files are missing)"}
        content = visible(step.title) + note.get(step.status, "")
        entries.append(S.PlanEntry(content=content, priority="medium", status=status))
    return S.AgentPlanUpdate(session_update="plan", entries=entries)


@dataclass
class Translator:
    """One session's events to updates. `replay`: a stored session read back for session/load
    (its answers are whole messages, and a user's turn is said as the user's)."""

    workspace: Path
    replay: bool = False
    _names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    _said_error: str = ""

    def __call__(self, p: Payload) -> list[Update]:
        match p:
            case TokenPayload(text=text):
                return [message(visible(text))] if text and not self.replay else []
            case ReasoningPayload(text=text):
                return [_thought(visible(text))] if text and not self.replay else []
            case AssistantMessage():
                if not self.replay:
                    return []
                out: list[Update] = [_thought(visible(p.reasoning))] if p.reasoning else []
                return [*out, message(visible(p.content))] if p.content else out
            case TurnStarted(input=text):
                if not self.replay:
                    return []
                return [
                    S.UserMessageChunk(
                        session_update="user_message_chunk",
                        content=S.TextContentBlock(type="text", text=visible(text)),
                    )
                ]
            case ToolCallPayload():
                return [self._call(p)]
            case ToolStartedPayload():
                status = "pending" if p.status == CallStatus.WAITING else "in_progress"
                return [_progress(p.call_id, status=status)]
            case ToolResultPayload():
                return [self._result(p)]
            case PlanReported():
                return [plan_update(p)]
            case UsagePayload():
                if not p.n_ctx:
                    return []
                return [
                    S.UsageUpdate(
                        session_update="usage_update", used=p.context_tokens, size=p.n_ctx
                    )
                ]
            case StackProgress():
                return []  # the server starting: before any turn, not the person's conversation
        line = describe(p, self._said_error)
        if isinstance(p, ErrorPayload):
            self._said_error = p.message
        elif isinstance(p, TurnEnded):
            self._said_error = ""
        if line is None or not line[0]:
            return []
        return [said_line(line[0])]

    def _call(self, p: ToolCallPayload) -> S.ToolCallStart:
        self._names[p.call_id] = p.name
        name = " ".join(p.name.split())
        return S.ToolCallStart(
            session_update="tool_call",
            tool_call_id=p.call_id,
            title=visible(f"{name}: {summarize_arguments(p.name, p.arguments)}"),
            kind=kind_of(p.name),
            status="pending",
            locations=_locations([*p.writes, *p.reads], self.workspace),
            raw_input=visible_data(p.arguments),  # the model's bytes, drawn by the client
        )

    def _result(self, p: ToolResultPayload) -> S.ToolCallProgress:
        status = result_status(p)
        content: list[Any] = []
        if p.diff:
            diffs = diff_contents(p.diff, self.workspace)
            content.extend(diffs or [_text(fenced(visible(p.diff)))])
        output = p.output if len(p.output) <= OUTPUT_CHARS else p.output[:OUTPUT_CHARS] + "\n…"
        if output.strip() and not (p.diff and status == CallStatus.DONE):
            content.append(_text(fenced(visible(output))))
        if status in (CallStatus.DENIED, CallStatus.GUARDED) and not output.strip():
            content.append(_text(visible(status.value)))
        return _progress(
            p.call_id,
            status="completed" if status == CallStatus.DONE else "failed",
            content=content or None,
            raw_output=visible_data(
                {
                    "ok": p.ok,
                    "status": status.value,
                    "exit_code": p.exit_code,
                    "wrote": p.wrote,  # names a command chose
                    "granted_by": p.granted_by,
                }
            ),
            locations=_locations(p.wrote, self.workspace) if p.wrote else None,
        )


def _thought(text: str) -> S.AgentThoughtChunk:
    return S.AgentThoughtChunk(
        session_update="agent_thought_chunk", content=S.TextContentBlock(type="text", text=text)
    )


def _progress(call_id: str, **fields: Any) -> S.ToolCallProgress:
    return S.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, **fields)
