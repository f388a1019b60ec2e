"""A unified diff, lexed by pygments and coloured with theme variables (never literal colours),
so an edit reads the same way in every theme."""

from __future__ import annotations

from pygments.token import Generic, Token, _TokenType
from textual.content import Content
from textual.widgets import Static

_STYLES: list[tuple[_TokenType, str]] = [
    (Generic.Inserted, "$text-success"),
    (Generic.Deleted, "$text-error"),
    (Generic.Subheading, "$text-accent"),  # @@ hunk headers
    (Generic.Heading, "bold $text-primary"),  # --- / +++ file names
    (Generic.Strong, "bold"),
]


def _style_for(token: _TokenType) -> str:
    for kind, style in _STYLES:
        if token in kind:
            return style
    return ""


def highlight_diff(diff: str) -> Content:
    # Here, not at the top: the lexers package costs ~20 ms of the first frame, which shows no diff.
    from pygments.lexers.diff import DiffLexer

    parts: list[tuple[str, str] | str] = []
    for token, value in DiffLexer().get_tokens(diff.rstrip("\n")):
        style = _style_for(token) if token is not Token.Text else ""
        parts.append((value, style) if style else value)
    return Content.assemble(*parts).rstrip()


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView { height: auto; padding: 0 1; background: $surface; }
    """

    def __init__(self, diff: str) -> None:
        super().__init__(highlight_diff(diff), markup=False, classes="diff")
        self.diff = diff
