"""Fixtures for the app tests: a fake clock, a scripted-server-backed app, and snapshot SVGs kept
in the top-level `snapshots/` folder (the issue asks for them there, not beside each test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_textual_snapshot

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"


def _top_level_dirname(cls: type, *, test_location: object) -> str:
    return str(SNAPSHOT_DIR / test_location.basename)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _snapshots_in_top_level_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # snap_compare picks `SVGImageExtension` itself, so the extension's dirname is what we move.
    monkeypatch.setattr(
        pytest_textual_snapshot.SVGImageExtension, "dirname", classmethod(_top_level_dirname)
    )
    yield


@pytest.fixture(autouse=True)
def _no_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A theme switched in a test must never land in the developer's real config.
    cfg = tmp_path_factory.mktemp("cfg") / "config.toml"
    monkeypatch.setenv("CERVEAU_CONFIG", str(cfg))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Pilot tests are coroutines; anyio's plugin (installed with httpx) runs them on asyncio.
    import inspect

    here = Path(__file__).parent
    for item in items:
        fn = getattr(item, "function", None)
        if (
            fn is not None
            and inspect.iscoroutinefunction(fn)
            and here in Path(str(item.fspath)).parents
        ):
            item.add_marker(pytest.mark.anyio)
