"""The main screen's layout: the planner panel (F2) beside the chat, the plan strip and the
prompt, with the status bar and the key footer below. Widgets only; what fills them is the
router's (routing.py)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer

from .widgets.chat import ChatView
from .widgets.header import SessionHeader
from .widgets.plan_strip import PlanStrip
from .widgets.planner import PlannerPanel
from .widgets.prompt import PromptInput
from .widgets.status_bar import StatusBar


def main_layout(show_reasoning: bool) -> ComposeResult:
    yield SessionHeader()
    # The planner beside the chat, not beside the whole screen: docked at the screen it took the
    # status bar's width too, and at 80 columns the status bar was cut to 36.
    with Horizontal(id="body"):
        yield PlannerPanel()
        with Vertical(id="main"):
            yield ChatView(show_reasoning=show_reasoning)
            yield PlanStrip()
            yield PromptInput()
    yield StatusBar()
    yield Footer()
