from __future__ import annotations

import pytest

from cerveau_tui.policy.commands import command_prefix, denial_kinds, denied_paths, is_known_safe


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("npm install lodash", "npm install"),
        ("git commit -m 'x'", "git commit"),
        ("pytest -q tests", "pytest"),
        ("python script.py", "python"),
        ("make test", "make test"),
        ("make test && rm -rf /", "make test && rm -rf /"),
        ("ls > out", "ls > out"),
    ],
)
def test_command_prefix(command: str, prefix: str) -> None:
    assert command_prefix(command) == prefix


def test_unparseable_command_is_not_safe() -> None:
    assert not is_known_safe("cat 'unterminated")


def test_absolute_path_to_a_safe_name_is_not_safe() -> None:
    # ./ls in the workspace could be anything the model wrote
    assert not is_known_safe("./ls")
    assert not is_known_safe("/tmp/ls")


def test_env_assignment_prefix_is_not_safe() -> None:
    assert not is_known_safe("LD_PRELOAD=x.so ls")


def test_denial_kinds() -> None:
    assert denial_kinds("cannot create /x: Read-only file system") == {"write"}
    assert denial_kinds("connect: Network is unreachable") == {"network"}
    assert denial_kinds("all good") == set()


def test_denied_paths_from_common_tools() -> None:
    out = (
        "touch: cannot touch '/etc/a': Read-only file system\n"
        "/bin/sh: 1: cannot create /etc/b: Read-only file system\n"
        "OSError: [Errno 30] Read-only file system: '/etc/c'\n"
        "bash: /etc/d: Permission denied\n"
    )
    assert denied_paths(out) == ["/etc/a", "/etc/b", "/etc/c", "/etc/d"]
