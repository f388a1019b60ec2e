"""The fingerprint kept current from the kernel's change set (watch.TreeWatch), not by a walk.

One full walk when it starts; after that each sync reads only what the journal names: a path is
stat'ed and, when it is a file, hashed again whatever its metadata says (an event means its bytes
may have moved, so a same-size rewrite in the same mtime tick cannot be served from the cache);
a folder that appeared, vanished or changed mode is walked again (walk semantics, stat cache and
racy window included); an overflow walks everything once. `.gitignore` changes re-read their
folder. Files with several hard links are stat'ed at every sync (a write through a name outside
the tree raises no event here). What a fresh walk would give is the spec: tests/workspace/
test_fingerprint_live.py compares them after random operations.

One record per file, in one place: each folder's {rel: digest} (`dirs`), which the snapshots
share as they are (a folder's mapping is copied before it changes once a snapshot holds it:
`_owned` names the ones no snapshot holds yet). Before, the same 100,000 files were a flat
{rel: digest}, a set of names per folder and a copy of each folder's mapping for the snapshots,
and the first snapshot journalled all of them as "changed" (20 MB at 100,000 files).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

import pathspec

from .rules import RACY_WINDOW_NS, _ignored
from .stat_cache import StatCache
from .watch import TreeWatch

Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


class WatchFailed(Exception):
    """The watch stopped being exact (its reason is the watch's `failed`): walk from now on."""


def _under(rel: str, top: str) -> bool:
    return top == "" or rel == top or rel.startswith(top + "/")


def _split(rel: str) -> tuple[str, str]:
    d, _, name = rel.rpartition("/")
    return d, name


class LiveTree:
    def __init__(self, fp: StatCache, tw: TreeWatch) -> None:
        self.fp = fp
        self.tw = tw
        self.dirs: dict[str, dict[str, str]] = {}  # folder -> {rel: digest} (see the module)
        self._owned: set[str] = set()  # folders whose mapping no snapshot holds: changed in place
        self.count = 0  # files
        self.dir_specs: dict[str, Specs] = {}
        self.multi: set[str] = set()
        self.cursor = 0
        self.gen = 0
        self.changed: set[str] = set()  # since the last snapshot
        self.everything = False  # every file changed (the first walk): not journalled one by one

    # --- the records ----------------------------------------------------------------------------

    def get(self, rel: str) -> str | None:
        inner = self.dirs.get(rel.rpartition("/")[0])
        return inner.get(rel) if inner is not None else None

    def _mutable(self, folder: str) -> dict[str, str]:
        """The folder's mapping, safe to change (a copy when a snapshot holds it)."""
        if folder in self._owned:
            return self.dirs[folder]
        inner = dict(self.dirs.get(folder, ()))
        self.dirs[folder] = inner
        self._owned.add(folder)
        return inner

    def _put(self, rel: str, folder: str, digest: str) -> None:
        inner = self.dirs.get(folder)
        old = inner.get(rel) if inner is not None else None
        if old == digest:
            return
        self._mutable(folder)[rel] = digest
        if old is None:
            self.count += 1
        if not self.everything:
            self.changed.add(rel)

    def _pop(self, rel: str, folder: str) -> None:
        inner = self.dirs.get(folder)
        if inner is None or rel not in inner:
            return
        del self._mutable(folder)[rel]
        self.count -= 1
        if not self.everything:
            self.changed.add(rel)

    def shared(self) -> None:
        """A snapshot now holds every folder's mapping: the next change copies its folder."""
        self._owned.clear()

    # --- building -------------------------------------------------------------------------------

    def build(self, progress: Callable[[int], None] | None = None) -> None:
        self.cursor = self.tw.cursor()
        self.everything = True
        self._walk("", (), progress=progress)

    def sync(self) -> bool:
        """Apply what changed since the last sync; True when some file's digest moved."""
        ch = self.tw.since(self.cursor)
        self.cursor = ch.cursor
        if self.tw.failed is not None:
            raise WatchFailed(self.tw.failed)
        trees = set(ch.trees)
        for rel in ch.paths:
            # An event: its bytes may have moved whatever the stat says, even when a folder
            # rescan below reads it (same size, same mtime tick: the cache would serve the old).
            self.fp._cache.pop(rel, None)
            parent, name = _split(rel)
            if name == ".gitignore":  # the rules of the whole folder moved: read it again
                self.fp._specs.pop(parent, None)
                trees.add(parent)
        if ch.all or "" in trees:
            self._rescan_all()
        else:
            done: list[str] = []
            for top in sorted(trees, key=lambda t: (t.count("/"), t)):
                if any(_under(top, d) for d in done):
                    continue
                self._rescan(top)
                done.append(top)
            for rel in sorted(ch.paths):
                if not any(_under(rel, d) for d in done):
                    self._path(rel)
        for rel in list(self.multi):
            self._multi(rel)
        return bool(self.changed) or self.everything

    # --- what one record means ------------------------------------------------------------------

    def _rescan_all(self) -> None:
        old = self.dirs
        self.dirs, self._owned, self.count = {}, set(), 0
        self.dir_specs, self.multi = {}, set()
        everything, self.everything = self.everything, True  # compared below, not one by one
        self._walk("", ())
        self.everything = everything
        if everything:
            return
        for d, inner in self.dirs.items():
            before = old.get(d, {})
            self.changed.update(p for p, v in inner.items() if before.get(p) != v)
        for d, before in old.items():
            inner = self.dirs.get(d, {})
            self.changed.update(p for p in before if p not in inner)

    def _drop_tree(self, top: str) -> None:
        for d in [d for d in self.dirs if _under(d, top)]:
            inner = self.dirs.pop(d)
            self._owned.discard(d)
            self.count -= len(inner)
            if not self.everything:
                self.changed.update(inner)
            self.multi.difference_update(inner)
        for d in [d for d in self.dir_specs if _under(d, top)]:
            del self.dir_specs[d]

    def _rescan(self, top: str) -> None:
        if top == "":
            self._rescan_all()
            return
        self._drop_tree(top)
        self._remove(top)  # a file of that name, replaced by the folder
        parent, name = _split(top)
        specs = self.dir_specs.get(parent)
        if specs is None:
            return  # in an ignored folder (or one gone as well)
        try:
            st = os.lstat(os.path.join(self.fp._root_s, top))
        except OSError:
            return
        if not stat.S_ISDIR(st.st_mode):
            self._path(top)  # a folder replaced by a file (ignored names are for folders)
        elif name not in self.fp.ignore_dirs and not _ignored(specs, top, True):
            self._walk(top, specs)

    def _path(self, rel: str) -> None:
        parent, name = _split(rel)
        specs = self.dir_specs.get(parent)
        if specs is None:
            return  # not a tracked folder: ignored, or the record of one gone since
        try:
            st = os.lstat(os.path.join(self.fp._root_s, rel))
        except OSError:
            self._remove(rel)
            return
        if stat.S_ISDIR(st.st_mode):
            self._remove(rel)
            if rel not in self.dir_specs:
                self._rescan(rel)
            return
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            self._remove(rel)
            return
        if specs and _ignored(specs, rel, False):
            self._remove(rel)
            return
        self.fp._cache.pop(rel, None)  # an event: the bytes may have moved, whatever the stat says
        digest = self.fp._digest_for(rel, st)
        if digest is None:
            self._remove(rel)
            return
        self._set(rel, parent, digest, st)

    def _multi(self, rel: str) -> None:
        try:
            st = os.lstat(os.path.join(self.fp._root_s, rel))
        except OSError:
            self._remove(rel)
            return
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            self._remove(rel)
            return
        digest = self.fp._digest_for(rel, st)  # the walk's rule: stat cache and racy window
        if digest is None:
            self._remove(rel)
        else:
            self._set(rel, _split(rel)[0], digest, st)

    def _set(self, rel: str, parent: str, digest: str, st: os.stat_result) -> None:
        self._put(rel, parent, digest)
        if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
            self.multi.add(rel)
        else:
            self.multi.discard(rel)

    def _remove(self, rel: str) -> None:
        self._pop(rel, _split(rel)[0])
        self.multi.discard(rel)

    # --- the walk (Fingerprinter._walk), recording folders and their rules ---------------------

    def _walk(
        self, top: str, specs: Specs, *, progress: Callable[[int], None] | None = None
    ) -> None:
        fp = self.fp
        fresh_before = fp._clock() - RACY_WINDOW_NS

        def on_dir(rel_dir: str, specs: Specs) -> None:
            self.dir_specs[rel_dir] = specs
            self._mutable(rel_dir)

        count = 0
        for rel, st in fp._walk(top, specs, on_dir):
            digest = fp._cached_digest(rel, st, fresh_before)
            if digest is None:
                continue
            self._put(rel, rel.rpartition("/")[0], digest)
            if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
                self.multi.add(rel)
            count += 1
            if progress is not None and count % 5000 == 0:  # PROGRESS_FILES
                progress(count)
