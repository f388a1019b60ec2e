"""Every process the harness starts on the host goes through cerveau_tui/host_process.py.

Issue 32: two helpers started as `python -m ...` from the workspace imported a module file the
model wrote there and ran it on the host. host_process.spawn starts every host process isolated
(`-I`, cwd "/", an allow-listed environment, no inherited descriptors); this test reads every
module of the package and fails on any other way of starting a process, so the next call site
cannot quietly go around it. The controls below feed it synthetic sources to prove it can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cerveau_tui"
THE_ONE = "host_process.py"

#: Modules allowed another way, each with its reason (paths relative to the package).
ALLOWED: dict[str, str] = {
    # The sandbox launchers' own last step: the exec into the command, after the boundary is
    # applied, inside a process host_process.spawn started isolated.
    "sandbox/landlock_exec.py": "execs the command after Landlock and seccomp are applied",
    "sandbox/die_exec.py": "execs the command after asking for the parent-death signal",
    "sandbox/netbridge.py": "inside bubblewrap: execs the command after handing the listener out",
    # Test helpers that play the person (their environment and terminal are the point).
    "testing/cli.py": "runs `cerveau run` as the person would, with the person's environment",
    "testing/first_task.py": "builds a venv and runs the CLI as the person would",
    "testing/git_probe.py": "the person's own git, at a terminal (pty) to start its pager",
    "testing/read_only.py": "mount/umount of a read-only workspace for a test",
    "testing/rewind_probe.py": "runs `cerveau rewind` as the person would",
}

#: Modules whose import is a way to start processes.
_MODULES = ("subprocess", "multiprocessing", "pty", "concurrent.futures.process")
#: os functions that start (or fork into) a process.
_OS_PREFIXES = ("exec", "spawn", "posix_spawn")
_OS_NAMES = {"system", "popen", "fork", "forkpty"}
#: Methods that start one whatever object they hang on (asyncio's loop, pty).
_ATTRS = {
    "create_subprocess_exec",
    "create_subprocess_shell",
    "subprocess_exec",
    "subprocess_shell",
    "ProcessPoolExecutor",
    # ctypes.util.find_library runs `ldconfig -p`, then gcc/cc/ld/objdump found on our PATH.
    "find_library",
}


def _process_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in _MODULES)


def _os_starter(name: str) -> bool:
    return name in _OS_NAMES or name.startswith(_OS_PREFIXES)


def starts(source: str, filename: str = "<module>") -> list[str]:
    """Each way `source` could start a process, as "line: what"."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found += [f"{line}: import {a.name}" for a in node.names if _process_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            if _process_module(node.module):
                found.append(f"{line}: from {node.module} import ...")
            elif node.module in ("os", "posix"):
                found += [
                    f"{line}: from os import {a.name}" for a in node.names if _os_starter(a.name)
                ]
            elif node.module.startswith(("asyncio", "concurrent", "ctypes")):
                found += [
                    f"{line}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name in _ATTRS
                ]
        elif isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if base in ("os", "posix") and _os_starter(node.attr):
                found.append(f"{line}: {base}.{node.attr}")
            elif node.attr in _ATTRS:
                found.append(f"{line}: .{node.attr}")
        elif isinstance(node, ast.Call):
            # `__import__("subprocess")`, `importlib.import_module("subprocess")`: by string.
            fn = node.func
            name = (
                fn.id
                if isinstance(fn, ast.Name)
                else fn.attr
                if isinstance(fn, ast.Attribute)
                else ""
            )
            if name in ("__import__", "import_module") and node.args:
                arg = node.args[0]
                if (
                    isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and _process_module(arg.value)
                ):
                    found.append(f"{line}: {name}({arg.value!r})")
    return found


def _package_findings() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == THE_ONE:
            continue
        hits = starts(path.read_text(), str(path))
        if hits:
            out[rel] = hits
    return out


def test_no_module_starts_a_process_but_host_process() -> None:
    outside = {rel: hits for rel, hits in _package_findings().items() if rel not in ALLOWED}
    assert outside == {}, "start host processes with cerveau_tui.host_process.spawn/run"


def test_every_allowed_module_still_needs_its_exception() -> None:
    # An allow-list entry whose module no longer starts anything is one fewer exception to keep.
    findings = _package_findings()
    stale = [rel for rel in ALLOWED if rel not in findings]
    assert stale == []


def test_host_process_imports_only_the_standard_library() -> None:
    # The one function sits below every layer (stack/, tools/, workspace/, sandbox/ import it).
    tree = ast.parse((PACKAGE / THE_ONE).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [
        n.module or "." for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0
    ]
    relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]
    assert relative == []
    assert not [n for n in names if n.split(".")[0] == "cerveau_tui"]


# Controls: the finder catches each form, so the tests above are not ones that cannot fail.


def test_control_plain_subprocess_is_caught() -> None:
    src = "import subprocess\n\ndef f():\n    subprocess.run(['ls'])\n"
    assert starts(src) == ["1: import subprocess"]


def test_control_aliased_from_import_is_caught() -> None:
    assert starts("from subprocess import Popen as P\nP(['ls'])\n") == [
        "1: from subprocess import ..."
    ]


def test_control_os_exec_spawn_system_and_fork_are_caught() -> None:
    src = "import os\nos.execv('/bin/sh', ['sh'])\nos.spawnl(0, 'x')\nos.system('x')\nos.posix_spawn('x', [], {})\nos.fork()\n"
    assert len(starts(src)) == 5


def test_control_from_os_import_exec_is_caught() -> None:
    assert starts("from os import execvp as run_it\n") == ["1: from os import execvp"]


def test_control_multiprocessing_pty_and_asyncio_are_caught() -> None:
    src = (
        "import multiprocessing.pool\nimport pty\nimport asyncio\n"
        "async def f():\n    await asyncio.create_subprocess_exec('ls')\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
    )
    assert len(starts(src)) == 4


def test_control_ctypes_find_library_is_caught() -> None:
    src = (
        "import ctypes.util\nctypes.util.find_library('c')\nfrom ctypes.util import find_library\n"
    )
    assert len(starts(src)) == 2


def test_control_import_by_string_is_caught() -> None:
    src = "import importlib\nsp = importlib.import_module('subprocess')\nsp2 = __import__('subprocess')\n"
    assert len(starts(src)) == 2


def test_control_a_harmless_module_is_clean() -> None:
    assert starts("import os\nos.getpid()\nos.kill(1, 0)\nimport signal\n") == []
