"""One card per tool call: its arguments, a status that follows the call through the boundary
(queued, waiting for approval, running, done, failed, denied), the grant that let it cross the
boundary when one did, and its result, collapsible.

Edits show their unified diff; bash shows its output and exit code. Output is clipped to its last
lines in the card because a 10,000-line build log mounted as one widget made every later layout
slow; the model still sees the whole (capped) output, this is only the view.
"""

from __future__ import annotations

import json
import re
from typing import Any

from textual.content import Content
from textual.widgets import Collapsible, Static

from ...protocol import CallStatus, ReplyProgress, ToolResultPayload
from ...protocol.describe import STATUS_LABELS, result_status, summarize_arguments
from ...text_cut import line_breaks
from .diff_view import DiffView

#: The card speaks the protocol's one vocabulary for a call's status (protocol/base.py).
STATUSES = tuple(CallStatus)
MAX_OUTPUT_LINES = 40


# The value of the key that names the call, from arguments still being written (so maybe with no
# closing quote yet). Escapes are left as they are: this is a progress line, not the call.
_DRAFT_KEY = re.compile(r'"(?:command|cmd|path|file|pattern|query)"\s*:\s*"((?:[^"\\]|\\.)*)')


def short_count(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def draft_summary(p: ReplyProgress, width: int = 60) -> str:
    """A call being written, as the person recognises it: `write_file parser.py … 1.4k chars`."""
    found = _DRAFT_KEY.search(p.tool_head) if width else None  # 0: the name and size only
    target = " ".join(found.group(1).split()) if found else ""
    if len(target) > width:
        target = target[: width - 1] + "…"
    # No "0 chars": the name is known a moment before its arguments start, and "0" read as stuck.
    size = f"… {short_count(p.tool_chars)} chars" if p.tool_chars else "…"
    name = " ".join(p.tool_name.split())  # the model's: one line, whatever it holds
    return " ".join(x for x in (name, target, size) if x)


#: Lines of the call's head shown on its draft card: enough for a command or a file's first lines.
HEAD_LINES = 6
# JSON's escapes for layout, read back so the head reads as the text the model is writing. Only
# these: a `\u001b` stays six characters, never becomes the control it names.
_HEAD_ESCAPES = re.compile(r"\\([nt\"\\/])")
_HEAD_CHARS = {"n": "\n", "t": "    ", '"': '"', "\\": "\\", "/": "/"}


def draft_head(p: ReplyProgress, lines: int = HEAD_LINES) -> str:
    """The start of the call's arguments as the person reads them (the stream carries its first
    characters): `{"path": "a.py", "content": "def f():` with its newlines as lines, cut to
    `lines` lines, `…` when more was written than shown."""
    head = _HEAD_ESCAPES.sub(lambda m: _HEAD_CHARS[m.group(1)], p.tool_head)
    shown = head.split("\n")
    more = len(shown) > lines or p.tool_chars > len(p.tool_head)
    text = "\n".join(shown[:lines]).rstrip()
    return text + " …" if more and text else text


class DraftCard(Static):
    """The call the model is writing, before it is whole: replaced by its ToolCard when the
    reply ends. A long `write_file` took minutes with nothing on screen before this, then
    minutes of "3.1k chars · writing": it shows the head of what is being written too."""

    DEFAULT_CSS = """
    DraftCard { height: auto; margin: 0 1; padding: 0 0 0 1; border-left: thick $accent;
                color: $text-muted; }
    """

    def __init__(self, p: ReplyProgress) -> None:
        super().__init__("", markup=False, classes="tool -drafting")
        self.show(p)

    def show(self, p: ReplyProgress) -> None:
        head = draft_head(p)
        line = Content(f"{draft_summary(p)}  · writing")
        self.update(Content.assemble(line, "\n", (head, "$text-accent")) if head else line)


def clip_output(output: str, max_lines: int = MAX_OUTPUT_LINES) -> str:
    """The last `max_lines` lines, found from the end: splitting a 100,000-line log into line
    strings just to keep 40 of them fragmented the heap (RSS grew ~0.4 MB per turn)."""
    text = output.rstrip("\n")
    total = text.count("\n") + 1
    if total <= max_lines:
        return text
    cut = len(text)
    for _ in range(max_lines):
        cut = text.rfind("\n", 0, cut)
    # Through the cut markers: what the output cap and the window took from the middle was not
    # shown either (text_cut.py; "3206 earlier lines" when 19,961 were).
    hidden = line_breaks(text, 0, cut + 1)
    return f"… {hidden:,} earlier lines not shown\n" + text[cut + 1 :]


class ToolCard(Collapsible):
    DEFAULT_CSS = """
    ToolCard { height: auto; margin: 0 1; padding: 0; border: none; border-left: thick $panel;
               background: transparent; }
    ToolCard > Contents { padding: 0 0 0 1; }
    ToolCard .args { color: $text-muted; }
    ToolCard .output { color: $foreground; background: $surface; padding: 0 1; }
    ToolCard .exit { color: $text-muted; }
    ToolCard .granted { color: $text-warning; }
    ToolCard.-running { border-left: thick $accent; }
    ToolCard.-waiting { border-left: thick $warning; }
    ToolCard.-waiting CollapsibleTitle { color: $text-warning; }
    ToolCard.-done { border-left: thick $success; }
    ToolCard.-failed { border-left: thick $error; }
    ToolCard.-failed CollapsibleTitle, ToolCard.-failed .exit { color: $text-error; }
    ToolCard.-denied { border-left: thick $error; }
    ToolCard.-denied CollapsibleTitle { color: $text-error; text-style: strike; }
    ToolCard.-guarded { border-left: thick $warning; }
    ToolCard.-guarded CollapsibleTitle { color: $text-warning; }
    """

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        by_person: bool = False,
        id: str | None = None,
    ) -> None:
        self.by_person = by_person  # a `!` command: the person ran it, not the model
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.status = CallStatus.QUEUED
        self._ready = False
        self._pending: ToolResultPayload | None = None
        self._summary = summarize_arguments(name, arguments)
        args = json.dumps(arguments, ensure_ascii=False, indent=None, sort_keys=True)
        self._args = Static(
            Content(f"{name}({args})" if len(args) < 400 else f"{name}(…)"),
            markup=False,
            classes="args",
        )
        super().__init__(
            self._args, title=self._title_text(), collapsed=False, classes="tool -queued", id=id
        )

    def _title_text(self) -> str:
        who = "you ran " if self.by_person else ""
        name = " ".join(self.tool_name.split())
        return f"{who}{name}  {self._summary}  · {STATUS_LABELS[self.status]}"

    def set_status(self, status: str) -> None:
        if status not in STATUSES:
            return
        self.remove_class(f"-{self.status}")
        self.status = CallStatus(status)
        self.add_class(f"-{status}")
        self.title = self._title_text()

    def on_mount(self) -> None:
        self._ready = True
        if self._pending is not None:
            self.show_result(self._pending)

    def show_result(self, result: ToolResultPayload) -> None:
        if not self._ready:
            # tool_call and tool_result often arrive in the same drain, before compose ran
            self._pending = result
            return
        self._pending = None
        self.set_status(result_status(result))
        contents = self.query_one("Contents")
        if not contents.is_attached:
            return  # the card is being pruned or the app is closing
        if result.granted_by:
            # Which yes let this call cross: a grant that acts unseen is one nobody revokes.
            contents.mount(
                Static(
                    Content(f"let through: {result.granted_by}"), markup=False, classes="granted"
                )
            )
        diff = result.diff
        if diff:
            contents.mount(DiffView(diff))
        output = result.output
        if output and not diff:
            contents.mount(Static(Content(clip_output(output)), markup=False, classes="output"))
        exit_code = result.exit_code
        # The bash tool already ends its output with "[exit code N]"; say it once.
        if exit_code is not None and "exit code" not in output[-40:]:
            contents.mount(Static(Content(f"exit {exit_code}"), markup=False, classes="exit"))
