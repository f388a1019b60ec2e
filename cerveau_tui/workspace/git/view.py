"""Git's own view of a few folders: the repository it would discover from each, the settings in
effect there that run programs, and the hooks it would run.

Probed: with no command at all, `write_file` planted a bare repository as plain files (`HEAD`,
`config` with `core.fsmonitor`, `objects/x`, `refs/x`) in a subfolder; an in-tree hook under the
repository's `core.hooksPath` (`.husky/pre-commit`); the file an `include.path` names; the config
of a `--separate-git-dir`. None of these paths has a `.git` component, so a check by name passed
them, and the person's next `git status` ran the model's program. A list of names leaks where the
list ends; git's answer does not. So this module asks git, as the person's git would see it:

- `git rev-parse` from each folder: which repository its upward search finds (`-c
  safe.bareRepository=all`, so a bare repository the person's settings would refuse today is
  still seen: the setting is theirs to change, the planted files stay);
- `git config --list --show-origin --includes`: every setting in effect there, from every file,
  kept when config_rules.danger says it runs a program; an `includeIf` target is read too
  whatever its condition (a branch the person checks out tomorrow satisfies it);
- the hooks folder git would use (`--git-path hooks`, so core.hooksPath counts): each hook's
  bytes AND whether it is executable, as git decides whether to run it;
- the programs those settings name that are files (`core.fsmonitor = tools/fsmon.sh`, a
  `filter.x.clean = ./bin/clean`): the setting is the person's, the file it names is as much
  code as a hook, so its bytes and mode count too.

Git itself never runs a program here: `rev-parse` and `config --list` read files only, stdout is
not a terminal (no pager), `core.fsmonitor=false` on the command line, no `GIT_DIR`-style variable
from the harness's environment, git from system paths only. The person's own system and global
config are read (they are in effect for the person's git), identically before and after.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ... import host_process
from .config_rules import ConfigItems, ParseConfig, danger, find_git, split_key
from .hooks import Hook, hook_scripts, hooks_in
from .hooks import hook as read_hook
from .snapshot import default_parser, read_control
from .special import kind_of
from .stall import blocker

_FLAGS = (
    "--no-pager",
    "-c", "core.fsmonitor=false",
    "-c", "safe.bareRepository=all",
    "-c", "safe.directory=*",
)  # fmt: skip
# Where git looks is the person's; how it is told to look by the harness's environment is not.
_KEEP_ENV = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")

RunGit = Callable[[list[str], str], "tuple[int, bytes, bytes]"]


@dataclass(frozen=True)
class RepoView:
    git_dir: str
    programs: frozenset[tuple[str, str]]  # (key, value) pairs that run something
    origins: dict[tuple[str, str], str]  # where each came from (for the messages)
    hooks_dir: str
    hooks: dict[str, Hook]
    named: dict[str, Hook] = field(default_factory=dict)  # program files the settings name


@dataclass(frozen=True)
class View:
    """`found`: folder -> the git dir git discovers from it (None: no repository); `repos`: git
    dir -> what is in effect there (None: git could not read it)."""

    found: dict[str, str | None] = field(default_factory=dict)
    repos: dict[str, RepoView | None] = field(default_factory=dict)
    unavailable: bool = False  # git could not be run: this view says nothing, not "clean"
    # git dir -> the file in it git would wait on forever (stall.py): git is not asked there.
    stalled: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Difference:
    kind: str  # "repository" | "config" | "hook"
    git_dir: str
    path: str  # the file that carries it (or the folder a new repository was found from)
    what: str  # short: "core.fsmonitor", "hook pre-commit", "repository"
    detail: str


#: What of our environment tells git where the person's own config is (their global config is in
#: effect for their git, identically before and after a command); nothing else of it reaches git.
_PERSON_ENV = ("HOME", "XDG_CONFIG_HOME", *_KEEP_ENV)


def git_env() -> dict[str, str]:
    env = host_process.host_env(inherit=_PERSON_ENV)
    env.update(PATH="/usr/bin:/bin", LC_ALL="C", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    return env


def run_git(args: list[str], cwd: str) -> tuple[int, bytes, bytes]:
    git = find_git()
    if git is None:
        return 127, b"", b"git not found"
    try:
        # cwd: git's upward search starts from the folder asked about (that is the question).
        out = host_process.run([git, *_FLAGS, *args], cwd=cwd, env=git_env(), timeout=10)
    except (OSError, host_process.SubprocessError) as exc:
        return 127, b"", str(exc).encode()
    return out.returncode, out.stdout, out.stderr


def chain(workspace: str, paths: Iterable[str]) -> list[str]:
    """Every folder above each path, up to and including the workspace, deepest first."""
    out: list[str] = []
    for p in paths:
        d = os.path.dirname(os.path.normpath(p))
        while d == workspace or d.startswith(workspace + os.sep):
            if d not in out:
                out.append(d)
            if d == workspace:
                break
            d = os.path.dirname(d)
    return sorted(out, key=lambda d: -d.count(os.sep))


def view(
    folders: Iterable[str], *, run: RunGit = run_git, parse: ParseConfig | None = None
) -> View:
    """Git's view from each existing folder; a folder that does not exist is left out (compare
    uses its nearest existing parent). One rev-parse per repository on the way up, not per
    folder: a folder between one asked and the place git found the repository gets the same
    answer (git's search passed it and found nothing), so it is not asked again."""
    parse = parse or default_parser
    order = [f for f in folders if os.path.isdir(f) and not os.path.islink(f)]
    found: dict[str, str | None] = {}
    repos: dict[str, RepoView | None] = {}
    unavailable = False
    stalled: dict[str, str] = {}
    for folder in order:
        if folder in found:
            continue
        stall = blocker(folder, parse)
        if stall is not None:
            found[folder], stalled[stall[0]] = stall
            repos.setdefault(stall[0], None)
            continue
        # --show-toplevel last: in a bare repository it fails after printing the others.
        code, out, err = run(
            ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
             "--git-path", "hooks", "--show-toplevel"], folder,
        )  # fmt: skip
        lines = out.decode("utf-8", "replace").splitlines()
        unavailable = unavailable or code == 127
        if len(lines) < 3 or (code != 0 and len(lines) != 3):
            found[folder] = None
            if b"not a git repository" in err:  # nothing up to the root: nothing above either
                _cover(found, order, folder, None, None)
            continue
        git_dir, common, hooks_dir = (os.path.realpath(x) for x in lines[:3])
        top = os.path.realpath(lines[3]) if len(lines) > 3 else None
        found[folder] = git_dir
        stop = _found_at(folder, git_dir, top)
        if stop is not None:
            _cover(found, order, folder, stop, git_dir)
        if git_dir not in repos:
            repos[git_dir] = _repo(git_dir, common, hooks_dir, folder, top or git_dir, run, parse)
    return View(found, repos, unavailable, stalled)


def _found_at(folder: str, git_dir: str, top: str | None) -> str | None:
    """The folder where git's upward search from `folder` stopped, when it can be told."""
    parent = os.path.dirname(git_dir)
    if os.path.basename(git_dir) == ".git" and _inside(parent, folder):
        return parent  # `X/.git` found from below X
    if _inside(git_dir, folder):
        return git_dir  # a bare repository (or the inside of a git dir)
    if top is not None and _inside(top, folder) and os.path.lexists(os.path.join(top, ".git")):
        return top  # a gitfile or a `.git` link in the top of the working tree
    return None


def _cover(
    found: dict[str, str | None],
    order: list[str],
    folder: str,
    stop: str | None,
    git_dir: str | None,
) -> None:
    """Give the answer from `folder` to every folder its search passed: its parents up to `stop`
    (None: all of them)."""
    for other in order:
        if other not in found and _inside(other, folder) and (stop is None or _inside(stop, other)):
            found[other] = git_dir


@dataclass(frozen=True)
class _Listing:
    programs: frozenset[tuple[str, str]]
    origins: dict[tuple[str, str], str]
    read: frozenset[str]  # every file the listing came from


# git dir -> (the stat of every file the listing read or could read, the listing): the same
# config read before and after every write costs one git run per change of those files.
_LISTINGS: dict[str, tuple[tuple[object, ...], _Listing | None]] = {}


def _repo(
    git_dir: str, common: str, hooks_dir: str, cwd: str, top: str, run: RunGit,
    parse: ParseConfig,
) -> RepoView | None:  # fmt: skip
    fixed = [os.path.join(common, "config"), os.path.join(git_dir, "config.worktree")]
    fixed += [os.path.join(git_dir, "HEAD"), os.path.join(git_dir, "commondir")]
    hit = _LISTINGS.get(git_dir)
    if hit is not None and hit[0] == _stats(fixed, hit[1]):
        listing = hit[1]
    else:
        listing = _list_config(cwd, run, parse)
        _LISTINGS[git_dir] = (_stats(fixed, listing), listing)
        if len(_LISTINGS) > 512:
            _LISTINGS.clear()
    if listing is None:
        return None
    named = {}
    for key, value in listing.programs:
        if split_key(key)[2] == "path" or key == "core.hookspath":
            continue  # a config file or the hooks folder: seen above as what they hold
        for path in _named_files(value, (top, cwd, git_dir)):
            named[path] = read_hook(path)
    named.update(hook_scripts(hooks_dir, top))
    return RepoView(
        git_dir, listing.programs, listing.origins, hooks_dir, hooks_in(hooks_dir), named
    )


def _stats(fixed: list[str], listing: _Listing | None) -> tuple[object, ...]:
    paths = set(fixed)
    if listing is not None:
        paths.update(listing.read)
        paths.update(_includes(listing))
    return tuple((p, _stat(p)) for p in sorted(paths))


def _stat(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)  # git follows links to config files: so does the signature
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _includes(listing: _Listing) -> list[str]:
    """Every file an include.path / includeIf names (they are kept as programs: danger())."""
    out = []
    for (key, value), where in listing.origins.items():
        section, sub, var = split_key(key)
        if var == "path" and section in ("include", "includeif"):
            out.append(
                os.path.normpath(os.path.join(os.path.dirname(where), os.path.expanduser(value)))
            )
    return out


def _list_config(cwd: str, run: RunGit, parse: ParseConfig) -> _Listing | None:
    code, out, _ = run(["config", "--list", "--show-origin", "--includes", "--null"], cwd)
    if code != 0:
        return None  # (compare reports nothing of it: the person's git fails to read it too)
    programs: set[tuple[str, str]] = set()
    origins: dict[tuple[str, str], str] = {}
    read: set[str] = set()
    fields = out.split(b"\0")
    for origin_b, record in zip(fields[0::2], fields[1::2], strict=False):
        origin = origin_b.decode("utf-8", "replace")
        if not origin.startswith("file:"):
            continue  # "command line:" is the guard's own -c
        where = os.path.normpath(os.path.join(cwd, origin[len("file:") :]))
        read.add(where)
        key, _, value = record.decode("utf-8", "replace").partition("\n")
        if danger(key, value) is not None:
            programs.add((key, value))
            origins.setdefault((key, value), where)
        section, sub, var = split_key(key)
        if section == "includeif" and sub is not None and var == "path":
            target = os.path.join(os.path.dirname(where), os.path.expanduser(value))
            for item in _conditional(target, parse):
                programs.add(item)
                origins.setdefault(item, os.path.normpath(target))
    return _Listing(frozenset(programs), origins, frozenset(read))


def _named_files(value: str, bases: tuple[str, ...]) -> list[str]:
    """The files a program-running value names by path (any word with a `/`), where git would
    look for them: relative to the working tree's top (git runs there), the folder it was asked
    from, or the git dir."""
    out = []
    for word in value.replace("!", " ").split():
        word = word.strip("'\"")
        if "/" not in word:
            continue
        paths = [os.path.normpath(os.path.join(b, os.path.expanduser(word))) for b in bases]
        there = [p for p in paths if os.path.lexists(p)]
        # None there yet: where git would look first (the model creating it is the change).
        for path in there or paths[:1]:
            if path not in out:
                out.append(path)
    return out


def _conditional(path: str, parse: ParseConfig) -> ConfigItems:
    """What an includeIf target says (its condition may hold tomorrow), dangerous keys only."""
    control = read_control(path, follow=True)
    if control.data is None:
        return frozenset()
    items = parse(control.data) or frozenset()
    return frozenset((k, v) for k, v in items if danger(k, v) is not None)


def compare(before: View, after: View, workspace: str | None = None) -> list[Difference]:
    """What git would do after that it would not before: a repository found where another (or
    none) was, a setting that runs a program, a hook that would run and did not or ran other
    bytes. What was there before is the person's, and so is a setting from a file outside
    `workspace` (their global config, which a new repository inherits)."""
    out: list[Difference] = []
    new: dict[str, str] = {}
    for folder, git_dir in after.found.items():
        was = _nearest(before.found, folder)
        if git_dir is not None and git_dir != was:
            new.setdefault(git_dir, folder)
    for git_dir, path in after.stalled.items():
        if before.stalled.get(git_dir) != path:
            detail = f"git would wait forever reading {path}, a {kind_of(path)}, not a file"
            out.append(Difference("repository", git_dir, path, "git metadata", detail))
    for git_dir, folder in new.items():
        if git_dir in after.stalled:
            continue  # said above, as what it is
        detail = f"git would now find the repository {git_dir} from {folder}"
        out.append(Difference("repository", git_dir, git_dir, "repository", detail))
    for git_dir, now in after.repos.items():
        if now is None:
            continue
        old = before.repos.get(git_dir)
        for key, value in sorted(now.programs - (old.programs if old else frozenset())):
            path = now.origins.get((key, value), git_dir)
            if workspace is not None and not _inside(workspace, path):
                continue  # the person's own config (a new repository inherits it)
            why = danger(key, value) or "runs a program"
            out.append(Difference("config", git_dir, path, key, f"{key} = {value!r} ({why})"))
        old_hooks = old.hooks if old and old.hooks_dir == now.hooks_dir else {}
        for name, hook in sorted(now.hooks.items()):
            prev = old_hooks.get(name)
            if hook.executable and not hook.same(prev):
                how = "made executable" if prev and prev.digest == hook.digest else "written"
                out.append(
                    Difference(
                        "hook", git_dir, os.path.join(now.hooks_dir, name), f"hook {name}",
                        f"hook {name} {how}: git would run it",
                    )
                )  # fmt: skip
        for path, prog in sorted(now.named.items()):
            prev = old.named.get(path, _ABSENT) if old else None
            if prev is not None and not prog.same(prev):
                # A file a setting names is code whether or not it is executable (`sh x`).
                out.append(
                    Difference(
                        "program", git_dir, path, f"program {os.path.basename(path)}",
                        f"{path}, which git runs (a setting or a hook starts it), was changed",
                    )
                )  # fmt: skip
    return out


_ABSENT = Hook("missing", False)


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def _nearest(found: dict[str, str | None], folder: str) -> str | None:
    d = folder
    while True:
        if d in found:
            return found[d]
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
