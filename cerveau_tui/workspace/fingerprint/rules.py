"""The fingerprint's rules shared by the walk (fingerprinter.py) and the live tree (live.py)."""

from __future__ import annotations

import pathspec

# A file whose mtime is this close to the moment we hashed it may be written again within the
# same timestamp tick (kernel timestamps are coarse: a jiffy, 4-10 ms). A same-size rewrite in that
# tick keeps (size, mtime_ns, inode) identical and the cache would serve the old digest; git calls
# these entries "racily clean" and so do we: they are re-hashed until they are old enough.
RACY_WINDOW_NS = 100_000_000


def _ignored(specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...], rel: str, is_dir: bool) -> bool:
    """Git's rule: the deepest .gitignore with a matching pattern decides (negations included)."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return bool(result.include)
    return False
