"""Changed on disk (the seed's ReadFile check): a file the model read and someone else changed.

read_file records the blake3 of the bytes it showed (tools.base.ToolState.reads); the model's own
write_file and edit_file move that record, so their writes are never news. Anything else that
changes the file (the person in their editor, a command, the model's own `bash`, an undo) leaves
the model reasoning from a stale copy: its next edit_file fails on text that is gone, or worse,
succeeds on half of it. So before each model call every recorded file is looked at through the
fingerprinter's stat cache (one lstat each; bytes are hashed only when the metadata moved; no
walk of the tree), and a file whose digest differs is named once per change.
"""

from __future__ import annotations

from ..hooks import Hook, TurnContext
from ..tools.base import ToolState
from ..workspace.fingerprint.fingerprinter import Fingerprinter

#: Files named in one reminder; the rest are counted (a `git checkout` may touch hundreds).
MAX_NAMED = 12


class ChangedOnDiskHook(Hook):
    name = "changed_on_disk"

    def __init__(self, fingerprinter: Fingerprinter) -> None:
        self.fp = fingerprinter
        self._told: dict[str, str | None] = {}  # rel -> the digest last named (None: removed)

    def reminders(self, ctx: TurnContext) -> list[str]:
        state = ctx.state
        if not isinstance(state, ToolState):
            return []
        changed: list[str] = []
        for rel, digest in sorted(state.read_digests().items()):
            try:
                now = self.fp.hash_file(rel)
            except OSError:
                continue  # unreadable for a moment: the next call looks again
            if now == digest:
                self._told.pop(rel, None)
                continue
            if rel in self._told and self._told[rel] == now:
                continue  # this change was named already
            self._told[rel] = now
            changed.append(
                f"{rel} was deleted since you read it."
                if now is None
                else f"{rel} changed on disk since you read it; read it again before editing it."
            )
        if not changed:
            return []
        more = len(changed) - MAX_NAMED
        lines = changed[:MAX_NAMED] + ([f"(and {more} more files you read)"] if more > 0 else [])
        return ["\n".join(lines)]
