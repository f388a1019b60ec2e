"""The Textual app. Importing any part of it guards the terminal first (terminal_guard.py): no
widget here draws a control character, whichever way its text arrived."""

from .terminal_guard import install

install()
