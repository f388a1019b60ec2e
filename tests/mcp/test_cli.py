"""`cerveau mcp add|list|remove`: the person's own config written, `list --json` read back."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cerveau_tui.cli import main


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg" / "config.toml"
    monkeypatch.setenv("CERVEAU_CONFIG", str(path))
    monkeypatch.chdir(tmp_path)
    return path


def listed(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_add_writes_the_users_config_and_list_shows_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["mcp", "add", "--network", "example.com", "--read-only-tool", "fetch",
                 "web", "--", "/opt/mcp/bin/fetch", "--ignore-robots-txt"])  # fmt: skip
    assert code == 0
    table = tomllib.loads(config.read_text())["mcp"]["servers"]["web"]
    assert table == {
        "command": "/opt/mcp/bin/fetch",
        "args": ["--ignore-robots-txt"],
        "network": ["example.com"],
        "read_only": ["fetch"],
    }
    (row,) = listed(capsys)
    assert row["name"] == "web" and row["source"] == "in force" and row["transport"] == "stdio"


def test_a_remote_server_by_url(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "add", "--url", "https://mcp.example.com/mcp", "docs"]) == 0
    (row,) = listed(capsys)
    assert row["transport"] == "http" and row["url"] == "https://mcp.example.com/mcp"


def test_env_values_are_not_listed(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["mcp", "add", "--env", "TOKEN=s3cr3t", "db", "--", "/opt/db-mcp"])
    (row,) = listed(capsys)
    assert row["env"] == ["TOKEN"] and "s3cr3t" not in json.dumps(row)


def test_remove_takes_it_out(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["mcp", "add", "t", "--", "/opt/t"])
    assert main(["mcp", "remove", "t"]) == 0
    assert listed(capsys) == []
    assert main(["mcp", "remove", "t"]) == 1


def test_a_broken_entry_is_not_written(config: Path) -> None:
    assert main(["mcp", "add", "nothing"]) == 2
    assert not config.exists()


def test_a_repositorys_suggestion_is_listed_as_such(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "npx"}}}))
    (row,) = listed(capsys)
    assert row["name"] == "db" and "suggestion, not started" in row["source"]
