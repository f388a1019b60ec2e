"""Loop guards: the exact ways a small model wastes a run, and what stops each one.

Pure parts (breaker, progress, repeats, truncation, text_calls, ports) know nothing of the engine;
`turn_hooks` joins them to a turn through the Hook points of `cerveau_tui/hooks.py`.
"""

from __future__ import annotations

from .breaker import Breaker, Trip, shape_of
from .ports import live_stack_section, serve_port_conflict
from .progress import Stall, WorkTracker
from .repeats import canonical, is_repeat, is_repeat_with_results
from .text_calls import (
    TextCall,
    extract_text_tool_calls,
    how_to_call_tools_message,
    unknown_tool_message,
)
from .truncation import (
    is_truncated_tool_call,
    looks_truncated,
    truncated_call_message,
    wrong_args_message,
)

__all__ = [
    "Breaker",
    "Stall",
    "TextCall",
    "Trip",
    "WorkTracker",
    "extract_text_tool_calls",
    "canonical",
    "how_to_call_tools_message",
    "is_repeat",
    "is_repeat_with_results",
    "is_truncated_tool_call",
    "live_stack_section",
    "looks_truncated",
    "serve_port_conflict",
    "shape_of",
    "truncated_call_message",
    "unknown_tool_message",
    "wrong_args_message",
]
