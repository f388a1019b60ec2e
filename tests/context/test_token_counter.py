"""Token counting: the GGUF's own BPE locally, /tokenize on the server, or a labelled estimate."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cerveau_tui.context.gguf import GGUFError, read_metadata
from cerveau_tui.context.tokens import (
    TokenCounter,
    _byte_decoder,
    encoding_for_gguf,
    local_model_path,
)
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import ServerProps
from cerveau_tui.testing.scripted_server import ScriptedServer


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def write_gguf(path: Path, meta: dict) -> None:
    """A minimal GGUF v3 header (no tensors) with string, u32 and array-of-string/i32 values."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(meta))
    for key, value in meta.items():
        out += _s(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + _s(value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        elif value and isinstance(value[0], str):
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_s(v) for v in value)
        else:
            out += struct.pack("<IIQ", 9, 5, len(value)) + struct.pack(f"<{len(value)}i", *value)
    path.write_bytes(out)


def tiny_vocab(pre: str = "smollm", model: str = "gpt2") -> dict:
    enc = {b: c for c, b in _byte_decoder().items()}
    byte_tokens = [enc[b] for b in range(256)]
    merges = ["h e", "l l", "he ll", "Ġ w", "2 0"]
    merged = ["he", "ll", "hell", "Ġw", "20"]
    tokens = ["<|im_start|>", *byte_tokens, *merged]
    return {
        "tokenizer.ggml.model": model,
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": [3] + [1] * (len(tokens) - 1),
        "tokenizer.ggml.merges": merges,
        "general.alignment": 32,
    }


def test_gguf_metadata_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, tiny_vocab())
    meta = read_metadata(str(path))
    assert meta["tokenizer.ggml.pre"] == "smollm" and meta["general.alignment"] == 32
    assert meta["tokenizer.ggml.merges"][2] == "he ll" and len(meta["tokenizer.ggml.tokens"]) == 262


def test_only_the_requested_keys_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, tiny_vocab())
    assert read_metadata(str(path), {"tokenizer.ggml.model"}) == {"tokenizer.ggml.model": "gpt2"}


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(GGUFError):
        read_metadata(str(path))


def test_a_local_byte_level_bpe_gguf_counts_with_its_own_merges(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, tiny_vocab())
    counter = TokenCounter(None, str(path))
    assert counter.source == "gguf-bpe"
    # "hello" -> "hell" + "o"; " w" -> one merged token; the special token is one token
    assert counter.encode("hello") == [259, 1 + ord("o")]
    assert counter.count("hello world") == 2 + 1 + 4  # hell|o|Ġw|o|r|l|d
    assert counter.count("<|im_start|>") == 1
    assert counter.count("") == 0


def test_digits_are_split_one_by_one_for_smollm_but_merged_for_gpt2(tmp_path: Path) -> None:
    smollm, gpt2 = tmp_path / "s.gguf", tmp_path / "g.gguf"
    write_gguf(smollm, tiny_vocab(pre="smollm"))
    write_gguf(gpt2, tiny_vocab(pre="gpt-2"))
    assert TokenCounter(None, str(smollm)).count("2026") == 4
    assert TokenCounter(None, str(gpt2)).count("2026") == 3  # "20" merges


@pytest.mark.parametrize(("model", "pre"), [("llama", "smollm"), ("gpt2", "some-new-pretokenizer")])
def test_tokenizers_we_cannot_reproduce_are_left_to_the_server(
    tmp_path: Path, model: str, pre: str
) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, tiny_vocab(pre=pre, model=model))
    assert encoding_for_gguf(str(path)) is None


def test_the_server_tokenizer_is_used_and_cached_per_text() -> None:
    with ScriptedServer({"responses": []}) as srv:
        counter = TokenCounter(LlamaProvider(srv.url))
        assert (
            counter.count("abcdefgh") == 2
        )  # the scripted server's labelled 4-bytes approximation
        assert counter.count("abcdefgh") == 2
        assert counter.count("abcd") == 1
        assert counter.source == "server"
        assert srv.state.hits["/tokenize"] == 2


def test_without_a_tokenizer_anywhere_the_count_is_a_labelled_estimate() -> None:
    with ScriptedServer({"responses": []}, extras=False) as srv:
        counter = TokenCounter(LlamaProvider(srv.url))
        assert counter.source == "estimate" and counter.is_estimate
        assert counter.count("x" * 9) == 3


def test_a_missing_or_remote_model_path_is_not_used(tmp_path: Path) -> None:
    assert local_model_path(ServerProps(model_path="SmolLM2.gguf")) is None
    assert local_model_path(ServerProps(model_path=str(tmp_path / "absent.gguf"))) is None
    real = tmp_path / "here.gguf"
    real.write_bytes(b"GGUF")
    assert local_model_path(ServerProps(model_path=str(real))) == str(real)


TEXTS = [
    "Hello world <|im_start|> 12345",
    "def f(x):\n    return x**2  # square\n\n\n",
    "  leading   spaces\tand\ttabs 3.14159 1,000,000",
    "Ünïcödé — “quotes” 日本語 🚀 it's they're we've I'm",
    '{"tool": "bash", "arguments": {"command": "echo hi && ls -la"}}',
]


@pytest.mark.e2e
def test_local_bpe_gives_the_same_tokens_as_the_real_server(real_stack: str) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate

    model = locate(stack_paths()).model
    assert model is not None
    counter = TokenCounter(None, str(model))
    assert counter.source == "gguf-bpe"
    server = LlamaProvider(real_stack)
    source = Path(__file__).read_text()
    for text in [*TEXTS, source]:
        assert counter.encode(text) == server.tokenize(text), text[:40]
