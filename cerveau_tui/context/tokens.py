"""Token counts with the loaded model's own tokenizer.

Three sources, best first, and `source` always says which one is in use:
  "gguf-bpe"  the GGUF is on this machine and its tokenizer is byte-level BPE (gpt2-style, as
              SmolLM2's): a tiktoken Encoding is built from the file's vocabulary and merges, so
              counts are local and fast (no HTTP round trip per message).
  "server"    `/tokenize` on the server, cached per text: exact, one request per new text.
  "estimate"  neither available: ceil(chars / 4), labelled as an estimate, never passed off as a count.
tiktoken's stock encodings cannot be downloaded here, and would be the wrong tokenizer anyway.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import tiktoken

from ..provider.types import Provider, ServerProps
from .gguf import GGUFError, read_metadata

# llama.cpp's pre-tokenizer splits (src/llama-vocab.cpp), as one regex each. SmolLM's runs two
# passes (every digit alone, then GPT-2's split); one regex does the same when a digit counts as
# the end of a piece: hence `\p{N}` first and `(?![^\s\p{N}])` where GPT-2 has `(?!\S)`.
_PRE_PATTERNS = {
    "smollm": r"""\p{N}|'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+""",
    "gpt-2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
}
_PRE_ALIASES = {
    "codeshell": "smollm",
    "exaone": "smollm",
    "minerva-7b": "smollm",
    "gpt2": "gpt-2",
    "mpt": "gpt-2",
    "olmo": "gpt-2",
}

_TOKENIZER_KEYS = {
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.merges",
    "tokenizer.ggml.token_type",
}
_NORMAL, _CONTROL, _USER_DEFINED = 1, 3, 4

ESTIMATE_CHARS_PER_TOKEN = 4


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte <-> printable character table, inverted: vocabularies store bytes this way."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def encoding_from_metadata(meta: dict[str, Any], name: str = "gguf") -> tiktoken.Encoding | None:
    """A tiktoken Encoding equivalent to the GGUF's tokenizer, or None when it is not a byte-level
    BPE with a pre-tokenizer we know (then the caller uses the server).

    Ranks are the model's own token ids: in these vocabularies merge k produces token id
    (first merged id + k), so id order IS merge priority and the ids come out identical to the
    server's, which makes the check against `/tokenize` exact rather than count-only."""
    if meta.get("tokenizer.ggml.model") != "gpt2":
        return None
    pre = str(meta.get("tokenizer.ggml.pre", "default"))
    pattern = _PRE_PATTERNS.get(_PRE_ALIASES.get(pre, pre))
    tokens: list[str] = meta.get("tokenizer.ggml.tokens") or []
    types: list[int] = meta.get("tokenizer.ggml.token_type") or [_NORMAL] * len(tokens)
    if pattern is None or not tokens:
        return None
    decode = _byte_decoder()
    ranks: dict[bytes, int] = {}
    special: dict[str, int] = {}
    for i, (tok, kind) in enumerate(zip(tokens, types, strict=False)):
        if kind in (_CONTROL, _USER_DEFINED):
            special[tok] = i
            continue
        try:
            raw = bytes(decode[c] for c in tok)
        except KeyError:
            return None  # not byte-level after all
        ranks.setdefault(raw, i)
    merges = meta.get("tokenizer.ggml.merges") or []
    try:
        merged_ids = [ranks.get(_merge_bytes(m, decode), -1) for m in merges]
    except KeyError:
        return None
    if -1 in merged_ids or any(b <= a for a, b in zip(merged_ids, merged_ids[1:], strict=False)):
        # Ids out of merge order (some vocabularies): rank by merge position instead. Counts stay
        # right; the ids no longer match the server's, and nothing here needs them to.
        by_merge: dict[bytes, int] = {bytes([b]): b for b in range(256)}
        for k, m in enumerate(merges):
            by_merge.setdefault(_merge_bytes(m, decode), 256 + k)
        ranks = by_merge
        special = {tok: len(merges) + 256 + i for i, tok in enumerate(special)}
    top = max(ranks.values(), default=0) + len(tokens) + 1
    for b in range(256):  # bytes the vocabulary lacks (never valid UTF-8): tiktoken needs them all
        ranks.setdefault(bytes([b]), top + b)
    return tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special
    )


def _merge_bytes(merge: str, decode: dict[str, int]) -> bytes:
    left, _, right = merge.partition(" ")
    return bytes(decode[c] for c in left + right)


@lru_cache(maxsize=4)
def _load_encoding(path: str, mtime: float, size: int) -> tiktoken.Encoding | None:
    # Keyed by mtime and size so a replaced model file is read again.
    meta = read_metadata(path, _TOKENIZER_KEYS)
    return encoding_from_metadata(meta, name=os.path.basename(path))


def encoding_for_gguf(path: str) -> tiktoken.Encoding | None:
    try:
        st = os.stat(path)
        return _load_encoding(os.path.abspath(path), st.st_mtime, st.st_size)
    except (OSError, GGUFError, ValueError):
        return None


def local_model_path(props: ServerProps) -> str | None:
    """The server's model file when it is readable here (a server started on this machine with
    an absolute path); None for a remote server."""
    path = props.model_path
    return path if path and os.path.isabs(path) and os.path.isfile(path) else None


def estimate(text: str) -> int:
    return (len(text) + ESTIMATE_CHARS_PER_TOKEN - 1) // ESTIMATE_CHARS_PER_TOKEN


class TokenCounter:
    """`count(text)`; also callable, so it can be passed wherever a `Callable[[str], int]` is."""

    def __init__(
        self, provider: Provider | None, gguf_path: str | None = None, *, cache_size: int = 4096
    ) -> None:
        self._provider = provider
        self._encoding = encoding_for_gguf(gguf_path) if gguf_path else None
        self._server_ok: bool | None = None if provider is not None else False
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def source(self) -> str:
        if self._encoding is not None:
            return "gguf-bpe"
        if self._server_ok is None:
            self.count("probe")
        return "server" if self._server_ok else "estimate"

    @property
    def is_estimate(self) -> bool:
        return self.source == "estimate"

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._encoding is not None:
            return len(self._encoding.encode(text, allowed_special="all"))
        if self._server_ok is False:
            return estimate(text)
        with self._lock:
            if text in self._cache:
                self._cache.move_to_end(text)
                return self._cache[text]
        assert self._provider is not None
        tokens = self._provider.tokenize(text)
        if tokens is None:
            # The server cannot tokenize (not llama-server, or not answering): estimates from now
            # on, and `source` says so, rather than a count that is sometimes exact.
            self._server_ok = False
            return estimate(text)
        self._server_ok = True
        with self._lock:
            self._cache[text] = len(tokens)
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return len(tokens)

    __call__ = count

    def encode(self, text: str) -> list[int] | None:
        """Token ids from the local tokenizer, None without one (for checks and benchmarks)."""
        return (
            self._encoding.encode(text, allowed_special="all")
            if self._encoding is not None
            else None
        )
