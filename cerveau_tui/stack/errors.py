"""The stack's errors and its progress callback type, shared by provisioning, the source build
and the server supervisor without importing one another."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, "float | None", str], None]


class StackError(Exception):
    """Anything that keeps the model stack from running; the message says what to do."""


class ProvisionError(StackError):
    pass
