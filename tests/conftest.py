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
