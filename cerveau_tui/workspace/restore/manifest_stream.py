"""A manifest (workspace/restore/checkpoints.py) read one entry at a time.

The store's collector (session/rewind/gc.py) runs at every session's start, next to the first
fingerprint of the tree, and only needs a manifest's digests: json.loads of a 100,000-file
manifest made ~30 MB of lists, strings and ints at once, for each earlier session of the
workspace. Here each key and value goes through the same JSON decoder as manifest_from, so
what is accepted and refused is the same, and only one entry is alive at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from .checkpoints import Entry
from .checkpoints import _entry as entry_of

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, i: int) -> int:
    m = _SPACE.match(text, i)
    return m.end() if m is not None else i


def iter_manifest(data: bytes) -> Iterator[tuple[str, Entry]]:
    """(rel, entry) of a manifest, as manifest_from reads them, one at a time."""
    text = data.decode("utf-8")
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        raise ValueError("a manifest is an object")
    i = _skip(text, i + 1)
    if text[i : i + 1] == "}":
        i += 1
    else:
        while True:
            key, i = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                raise ValueError("a manifest's keys are strings")
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise ValueError("not a manifest: ':' expected")
            i = _skip(text, i + 1)
            value, i = _DECODER.raw_decode(text, i)
            yield key, entry_of(value)
            i = _skip(text, i)
            sep = text[i : i + 1]
            i = _skip(text, i + 1)
            if sep == "}":
                break
            if sep != ",":
                raise ValueError("not a manifest: ',' or '}' expected")
    if text[_skip(text, i) :]:
        raise ValueError("not a manifest: data after it")
