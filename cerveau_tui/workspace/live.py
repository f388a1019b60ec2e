"""The fingerprint kept current from the kernel's change set (watch.TreeWatch), not by a walk.

One full walk when it starts; after that each sync reads only what the journal names: a path is
stat'ed and, when it is a file, hashed again whatever its metadata says (an event means its bytes
may have moved, so a same-size rewrite in the same mtime tick cannot be served from the cache);
a folder that appeared, vanished or changed mode is walked again (walk semantics, stat cache and
racy window included); an overflow walks everything once. `.gitignore` changes re-read their
folder. Files with several hard links are stat'ed at every sync (a write through a name outside
the tree raises no event here). What a fresh walk would give is the spec: tests/workspace/
test_fingerprint_live.py compares them after random operations.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from typing import Any

import pathspec

from .rules import RACY_WINDOW_NS, _ignored
from .snapshot import Snapshot, bucket_digest, bucket_of, dir_digest, top_digest
from .watch import TreeWatch

# The Fingerprinter: fingerprint.py imports this module, so it is typed loosely here (one way).
Fingerprinter = Any

Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


class WatchFailed(Exception):
    """The watch stopped being exact (its reason is the watch's `failed`): walk from now on."""


def _under(rel: str, top: str) -> bool:
    return top == "" or rel == top or rel.startswith(top + "/")


def _split(rel: str) -> tuple[str, str]:
    d, _, name = rel.rpartition("/")
    return d, name


class LiveTree:
    def __init__(self, fp: Fingerprinter, tw: TreeWatch) -> None:
        self.fp = fp
        self.tw = tw
        self.files: dict[str, str] = {}
        self.dir_files: dict[str, set[str]] = {}
        self.dir_specs: dict[str, Specs] = {}
        self.multi: set[str] = set()
        self.cursor = 0
        self.gen = 0
        self.changed: set[str] = set()  # since the last snapshot

    # --- building -------------------------------------------------------------------------------

    def build(self, progress: Callable[[int], None] | None = None) -> None:
        self.cursor = self.tw.cursor()
        self._walk("", (), progress=progress)
        self.changed = set(self.files)

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
        return bool(self.changed)

    # --- what one record means ------------------------------------------------------------------

    def _rescan_all(self) -> None:
        old = self.files
        self.files, self.dir_files, self.dir_specs, self.multi = {}, {}, {}, set()
        self._walk("", ())
        self.changed.update(p for p, d in self.files.items() if old.get(p) != d)
        self.changed.update(p for p in old if p not in self.files)

    def _drop_tree(self, top: str) -> None:
        for d in [d for d in self.dir_files if _under(d, top)]:
            for rel in self.dir_files.pop(d):
                if self.files.pop(rel, None) is not None:
                    self.changed.add(rel)
                self.multi.discard(rel)
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
        if self.files.get(rel) != digest:
            self.changed.add(rel)
        self.files[rel] = digest
        self.dir_files.setdefault(parent, set()).add(rel)
        if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
            self.multi.add(rel)
        else:
            self.multi.discard(rel)

    def _remove(self, rel: str) -> None:
        if self.files.pop(rel, None) is not None:
            self.changed.add(rel)
        self.multi.discard(rel)
        parent = _split(rel)[0]
        names = self.dir_files.get(parent)
        if names is not None:
            names.discard(rel)

    # --- the walk (Fingerprinter._walk), recording folders and their rules ---------------------

    def _walk(
        self, top: str, specs: Specs, *, progress: Callable[[int], None] | None = None
    ) -> None:
        fp = self.fp
        fresh_before = fp._clock() - RACY_WINDOW_NS
        dir_files = self.dir_files

        def on_dir(rel_dir: str, specs: Specs) -> None:
            self.dir_specs[rel_dir] = specs
            dir_files.setdefault(rel_dir, set())

        count = 0
        for rel, st in fp._walk(top, specs, on_dir):
            digest = fp._cached_digest(rel, st, fresh_before)
            if digest is None:
                continue
            if self.files.get(rel) != digest:
                self.changed.add(rel)
            self.files[rel] = digest
            dir_files[rel.rpartition("/")[0]].add(rel)
            if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
                self.multi.add(rel)
            count += 1
            if progress is not None and count % 5000 == 0:  # PROGRESS_FILES
                progress(count)


def take_snapshot(fp: Fingerprinter) -> Snapshot:
    """The live fingerprint's next Snapshot (Fingerprinter.scan with a watch)."""
    live: LiveTree = fp._live
    if not live.sync() and fp.last is not None and fp.last._lineage is not None:
        return fp.last
    changed = live.changed
    live.changed = set()
    # Only the folders that changed are rebuilt: their {rel: digest}, their digest, their
    # bucket's digest; the snapshot shares every other folder's mapping with the last one.
    dirs, dds, buckets = fp._snap_dirs, fp._dir_digests, fp._buckets
    first = not dirs
    todo = list(live.dir_files) if first else {p.rpartition("/")[0] for p in changed}
    touched: set[int] = set()
    for d in todo:
        b = bucket_of(d)
        rels = live.dir_files.get(d)
        if rels:
            inner = {r: live.files[r] for r in rels}
            dirs[d] = inner
            dds[d] = dir_digest([(r.rpartition("/")[2], v) for r, v in inner.items()])
            buckets.setdefault(b, set()).add(d)
        else:
            dirs.pop(d, None)
            dds.pop(d, None)
            live.dir_files.pop(d, None)
            buckets.get(b, set()).discard(d)
        touched.add(b)
    for b in touched:
        members = buckets.get(b)
        if members:
            fp._bucket_digests[b] = bucket_digest({d: dds[d] for d in members})
        else:
            buckets.pop(b, None)
            fp._bucket_digests.pop(b, None)
    digest = top_digest(fp._bucket_digests)
    gen = fp._journal.add(frozenset(changed))
    snap = Snapshot(
        _dirs=dict(dirs), _len=len(live.files), _digest=digest, _lineage=(fp._journal, gen)
    )
    fp.last = snap
    return snap


class PendingScan:
    """A scan asked for before the first snapshot was built (Fingerprinter.scan_soon)."""

    def __init__(self, fp: Fingerprinter) -> None:
        self._fp = fp
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()

    def resolve(self) -> Snapshot:
        with self._lock:
            if self._snap is None:
                self._snap = self._fp.scan()
            return self._snap
