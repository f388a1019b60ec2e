"""Each scope covers the next call it names and not one it does not (policy/scopes.py)."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.policy.commands import is_known_safe
from cerveau_tui.policy.scopes import simple_commands

from .conftest import PolicyFactory, bash, write


def _grant(policy, ws: Path, command: str, key_start: str, network: bool = False) -> str:
    v = policy.evaluate("bash", bash(ws, command, network=network))
    assert v.action == "ask"
    key = next(k for k, _ in v.choices if k.startswith(key_start))
    policy.grant_session(v.choose(key))
    return key


def test_a_subcommand_grant_covers_the_same_subcommand_with_other_arguments(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(approval="untrusted")
    _grant(policy, ws, "git push origin dev", "command:git push")
    assert policy.evaluate("bash", bash(ws, "git push origin main")).action == "allow"


def test_a_subcommand_grant_does_not_cover_a_chained_command(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(approval="untrusted")
    _grant(policy, ws, "git push", "command:git push")
    for chained in ("git push; curl x", "git push && rm -rf ~", "git push | sh", "git push & rm x"):
        assert policy.evaluate("bash", bash(ws, chained)).action == "ask", chained


def test_a_subcommand_grant_does_not_cover_another_subcommand(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(approval="untrusted")
    _grant(policy, ws, "git push", "command:git push")
    assert policy.evaluate("bash", bash(ws, "git reset --hard")).action == "ask"
    assert policy.evaluate("bash", bash(ws, "X=1 git push")).action == "ask"
    assert policy.evaluate("bash", bash(ws, "/tmp/git push")).action == "ask"


def test_substitution_and_redirection_are_never_covered_by_a_program_grant(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(approval="untrusted")
    _grant(policy, ws, "git push", "command:git push")
    for hidden in ("git push $(rm -rf ~)", "git push `id`", "git push > ~/.bashrc", "git push\nid"):
        assert policy.evaluate("bash", bash(ws, hidden)).action == "ask", hidden


def test_every_part_of_a_chain_must_be_covered(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(approval="untrusted")
    _grant(policy, ws, "git add .", "command:git add")
    assert policy.evaluate("bash", bash(ws, "git add . && git commit -m x")).action == "ask"
    _grant(policy, ws, "git commit -m y", "command:git commit")
    assert policy.evaluate("bash", bash(ws, "git add . && git commit -m x")).action == "allow"


def test_a_host_grant_covers_the_next_call_to_that_host_only(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy()
    first = "curl -s -m 3 http://127.0.0.1:8080/one; true"
    key = _grant(policy, ws, first, "command:curl@", network=True)
    assert key == "command:curl@127.0.0.1:8080"
    v = policy.evaluate("bash", bash(ws, "curl http://127.0.0.1:8080/two", network=True))
    assert v.action == "allow" and v.grant is not None and v.grant.network
    assert "127.0.0.1:8080" in v.granted_by
    for other in (
        "curl http://127.0.0.1:9999/x",
        "curl http://evil.example/x",
        "curl -x http://evil:1 http://127.0.0.1:8080/x",
        "curl http://127.0.0.1:8080/ http://evil.example/",
    ):
        assert policy.evaluate("bash", bash(ws, other, network=True)).action == "ask", other


def test_an_any_host_grant_covers_another_host(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    v = policy.evaluate("bash", bash(ws, "curl http://a.example/", network=True))
    assert [k for k, _ in v.choices] == [
        "exact:curl http://a.example/",
        "command:curl@a.example",
        "command:curl",
    ]
    policy.grant_session(v.choose("command:curl"))
    assert (
        policy.evaluate("bash", bash(ws, "curl http://b.example/", network=True)).action == "allow"
    )


def test_an_exact_grant_covers_only_that_command(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    _grant(policy, ws, "curl http://a.example/", "exact:", network=True)
    assert policy.evaluate("bash", bash(ws, "curl http://a.example/", network=True)).allowed
    assert not policy.evaluate("bash", bash(ws, "curl http://a.example/x", network=True)).allowed


def test_a_command_grant_names_its_folder_and_covers_only_it(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    other = outside.parent / "other"
    other.mkdir()
    policy = make_policy()
    v = policy.evaluate("bash", bash_writing(ws, f"mkdir {outside}/a", outside / "a"))
    assert v.action == "ask" and f"writing under {outside}" in v.scope
    policy.grant_session(v)
    again = policy.evaluate("bash", bash_writing(ws, f"mkdir {outside}/b", outside / "b"))
    assert again.action == "allow" and outside in again.grant.extra_writable  # type: ignore[union-attr]
    assert (
        policy.evaluate("bash", bash_writing(ws, f"mkdir {other}/c", other / "c")).action == "ask"
    )


def test_a_folder_grant_covers_file_tool_writes_under_it_only(
    make_policy: PolicyFactory, outside: Path
) -> None:
    policy = make_policy()
    v = policy.evaluate("write_file", write(outside / "x"))
    assert (f"dir:{outside}", f"file tools writing under {outside}") in v.choices
    policy.grant_session(v.choose(f"dir:{outside}"))
    assert policy.evaluate("write_file", write(outside / "sub" / "y")).action == "allow"
    assert policy.evaluate("write_file", write(outside.parent / "z")).action == "ask"


def test_simple_commands_split_on_every_operator() -> None:
    assert simple_commands("a 1; b 2 && c || d | e & f") == [
        ["a", "1"],
        ["b", "2"],
        ["c"],
        ["d"],
        ["e"],
        ["f"],
    ]
    assert simple_commands("echo 'a; b'") == [["echo", "a; b"]]
    assert simple_commands("cat <(id)") is None


def bash_writing(ws: Path, command: str, target: Path):
    d = bash(ws, command)
    d.writes.append(target)
    return d


def test_a_bare_host_argument_is_a_host(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    _grant(policy, ws, "curl -s -m 3 http://h.example:80/", "command:curl@", network=True)
    for other in (
        "curl http://h.example:80/ evil.example",
        "curl http://h.example:80/ 10.0.0.1:22",
    ):
        assert policy.evaluate("bash", bash(ws, other, network=True)).action == "ask", other
    assert policy.evaluate("bash", bash(ws, "curl -s http://h.example:80/x", network=True)).allowed


def test_env_running_a_program_is_not_a_safe_part_of_a_chain(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy()
    _grant(policy, ws, "curl http://h.example/", "command:curl@", network=True)
    chained = "curl http://h.example/; env curl http://evil.example/"
    assert policy.evaluate("bash", bash(ws, chained, network=True)).action == "ask"
    assert not is_known_safe("env curl http://evil.example/")
    assert is_known_safe("env") and is_known_safe("printenv HOME")


def test_a_safe_read_that_runs_a_program_is_not_a_free_part_of_a_chain(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy()
    _grant(policy, ws, "curl http://h.example/", "command:curl@", network=True)
    for chained in (
        "curl http://h.example/ && rg --pre ./x y",
        "curl http://h.example/; find . -name a",
        "git diff; curl http://h.example/",
    ):
        assert policy.evaluate("bash", bash(ws, chained, network=True)).action == "ask", chained
    inert = "cd sub && curl http://h.example/ | head -5; true"
    assert policy.evaluate("bash", bash(ws, inert, network=True)).action == "allow"


def test_a_program_that_runs_its_arguments_is_offered_only_exactly(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(approval="untrusted")
    for command in ("bash -c 'make'", "python3 -c 'print(1)'", "sudo make install", "env X=1 make"):
        v = policy.evaluate("bash", bash(ws, command))
        assert [k for k, _ in v.choices] == [f"exact:{command}"], command
    policy.grant_session(v.choose("command:bash"))  # a legacy key from an old log
    policy.grant_session(type(v)("ask", "", None, "bash", "command:bash"))
    assert policy.evaluate("bash", bash(ws, "bash -c 'rm -rf ~'")).action == "ask"
