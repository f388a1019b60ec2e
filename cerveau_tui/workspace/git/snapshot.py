"""The snapshot half of the git guard: every place git would take code from, as it is now.

`snapshot` walks the whole workspace by name (os.scandir, never following a link: a repository
can hide at any depth, so nothing is skipped) and records each `.git` (directory, file or link)
and each directory git would take for a bare repository, with its control files: config (and the
files it includes), config.worktree, commondir, the gitfile, info/attributes and every hook that
is not a `*.sample`. Small files keep their bytes, so a change can be undone. What a change MEANS
is guard.py's `check`; why the guard exists is in its docstring.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .config_rules import ConfigItems, GitConfigParser, ParseConfig, include_paths, last_value
from .special import special_files

KEEP_BYTES = 256 * 1024  # config and hook files are small; a bigger one keeps only its digest
_INCLUDE_DEPTH = 10  # git's own limit is 10 as well
# Inside a git directory only these hold other repositories git reads (linked worktrees, the
# submodules' git dirs); objects/ and logs/ can hold thousands of entries and no repository.
_GITDIR_CHILDREN = ("worktrees", "modules")
_INSIDE_GIT_SKIP = frozenset({"objects", "logs", "lfs"})

default_parser = GitConfigParser()


@dataclass(frozen=True)
class Control:
    """One control file as it was at the snapshot."""

    kind: str  # "file" | "link" | "dir" | "other" | "missing"
    digest: str
    data: bytes | None = None  # a regular file's bytes, when at most KEEP_BYTES
    mode: int = 0o644
    link: str | None = None  # a link's target text


MISSING = Control("missing", "missing")


@dataclass(frozen=True)
class Repo:
    """One place git discovers a repository: `sub/.git` (a directory, a gitfile or a link), or a
    directory git takes as a bare repository (`sub`, "" for the workspace root)."""

    entry: str  # relative to the workspace
    kind: str  # "dotgit" | "gitfile" | "link" | "bare"
    git_dir: str | None  # realpath; None when the indirection leads to no repository
    common_dir: str | None
    indirection: str | None  # the gitfile / link / commondir that points elsewhere
    configs: tuple[str, ...] = ()  # every config in effect, includes resolved
    hooks: tuple[str, ...] = ()  # every non-sample entry of the hooks folder in effect
    hooks_dir: str | None = None  # the hooks folder in effect (core.hooksPath counted)
    stalling: tuple[str, ...] = ()  # HEAD, and whatever in the git dir is not a file (stall.py)


@dataclass(frozen=True)
class GitState:
    workspace: str  # realpath
    repos: dict[str, Repo]
    files: dict[str, Control]  # absolute path -> control file
    unscannable: frozenset[str] = frozenset()  # directories the walk could not list


@dataclass
class _Walk:
    ws: str
    parse: ParseConfig
    repos: dict[str, Repo] = field(default_factory=dict)
    files: dict[str, Control] = field(default_factory=dict)
    unscannable: set[str] = field(default_factory=set)
    parsed: dict[str, ConfigItems | None] = field(default_factory=dict)


def snapshot(workspace: Path | str, *, parse: ParseConfig | None = None) -> GitState:
    """Every git control location in the workspace, as it is now."""
    ws = os.path.realpath(workspace)
    walk = _Walk(ws, parse or default_parser)
    stack: list[tuple[str, str]] = [(ws, "tree")]
    while stack:
        path, mode = stack.pop()
        stack.extend(_scan_dir(walk, path, mode))
    return GitState(ws, walk.repos, walk.files, frozenset(walk.unscannable))


def _scan_dir(walk: _Walk, path: str, mode: str) -> Iterator[tuple[str, str]]:
    try:
        with os.scandir(path) as it:
            entries = {e.name: e for e in it}
    except (PermissionError, NotADirectoryError, FileNotFoundError) as exc:
        if isinstance(exc, PermissionError):
            walk.unscannable.add(rel_to(walk.ws, path))
        return
    if mode == "gitdir":  # the inside of a `.git` directory
        for name in _GITDIR_CHILDREN:
            e = entries.get(name)
            if e is not None and e.is_dir(follow_symlinks=False):
                yield e.path, "inside-git"
        return
    if mode == "tree" and ".git" in entries:
        if _add_dotgit(walk, path, entries[".git"]):
            yield entries[".git"].path, "gitdir"
    bare = _looks_bare(entries)
    if bare:
        _add_repo(walk, rel_to(walk.ws, path), "bare", path, None, hooks_base=path)
    for name, e in entries.items():
        if name == ".git" or not e.is_dir(follow_symlinks=False):
            continue
        if mode == "inside-git" and bare and name in _INSIDE_GIT_SKIP:
            continue
        yield e.path, mode


def _looks_bare(entries: dict[str, os.DirEntry[str]]) -> bool:
    """git's is_git_directory(): HEAD, and objects/ and refs/ (here or in the commondir)."""
    return "HEAD" in entries and (
        "commondir" in entries or ("objects" in entries and "refs" in entries)
    )


def _is_git_dir(path: str) -> bool:
    def has(name: str) -> bool:
        return os.path.lexists(os.path.join(path, name))

    return (
        os.path.isdir(path)
        and has("HEAD")
        and (has("commondir") or (has("objects") and has("refs")))
    )


def _add_dotgit(walk: _Walk, parent: str, entry: os.DirEntry[str]) -> bool:
    """Record `parent/.git`; True when it is a real directory to look inside."""
    rel = rel_to(walk.ws, entry.path)
    if entry.is_symlink():
        walk.files[entry.path] = read_control(entry.path)
        target = os.path.realpath(entry.path)
        if os.path.isfile(target):  # git reads a linked gitfile, relative to the link's folder
            git_dir = _gitfile_target(entry.path, parent, read_control(entry.path, follow=True))
        else:
            git_dir = target if _is_git_dir(target) else None
        _add_repo(walk, rel, "link", git_dir, entry.path, hooks_base=parent)
        return False
    if entry.is_dir(follow_symlinks=False):
        if _is_git_dir(entry.path):
            _add_repo(walk, rel, "dotgit", os.path.realpath(entry.path), None, hooks_base=parent)
            return True
        return False
    control = read_control(entry.path)
    walk.files[entry.path] = control
    git_dir = _gitfile_target(entry.path, parent, control)
    _add_repo(walk, rel, "gitfile", git_dir, entry.path, hooks_base=parent)
    return False


def _gitfile_target(path: str, base: str, control: Control) -> str | None:
    """What `gitdir: X` leads to (relative to the gitfile's folder), when git would accept it."""
    if control.data is None:
        return None
    first = control.data.split(b"\n", 1)[0].decode("utf-8", errors="replace").rstrip()
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:") :].strip()
    resolved = os.path.realpath(os.path.join(base, target))
    return resolved if _is_git_dir(resolved) else None


def _add_repo(
    walk: _Walk,
    rel: str,
    kind: str,
    git_dir: str | None,
    indirection: str | None,
    *,
    hooks_base: str,
) -> None:
    if git_dir is None:
        walk.repos[rel] = Repo(rel, kind, None, None, indirection)
        return
    common = git_dir
    # A FIFO where git reads (HEAD first) stalls every git of the person's (stall.py).
    stalling = [os.path.join(git_dir, "HEAD"), *special_files(git_dir)]
    for path in stalling:
        walk.files[path] = read_control(path)
    cd_path = os.path.join(git_dir, "commondir")
    cd = read_control(cd_path)
    if cd.kind != "missing":
        walk.files[cd_path] = cd
        indirection = indirection or cd_path
        text = (cd.data or b"").decode("utf-8", errors="replace").strip()
        common = os.path.realpath(os.path.join(git_dir, text)) if text else git_dir
        if common != git_dir:
            stalling += special_files(common)
            for path in stalling:
                walk.files.setdefault(path, read_control(path))
    configs: list[str] = []
    ordered: list[ConfigItems] = []
    for path in (os.path.join(common, "config"), os.path.join(git_dir, "config.worktree")):
        _add_config(walk, path, configs, ordered, 0)
    attributes = os.path.join(common, "info", "attributes")
    walk.files[attributes] = read_control(attributes)
    hooks_path = last_value(ordered, "core.hookspath")
    if hooks_path:
        hooks_dir = os.path.join(
            hooks_base if kind != "bare" else git_dir, os.path.expanduser(hooks_path)
        )
    else:
        hooks_dir = os.path.join(common, "hooks")
    hooks = _hooks(walk, hooks_dir)
    # The repository's own hooks folder counts too when something else is in effect (a
    # commondir or hooksPath the command set): undoing that indirection makes it live again.
    # Found by the probe suite: commondir + a new .git/hooks/post-checkout in one command.
    own = os.path.join(git_dir, "hooks")
    if os.path.realpath(own) != os.path.realpath(hooks_dir):
        hooks += [h for h in _hooks(walk, own) if h not in hooks]
    walk.repos[rel] = Repo(
        rel, kind, git_dir, common, indirection, tuple(configs), tuple(hooks), hooks_dir,
        tuple(dict.fromkeys(stalling)),
    )  # fmt: skip


def _add_config(
    walk: _Walk, path: str, out: list[str], ordered: list[ConfigItems], depth: int
) -> None:
    path = os.path.normpath(path)
    if path in out or depth > _INCLUDE_DEPTH:
        return
    control = read_control(path)
    walk.files[path] = control
    out.append(path)
    if control.data is None:
        return
    if path not in walk.parsed:
        walk.parsed[path] = walk.parse(control.data)
    items = walk.parsed[path]
    if not items:
        return
    ordered.append(items)
    for inc in include_paths(items):
        target = os.path.expanduser(inc)
        _add_config(walk, os.path.join(os.path.dirname(path), target), out, ordered, depth + 1)


def _hooks(walk: _Walk, hooks_dir: str) -> list[str]:
    here = read_control(hooks_dir)
    if here.kind == "link":  # a hooks folder swapped for a link is a change in itself
        walk.files[hooks_dir] = here
    real = os.path.realpath(hooks_dir)
    out = [hooks_dir] if here.kind == "link" else []
    try:
        with os.scandir(real) as it:
            names = sorted(e.name for e in it if not e.name.endswith(".sample"))
    except OSError:
        return out
    for name in names:
        path = os.path.join(real, name)
        walk.files[path] = read_control(path)
        out.append(path)
    return out


def read_control(path: str, *, follow: bool = False, keep: int = KEEP_BYTES) -> Control:
    """The file at `path`, never through a link unless `follow` (a gitfile reached through a `.git`
    link, which git follows), never blocking on a FIFO, never reading more than it keeps (`keep`
    bytes; beyond that only the digest)."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        return Control("other", f"error:{exc.errno}")
    if stat.S_ISLNK(st.st_mode):
        link = os.readlink(path)
        return Control("link", _digest(b"link:" + os.fsencode(link)), link=link)
    if stat.S_ISDIR(st.st_mode):
        return Control("dir", "dir", mode=stat.S_IMODE(st.st_mode))
    if not stat.S_ISREG(st.st_mode):
        return Control("other", f"other:{stat.S_IFMT(st.st_mode)}")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return Control("other", f"error:{exc.errno}")
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):
            return Control("other", f"other:{stat.S_IFMT(fst.st_mode)}")
        h = hashlib.sha256()
        kept = bytearray()
        while chunk := os.read(fd, 1 << 16):
            h.update(chunk)
            if len(kept) <= keep:
                kept += chunk
    finally:
        os.close(fd)
    data = bytes(kept) if len(kept) <= keep else None
    return Control("file", h.hexdigest(), data, stat.S_IMODE(fst.st_mode))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rel_to(ws: str, path: str) -> str:
    if path == ws:
        return ""
    if path.startswith(ws + os.sep):
        return path[len(ws) + 1 :]
    return path
