"""The model's answer, streamed as Markdown without re-parsing it on every fragment.

Markdown re-renders its last block on every append, and a long last block (a code listing being
typed out) made each update slower than the one before; at 1,000 tokens/s that starved the
keyboard. So settled blocks (up to the last blank line outside a code fence) go to the Markdown
widget once each, and the unsettled tail is shown as plain text, which is cheap to redraw. When the
reply ends, the tail joins the Markdown.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import MountError, Widget
from textual.widgets import Static

#: Keep up to this much text in the plain tail before settling it into Markdown. Every mount of a
#: Markdown chunk costs a layout of the whole chat (~100 ms with a few hundred widgets on a loaded
#: 2-core machine), so chunks are made large; plain text of this size redraws in well under 1 ms.
SETTLE_AT = 1200
#: Replies up to this long are re-rendered as one document when they end.
CONSOLIDATE_MAX = 6000


def split_settled(text: str, min_tail: int = 0) -> tuple[str, str]:
    """Split streamed markdown into (settled, tail): settled ends at the last blank line that is
    outside a ``` fence, so no later fragment can change how it renders. Nothing is settled while
    the text is shorter than `min_tail`."""
    if len(text) < min_tail:
        return "", text
    in_fence = False
    cut = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        if not line.endswith("\n"):
            break  # an unfinished line is never settled
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
        elif not stripped and not in_fence:
            cut = pos
    return text[:cut], text[cut:]


TAIL_STEP = 12


def tail_rows(text: str, width: int, step: int = TAIL_STEP) -> int:
    """Rows to reserve for the streamed tail: the wrapped line count with a margin for word
    wrapping, rounded up to a multiple of `step` (0 for no text)."""
    if not text:
        return 0
    width = max(8, width)
    lines = sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))
    lines += lines // 8 + 1  # word wrap breaks earlier than a character count predicts
    return -(-lines // step) * step


def markdown(text: str) -> Widget:
    """Textual's Markdown, imported with the first answer: its parser (markdown_it) cost the
    first frame ~20 ms, and that frame shows no answer."""
    from textual.widgets import Markdown

    return Markdown(text)


class StreamingAnswer(Vertical):
    DEFAULT_CSS = """
    StreamingAnswer { height: auto; padding: 0 1 0 1; layout: stream; }
    StreamingAnswer > Markdown { margin: 0; padding: 0; background: transparent; }
    StreamingAnswer > .tail { height: auto; color: $foreground; }
    StreamingAnswer > .tail.-empty { display: none; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(classes="answer")
        self._tail = ""
        self._initial = text
        self.finished = False
        self._ready = False
        self._chunks = 0
        self._tail_rows = 0
        self.source = text  # everything received, for tests and copying

    def compose(self) -> ComposeResult:
        yield Static("", classes="tail -empty", markup=False)

    def on_mount(self) -> None:
        self._ready = True
        pending, self._initial = self._initial, ""
        if pending:
            self._apply(pending)
        if self.finished:
            self.finished = False
            self.finish()

    def write(self, fragment: str) -> None:
        """Fragments that arrive before the widget is composed wait in `_initial`."""
        self.source += fragment
        if not self._ready:
            self._initial += fragment
            return
        self._apply(fragment)

    def _apply(self, fragment: str) -> None:
        settled, self._tail = split_settled(self._tail + fragment, SETTLE_AT)
        if settled:
            # Each settled chunk is its own Markdown: parsed once, never touched again.
            self._chunks += 1
            try:
                self.mount(markdown(settled), before=self.query_one(".tail"))
            except MountError:
                # Seen once in CI: a fragment raced this widget's own mount. Keep the text as
                # tail; finish() renders the whole source anyway, so nothing is lost.
                self._chunks -= 1
                self._tail = settled + self._tail
        self._show_tail()

    def finish(self) -> None:
        """The reply is complete: render it as ONE document (lists and numbering that spanned
        chunks come out right), once."""
        if self.finished:
            return
        self.finished = True
        if not self._ready:
            return  # on_mount finishes it
        tail, self._tail = self._tail, ""
        self._show_tail()
        if self._chunks == 0 and not self.source.strip():
            return
        anchor = self.query_one(".tail")
        with self.app.batch_update():
            if len(self.source) <= CONSOLIDATE_MAX:
                self.query("Markdown").remove()
                self.mount(markdown(self.source.strip("\n")), before=anchor)
                self._chunks = 1
            elif tail.strip():
                # Re-rendering a long reply whole is one long stall of the UI; its chunks
                # already render correctly except for lists split across them.
                self.mount(markdown(tail.strip("\n")), before=anchor)
                self._chunks += 1

    def _show_tail(self) -> None:
        """Redraw the plain tail; re-layout only when its height crosses a TAIL_STEP boundary.

        A layout of the whole screen per update was the main cost while streaming (measured:
        ~20 ms median, 16 a second at 1,000 tokens/s); a repaint of one widget is ~1 ms. So the
        tail reserves rows in steps and is repainted in place in between."""
        tail = self.query_one(".tail", Static)
        text = self._tail.rstrip("\n")
        rows = tail_rows(text, tail.content_size.width or self.content_size.width or 80)
        if rows != self._tail_rows:
            self._tail_rows = rows
            tail.set_class(not text, "-empty")
            tail.styles.min_height = rows
            tail.update(Content(text))
        else:
            tail.update(Content(text), layout=False)
