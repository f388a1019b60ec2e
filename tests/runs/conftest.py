import pytest

from cerveau_tui.testing.cli import run_cli


@pytest.fixture
def cli():
    return run_cli
