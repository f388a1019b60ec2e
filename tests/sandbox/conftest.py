from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi
from cerveau_tui.sandbox.none import NoSandbox

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"


@dataclass
class Box:
    root: Path
    ws: Path
    outside: Path


@pytest.fixture
def box() -> Iterator[Box]:
    # Not under /tmp: bubblewrap gives commands a private /tmp, so a target there would "not land"
    # on the host even without any boundary, and the test could not fail.
    root = Path(tempfile.mkdtemp(prefix="cerveau-escape-", dir="/var/tmp"))
    ws = root / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    outside = root / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original\n")
    try:
        yield Box(root, ws, outside)
    finally:
        shutil.rmtree(root, ignore_errors=True)


needs_landlock = pytest.mark.skipif(
    landlock_abi() < 1, reason="Landlock is not available in this kernel"
)


# ESCAPE_SUITE_CONTROL=1 adds the unconfined runner as a control: the probes must then FAIL (that is
# how we know they can detect an escape at all).
_BACKENDS = [pytest.param("bubblewrap"), pytest.param("landlock", marks=needs_landlock)]


def require_bwrap() -> None:
    """Skip without bubblewrap, but FAIL under CI (CERVEAU_REQUIRE_E2E=1): an escape suite that
    silently skips proves nothing, and scripts/setup.sh installs bubblewrap."""
    if find_bwrap() is not None:
        return
    msg = "bubblewrap is not installed (apt-get install bubblewrap)"
    if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
        pytest.fail(msg)
    pytest.skip(msg)


if os.environ.get("ESCAPE_SUITE_CONTROL") == "1":
    _BACKENDS.append(pytest.param("none"))


@pytest.fixture(params=_BACKENDS)
def runner(request: pytest.FixtureRequest) -> BubblewrapRunner | LandlockRunner | NoSandbox:
    if request.param == "none":
        return NoSandbox()
    if request.param == "bubblewrap":
        require_bwrap()
        return BubblewrapRunner()
    return LandlockRunner()


@pytest.fixture
def bwrap_runner() -> BubblewrapRunner:
    require_bwrap()
    return BubblewrapRunner()


@pytest.fixture
def landlock_runner() -> LandlockRunner:
    if landlock_abi() < 1:
        pytest.skip("Landlock is not available")
    return LandlockRunner()


@dataclass
class FakeHome:
    home: Path
    secret: bytes  # the bytes that must never come back from a command
    denied: list[Path]  # what the runner is told to mask


@pytest.fixture
def fake_home(box: Box) -> FakeHome:
    """A home beside the workspace with a planted key folder and token file, on the deny list,
    and one ordinary file that must stay readable (so "everything unreadable" cannot pass)."""
    home = box.root / "home"
    secret = f"cerveau-secret-{uuid.uuid4().hex}".encode()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_bytes(secret + b"\n")
    (home / ".npmrc").write_bytes(b"//registry/:_authToken=" + secret + b"\n")
    (home / "notes.txt").write_text("ordinary\n")
    return FakeHome(home, secret, [home / ".ssh", home / ".npmrc"])


@pytest.fixture(params=_BACKENDS)
def masked_runner(
    request: pytest.FixtureRequest, fake_home: FakeHome
) -> BubblewrapRunner | LandlockRunner | NoSandbox:
    """An enforcing runner built the way select_runner builds one: with resolved deny paths and
    small bounds, so the caps are cheap to hit."""
    # The fake home is not the person's: allowed by name, as a person allows a folder in their
    # config, so the deny list inside it is tested as the second line it now is.
    limits = {
        "deny_read": fake_home.denied,
        "tmp_mb": 16,
        "max_procs": 32,
        "read_allow": [fake_home.home],
    }
    if request.param == "none":
        return NoSandbox()
    if request.param == "bubblewrap":
        require_bwrap()
        return BubblewrapRunner(**limits)  # type: ignore[arg-type]
    return LandlockRunner(**limits)  # type: ignore[arg-type]
