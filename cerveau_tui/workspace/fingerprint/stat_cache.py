"""The tree as stat'ed: which files are tracked (the walk) and their digests, read only on change.

Walking and reading are what cost, not hashing (blake3 reads ~4 GB/s). So an entry keyed by
(size, mtime_ns, inode, mode) serves a file's digest while its metadata is unchanged, and only
what changed is read and hashed. The Fingerprinter (fingerprinter.py) builds snapshots, the watch
and the background build on this; the live tree (live.py) reads files through the same rule.

Callers hold `_lock` around everything here (the Fingerprinter and the live tree do).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from ...state_file import read_regular
from .digest import hash_bytes
from .rules import RACY_WINDOW_NS, _ignored

# RACY_WINDOW_NS (rules.py): a file hashed within it of its mtime is hashed again ("racily clean").
GITIGNORE_MAX = 1_000_000  # a .gitignore bigger than this is not read (as tools/walk.py)
RESTATED_KEEP = 1 << 16  # paths stat'ed anew that restated_since remembers

#: The .gitignore specs in force at a folder: (the folder they live in, its spec), outermost first.
Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    """One file of the stat cache (100,000 of them on a big tree: slots, and no more than the
    check needs; a per-instance __dict__ and the hashing time as an int were 13 MB there)."""

    size: int
    mtime_ns: int
    ino: int
    digest: str
    # Hashed safely after its last write (mtime older than the racy window when it was read).
    # The check "mtime < hashed_at - RACY_WINDOW_NS" needs no more: mtime must match to serve.
    clean: bool
    mode: int = 0  # st_mode as last stat'ed (a chmod moves no digest): mode_of reads it


#: One int object per distinct st_mode (a handful in a tree), shared by every entry.
_MODES: dict[int, int] = {}


class StatCache:
    """Stat-cached digests of the tracked files under `root` (the Fingerprinter's base).

    Skips `ignore_dirs` by name at any depth and whatever .gitignore files (root and nested) say.
    A link's digest is that of its target string: repointing it counts as a change, and a link
    out of the workspace is never read."""

    def __init__(
        self,
        root: Path,
        ignore_dirs: tuple[str, ...],
        *,
        clock: Callable[[], int],
        hasher: Callable[[Path, int], str],
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._root_s = str(self.root)
        self.ignore_dirs = frozenset(ignore_dirs)
        self._clock = clock
        self._hasher = hasher
        self._cache: dict[str, _Entry] = {}
        self._specs: dict[str, tuple[int, int, pathspec.GitIgnoreSpec | None]] = {}
        self._lock = threading.RLock()
        self.hash_count = 0  # files actually read and hashed; tests and benchmarks watch it
        #: Every path stat'ed anew (_digest_for), oldest first, from number `_restated_base`:
        #: what restated_since reads (a chmod moves no digest, so no snapshot diff shows it).
        self._restated: list[str] = []
        self._restated_base = 0

    def restated_mark(self) -> int:
        """A position in the record of paths stat'ed anew, for restated_since."""
        with self._lock:
            return self._restated_base + len(self._restated)

    def restated_since(self, mark: int) -> set[str] | None:
        """Paths stat'ed anew (their digest or mode may have moved) since `mark`; None when that
        is no longer known (too many since). Read-only: a restore point's O(changed) path."""
        with self._lock:
            if mark < self._restated_base:
                return None
            return set(self._restated[mark - self._restated_base :])

    def mode_of(self, rel: str) -> int | None:
        """st_mode of a tracked file as the last scan saw it (None: not known). Read-only: a
        restore point takes its modes here instead of one lstat per file (a chmod re-stats, and
        re-reads, only that file: the walk compares the mode, the watch hears IN_ATTRIB)."""
        e = self._cache.get(rel)
        return e.mode if e is not None and e.mode else None

    # --- the digests ----------------------------------------------------------------------------

    def _digest_for(self, rel: str, st: os.stat_result) -> str | None:
        cached = self._cache.get(rel)
        if cached is not None and _unchanged(cached, st):
            return cached.digest
        now = self._clock()  # taken before reading: a write during the read counts as racy
        path = Path(self._root_s, rel)
        try:
            if stat.S_ISLNK(st.st_mode):
                digest = hash_bytes(b"symlink\0" + os.fsencode(os.readlink(path)))
            else:
                digest = self._hasher(path, st.st_size)
        except (FileNotFoundError, NotADirectoryError):
            self._cache.pop(rel, None)
            return None
        except OSError:
            # Unreadable (permissions, a FIFO swapped in): fingerprint the metadata so a change is
            # still seen, rather than failing the whole scan on one file.
            digest = hash_bytes(f"unreadable\0{st.st_size}\0{st.st_mtime_ns}".encode())
        self.hash_count += 1
        clean = st.st_mtime_ns < now - RACY_WINDOW_NS
        mode = _MODES.setdefault(st.st_mode, st.st_mode)
        self._cache[rel] = _Entry(st.st_size, st.st_mtime_ns, st.st_ino, digest, clean, mode)
        self._restated.append(rel)
        if len(self._restated) > RESTATED_KEEP:
            cut = RESTATED_KEEP // 2
            del self._restated[:cut]
            self._restated_base += cut
        return digest

    def _cached_digest(self, rel: str, st: os.stat_result, fresh_before: int) -> str | None:
        """The warm path: same size, mtime and inode, hashed safely after the last write, is the
        cached digest; anything else is read and hashed (None: not a file to fingerprint)."""
        c = self._cache.get(rel)
        if c is not None and _unchanged(c, st) and st.st_mtime_ns < fresh_before:
            return c.digest
        return self._digest_for(rel, st)

    # --- the walk -------------------------------------------------------------------------------

    def _spec_for(self, dir_abs: str, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        gi = os.path.join(dir_abs, ".gitignore")
        try:
            st = os.stat(gi)
        except OSError:
            self._specs.pop(rel_dir, None)
            return None
        cached = self._specs.get(rel_dir)
        if cached is not None and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            return cached[2]
        # Not a plain open(): a FIFO named .gitignore in any folder blocked the scan after every
        # command, forever; a link to /dev/zero read without end. Regular files only, bounded,
        # not through a link (git does not follow a linked .gitignore either).
        try:
            text = read_regular(gi, GITIGNORE_MAX, follow_links=False).decode("utf-8", "replace")
            spec: pathspec.GitIgnoreSpec | None = pathspec.GitIgnoreSpec.from_lines(
                text.splitlines()
            )
        except OSError:
            spec = None
        self._specs[rel_dir] = (st.st_mtime_ns, st.st_size, spec)
        return spec

    def _walk(
        self,
        top: str = "",
        specs: Specs = (),
        on_dir: Callable[[str, Specs], None] | None = None,
    ) -> Iterator[tuple[str, os.stat_result]]:
        """Every tracked file (regular or link) under `top` with its lstat; `on_dir` is told each
        folder walked and the rules in force there (the live tree records them)."""
        # Each level carries the .gitignore specs in force: (directory they live in, spec). A
        # nested .gitignore's patterns are relative to its own directory, as git reads them.
        stack: list[tuple[str, str, Specs]] = [
            (os.path.join(self._root_s, top) if top else self._root_s, top, specs)
        ]
        while stack:
            dir_abs, rel_dir, specs = stack.pop()
            spec = self._spec_for(dir_abs, rel_dir)
            if spec is not None:
                specs = (*specs, (rel_dir, spec))
            if on_dir is not None:
                on_dir(rel_dir, specs)
            try:
                entries = list(os.scandir(dir_abs))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                rel = f"{rel_dir}/{name}" if rel_dir else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if name in self.ignore_dirs or _ignored(specs, rel, True):
                        continue
                    stack.append((entry.path, rel, specs))
                    continue
                if specs and _ignored(specs, rel, False):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    yield rel, st


def _unchanged(c: _Entry, st: os.stat_result) -> bool:
    """The cached digest still stands: same size, mtime, inode and mode, hashed safely after the
    file's last write."""
    return (
        c.size == st.st_size
        and c.mtime_ns == st.st_mtime_ns
        and c.ino == st.st_ino
        and c.mode == st.st_mode
        and c.clean
    )
