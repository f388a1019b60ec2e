"""Building the search index (search_index.py) in a process of its own (search_index_session.py
starts it).

Reading and signing 370 MB of a 100,000-file tree takes ~30 s of one core: in the harness it
would hold the interpreter lock against the turn and add its buffers to the harness's memory,
so it is a child process (`python -m cerveau_tui.tools.search_index_build WS OUT`) at idle
priority, that the session starts at its start and never waits for: until it is done, `search`
reads every file as before. The index is kept in the session's state folder (state_home) and outlives the
session: records are keyed by content, so an old index is exactly as safe as a new one (a file
changed since reads as "changed", see exclusions), and a rebuild reads only the files whose
size, mtime, inode or ctime moved.

The folders are rg's own (`rg --files`, with the search's rules): a folder rg skips (ignored)
is not recorded, so its parent is never set aside whole.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

import blake3

from .. import host_process
from ..sandbox.process import minimal_env
from ..workspace.io.openat import open_dir_beneath
from . import ripgrep
from .search_index import LARGE, LARGE_BYTES, UNREADABLE, Signer, flags_of
from .search_index_file import FileRecord, FolderRecord, read_index, write_index
from .walk import SKIP_DIRS

#: A folder changed this recently may change again within its ctime's tick unseen: not trusted.
RACY_NS = 2_000_000_000
#: Past this many files the index is not built (search reads every file, as without it).
MAX_FILES = 1_000_000
#: How often a build writes what it has done so far.
SAVE_EVERY_S = 5.0


def _read(dir_fd: int, name: str) -> bytes:
    """The bytes of the regular file `name` in the folder `dir_fd`, following no link; at most
    LARGE_BYTES + 1 (a file that grew past the bound since its stat is then flagged LARGE)."""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        chunks, left = [], LARGE_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def rg_folders(rg: str, ws: Path) -> set[str] | None:
    """The folders holding a file rg would search (and their parents), relative; None on failure."""
    argv = [*ripgrep.common(rg, ws), "--files", "--", str(ws)]
    # cwd: the workspace's .gitignore patterns are relative to rg's working directory.
    res = host_process.run(argv, cwd=ws, env=minimal_env(ws), timeout=600)
    if res.returncode not in (0, 1):
        return None
    prefix = os.fsencode(str(ws)) + b"/"
    out: set[str] = {""}
    n = 0
    for p in res.stdout.split(b"\x00"):
        if not p.startswith(prefix):
            continue
        n += 1
        d = os.fsdecode(p[len(prefix) :]).rpartition("/")[0]
        while d not in out:
            out.add(d)
            d = d.rpartition("/")[0]
    return out if n <= MAX_FILES else None


def build(
    ws: Path,
    folders: set[str],
    old_path: Path | None,
    out: Path,
    every_s: float = SAVE_EVERY_S,
    racy_ns: int = RACY_NS,
    deny: tuple[str, ...] = (),
) -> int:
    """Write the index of `folders` to `out`; how many files were read (the rest reused). What
    is done so far is written every `every_s` too: a session closed before the end (the build
    is killed with it) leaves an index of part of the tree, which the next one completes."""
    start = time.time_ns()
    saved = time.monotonic()
    old_dirs = {d.rel: d for d in read_index(old_path)} if old_path is not None else {}
    old = {rel: {f.name: f for f in d.files} for rel, d in old_dirs.items()}
    signer = Signer()
    ws_s = str(ws)
    records: list[FolderRecord] = []
    read = 0
    # A deny-read path (masked inside the sandbox) is never read nor signed: the index sits in
    # the state folder the sandbox shows, and a signature says which trigrams a file holds.
    denied = tuple(d.rstrip("/") for d in deny)

    def refused(path: str) -> bool:
        return any(path == d or path.startswith(d + "/") for d in denied)

    folders = {f for f in folders if not refused(os.path.join(ws_s, f) if f else ws_s)}
    order = sorted(folders, key=_deepest_first)
    ws_fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for done, rel in enumerate(order, 1):
            here = os.path.join(ws_s, rel) if rel else ws_s
            try:
                dir_fd = open_dir_beneath(ws_fd, rel)
            except OSError:  # gone, or a link now (UnsafePath): not read
                continue
            try:
                d, n = _folder(dir_fd, rel, here, folders, old.get(rel, {}), refused, signer)
            except OSError:
                continue
            finally:
                os.close(dir_fd)
            if d.ctime_ns >= start - racy_ns:
                d.ctime_ns = -1  # too recent to trust
            records.append(d)
            read += n
            if time.monotonic() - saved > every_s:
                # A part: the old index's records of the folders still to do, kept as they were.
                rest = [old_dirs[r] for r in order[done:] if r in old_dirs]
                write_index(out, sorted(records + rest, key=lambda d: _deepest_first(d.rel)))
                saved = time.monotonic()
    finally:
        os.close(ws_fd)
    write_index(out, records)
    return read


def _folder(
    dir_fd: int,
    rel: str,
    here: str,
    folders: set[str],
    before: dict[str, FileRecord],
    refused: Callable[[str], bool],
    signer: Signer,
) -> tuple[FolderRecord, int]:
    """The record of one folder, read through `dir_fd` (opened beneath the workspace with no
    link on the way: the build runs beside the session's commands, one of which may swap a
    folder for a link to /root between rg's listing and this read, and the index sits where
    the sandbox reads); and how many files were read anew."""
    ctime = os.fstat(dir_fd).st_ctime_ns  # moved by any entry made or gone, and by a utime
    d = FolderRecord(rel, ctime, True)
    read = 0
    for e in list(os.scandir(dir_fd)):
        sub = f"{rel}/{e.name}" if rel else e.name
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            d.clean = False
            continue
        if stat.S_ISDIR(st.st_mode):
            if e.name in SKIP_DIRS or sub in folders:
                d.subdirs.append(e.name)
            else:
                d.clean = False  # rg skips it (ignored, empty) or it is unknown: keep in
        elif stat.S_ISLNK(st.st_mode):
            continue  # rg follows no link and names none
        elif not stat.S_ISREG(st.st_mode) or refused(os.path.join(here, e.name)):
            d.clean = False
        else:
            key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            prev = before.get(e.name)
            if prev is not None and prev.stat_key == key:
                d.files.append(prev)  # keyed by content: reused, it is still its own truth
                continue
            d.files.append(_record(e.name, dir_fd, key, signer))
            read += 1
    return d, read


def _deepest_first(rel: str) -> tuple[int, str]:
    return (-rel.count("/") - (rel != ""), rel)


def _record(name: str, dir_fd: int, key: tuple[int, int, int, int], signer: Signer) -> FileRecord:
    zero = bytes(32)
    if key[0] >= LARGE_BYTES:
        return FileRecord(name, zero, LARGE, b"", key)
    try:
        data = _read(dir_fd, name)
    except OSError:
        return FileRecord(name, zero, UNREADABLE, b"", key)
    if len(data) >= LARGE_BYTES:
        return FileRecord(name, zero, LARGE, b"", key)
    flags = flags_of(data)
    sig = signer.sign(data).to_bytes(128, "little") if not flags else b"\xff" * 128
    return FileRecord(name, blake3.blake3(data).digest(), flags, sig, key)


def main(argv: list[str]) -> int:
    """`WS OUT [DENIED...]`: the workspace, the index file, the deny-read paths."""
    ws, out, deny = Path(os.path.realpath(argv[0])), Path(argv[1]), tuple(argv[2:])
    # Idle priority (rg too, its child): on a busy 2-core machine a niced build still took CPU
    # from the session's rounds (131 ms median overhead at 100,000 files, 0 without it).
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.nice(19)
        except OSError:
            pass
    rg = ripgrep.find_rg()
    if rg is None:
        return 2
    folders = rg_folders(rg, ws)
    if folders is None:
        return 3
    build(ws, folders, out if out.exists() else None, out, deny=deny)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
