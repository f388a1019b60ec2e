"""A `--server` URL holding a credential never stays on the harness's own command line: any
process of the same user reads /proc/PID/cmdline (under Landlock, the model's command did), so
the CLI restarts itself with the URL in its environment instead (before it parses its own
command line, when `cli.main` reads `sys.argv`)."""

from __future__ import annotations

import pytest

from cerveau_tui import cli, host_process


class Replaced(Exception):
    pass


class Parsed(Exception):
    """main went on to parse its command line: it did not restart."""


@pytest.fixture
def replaced(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], dict[str, str]]]:
    seen: list[tuple[list[str], dict[str, str]]] = []

    def fake(argv, env):  # type: ignore[no-untyped-def]
        seen.append((list(argv), dict(env)))
        raise Replaced

    def parse_instead():  # type: ignore[no-untyped-def]
        raise Parsed

    monkeypatch.setattr(host_process, "replace_self", fake)
    monkeypatch.setattr(cli, "build_parser", parse_instead)
    return seen


def main_with_argv(monkeypatch: pytest.MonkeyPatch, words: list[str]) -> None:
    monkeypatch.setattr("sys.argv", ["cerveau", *words])
    cli.main()


@pytest.mark.parametrize(
    "words",
    [
        ["run", "--json", "--server", "http://alice:pw@127.0.0.1:1", "task"],
        ["--server=http://alice:pw@127.0.0.1:1", "doctor"],
        ["run", "--server", "http://127.0.0.1:1/?token=abc", "task"],
    ],
)
def test_a_credential_in_server_restarts_without_it_on_the_command_line(
    replaced, monkeypatch, words
) -> None:
    with pytest.raises(Replaced):
        main_with_argv(monkeypatch, words)
    argv, env = replaced[0]
    assert not [w for w in argv if "pw@" in w or "token=" in w]
    assert argv[argv.index("cerveau_tui") + 1 :] == [
        w for w in words if "127.0.0.1" not in w and w != "--server"
    ]
    assert env[cli.HIDDEN_SERVER] in " ".join(words)


def test_a_plain_server_url_stays_where_it_is(replaced, monkeypatch) -> None:
    with pytest.raises(Parsed):
        main_with_argv(monkeypatch, ["run", "--server", "http://127.0.0.1:8080", "t"])
    assert replaced == []


def test_a_task_after_the_double_dash_is_not_read_as_an_option(replaced, monkeypatch) -> None:
    with pytest.raises(Parsed):
        main_with_argv(monkeypatch, ["run", "--", "--server", "http://a:b@h"])
    assert replaced == []


def test_the_restarted_cli_takes_the_url_from_its_environment(monkeypatch) -> None:
    monkeypatch.setenv(cli.HIDDEN_SERVER, "http://alice:pw@127.0.0.1:9")
    seen = {}

    def fake_settings(args):  # type: ignore[no-untyped-def]
        seen["server"] = args.server
        raise SystemExit(0)

    monkeypatch.setattr(cli, "_settings", fake_settings)
    with pytest.raises(SystemExit):
        cli.main(["doctor"])
    assert seen.get("server") == "http://alice:pw@127.0.0.1:9"
