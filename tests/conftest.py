"""Shared fixtures. Append yours below; keep each one self-contained."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def real_stack() -> Iterator[str]:
    """URL of a managed llama-server running the real SmolLM2-135M, started once per session
    from the cache (`./scripts/test` provisions it first) and stopped at the end. Missing stack:
    skip, or FAIL when CERVEAU_REQUIRE_E2E=1 (CI), because an e2e suite that silently skips
    everything proves nothing."""
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import ProvisionError, locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    try:
        loc = locate(paths)
        missing = "" if loc.ready else f"binary={loc.binary} model={loc.model}"
    except ProvisionError as exc:
        missing = str(exc)
    if missing:
        msg = f"real llama-server stack missing ({missing}); run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    assert loc.binary is not None and loc.model is not None
    server = managed_for(paths, loc.binary, loc.model, n_ctx=8192)
    server.start(timeout_s=120.0)
    try:
        yield server.url
    finally:
        server.stop()


#: `scripts/test` runs the suite on every core (pytest-xdist, `-n auto --dist loadgroup`): each
#: xdist_group runs on one worker, one test after another. The real model's tests are one group:
#: CPU-bound (two at once on 2 cores only slow each other) and `real_stack` is one llama-server
#: per worker. The tests that run as the fixed user `cerveau-probe` (probes/conftest.py
#: `ordinary_user`: `useradd`, then `runuser`) are another: two `useradd` at once fail on
#: /etc/passwd's lock, and the probes read what that user can reach.
REAL_MODEL, ORDINARY_USER = "real-model", "ordinary-user"


def xdist_group_of(item: pytest.Item) -> str:
    if item.get_closest_marker("e2e") or {"real_stack", "real_parts"} & set(item.fixturenames):
        return REAL_MODEL
    if isinstance(item, pytest.Function) and "ordinary_user" in vars(item.module):
        return ORDINARY_USER
    # Alone, a file's tests stay together: a module fixture or a file's cached runs (the guards'
    # and scenarios' `_runs`) are made once, not once per worker.
    return item.nodeid.split("::")[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(xdist_group_of(item)))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The real model's group is the longest (34 of a loaded run's 51 min), then the `slow`
        # tests (minutes in one test): started first, so no worker waits for them at the end
        # (scripts/test passes --no-loadscope-reorder, or xdist orders groups by their size).
        items.sort(
            key=lambda item: (
                xdist_group_of(item) != REAL_MODEL,
                item.get_closest_marker("slow") is None,
            )
        )
