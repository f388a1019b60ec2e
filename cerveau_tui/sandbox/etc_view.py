"""The private /etc a sandboxed command sees, as items bubblewrap makes: the allowed entries
(view.ETC) expanded into folders, links and files whose bytes are copied in by descriptor.

Measured: one read-only bind per allowed file made bubblewrap re-read its mount table each time,
~50 ms a command under load for ~55 binds; copying the small files in and recreating links costs
no mount at all. A large folder (ssl/certs, alternatives) or file is still one bind.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol


class Entry(Protocol):
    """An allowed /etc entry (view.Bind): where its bytes are, where it shows inside."""

    @property
    def src(self) -> Path: ...

    @property
    def dest(self) -> Path: ...


@dataclass(frozen=True)
class EtcItem:
    """One piece of the private /etc: a folder made, a link made, a file's bytes copied in (by
    descriptor, read at each command), or, for a large folder or file, a read-only bind."""

    kind: Literal["dir", "link", "file", "bind"]
    dest: Path
    src: Path | None = None
    target: str = ""


#: A folder of /etc with more entries than this is bound whole (one mount) instead of copied in
#: entry by entry; a file larger than this many bytes too.
ETC_EXPAND_ENTRIES = 64
ETC_COPY_BYTES = 1 << 20


def etc_plan(etc: Iterable[Entry]) -> list[EtcItem]:
    """The private /etc as items, parents before children."""
    out: list[EtcItem] = []
    made: set[Path] = {Path("/etc")}

    def parents(dest: Path) -> None:
        for p in reversed(dest.parents):
            if _under(p, Path("/etc")) and p not in made:
                made.add(p)
                out.append(EtcItem("dir", p))

    def add(src: Path, dest: Path, depth: int) -> None:
        try:
            st = os.lstat(src)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode) and depth > 0:
            parents(dest)
            out.append(EtcItem("link", dest, target=os.readlink(src)))
        elif stat.S_ISDIR(st.st_mode):
            try:
                names = sorted(os.listdir(src))
            except OSError:
                return
            if len(names) > ETC_EXPAND_ENTRIES or depth > 3:
                parents(dest)
                out.append(EtcItem("bind", dest, src))
                return
            parents(dest)
            if dest not in made:
                made.add(dest)
                out.append(EtcItem("dir", dest))
            for name in names:
                add(src / name, dest / name, depth + 1)
        elif stat.S_ISREG(st.st_mode):
            parents(dest)
            kind: Literal["file", "bind"] = "file" if st.st_size <= ETC_COPY_BYTES else "bind"
            out.append(EtcItem(kind, dest, src))

    for b in etc:
        add(b.src, b.dest, 0)
    return out


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
