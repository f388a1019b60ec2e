"""The tool registry: which tools a turn offers, and their schemas for the model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import Tool


class Registry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool
        self._schemas: list[dict[str, Any]] | None = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        # Built once: the schemas are part of the stable prompt prefix, and rebuilding them
        # from pydantic every round cost milliseconds for nothing.
        if getattr(self, "_schemas", None) is None:
            self._schemas = [t.schema() for t in self._tools.values()]
        return self._schemas  # type: ignore[return-value]

    def runnable_schemas(self) -> list[dict[str, Any]]:
        """The schemas of the tools that RUN: the ones sent, except where the tools sent are
        wider than what runs (a delegated child's, tools/explore.py's ChildRegistry)."""
        return self.schemas()

    def command_tool(self) -> Tool | None:
        """The tool that runs a shell command (`Tool.runs_command`), for the person's `!cmd`."""
        return next((t for t in self._tools.values() if t.runs_command), None)

    def only(self, *names: str) -> Registry:
        """A narrower registry: how read-only modes are made structural (the tool is absent)."""
        return Registry(t for n, t in self._tools.items() if n in names)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def default_tools() -> list[Tool]:
    from .bash import Bash
    from .files import EditFile, ListFiles, ReadFile, WriteFile
    from .search import Search

    return [ReadFile(), WriteFile(), EditFile(), ListFiles(), Search(), Bash()]
