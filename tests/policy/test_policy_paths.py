"""Where a write lands decides whether it crosses: the path cases of the reference."""

from __future__ import annotations

import os
from pathlib import Path

from cerveau_tui.tools.base import Declared, resolve_path

from .conftest import PolicyFactory, write


def test_write_inside_the_workspace_is_allowed(make_policy: PolicyFactory, ws: Path) -> None:
    assert make_policy().evaluate("write_file", write(ws / "src" / "a.py")).action == "allow"


def test_absolute_write_outside_asks_and_names_the_path(
    make_policy: PolicyFactory, outside: Path
) -> None:
    v = make_policy().evaluate("write_file", write(outside / "x"))
    assert v.action == "ask"
    assert str(outside / "x") in v.reason and "outside the workspace" in v.reason


def test_dotdot_escaping_the_workspace_is_outside(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy().evaluate("write_file", write(ws / ".." / "out" / "x"))
    assert v.action == "ask" and "outside" in v.reason


def test_dotdot_staying_inside_is_inside(make_policy: PolicyFactory, ws: Path) -> None:
    assert make_policy().evaluate("write_file", write(ws / "src" / ".." / "b.py")).action == "allow"


def test_symlink_inside_pointing_out_is_outside(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    (ws / "link").symlink_to(outside)
    v = make_policy().evaluate("write_file", write(ws / "link" / "x"))
    assert v.action == "ask" and "outside" in v.reason


def test_symlink_outside_pointing_in_is_inside(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    (outside / "into").symlink_to(ws / "src")
    assert make_policy().evaluate("write_file", write(outside / "into" / "x.py")).action == "allow"


def test_workspace_opened_through_a_symlink(
    make_policy: PolicyFactory, ws: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    policy = make_policy(workspace=alias)
    assert policy.evaluate("write_file", write(ws / "a.py")).action == "allow"
    assert policy.evaluate("write_file", write(alias / "a.py")).action == "allow"
    assert (
        policy.evaluate("bash", cmd_write(alias / ".git" / "hooks" / "pre-commit")).action == "ask"
    )


def test_relative_paths_are_taken_from_the_workspace(make_policy: PolicyFactory) -> None:
    assert make_policy().evaluate("write_file", write(Path("src/a.py"))).action == "allow"
    assert make_policy().evaluate("write_file", write(Path("../escape.txt"))).action == "ask"


def test_tilde_is_a_workspace_name_not_the_home(make_policy: PolicyFactory, ws: Path) -> None:
    # resolve_path never expands ~ (the model's home is not the person's)
    p = resolve_path(ws, "~/.bashrc")
    assert p.is_relative_to(ws)
    assert make_policy().evaluate("write_file", write(p)).action == "allow"
    assert make_policy().evaluate("write_file", write(Path("~/.bashrc"))).action == "allow"


def test_home_dotfile_by_absolute_path_is_outside(make_policy: PolicyFactory) -> None:
    v = make_policy().evaluate("write_file", write(Path(os.path.expanduser("~/.bashrc"))))
    assert v.action == "ask"


def test_non_utf8_name_inside_is_allowed(make_policy: PolicyFactory, ws: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    assert make_policy().evaluate("write_file", write(ws / name)).action == "allow"


def test_non_utf8_name_outside_has_a_readable_reason(
    make_policy: PolicyFactory, outside: Path
) -> None:
    v = make_policy().evaluate("write_file", write(outside / os.fsdecode(b"caf\xe9.txt")))
    assert v.action == "ask"
    assert "caf\\xe9.txt" in v.reason
    v.reason.encode("utf-8")  # printable: no lone surrogates reach the modal


def cmd_write(*paths: Path) -> Declared:
    """A command that declares what it writes (a grant would widen the sandbox for it)."""
    return Declared(writes=list(paths), command="cp a b")


def test_protected_paths_ask_in_workspace_write(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    for p in (
        ws / ".git" / "hooks" / "pre-commit",
        ws / ".git" / "config",
        ws / ".cerveau" / "config.toml",
    ):
        v = policy.evaluate("bash", cmd_write(p))
        assert v.action == "ask", p
        assert "protected" in v.reason


def test_protected_paths_match_regardless_of_case(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy().evaluate("bash", cmd_write(ws / ".GIT" / "Hooks" / "pre-commit"))
    assert v.action == "ask" and "protected" in v.reason


def test_other_git_internals_are_not_protected(make_policy: PolicyFactory, ws: Path) -> None:
    assert make_policy().evaluate("bash", cmd_write(ws / ".git" / "HEAD")).action == "allow"


def test_the_file_tools_never_write_git_or_app_state(make_policy: PolicyFactory, ws: Path) -> None:
    # Issue 10: the file tools run outside the sandbox; code planted in .git runs at the person's
    # next git command, and a config in .cerveau/ changes the next session.
    policy = make_policy()
    for p in (
        ws / ".git" / "hooks" / "pre-commit",
        ws / ".git" / "HEAD",
        ws / ".git" / "commondir",
        ws / "sub" / ".git" / "config",
        ws / ".GIT" / "Hooks" / "pre-commit",
        ws / ".cerveau" / "config.toml",
        ws / ".cerveau" / "sessions" / "x.jsonl",
    ):
        for tool in ("write_file", "edit_file"):
            v = policy.evaluate(tool, write(p))
            assert v.action == "deny", (tool, p)
    assert (
        make_policy(mode="full-access").evaluate("write_file", write(ws / ".git" / "HEAD")).action
        == "allow"
    )


def test_a_case_variant_of_the_workspace_path_is_outside(
    make_policy: PolicyFactory, ws: Path
) -> None:
    variant = Path(str(ws).upper())
    if variant.exists():  # a case-insensitive filesystem: the same place
        return
    assert make_policy().evaluate("write_file", write(variant / "x")).action == "ask"


def test_extra_protected_globs(ws: Path) -> None:
    from cerveau_tui.policy import Policy

    policy = Policy(
        ws,
        "workspace-write",
        "on-request",
        [],
        lambda: False,
        True,
        protected_extra=["tests/golden/**"],
    )
    assert policy.evaluate("write_file", write(ws / "tests" / "golden" / "a.txt")).action == "ask"
    assert policy.evaluate("write_file", write(ws / "tests" / "a.txt")).action == "allow"


def test_a_file_tool_reading_outside_the_workspace_asks(make_policy: PolicyFactory) -> None:
    # Issue 10: the file tools run with the person's rights outside the sandbox; reading outside
    # the workspace is a crossing the person decides (headless: denied).
    v = make_policy().evaluate("read_file", Declared(reads=[Path("/etc/passwd")]))
    assert v.action == "ask" and "outside the workspace" in v.reason
    assert v.scope_key == "read:/etc/passwd"
    assert (
        make_policy(approval="never").evaluate("search", Declared(reads=[Path("/etc")])).action
        == "deny"
    )
    assert (
        make_policy(mode="full-access")
        .evaluate("read_file", Declared(reads=[Path("/etc/passwd")]))
        .action
        == "allow"
    )


def test_a_command_declaring_reads_never_crosses_for_them(
    make_policy: PolicyFactory, ws: Path
) -> None:
    v = make_policy().evaluate(
        "bash", Declared(reads=[Path("/etc/passwd")], writes=[ws], command="cat /etc/passwd")
    )
    assert v.action == "allow"


def test_deny_read_list_refuses_the_file_tools(ws: Path, tmp_path: Path) -> None:
    from cerveau_tui.policy import Policy

    secret = tmp_path / "home" / ".ssh"
    policy = Policy(
        ws, "workspace-write", "on-request", [], lambda: False, True, deny_read=[secret]
    )
    for tool in ("read_file", "list_files", "search"):
        v = policy.evaluate(tool, Declared(reads=[secret / "id_rsa"]))
        assert v.action == "deny" and "deny-read" in v.reason, tool
    (ws / "link").symlink_to(secret.parent)
    v = policy.evaluate("read_file", Declared(reads=[ws / "link" / ".ssh" / "id_rsa"]))
    assert v.action == "deny"


def test_a_folder_outside_that_holds_a_deny_read_path_is_refused(ws: Path, tmp_path: Path) -> None:
    # `search /root`, approved as a read outside, ran rg over /root/.ssh: a folder read is a read
    # of everything it holds.
    from cerveau_tui.policy import Policy

    home = tmp_path / "home"
    secret = home / ".ssh"
    secret.mkdir(parents=True)
    (home / "notes").mkdir()
    policy = Policy(
        ws, "workspace-write", "on-request", [], lambda: False, True, deny_read=[secret]
    )
    for tool in ("list_files", "search"):
        for folder in (home, tmp_path, Path("/")):
            v = policy.evaluate(tool, Declared(reads=[folder]))
            assert v.action == "deny" and str(secret) in v.reason, (tool, folder)
        assert policy.evaluate(tool, Declared(reads=[home / "notes"])).action == "ask"


def test_the_workspace_holding_a_deny_read_path_is_still_searched(ws: Path) -> None:
    # Inside, search runs in the sandbox, which masks the deny-read paths.
    from cerveau_tui.policy import Policy

    policy = Policy(
        ws, "workspace-write", "on-request", [], lambda: False, True, deny_read=[ws / ".env"]
    )
    assert policy.evaluate("search", Declared(reads=[ws])).action == "allow"
