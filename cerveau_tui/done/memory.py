"""The check's verdict, remembered against the workspace's fingerprint: an unchanged tree is not
tested again.

Issue 33: the whole suite (26-36 s on a real library) ran before EVERY turn, "say hello"
included, on a tree nobody had touched since the last run. The fingerprint (workspace/
fingerprint/: blake3 of every tracked file, stat-cached, kept current by inotify) says exactly
whether anything the check could read changed; when it did not, the last verdict stands.

What the fingerprint does not see, the memory cannot: files it ignores (.venv, node_modules,
.gitignore'd ones) and the interpreter's installed packages. Installing a package and expecting
the next turn's precheck to notice is the case this misses; any edit of a tracked file, or a
changed definition of done, runs the check again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .criteria import DoneSet, Report

#: The fingerprint's answer while its first walk still runs (Fingerprinter.digest_soon): a token
#: that equals itself, so it must never key a verdict.
PENDING = "pending:"


@dataclass(frozen=True)
class _Known:
    digest: str
    done: DoneSet
    report: Report
    by_originals: bool


class VerdictMemory:
    """`fingerprint()`: the workspace's digest now."""

    def __init__(self, fingerprint: Callable[[], str]) -> None:
        self.fingerprint = fingerprint
        self._known: _Known | None = None

    def digest(self) -> str | None:
        try:
            d = self.fingerprint()
        except OSError:
            return None
        return None if not d or d.startswith(PENDING) else d

    def recall(self, done: DoneSet) -> tuple[Report, bool] | None:
        """The verdict on this very tree under this definition of done, if one was taken."""
        k = self._known
        if k is None or k.done != done:
            return None
        if self.digest() != k.digest:
            return None
        return k.report, k.by_originals

    def remember(
        self, before: str | None, done: DoneSet, report: Report, by_originals: bool
    ) -> None:
        """A check ran on the tree whose digest was `before`. Kept only when the tree is still
        that one after the run: an edit during the run (the person's, or the check writing a
        tracked file) makes the verdict one about a tree that no longer exists."""
        self._known = None
        if before is None or self.digest() != before:
            return
        self._known = _Known(before, done, report, by_originals)

    def forget(self) -> None:
        self._known = None
