"""What a tool is: a name, a pydantic argument model, a retry class, and two methods.

`declare` says, before anything runs, which paths the call reads and writes and which command it
runs; the scheduler and the policy decide on that declaration. `run` does the work. A tool never
talks to the person and never prints: it returns a ToolResult, and the loop publishes it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel


class RetryClass(StrEnum):
    ARGS = "args"  # the call was wrong: fix the arguments
    TRANSIENT = "transient"  # the world was briefly wrong: the same call may work again


class ToolError(Exception):
    """A failure the model can act on; its message is what the model reads."""

    def __init__(self, message: str, retry_class: RetryClass = RetryClass.ARGS) -> None:
        super().__init__(message)
        self.retry_class = retry_class


class PathError(ToolError):
    pass


@dataclass
class Declared:
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    command: str | None = None
    network: bool = False


@dataclass
class ToolResult:
    ok: bool
    output: str
    error_class: RetryClass | None = None
    exit_code: int | None = None
    diff: str | None = None
    wrote: list[Path] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolState:
    """What tools share across one session: the write sequence and the paths written.

    write_seq is a COUNT, not a clock: "a write happened after the check" is answered by comparing
    two counts, and a rewrite of an already-written file still moves it.
    """

    write_seq: int = 0
    written: list[Path] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record_write(self, path: Path) -> None:
        with self.lock:
            self.write_seq += 1
            if path not in self.written:
                self.written.append(path)


@dataclass
class ToolContext:
    workspace: Path
    state: ToolState
    runner: Any = None  # sandbox.base.Runner
    mode: str = "workspace-write"
    grant: Any = None  # sandbox.base.Grant for this one call, after approval
    cancel: threading.Event | None = None
    bash_timeout: float = 120.0
    output_cap: int = 16_000
    bus: Any = None  # bus.Emitter, for tools that publish (commit_plan, update_plan)
    extra: dict[str, Any] = field(default_factory=dict)


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    retry_class: ClassVar[RetryClass] = RetryClass.ARGS
    mutates: ClassVar[bool] = False  # may change the workspace (marks the verification stale)

    def declare(self, args: BaseModel, ctx: ToolContext) -> Declared:
        return Declared()

    def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    @classmethod
    def schema(cls) -> dict[str, Any]:
        params = cls.Args.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        return {"name": cls.name, "description": cls.description, "parameters": params}


def resolve_path(workspace: Path, raw: str) -> Path:
    """Resolve a model-supplied path against the workspace root.

    Relative paths are taken from the root; `~` is NOT expanded (the model's home is not the
    person's); the result is normalised lexically and then realpath'd so a symlink pointing out is
    seen for where it lands. Whether that is allowed is the policy's call, not this function's.
    """
    if not isinstance(raw, str) or raw.strip() == "":
        raise PathError("path is empty; give a path relative to the workspace root")
    if "\x00" in raw:
        raise PathError("path contains a NUL byte")
    p = Path(raw.strip())
    if not p.is_absolute():
        p = workspace / p
    return Path(os.path.realpath(p))


def clean_text(text: str) -> str:
    """Text safe to put in JSON and send: a file name that is not UTF-8 arrives from the OS as
    lone surrogates, which no encoder accepts; they become U+FFFD instead of crashing the turn."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def display_path(workspace: Path, path: Path) -> str:
    try:
        return clean_text(str(path.relative_to(Path(os.path.realpath(workspace)))))
    except ValueError:
        return clean_text(str(path))
