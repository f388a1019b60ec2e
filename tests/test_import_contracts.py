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
    assert "3 kept, 0 broken" in result.stdout


def test_the_contract_breaks_when_core_imports_an_adapter(tmp_path: Path) -> None:
    # The same contract text over a miniature package whose gate names the python adapter: proof
    # that the contract can fail, so the test above is not one that cannot.
    modules = {
        "__init__.py": "",
        "adapters/__init__.py": "",
        "adapters/python.py": "NAME = 'python'\n",
        "adapters/generic.py": "NAME = 'generic'\n",
        "adapters/registry.py": "from . import python, generic\n",
        "done/__init__.py": "",
        "done/gate.py": "from ..adapters import python\n",
    }
    result = _lint_mini(tmp_path, modules)
    assert result.returncode != 0
    assert "minipkg.done.gate -> minipkg.adapters.python" in result.stdout


PACKAGES = (
    "app",
    "acp",
    "loop",
    "done",
    "plan",
    "memory",
    "tools",
    "policy",
    "sandbox",
    "workspace",
    "context",
    "reminders",
    "provider",
    "adapters",
    "stack",
    "mcp",
    "person_hooks",
)
TOP_MODULES = (
    "__main__",
    "cli",
    "headless",
    "doctor",
    "rewind_cli",
    "testing",
    "session",
    "hooks",
    "history",
    "protocol",
    "bus",
    "config",
    "config_env",
    "config_sections",
    "config_tighten",
    "trust",
    "deny_read",
    "state_file",
    "state_home",
    "person_key",
    "redact",
    "host_process",
    "text_cut",
    "text_safety",
)


def _lint_mini(tmp_path: Path, modules: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real contract text over a miniature package with every layer the contracts name."""
    pkg = tmp_path / "minipkg"
    full = {
        "__init__.py": "",
        **{f"{p}/__init__.py": "" for p in PACKAGES},
        **{f"{m}.py": "" for m in TOP_MODULES},
    }
    full.update(
        {
            "adapters/python.py": "",
            "adapters/generic.py": "",
            "adapters/node.py": "",
            "adapters/registry.py": "from . import python, generic, node\n",
        }
    )
    full.update(modules)
    for rel, text in full.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    config = tmp_path / ".importlinter"
    config.write_text(CONFIG.read_text().replace("cerveau_tui", "minipkg"))
    return lint_imports(config, tmp_path, tmp_path)


def test_the_layers_break_when_a_mechanism_imports_the_loop(tmp_path: Path) -> None:
    result = _lint_mini(tmp_path, {"loop/turn.py": "", "plan/hook.py": "from ..loop import turn\n"})
    assert result.returncode != 0
    assert "minipkg.plan.hook -> minipkg.loop.turn" in result.stdout
    assert "No mechanism imports the loop, the session or the UI BROKEN" in result.stdout


def test_the_mini_package_alone_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint_mini(tmp_path, {})
    assert result.returncode == 0, result.stdout


def test_a_top_level_module_without_a_row_breaks_the_layers(tmp_path: Path) -> None:
    """The contract is exhaustive: a module nobody placed is a breach, not a blind spot."""
    result = _lint_mini(tmp_path, {"unplaced.py": ""})
    assert result.returncode != 0
    assert "not listed as layers:\n\n- minipkg.unplaced" in result.stdout


def _cycles(package: str) -> list[list[str]]:
    """Strongly connected groups of modules in the import graph, counting every import statement
    (function-level and TYPE_CHECKING ones too: a cycle kept alive by a lazy import is still one)."""
    import grimp

    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(m: str) -> None:  # Tarjan, iterative enough for a package this size
        index[m] = low[m] = counter[0]
        counter[0] += 1
        stack.append(m)
        on.add(m)
        for n in sorted(graph.find_modules_directly_imported_by(m)):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                on.discard(n)
                group.append(n)
                if n == m:
                    break
            # A package's __init__ re-exporting its own modules is not a cycle of ideas.
            if len(group) > 1:
                out.append(sorted(group))

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for m in modules:
        if m not in index:
            visit(m)
    return out


def test_no_import_cycle_anywhere_in_the_package() -> None:
    assert _cycles("cerveau_tui") == []


def test_the_cycle_finder_finds_a_lazy_cycle(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "cyclepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles("cyclepkg") == [["cyclepkg.a", "cyclepkg.b"]]
