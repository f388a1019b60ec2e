"""A program scope never covers running another program (policy/shapes.py, Boundary IV).

The failures: `git push --receive-pack=PROG` rode a held "git push to github.com only" and ran an
arbitrary program with the network; `git -c core.sshCommand=... fetch` rode `command:git`;
`curl -xhttp://127.0.0.1:1 ...` rode "curl to github.com only". Each family below asks under the
scope a person would hold, with three members beyond the named one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.policy import Policy
from cerveau_tui.policy import scopes as scopes_mod
from cerveau_tui.policy.shapes import _NEVER_LETTERS, NEVER, TABLES
from cerveau_tui.sandbox.base import Grant

from .conftest import PolicyFactory, bash


def _holding(policy: Policy, ws: Path, first: str, key: str, network: bool = False) -> Policy:
    v = policy.evaluate("bash", bash(ws, first, network=network))
    assert v.action == "ask" and key in [k for k, _ in v.choices], v.choices
    policy.grant_session(v.choose(key))
    return policy


def _asks(policy: Policy, ws: Path, command: str, network: bool = False) -> bool:
    return policy.evaluate("bash", bash(ws, command, network=network)).action == "ask"


@pytest.fixture
def git_push(make_policy: PolicyFactory, ws: Path) -> Policy:
    return _holding(
        make_policy(approval="untrusted"), ws, "git push origin dev", "command:git push"
    )


@pytest.fixture
def git(make_policy: PolicyFactory, ws: Path) -> Policy:
    # `git --no-pager log` offers `command:git` (its second word is no subcommand).
    return _holding(make_policy(approval="untrusted"), ws, "git --no-pager log", "command:git")


@pytest.fixture
def curl_github(make_policy: PolicyFactory, ws: Path) -> Policy:
    first = "curl -s https://github.com/a"
    return _holding(make_policy(), ws, first, "command:curl@github.com", network=True)


@pytest.mark.parametrize(
    "command",
    [
        "git push --receive-pack=/tmp/x origin main",  # the one the issue names
        "git push --receive-pack /tmp/x origin main",  # its value as the next word
        "git push --exec=/tmp/x origin main",  # push's other name for it
        "git push --exec /tmp/x origin",
    ],
)
def test_an_option_naming_the_receiving_program_asks_under_git_push(
    git_push: Policy, ws: Path, command: str
) -> None:
    assert _asks(git_push, ws, command)


@pytest.mark.parametrize(
    "command",
    [
        "git fetch --upload-pack=/tmp/x origin",
        "git fetch -u /tmp/x origin",  # fetch's -u is upload-pack (add's -u is not)
        "git pull --upload-pack /tmp/x origin main",
        "git clone -u/tmp/x https://github.com/a/b",  # attached
    ],
)
def test_an_option_naming_the_upload_program_asks_under_git(
    git: Policy, ws: Path, command: str
) -> None:
    assert _asks(git, ws, command)


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.sshCommand=/tmp/x fetch",
        "git -ccore.hooksPath=/tmp/h fetch",  # attached
        "git --config-env=core.sshCommand=EVIL fetch",
        "git -c protocol.ext.allow=always fetch",
    ],
)
def test_a_config_override_asks_under_git(git: Policy, ws: Path, command: str) -> None:
    assert _asks(git, ws, command)


@pytest.mark.parametrize(
    "command",
    [
        "git rebase --exec=/tmp/x main",
        "git rebase -x /tmp/x main",
        "git --exec-path=/tmp fetch",
        "git submodule foreach /tmp/x",  # a subcommand off the list
    ],
)
def test_an_exec_asks_under_git(git: Policy, ws: Path, command: str) -> None:
    assert _asks(git, ws, command)


@pytest.mark.parametrize(
    "command",
    [
        "git -C /tmp/other fetch",  # another repository's config and hooks
        "git --git-dir=/tmp/other/.git fetch",
        "git clone --template=/tmp/t https://github.com/a/b",
        "git fetch 'ext::sh -c id'",  # a transport that runs a command
    ],
)
def test_a_repository_or_transport_override_asks_under_git(
    git: Policy, ws: Path, command: str
) -> None:
    assert _asks(git, ws, command)


@pytest.mark.parametrize(
    "command",
    [
        "curl -xhttp://127.0.0.1:1 https://github.com/",  # the attached proxy the parser missed
        "curl -sxhttp://127.0.0.1:1 https://github.com/",  # inside a bundle
        "curl --preproxy socks5://127.0.0.1:1 https://github.com/",
        "curl -K /tmp/cfg https://github.com/",
        "curl --unix-socket /run/x.sock https://github.com/",
        "curl -- -xhttp://127.0.0.1:1 https://github.com/",  # curl reads options past `--`
    ],
)
def test_a_proxy_or_config_option_asks_under_curl_to_a_host(
    curl_github: Policy, ws: Path, command: str
) -> None:
    assert _asks(curl_github, ws, command, network=True)


def test_a_parser_miss_would_still_run_held_to_the_granted_host(
    curl_github: Policy, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shapes only decide whether to ask: with them switched off (the old parser's miss), the
    same curl runs with the network to github.com only, which the proxy holds."""
    monkeypatch.setattr(scopes_mod, "fits", lambda words: True)
    v = curl_github.evaluate(
        "bash", bash(ws, "curl -xhttp://127.0.0.1:1 https://github.com/", network=True)
    )
    assert v.action == "allow"
    assert v.grant == Grant(network=True, hosts=("github.com",))


@pytest.mark.parametrize(
    "command",
    ["git push origin main", "git push -u origin HEAD", "git push --force-with-lease origin x"],
)
def test_plain_git_push_stays_covered(git_push: Policy, ws: Path, command: str) -> None:
    assert git_push.evaluate("bash", bash(ws, command)).action == "allow"


@pytest.mark.parametrize(
    "command", ["curl -sSL https://github.com/x", "curl -s -o out https://github.com/a?b=c"]
)
def test_plain_curl_to_the_host_stays_covered(curl_github: Policy, ws: Path, command: str) -> None:
    assert curl_github.evaluate("bash", bash(ws, command, network=True)).action == "allow"


@pytest.mark.parametrize(
    "command", ["git commit -am 'fix: a=b --exec x'", "git commit --message 'a=b' --author x"]
)
def test_a_commit_message_may_hold_anything(
    make_policy: PolicyFactory, ws: Path, command: str
) -> None:
    policy = _holding(
        make_policy(approval="untrusted"), ws, "git commit -m x", "command:git commit"
    )
    assert policy.evaluate("bash", bash(ws, command)).allowed


@pytest.mark.parametrize(
    "command", ["make SHELL=/tmp/x test", "make -f /tmp/M test", "make -C /tmp/other test"]
)
def test_a_make_override_asks_under_make(
    make_policy: PolicyFactory, ws: Path, command: str
) -> None:
    policy = _holding(make_policy(approval="untrusted"), ws, "make", "command:make")
    assert policy.evaluate("bash", bash(ws, "make -j4 -k")).allowed
    assert _asks(policy, ws, command)


@pytest.mark.parametrize(
    "command", ["mytool --exec /tmp/x", "mytool --out=/tmp/y", "mytool -xhttp://h:1", "mytool -c x"]
)
def test_a_program_without_a_table_takes_bare_flags_and_words_only(
    make_policy: PolicyFactory, ws: Path, command: str
) -> None:
    policy = _holding(make_policy(approval="untrusted"), ws, "mytool -v a", "command:mytool")
    assert policy.evaluate("bash", bash(ws, "mytool --verbose -ab src/x.py")).allowed
    assert _asks(policy, ws, command)


@pytest.mark.parametrize(
    "command",
    ["npx cowsay hi", "find . -exec id ;", "sed -i s/a/b/ x", "tar -I /tmp/x -xf a.tar"],
)
def test_a_program_that_runs_programs_is_offered_only_exactly(
    make_policy: PolicyFactory, ws: Path, command: str
) -> None:
    v = make_policy(approval="untrusted").evaluate("bash", bash(ws, command))
    assert [k for k, _ in v.choices] == [f"exact:{command}"]


def test_a_command_off_the_list_is_offered_only_exactly(
    make_policy: PolicyFactory, ws: Path
) -> None:
    command = "git push --receive-pack=/tmp/x origin"
    v = make_policy(approval="untrusted").evaluate("bash", bash(ws, command))
    assert [k for k, _ in v.choices] == [f"exact:{command}"]


def test_a_never_rule_is_not_dodged_by_an_odd_option(ws: Path, tmp_path: Path) -> None:
    import secrets

    from cerveau_tui.policy.rules_store import LastingRules

    lasting = LastingRules(ws, tmp_path / "cfg" / "rules.json", secrets.token_bytes(32))
    policy = Policy(ws, "workspace-write", "on-request", [], lambda: False, True, lasting=lasting)
    v = policy.evaluate("bash", bash(ws, "git push origin main", network=True))
    assert policy.keep_rule(v.choose("command:git push"), "deny")
    odd = policy.evaluate("bash", bash(ws, "git push --receive-pack=/tmp/x origin", network=True))
    assert odd.action == "deny"


def test_no_allow_list_holds_an_option_that_runs_or_configures() -> None:
    held = [
        (name, option)
        for name, shape in TABLES.items()
        for table in [shape.options, *(shape.subcommands or {}).values()]
        for option in table
        if NEVER.match(option)
        or (len(option) == 2 and option[0] == "-" and option[1] in _NEVER_LETTERS)
    ]
    assert held == []
