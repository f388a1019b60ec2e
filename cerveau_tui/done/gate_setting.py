"""Saving the person's answer about the gate: `[done] gate = VALUE` in `.cerveau/config.toml`.

The TUI asks once per workspace whether to use the detected check; the answer must outlive the
session, or the question comes back every start. Written by the harness (never the model) with
the person's rights, so: beneath the workspace without following a link (a `.cerveau` or a
`config.toml` planted as a link must not send the write elsewhere), atomically (a crash leaves the
old file or the new one), and keeping whatever else the file says. If the person had trusted the
old file (trust.py: keyed by its digest), the new digest is trusted too: the only change is the
one they just made, and without it their trusted config would be held back at the next start.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from .. import trust
from ..config import ConfigError, Settings, trust_store_path
from ..state_home import locate, state_path
from ..workspace.io.beneath import atomic_write_beneath
from ..workspace.io.openat import read_bytes_beneath

CONFIG = Path(".cerveau") / "config.toml"
MAX_BYTES = 1_000_000


def check_gate_value(value: str) -> str:
    """The value checked: "auto", "off", "" or a one-line command; else ConfigError."""
    if not isinstance(value, str):
        raise ConfigError(f"[done] gate must be a string, not {type(value).__name__}")
    text = value.strip()
    if any(ch in text for ch in "\n\r\x00"):
        raise ConfigError("[done] gate must be one line (a command, auto or off)")
    return text


def _read(workspace: Path) -> bytes | None:
    path = state_path(workspace, "config.toml")  # `.cerveau/config.toml`, or the alternate's
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: not a regular file (a symbolic link here is refused)")
    try:
        return read_bytes_beneath(*locate(workspace, "config.toml"), MAX_BYTES)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc


def _with_gate(old: bytes | None, value: str) -> bytes:
    """The file's bytes with `[done] gate` set. Appended as a new `[done]` table when the file
    has none, so comments and layout survive; otherwise re-serialised (comments are lost then,
    the settings are not)."""
    text = old.decode("utf-8") if old is not None else ""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG}: not valid TOML, not rewritten: {exc}") from exc
    done = data.get("done", {})
    if not isinstance(done, dict):
        raise ConfigError(f"{CONFIG}: `done` is not a table, not rewritten")
    expected = {**data, "done": {**done, "gate": value}}
    if "done" not in data:
        sep = "" if not text or text.endswith("\n") else "\n"
        appended = f"{text}{sep}\n[done]\n{tomli_w.dumps({'gate': value})}"
        if tomllib.loads(appended) == expected:
            return appended.encode("utf-8")
    return tomli_w.dumps(expected).encode("utf-8")


def save_gate(workspace: Path, value: str, *, user_config: Path | None = None) -> Path:
    """Write `[done] gate = value` into the workspace config; returns its path. ConfigError
    (with the reason) on a bad value, a linked or unreadable file, or invalid TOML."""
    ws = Path(os.path.realpath(workspace))
    value = check_gate_value(value)
    path = state_path(ws, "config.toml")
    old = _read(ws)
    new = _with_gate(old, value)
    try:
        Settings.model_validate({**tomllib.loads(new.decode("utf-8")), "workspace": ws})
    except ValueError as exc:  # pydantic's ValidationError is one
        raise ConfigError(f"{path}: would not load after the change: {exc}") from exc
    store = trust_store_path(user_config)
    was_trusted = old is not None and trust.is_trusted(ws, trust.digest(old), store)
    try:
        atomic_write_beneath(*locate(ws, "config.toml"), new)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc}") from exc
    if was_trusted:
        trust.record(ws, trust.digest(new), store)
    return path
