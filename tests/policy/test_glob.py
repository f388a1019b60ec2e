from __future__ import annotations

import pytest

from cerveau_tui.policy.glob import glob_match

CASES = [
    # pattern, path, expected
    ("*.lock", "yarn.lock", True),
    ("*.lock", "web/deep/Cargo.lock", True),
    ("*.lock", "yarn.lock.bak", False),
    (".env*", ".env", True),
    (".env*", "config/.env.local", True),
    (".env*", "env", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/sub/a.py", False),
    ("src/*.py", "lib/src/a.py", False),  # a pattern with a slash is anchored
    ("src/**/*.py", "src/a.py", True),  # ** matches zero segments
    ("src/**/*.py", "src/x/y/a.py", True),
    ("**/test_*.py", "tests/unit/test_a.py", True),
    ("**/test_*.py", "test_a.py", True),
    ("docs/**", "docs/a/b.md", True),
    ("docs/**", "other/docs/a.md", False),
    ("**", "anything/at/all", True),
    (".git", ".git/hooks/pre-commit", True),  # a directory pattern covers what is beneath
    (".git/hooks", ".git/hooks/pre-commit", True),
    (".git/hooks", "sub/.git/hooks/x", False),
    ("node_modules/", "a/node_modules/x.js", True),
    ("/build", "build/out.o", True),
    ("/build", "src/build/out.o", False),
    ("/etc/**", "/etc/passwd", True),  # outside paths are given absolute
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file/.txt", False),
    ("[abc].txt", "b.txt", True),
    ("[!abc].txt", "d.txt", True),
    ("[!abc].txt", "a.txt", False),
    ("a\\*b", "a*b", True),
    ("a\\*b", "axb", False),
    ("", "anything", False),  # an empty rule covers nothing
    ("*.py", "", False),
    ("*.PY", "a.py", False),  # case-sensitive by default
    ("./src/*.py", "./src/a.py", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_glob_dialect(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_case_insensitive_on_request() -> None:
    assert glob_match(".git/hooks", ".GIT/Hooks/pre-commit", case_sensitive=False)


def test_a_matching_directory_covers_its_contents() -> None:
    assert glob_match("src/a*", "src/ab/c.py")
    assert not glob_match("src/a*.py", "src/ab/c.py")


def test_non_utf8_names_match_with_surrogates() -> None:
    name = b"caf\xe9.lock".decode("utf-8", errors="surrogateescape")
    assert glob_match("*.lock", name)
