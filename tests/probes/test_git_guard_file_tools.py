"""The git guard on every write path, verified from the host: after the model's `write_file` /
`edit_file` calls (the tool's own run(), as the session runs it), a rewind, or a command that
chmods a hook, the person's REAL `git status`, `git commit`, `git checkout`... run in the named
folder, and the marker file the planted program would create must not exist.

Each vector has a twin test that plants the same bytes with plain host writes and sees the marker
appear: proof that the vector is real on this git, so the guarded test is one that can fail.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.guarded import GuardedRunner
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.testing.git_probe import (
    Marker,
    existing_repo,
    file_tool,
    host_git,
    make_marker,
    person_git,
)
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.git.change import guard_for
from cerveau_tui.workspace.restore.checkpoints import Capture, Manifest, restore
from cerveau_tui.workspace.restore.store import BlobStore


@dataclass
class Place:
    root: Path
    ws: Path
    home: Path
    marker: Marker

    def git(self, cwd: Path, *args: str) -> None:
        host_git(cwd, *args, home=self.home, ceiling=self.root).check_returncode()

    def person(self, cwd: str) -> None:
        person_git(self.ws / cwd, home=self.home, ceiling=self.root)

    def repo(self, rel: str = "") -> Path:
        existing_repo(self.ws / rel, home=self.home, ceiling=self.root)
        return self.ws / rel

    def hook_text(self) -> str:
        return f"#!/bin/sh\n{self.marker.program}\nexit 0\n"

    def config_text(self, **extra: str) -> str:
        lines = [f"\tfsmonitor = {self.marker.program}", f"\tpager = {self.marker.program}"]
        lines += [f"\t{k} = {v}" for k, v in extra.items()]
        return "[core]\n" + "\n".join(lines) + "\n"


@pytest.fixture
def place(tmp_path: Path) -> Place:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Place(tmp_path, ws, tmp_path / "home", make_marker(tmp_path / "probe"))


Writes = list[tuple[str, str]]


@dataclass(frozen=True)
class FileVector:
    """What the person had (`setup`), what the model writes (`writes`, computed after setup: a
    config edit starts from the person's bytes), where the person then runs git."""

    name: str
    setup: Callable[[Place], None]
    writes: Callable[[Place], Writes]
    person_cwd: str


def _bare(p: Place, d: str) -> Writes:
    pre = f"{d}/" if d else ""
    return [
        (f"{pre}HEAD", "ref: refs/heads/main\n"),
        (f"{pre}config", p.config_text(bare="false", worktree=str(p.ws / d))),
        (f"{pre}objects/info/packs", "\n"),
        (f"{pre}refs/tags/keep", "\n"),
    ]


def _husky(p: Place) -> None:
    root = p.repo()
    (root / ".husky").mkdir()
    (root / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (root / ".husky" / "pre-commit").chmod(0o755)
    p.git(root, "config", "core.hooksPath", ".husky")
    p.git(root, "add", "-A")
    p.git(root, "commit", "-qm", "husky")


_HUSKY9_RUNNER = """#!/bin/sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ -f "$s" ] || exit 0
sh -e "$s"
"""


def _husky9(p: Place) -> None:
    # husky 9: core.hooksPath = .husky/_, whose hooks all start .husky/<hook> with `sh -e`; the
    # person's .husky/pre-commit is a plain file, neither a hook nor executable.
    root = p.repo()
    runner = root / ".husky" / "_"
    runner.mkdir(parents=True)
    (runner / "h").write_text(_HUSKY9_RUNNER)
    for name in ("pre-commit", "post-checkout"):
        (runner / name).write_text('#!/bin/sh\n. "$(dirname "$0")/h"\n')
    (runner / "h").chmod(0o755)
    (runner / "pre-commit").chmod(0o755)
    (runner / "post-checkout").chmod(0o755)
    (root / ".husky" / "pre-commit").write_text("exit 0\n")
    p.git(root, "config", "core.hooksPath", ".husky/_")


def _husky8(p: Place) -> None:
    # husky 8: the hook sources .husky/_/husky.sh before it runs.
    _husky(p)
    hook = p.ws / ".husky" / "pre-commit"
    hook.write_text('#!/bin/sh\n. "$(dirname "$0")/_/husky.sh"\nexit 0\n')
    (p.ws / ".husky" / "_").mkdir()
    (p.ws / ".husky" / "_" / "husky.sh").write_text("true\n")


def _include_at_root(p: Place) -> None:
    root = p.ws if (p.ws / ".git").exists() else p.repo()
    p.git(root, "config", "include.path", "../shared.gitconfig")


def _include_from_nested(p: Place) -> None:
    # The nested repository includes a file at the workspace root: not on the written file's
    # folder chain, so only the guard's index of repositories finds who reads it.
    p.git(p.repo("sub"), "config", "include.path", "../../shared.gitconfig")


def _include_if_on_a_branch(p: Place) -> None:
    # Not in effect on main; it is once the person checks out a person-* branch (person_git does).
    p.git(p.repo(), "config", "includeIf.onbranch:person-*.path", "../branch.gitconfig")


def _fsmonitor_in_the_tree(p: Place) -> None:
    # The person's own setting names a script of the project: the script is the code.
    root = p.repo()
    script = root / "tools" / "fsmon.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    p.git(root, "config", "core.fsmonitor", "tools/fsmon.sh")


def _separate_git_dir(p: Place) -> None:
    sub = p.ws / "sub"
    (p.ws / "gitdirs").mkdir()
    p.git(
        p.ws, "init", "-q", "-b", "main", "--separate-git-dir", str(p.ws / "gitdirs" / "sub"), "sub"
    )
    (sub / "README").write_text("the person's work\n")
    p.git(sub, "add", "-A")
    p.git(sub, "commit", "-qm", "first")


def _separate_config(p: Place) -> Writes:
    cfg = (p.ws / "gitdirs" / "sub" / "config").read_text()
    return [("gitdirs/sub/config", cfg + p.config_text())]


def _gitfile_to_nowhere_yet(p: Place) -> None:
    # A command of the model's earlier in the turn: a `.git` FILE naming a folder that is not
    # a repository yet. The command's guard has nothing to flag: it leads nowhere.
    (p.ws / "sub").mkdir()
    GuardedRunner(NoSandbox()).run(
        CommandSpec("echo 'gitdir: ../planted' > sub/.git", workspace=p.ws)
    )
    assert (p.ws / "sub" / ".git").exists()


FILE_VECTORS = [
    FileVector("bare_repo_in_subfolder", lambda p: p.repo(), lambda p: _bare(p, "sub"), "sub"),
    FileVector("bare_repo_at_workspace_root", lambda p: None, lambda p: _bare(p, ""), ""),
    FileVector(
        "husky_hook_under_core_hookspath",
        _husky,
        lambda p: [(".husky/pre-commit", p.hook_text()), (".husky/post-checkout", p.hook_text())],
        "",
    ),
    FileVector(
        "husky9_script_started_by_the_hooks_runner",
        _husky9,
        lambda p: [(".husky/pre-commit", f"{p.marker.program}\n")],
        "",
    ),
    FileVector(
        "husky8_helper_the_hook_sources",
        _husky8,
        lambda p: [(".husky/_/husky.sh", f"{p.marker.program}\n")],
        "",
    ),
    FileVector(
        "include_path_target_on_the_chain",
        _include_at_root,
        lambda p: [("shared.gitconfig", p.config_text())],
        "",
    ),
    FileVector(
        "include_path_target_of_a_nested_repo",
        _include_from_nested,
        lambda p: [("shared.gitconfig", p.config_text())],
        "sub",
    ),
    FileVector(
        "include_if_target_not_yet_in_effect",
        _include_if_on_a_branch,
        lambda p: [("branch.gitconfig", p.config_text())],
        "",
    ),
    FileVector(
        "program_file_named_by_the_persons_setting",
        _fsmonitor_in_the_tree,
        lambda p: [("tools/fsmon.sh", p.hook_text())],
        "",
    ),
    FileVector("separate_git_dir_config", _separate_git_dir, _separate_config, "sub"),
    FileVector(
        "gitfile_pointing_at_a_planted_dir",
        _gitfile_to_nowhere_yet,
        lambda p: _bare(p, "planted"),
        "sub",
    ),
]
IDS = [v.name for v in FILE_VECTORS]


def _host_write(ws: Path, rel: str, text: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode if path.exists() else None
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


@pytest.mark.parametrize("vector", FILE_VECTORS, ids=IDS)
def test_the_vector_is_real_when_the_bytes_are_written_unguarded(
    vector: FileVector, place: Place
) -> None:
    vector.setup(place)
    for rel, text in vector.writes(place):
        _host_write(place.ws, rel, text)
    place.person(vector.person_cwd)
    assert place.marker.fired()


@pytest.mark.parametrize("vector", FILE_VECTORS, ids=IDS)
def test_write_file_leaves_nothing_the_persons_git_runs(vector: FileVector, place: Place) -> None:
    vector.setup(place)
    outcomes = [
        file_tool(place.ws, "write_file", path=rel, content=text)
        for rel, text in vector.writes(place)
    ]
    place.person(vector.person_cwd)
    assert not place.marker.fired()
    refused = [o for o in outcomes if not o.ok]
    assert refused and all("[harness]" in o.output for o in refused)


def test_edit_file_of_a_husky_hook_is_undone_and_the_persons_hook_is_back(place: Place) -> None:
    _husky(place)
    hook = place.ws / ".husky" / "pre-commit"
    before = hashlib.sha256(hook.read_bytes()).hexdigest(), hook.stat().st_mode
    out = file_tool(
        place.ws, "edit_file", path=".husky/pre-commit", old="exit 0", new=f"{place.marker.program}"
    )
    assert not out.ok and "hook pre-commit" in out.output
    assert (hashlib.sha256(hook.read_bytes()).hexdigest(), hook.stat().st_mode) == before
    place.person("")
    assert not place.marker.fired()


def test_an_ordinary_source_write_gives_no_finding(place: Place) -> None:
    _husky(place)  # a repository with an in-tree hooks folder: the guard has things to look at
    _include_at_root(place)
    out = file_tool(place.ws, "write_file", path="src/app/main.py", content="print('hi')\n")
    edit = file_tool(place.ws, "edit_file", path="src/app/main.py", old="hi", new="hello")
    assert out.ok and edit.ok, (out.output, edit.output)
    assert (place.ws / "src" / "app" / "main.py").read_text() == "print('hello')\n"
    assert not (place.ws / ".cerveau" / "quarantine").exists()


def test_a_finding_reaches_the_sessions_listener(place: Place) -> None:
    place.repo()
    seen: list[Any] = []
    guard_for(place.ws).on_findings = seen.append
    for rel, text in _bare(place, "sub"):
        file_tool(place.ws, "write_file", path=rel, content=text)
    assert seen and any(f.kind == "repository" for f in seen[0])


# --- a hook the person had disabled, enabled by a command (the mode is part of a hook) ---------


def _runners() -> list[str]:
    out = ["none"]
    if find_bwrap():
        out.insert(0, "bubblewrap")
    if landlock_abi() > 0:
        out.insert(1, "landlock")
    return out


def _runner(name: str) -> Any:
    return {"bubblewrap": BubblewrapRunner, "landlock": LandlockRunner, "none": NoSandbox}[name]()


def _disabled_hook(place: Place) -> Path:
    hook = place.repo("sub") / ".git" / "hooks" / "pre-commit"
    hook.write_text(place.hook_text())
    hook.chmod(0o644)  # the person turned it off
    return hook


def test_enabling_a_disabled_hook_is_real_when_unguarded(place: Place) -> None:
    _disabled_hook(place).chmod(0o755)
    place.person("sub")
    assert place.marker.fired()


@pytest.mark.parametrize("backend", _runners())
def test_chmod_x_of_a_disabled_hook_in_a_nested_repo_is_undone(backend: str, place: Place) -> None:
    hook = _disabled_hook(place)
    result = GuardedRunner(_runner(backend)).run(
        CommandSpec("chmod +x sub/.git/hooks/pre-commit", workspace=place.ws)
    )
    assert "[harness]" in result.output and "pre-commit" in result.output
    assert hook.stat().st_mode & 0o111 == 0
    place.person("sub")
    assert not place.marker.fired()


@pytest.mark.parametrize("backend", _runners())
def test_a_command_rewriting_a_program_the_persons_setting_names_is_undone(
    backend: str, place: Place
) -> None:
    # The walk by name knows nothing of tools/fsmon.sh; git's view does (the person's own
    # core.fsmonitor names it).
    _fsmonitor_in_the_tree(place)
    script = place.ws / "tools" / "fsmon.sh"
    before = script.read_bytes()
    payload = place.hook_text().replace("\n", "\\n")
    result = GuardedRunner(_runner(backend)).run(
        CommandSpec(f"printf '{payload}' > tools/fsmon.sh", workspace=place.ws)
    )
    assert "[harness]" in result.output and "fsmon.sh" in result.output
    assert script.read_bytes() == before and script.stat().st_mode & 0o111
    place.person("")
    assert not place.marker.fired()


@pytest.mark.parametrize("backend", _runners())
def test_a_command_rewriting_a_husky9_script_is_undone(backend: str, place: Place) -> None:
    _husky9(place)
    script = place.ws / ".husky" / "pre-commit"
    result = GuardedRunner(_runner(backend)).run(
        CommandSpec(f"echo '{place.marker.program}' > .husky/pre-commit", workspace=place.ws)
    )
    assert "[harness]" in result.output and script.read_text() == "exit 0\n"
    place.person("")
    assert not place.marker.fired()


# --- a rewind (and so an undo) restores through the guard -------------------------------------


def _point_with_a_hook(place: Place) -> tuple[Manifest, Manifest, BlobStore]:
    """A restore point taken while `.husky/pre-commit` held the marker (the model wrote it, say),
    and the workspace now, with the person's own hook back: a rewind to the point puts the
    marker back."""
    _husky(place)
    store = BlobStore(place.ws)
    capture = Capture(store, Fingerprinter(place.ws))
    hook = place.ws / ".husky" / "pre-commit"
    own = hook.read_text()
    hook.write_text(place.hook_text())
    point = capture.take()
    hook.write_text(own)
    return point, capture.take(), store


def test_a_rewind_restoring_a_hook_is_real_when_unguarded(place: Place) -> None:
    point, _, store = _point_with_a_hook(place)
    store.restore({".husky/pre-commit": point[".husky/pre-commit"][0]})
    place.person("")
    assert place.marker.fired()


def test_a_rewind_does_not_restore_a_hook_git_would_run(place: Place) -> None:
    point, now, store = _point_with_a_hook(place)
    done = restore(store, point, now, set())
    assert "hook pre-commit" in done.guarded
    place.person("")
    assert not place.marker.fired()


# --- through a whole session: the notice the person sees, the result the model reads ----------


def test_a_scripted_turn_planting_a_bare_repo_is_said_and_undone() -> None:
    from cerveau_tui.testing.cli import run_cli
    from cerveau_tui.testing.scripted_server import ScriptedServer

    # Under /var/tmp like the other probes: a workspace under /tmp is refused as the harness's.
    work = Path(tempfile.mkdtemp(prefix="cerveau-probe-", dir="/var/tmp"))
    try:
        place = Place(work, work / "ws", work / "home", make_marker(work / "probe"))
        place.ws.mkdir()
        place.repo()
        calls = [
            {"name": "write_file", "arguments": {"path": rel, "content": text}}
            for rel, text in _bare(place, "sub")
        ]
        script = {"responses": [{"tool_calls": calls}, {"content": "done."}]}
        env = {
            "HOME": str(place.home),
            "CERVEAU_CONFIG": str(place.home / "cerveau.toml"),
            "CERVEAU_SANDBOX_BACKEND": "none",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        with ScriptedServer(script) as srv:
            _, events, err = run_cli(place.ws, srv.url, "probe", env=env, timeout=180)
        results = [e["payload"] for e in events if e["type"] == "tool_result"]
        notices = [e["payload"] for e in events if e["type"] == "notice"]
        place.person("sub")
        assert not place.marker.fired()
        assert any(not r["ok"] and "[harness]" in r["output"] for r in results), json.dumps(results)
        assert any(n.get("source") == "boundary" and "sub" in n["text"] for n in notices), err
    finally:
        shutil.rmtree(work, ignore_errors=True)
