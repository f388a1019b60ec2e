"""The search index on disk, and what one search may set aside with it (search_index.py says why
this is exactly as correct as rg alone).

Laid out for the question asked: the signatures are stored by column (byte c of every file's
signature, then byte c+1...), so a pattern's few needed bits read a few columns of n bytes each,
not n signatures; then the flags and the digests of every file, then the folders (their names,
ctimes, subfolders and the names of their files, in file order), then what only a rebuild reads
(each file's stat). Reading the index record by record in Python took 0.6-0.9 s at 100,000 files;
this takes a tenth of it.

Sealed: the file ends with a keyed blake3 of everything before it, under a key derived from the
person's key (person_key.py). The index sits in `.cerveau/`, which a cloned repository can hold:
a planted index whose digests match the files it ships but whose signatures are empty would have
search set aside the very file that holds a match. One that does not verify is not read.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import struct
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import blake3

from ..person_key import load_key
from .search_index import SIG_BYTES
from .walk import SKIP_DIRS

_SKIP = frozenset(SKIP_DIRS)

_MAGIC = b"CRVIDX3\n"
_MAC_BYTES = 32
#: An index past this size is not read (1,000,000 files, the build's bound, take ~250 MB).
MAX_INDEX_BYTES = 512 << 20
_HEAD = struct.Struct("<II")  # files, folders
_FOLDER = struct.Struct("<qBIII")  # ctime_ns, clean, subdir names' bytes, files, names' bytes
_LEN = struct.Struct("<H")
_STAT = struct.Struct("<qqqq")
#: What the exclusion lines may take of the sandboxed script (one argv word: 128 KiB).
BUDGET_BYTES = 96_000
#: Characters a line may hold as they are: anything else (glob syntax, a newline, a leading
#: `#`/`!`) would need gitignore escaping, and such a path is simply never set aside.
_UNSAFE = set("*?[]\\!#\n\r")


@dataclass
class FileRecord:
    name: str
    digest: bytes  # blake3, 32 bytes
    flags: int
    sig: bytes  # SIG_BYTES
    stat_key: tuple[int, int, int, int]  # size, mtime_ns, ino, ctime_ns: a rebuild reuses it


@dataclass
class FolderRecord:
    rel: str  # "" for the workspace
    ctime_ns: int  # the folder's st_ctime (no utime resets it); -1: too recent to trust
    clean: bool  # every entry a regular file recorded here, a link, or a folder in `subdirs`
    subdirs: list[str] = field(default_factory=list)  # recorded below, or skipped by name
    files: list[FileRecord] = field(default_factory=list)


def _z(names: list[str]) -> bytes:
    return b"\x00".join(os.fsencode(n) for n in names)


def _unz(data: bytes) -> list[str]:
    return data.decode("utf-8", "surrogateescape").split("\x00") if data else []


def _index_key() -> bytes | None:
    """The key the index is sealed with; None (no index written or read) without the person's."""
    key = load_key()
    return None if key is None else hmac.new(key, b"cerveau search index", hashlib.sha256).digest()


def write_index(path: Path, folders: list[FolderRecord]) -> None:
    """Deepest folders first (a folder's subfolders come before it); atomic (a rename); sealed.
    Without the person's key nothing is written (search then reads every file)."""
    key = _index_key()
    if key is None:
        return
    seal = blake3.blake3(key=key)
    files = [f for d in folders for f in d.files]
    rows = b"".join(f.sig.ljust(SIG_BYTES, b"\x00")[:SIG_BYTES] for f in files)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "wb", buffering=1 << 20) as out:

        def put(data: bytes) -> None:
            seal.update(data)
            out.write(data)

        put(_MAGIC + _HEAD.pack(len(files), len(folders)))
        put(bytes(f.flags for f in files))
        for c in range(SIG_BYTES):
            put(rows[c::SIG_BYTES])
        put(b"".join(f.digest for f in files))
        for d in folders:
            rel, subs, names = os.fsencode(d.rel), _z(d.subdirs), _z([f.name for f in d.files])
            put(_LEN.pack(len(rel)) + rel)
            put(_FOLDER.pack(d.ctime_ns, d.clean, len(subs), len(d.files), len(names)))
            put(subs + names)
        put(b"".join(_STAT.pack(*f.stat_key) for f in files))
        out.write(seal.digest())
    os.replace(tmp, path)


def _sealed(fd: int, size: int) -> bool:
    """Whether the file's last 32 bytes are the seal of the rest, under this person's key."""
    key = _index_key()
    if key is None or size < len(_MAGIC) + _HEAD.size + _MAC_BYTES or size > MAX_INDEX_BYTES:
        return False
    seal = blake3.blake3(key=key)
    left = size - _MAC_BYTES
    pos = 0
    while left > 0:
        chunk = os.pread(fd, min(left, 1 << 20), pos)
        if not chunk:
            return False
        seal.update(chunk)
        pos += len(chunk)
        left -= len(chunk)
    return hmac.compare_digest(seal.digest(), os.pread(fd, _MAC_BYTES, pos))


def _open(path: Path) -> BinaryIO | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        ok = stat.S_ISREG(st.st_mode) and _sealed(fd, st.st_size)  # a FIFO is not read
    except OSError:
        ok = False
    if not ok:
        os.close(fd)
        return None
    fh = open(fd, "rb", buffering=1 << 16)  # noqa: SIM115 - the caller closes it
    if fh.read(len(_MAGIC)) != _MAGIC:
        fh.close()
        return None
    return fh


@dataclass
class _Folder:
    rel: str
    ctime_ns: int
    clean: bool
    subdirs: list[str]
    first: int  # its first file's number
    names: list[str]


def _folders(fh: BinaryIO, n_folders: int) -> Iterator[_Folder]:
    # Read in blocks of bytes and decoded once per folder: per name, os.fsdecode and a read()
    # were most of the query's time.
    buf = b""
    pos = 0
    first = 0

    def take(k: int) -> bytes:
        nonlocal buf, pos
        if pos + k > len(buf):
            buf = buf[pos:] + fh.read(max(k, 1 << 20))
            pos = 0
            if k > len(buf):
                raise ValueError("a torn index")
        out = buf[pos : pos + k]
        pos += k
        return out

    for _ in range(n_folders):
        rel = take(_LEN.unpack(take(_LEN.size))[0]).decode("utf-8", "surrogateescape")
        ctime, clean, n_subs, n_files, n_names = _FOLDER.unpack(take(_FOLDER.size))
        subs = _unz(take(n_subs))
        names = _unz(take(n_names))
        if len(names) != n_files:
            raise ValueError("a torn index")
        yield _Folder(rel, ctime, bool(clean), subs, first, names)
        first += n_files
    fh.seek(pos - len(buf), os.SEEK_CUR)  # where the folders end: the stats follow


def index_info(path: Path) -> dict[str, object]:
    """What `doctor` says of the index at `path`: none, not ours (a seal this person's key does
    not verify: never read), or sealed with its file count and size. Opens nothing for writing."""
    try:
        size = os.lstat(path).st_size
    except OSError:
        return {"state": "none"}
    fh = _open(path)
    if fh is None:
        return {"state": "not ours (not read)", "bytes": size}
    with fh:
        n, _ = _HEAD.unpack(fh.read(_HEAD.size))
    return {"state": "sealed", "files": n, "bytes": size}


def read_index(path: Path) -> Iterator[FolderRecord]:
    """Every record (a rebuild reuses the unchanged ones); nothing for a missing or foreign file."""
    fh = _open(path)
    if fh is None:
        return
    with fh:
        n, n_folders = _HEAD.unpack(fh.read(_HEAD.size))
        flags = fh.read(n)
        cols = [fh.read(n) for _ in range(SIG_BYTES)]
        digests = fh.read(32 * n)
        folders = list(_folders(fh, n_folders))
        stats = fh.read(_STAT.size * n)
    for d in folders:
        rec = FolderRecord(d.rel, d.ctime_ns, d.clean, d.subdirs)
        for k, name in enumerate(d.names, d.first):
            sig = bytes(c[k] for c in cols)
            key = _STAT.unpack_from(stats, k * _STAT.size)
            rec.files.append(FileRecord(name, digests[32 * k : 32 * k + 32], flags[k], sig, key))
        yield rec


@dataclass
class Aside:
    """What one search sets aside: the ignore-file lines and the files they name."""

    lines: list[str] = field(default_factory=list)
    files: int = 0


@dataclass(slots=True)
class _Dir:
    rel: str
    ctime_ns: int
    clean: bool
    first: int
    count: int
    subs: list[int]  # the recorded subfolders' numbers (a folder skipped by name: none)
    names_at: int  # where its file names are in the index file
    names_len: int


class LoadedIndex:
    """One index file held for the session's searches: the folders (no file names: those are
    read from the file when a line needs them), the flags and digests, and which files are still
    what was indexed (`valid`), brought up to date from the fingerprint's changes between two
    snapshots (diff_snapshots: the paths that changed), not by looking at every file again."""

    def __init__(self, path: Path) -> None:
        fh = _open(path)
        if fh is None:
            raise OSError(f"{path}: not a search index")
        self.path = path
        # Kept open: a rebuild renames a new file over this one, and the offsets are this one's.
        self._fh = fh
        self._lock = threading.Lock()
        self.n, n_folders = _HEAD.unpack(fh.read(_HEAD.size))
        self.flags = fh.read(self.n)
        self.cols_at = fh.tell()
        fh.seek(self.cols_at + SIG_BYTES * self.n)
        # The first 16 bytes of each blake3 (128 bits) tell a changed file: half the memory.
        full = fh.read(32 * self.n)
        self.digests = b"".join(full[k : k + 16] for k in range(0, len(full), 32))
        del full
        self.dirs: list[_Dir] = []
        self.by_rel: dict[str, int] = {}
        first = 0
        for _ in range(n_folders):
            rel = fh.read(_LEN.unpack(fh.read(_LEN.size))[0]).decode("utf-8", "surrogateescape")
            ctime, clean, n_subs, n_files, n_names = _FOLDER.unpack(fh.read(_FOLDER.size))
            subs = _unz(fh.read(n_subs))
            at = fh.tell()
            fh.seek(n_names, os.SEEK_CUR)
            kids = [self.by_rel.get(f"{rel}/{s}" if rel else s, -1) for s in subs]
            d = _Dir(
                rel,
                ctime,
                bool(clean),
                first,
                n_files,
                [k for k in kids if k >= 0],
                at,
                n_names,
            )
            if any(k < 0 and s not in _SKIP for k, s in zip(kids, subs, strict=True)):
                d.clean = False  # a subfolder recorded but not found: never set aside whole
            self.by_rel[rel] = len(self.dirs)
            self.dirs.append(d)
            first += n_files
        if first != self.n:
            raise ValueError("a torn index")
        self.valid = bytearray(self.n)  # 1: the fingerprint's digest is the one indexed
        self.seen: Mapping[str, str] | None = None

    def close(self) -> None:
        self._fh.close()

    def names(self, d: _Dir) -> list[str]:
        with self._lock:
            self._fh.seek(d.names_at)
            return _unz(self._fh.read(d.names_len))

    def _column(self, c: int) -> bytes:
        with self._lock:
            self._fh.seek(self.cols_at + c * self.n)
            return self._fh.read(self.n)

    def refresh(self, snapshot: Mapping[str, str], changed: list[str] | None) -> int:
        """Bring `valid` to `snapshot`: the paths in `changed` (since the last refresh), or every
        file (None: the first time, or the change list is not known). How many were looked at."""
        folders = (
            range(len(self.dirs))
            if changed is None or self.seen is None
            else sorted({self.by_rel.get(p.rpartition("/")[0], -1) for p in changed} - {-1})
        )
        looked = 0
        hexes = self.digests
        for i in folders:
            d = self.dirs[i]
            head = d.rel + "/" if d.rel else ""
            for k, name in enumerate(self.names(d), d.first):
                cur = snapshot.get(head + name)
                self.valid[k] = cur is not None and cur[:32] == hexes[16 * k : 16 * k + 16].hex()
                looked += 1
        self.seen = snapshot
        return looked

    def _maybe(self, need: list[int]) -> int:
        """A number whose byte k is not 0 when file k's signature has every needed bit."""
        n = self.n
        acc = (1 << (8 * n)) - 1
        by_col: dict[int, int] = {}
        for b in need:
            by_col[b >> 3] = by_col.get(b >> 3, 0) | 1 << (b & 7)
        for c, mask in sorted(by_col.items()):
            table = bytes(1 if v & mask == mask else 0 for v in range(256))
            acc &= int.from_bytes(self._column(c).translate(table), "little")
            if not acc:
                break
        return acc

    def exclusions(
        self, need: list[int], ws: Path, under: str = "", budget: int = BUDGET_BYTES
    ) -> Aside:
        """Ignore-file lines (anchored at the workspace: rg runs there) naming what cannot match
        under the folder `under` ("" for all), within `budget` bytes. Set aside: a file whose
        flags are clear (not binary, UTF-16, large or unreadable when indexed), whose signature
        lacks a needed bit, and that is still what was indexed (`valid`, refreshed first); a
        folder whose every recorded entry is set aside, recorded clean, its ctime as it was."""
        res = Aside()
        n = self.n
        if not need or not n:
            return res
        invalid = self.valid.translate(_FLIP)
        keep = (
            int.from_bytes(self.flags, "little")
            | self._maybe(need)
            | int.from_bytes(invalid, "little")
        ).to_bytes(n, "little")
        prefix = under + "/" if under else ""
        ws_s = str(ws)
        whole: dict[int, int] = {}
        loose: list[int] = []
        for i, d in enumerate(self.dirs):
            if not (d.rel == under or d.rel.startswith(prefix)):
                continue
            mine = keep[d.first : d.first + d.count]
            free = mine.count(0)
            if (
                free == d.count
                and d.clean
                and d.rel != under
                and all(k in whole for k in d.subs)
                and _ctime(os.path.join(ws_s, d.rel)) == d.ctime_ns
            ):
                whole[i] = free + sum(whole[k] for k in d.subs)
            elif free:
                loose.append(i)
        # A folder set aside whole is named once, at the top: its parent is not set aside whole.
        parent = {k: i for i in whole for k in self.dirs[i].subs}
        tops = sorted(
            ((i, c) for i, c in whole.items() if parent.get(i) not in whole), key=lambda x: -x[1]
        )
        used = 0
        for i, c in tops:
            line = f"/{self.dirs[i].rel}/"
            if _safe(self.dirs[i].rel) and used + len(line) + 1 <= budget:
                res.lines.append(line)
                used += len(line) + 1
                res.files += c
        for i in loose:
            if used >= budget - 64:
                break
            d = self.dirs[i]
            head = d.rel + "/" if d.rel else ""
            for k, name in enumerate(self.names(d), d.first):
                if keep[k]:
                    continue
                rel = head + name
                line = f"/{rel}"
                if _safe(rel) and used + len(line) + 1 <= budget:
                    res.lines.append(line)
                    used += len(line) + 1
                    res.files += 1
        return res


def _safe(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not (_UNSAFE & set(rel)) and rel == rel.strip()


def _ctime(path: str) -> int | None:
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return None


_FLIP = bytes([1] + [0] * 255)
