"""The key that seals session grants: never empty, never read half-written."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.session import grant_seal

GRANT = {"scope_key": "command:rm", "scope": "rm", "extra_writable": ["/"], "network": True}


def test_an_empty_key_file_seals_nothing_a_forger_could_reproduce(tmp_path: Path) -> None:
    grant_seal.key_path().write_text("")  # a write that failed when the key was first made
    forged = grant_seal.seal(b"", GRANT, "s1", tmp_path)
    key = grant_seal.load_key()
    assert not grant_seal.verify(key, GRANT, forged, "s1", tmp_path)


def test_a_key_made_here_is_the_one_read_back(tmp_path: Path) -> None:
    made = grant_seal.load_key()
    assert made is not None and len(made) == 32
    assert grant_seal.load_key(create=False) == made
    assert [p.name for p in grant_seal.key_path().parent.iterdir()] == [grant_seal.KEY_NAME]
