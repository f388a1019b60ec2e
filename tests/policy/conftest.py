from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cerveau_tui.config import RuleConfig
from cerveau_tui.policy import Policy
from cerveau_tui.tools.base import Declared


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".cerveau").mkdir()
    (root / ".cerveau" / "config.toml").write_text("")
    (root / "src").mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    return out


PolicyFactory = Callable[..., Policy]


@pytest.fixture
def make_policy(ws: Path) -> PolicyFactory:
    def make(
        mode: str = "workspace-write",
        approval: str = "on-request",
        rules: list[RuleConfig] | None = None,
        network: bool = False,
        enforced: bool = True,
        workspace: Path | None = None,
    ) -> Policy:
        return Policy(
            workspace or ws,
            mode,
            approval,
            rules or [],  # type: ignore[arg-type]
            network_grant=lambda: network,
            enforced=enforced,
        )

    return make


def bash(ws: Path, command: str, network: bool = False) -> Declared:
    """What the bash tool declares: the workspace root as "may write anywhere in it"."""
    return Declared(reads=[ws], writes=[ws], command=command, network=network)


def write(*paths: Path) -> Declared:
    return Declared(writes=list(paths))
