"""Fixtures for the stack tests (helpers live in fakes.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .fakes import make_downloads


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    return make_downloads(tmp_path / "dl")


@pytest.fixture
def no_system_server(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str | None]:
    """No $CERVEAU_LLAMA_SERVER, nothing on PATH and no server wheel: the cache decides (the
    source build; tests of the wheel's path say so with `wheel_installable`)."""
    from cerveau_tui.stack import wheel

    monkeypatch.delenv("CERVEAU_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(wheel, "extension_path", lambda: None)
    monkeypatch.setattr(wheel, "unsupported_reason", lambda: "no wheel in this test")
    return lambda name: None


@pytest.fixture(scope="session")
def real_parts() -> tuple[Path, Path]:
    """(binary, model) of the real stack from the cache; skip or, in CI, fail when missing."""
    import os

    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate

    loc = locate(stack_paths())
    if loc.binary is None or loc.model is None:
        msg = f"real stack missing (binary={loc.binary}, model={loc.model})"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return loc.binary, loc.model
