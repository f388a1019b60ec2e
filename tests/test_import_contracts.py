"""Core never imports a concrete adapter: the `.importlinter` contract, run for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


def lint_imports(config: Path, cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [exe, "--no-cache", "--no-logo", str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_adapter_contract_holds_for_the_codebase() -> None:
    result = lint_imports(CONFIG, ROOT, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_the_contract_breaks_when_core_imports_an_adapter(tmp_path: Path) -> None:
    # The same contract text over a miniature package whose gate names the python adapter: proof
    # that the contract can fail, so the test above is not one that cannot.
    pkg = tmp_path / "minipkg"
    modules = {
        "__init__.py": "",
        "adapters/__init__.py": "",
        "adapters/python.py": "NAME = 'python'\n",
        "adapters/generic.py": "NAME = 'generic'\n",
        "adapters/registry.py": "from . import python, generic\n",
        "done/__init__.py": "",
        "done/gate.py": "from ..adapters import python\n",
    }
    for sub in ("loop", "provider", "tools", "context", "plan", "policy", "sandbox", "workspace"):
        modules[f"{sub}/__init__.py"] = ""
    for rel, text in modules.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    config = tmp_path / ".importlinter"
    config.write_text(CONFIG.read_text().replace("cerveau_tui", "minipkg"))
    result = lint_imports(config, tmp_path, tmp_path)
    assert result.returncode != 0
    assert "minipkg.done.gate -> minipkg.adapters.python" in result.stdout
