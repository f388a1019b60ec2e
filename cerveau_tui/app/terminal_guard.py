"""The last step before the terminal: no character the app draws acts on the terminal.

Measured (tests/probes/test_escaped_output.py): Rich strips only BEL, BS, VT, FF and CR from a
Text, and Textual writes a segment's text as it is, so a chat line holding the model's
`ESC [ 2 J` cleared the screen, `ESC [ 1 A ESC [ 2 K` erased the line above and `ESC ] 52` wrote
the clipboard. The bridge shows such characters as escapes (`\\x1b`) in everything the engine
sends (app/bridge.py); this is the line behind it for text that reaches a widget by any other
way (a config warning, a file in a diff, a session listing): every drawn segment goes through
`Strip.render`, so it is the one place to guard. The characters are removed there, not shown:
Rich counts them zero cells wide, and a longer rendering would break the layout it measured.
A link (OSC 8, from Markdown) whose address holds one is drawn without the link.

Textual's own control segments (cursor moves) are left alone: they carry their `control` part.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from textual.strip import Strip

from ..text_safety import SHOWN

_DROP = dict.fromkeys(SHOWN)
_INSTALLED = False


def inert(text: str) -> str:
    return text.translate(_DROP)


def _safe(style: Style) -> Style:
    link = style.link
    if link and inert(link) != link:
        return style.update_link(None)
    return style


def _render(self: Strip, console: Console) -> str:
    if self._render_cache is None:
        color_system = console._color_system or ColorSystem.TRUECOLOR
        render = self.render_style
        self._render_cache = "".join(
            [
                text
                if control
                else inert(text)
                if style is None
                else render(_safe(style), inert(text), color_system=color_system)
                for text, style, control in self._segments
            ]
        )
    return self._render_cache


def install() -> None:
    """Guard every Strip's rendering (once per process)."""
    global _INSTALLED
    if not _INSTALLED:
        Strip.render = _render  # type: ignore[method-assign]
        _INSTALLED = True
