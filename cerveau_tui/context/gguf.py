"""A small reader for GGUF metadata (the key/value header of a llama.cpp model file).

Only the header is read, never the tensors: the tokenizer lives there (`tokenizer.ggml.model`,
`.pre`, `.tokens`, `.merges`, `.token_type`). Written here rather than depending on the `gguf`
package, which pulls in numpy to read what is a few dozen lines of struct unpacking.
Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (little-endian, version 2/3).
"""

from __future__ import annotations

import struct
from typing import Any, BinaryIO

MAGIC = b"GGUF"

# value type -> struct format (scalars); 8 = string, 9 = array
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    pass


def read_metadata(path: str, keys: set[str] | None = None) -> dict[str, Any]:
    """The metadata of a GGUF file; only `keys` when given (large arrays we do not need are
    skipped without building Python objects)."""
    with open(path, "rb") as f:
        if f.read(4) != MAGIC:
            raise GGUFError(f"{path}: not a GGUF file")
        (version,) = struct.unpack("<I", f.read(4))
        if version not in (2, 3):
            raise GGUFError(f"{path}: GGUF version {version} is not supported")
        _tensors, n_kv = struct.unpack("<QQ", f.read(16))
        out: dict[str, Any] = {}
        for _ in range(n_kv):
            key = _read_string(f)
            (vtype,) = struct.unpack("<I", f.read(4))
            wanted = keys is None or key in keys
            value = _read_value(f, vtype, keep=wanted)
            if wanted:
                out[key] = value
        return out


def _read_string(f: BinaryIO) -> str:
    (n,) = struct.unpack("<Q", f.read(8))
    return f.read(n).decode("utf-8", errors="surrogateescape")


def _read_value(f: BinaryIO, vtype: int, *, keep: bool) -> Any:
    if vtype in _SCALARS:
        fmt = _SCALARS[vtype]
        return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]
    if vtype == _STRING:
        return _read_string(f)
    if vtype == _ARRAY:
        (itype,) = struct.unpack("<I", f.read(4))
        (n,) = struct.unpack("<Q", f.read(8))
        if itype in _SCALARS:
            fmt = _SCALARS[itype]
            size = struct.calcsize(fmt)
            data = f.read(size * n)
            return list(struct.unpack(f"<{n}{fmt[1]}", data)) if keep else None
        items = [_read_value(f, itype, keep=keep) for _ in range(n)]
        return items if keep else None
    raise GGUFError(f"unknown GGUF value type {vtype}")
