"""The instruction chain (the seed's InstructionChain): what the person wrote for agents, read once.

`AGENTS.md` in the person's config dir and at the workspace root are read when the session is
created and become part of the system prompt, after the base prompt. That prompt is the prefix
the server has cached, so it never changes afterwards: an AGENTS.md that appears or changes later
(at the root, or in a folder the model reads or writes in) is told to the model as a reminder
with its new text, once per content, and the prefix stays byte-identical.

Each file is capped at `context.instructions_max_bytes`, and the cut is said: a model that takes
the first 8 KB for the whole file follows half a rule. Beneath the workspace no link is followed
(reading.py says why).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import protocol as P
from ..hooks import Hook, TurnContext
from ..workspace.io.beneath import UnsafePath, lstat_beneath
from .reading import Head, read_head, read_head_beneath, with_cut

NAME = "AGENTS.md"
#: Folders watched for an AGENTS.md of their own: bounded whatever paths the model names.
MAX_FOLDERS = 256
#: AGENTS.md texts told in one reminder: a model that read files in ten folders must not get
#: ten files' worth of instructions (up to 8 KB each) in front of one request.
MAX_PER_CALL = 2
#: Folders the model may name but never holds instructions for: the harness's and git's state.
_NOT_WATCHED = (".git", ".cerveau")


class InstructionsHook(Hook):
    name = "instructions"

    def __init__(self, workspace: Path, user_dir: Path | None, cap: int) -> None:
        self.root = Path(os.path.realpath(workspace))
        self.cap = cap
        self.warnings: list[str] = []
        self._sections: list[str] = []
        self._told: dict[str, str | None] = {}  # rel -> digest of the text the model last had
        self._folders: dict[str, None] = {"": None}  # an ordered set: the root first
        self._calls_seen: tuple[str, int] = ("", 0)
        if user_dir is not None:
            path = user_dir / NAME
            try:
                head = read_head(path, cap)
            except OSError as exc:
                self.warnings.append(f"{path}: not read ({exc})")
                head = None
            if head is not None:
                self._sections.append(
                    "## The person's instructions for agents (AGENTS.md in their config dir)\n"
                    + with_cut(NAME, head, cap)
                )
        head = self._read(NAME, warn=True)
        self._told[NAME] = head.digest if head is not None else None
        if head is not None:
            self._sections.append(
                f"## Instructions for this workspace (AGENTS.md at its root)\n"
                f"{with_cut(NAME, head, cap)}"
            )

    def system_sections(self) -> list[str]:
        return list(self._sections)

    def on_turn_start(self, ctx: TurnContext, task: str) -> None:
        warnings, self.warnings = self.warnings, []
        for text in warnings:
            ctx.emit(P.NoticePayload(text=text, level="warning", source=self.name))
        return None

    def reminders(self, ctx: TurnContext) -> list[str]:
        self._note_folders(ctx)
        out: list[str] = []
        for folder in list(self._folders):
            if len(out) >= MAX_PER_CALL:
                break  # the others are still news at the next call
            said = self._news(f"{folder}/{NAME}" if folder else NAME, folder)
            if said:
                out.append(said)
        return out

    # --- internals ------------------------------------------------------------------------------

    def _read(self, rel: str, *, warn: bool = False) -> Head | None:
        try:
            return read_head_beneath(self.root, rel, self.cap)
        except UnsafePath:
            if warn:
                self.warnings.append(
                    f"{rel} is a symbolic link; not read (links in the workspace are not followed)"
                )
        except (OSError, ValueError) as exc:
            if warn:
                self.warnings.append(f"{rel}: not read ({exc})")
        return None

    def _news(self, rel: str, folder: str) -> str | None:
        try:
            st = lstat_beneath(self.root, rel)
        except (OSError, ValueError):
            st = None  # a link on the way (UnsafePath), a name no file has: nothing to read
        if st is None or not stat.S_ISREG(st.st_mode):
            if self._told.get(rel) is not None:
                self._told[rel] = None
                return f"{rel} was removed; the instructions it held no longer apply."
            return None
        head = self._read(rel)
        if head is None or head.digest == self._told.get(rel):
            return None
        known = rel in self._told and self._told[rel] is not None
        self._told[rel] = head.digest
        where = "at the workspace root" if not folder else f"in {folder}/"
        if known:
            lead = f"{NAME} {where} changed; its instructions are now:"
        elif not folder:
            lead = f"{NAME} {where} appeared; its instructions:"
        else:
            lead = f"{NAME} {where} (instructions for work in that folder):"
        return f"{lead}\n{with_cut(rel, head, self.cap)}"

    def _note_folders(self, ctx: TurnContext) -> None:
        """Every folder on the way to a path the model named (read, listed, written)."""
        turn, seen = self._calls_seen
        start = seen if turn == ctx.turn_id else 0
        for rec in ctx.calls[start:]:
            named = [rec.arguments.get("path"), *rec.wrote]
            for raw in named:
                if isinstance(raw, str) and raw.strip():
                    self._add_folders(raw.strip())
        self._calls_seen = (ctx.turn_id, len(ctx.calls))

    def _add_folders(self, raw: str) -> None:
        if "\x00" in raw:  # the model's bytes: no path has one, and os.* raise on it
            return
        p = raw if os.path.isabs(raw) else os.path.join(self.root, raw)
        rel = os.path.relpath(os.path.normpath(p), self.root)
        if rel == "." or rel.startswith(".."):
            return
        parts = [x for x in Path(rel).as_posix().split("/") if x]
        if any(x.casefold() in _NOT_WATCHED for x in parts):
            return
        for i in range(1, len(parts) + 1):  # the path itself too: list_files names a folder
            if len(self._folders) >= MAX_FOLDERS:
                return
            folder = "/".join(parts[:i])
            if folder in self._folders:
                continue
            if not self._is_dir(folder):
                # Every file the model read took a slot: after 256 of them no folder reached
                # later was watched, and each call looked for "x.py/AGENTS.md" in every one.
                return
            self._folders[folder] = None

    def _is_dir(self, rel: str) -> bool:
        try:
            st = lstat_beneath(self.root, rel)
        except (OSError, ValueError):  # a link on the way (UnsafePath), a name no file has
            return False
        return st is not None and stat.S_ISDIR(st.st_mode)
