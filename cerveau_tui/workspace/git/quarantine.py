"""Undo what guard.py found, without losing a byte of anyone's work.

- A repository that existed before the command: each control file the command changed gets its
  previous bytes back (the snapshot kept them), and the command's version, or a file that did not
  exist before (a new hook, a new commondir), is moved into the quarantine. Restoring the whole
  config also drops harmless edits the command made to it (a user.name); they are in the
  quarantine copy, and the note says so.
- A repository the command created with something dangerous in it: a new `.git` directory, gitfile
  or link is moved whole into the quarantine (its history included); a bare repository laid out in
  a folder loses its HEAD, which is what makes git take the folder for a repository, and the rest
  of the folder (which may hold the model's other files) stays.
- A folder the guard could not list is moved into the quarantine: a repository could hide in it.

The quarantine is `<ws>/.cerveau/quarantine/<n>/`. Inside it, every `HEAD` is renamed
`HEAD.quarantined` and every `.git` `dot-git.quarantined`, so a person who cds there is not in a
repository (git would otherwise discover a moved `.git` as a bare one). Everything moves by
rename, from directory descriptors opened without following links (beneath.open_dir_beneath), so a
link swapped in on the way is refused, never followed. Nothing outside the workspace is touched:
such a finding is reported as not undone.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ...state_home import locate, state_path
from ..io.beneath import UnsafePath, open_dir_beneath, write_at
from .guard import Finding
from .snapshot import Control

_DEFANG = {"HEAD": "HEAD.quarantined", ".git": "dot-git.quarantined"}


class _Box:
    """One numbered quarantine folder, made on first use."""

    def __init__(self, ws: str, quarantine_dir: Path | None) -> None:
        self.ws = ws
        self.root = quarantine_dir  # None: the workspace's own, opened beneath it
        self.fd: int | None = None
        self.path = ""
        self.moved: list[tuple[str, str]] = []

    def open(self) -> int:
        if self.fd is not None:
            return self.fd
        if self.root is None:
            # Never through a link: a `.cerveau` planted as a link would send the quarantine out
            # (UnsafePath; take() then quarantines in place).
            # (`.cerveau/quarantine`, or the alternate's: state_home.py; across filesystems the
            # rename fails with EXDEV and take() quarantines in place.)
            parent = open_dir_beneath(*locate(self.ws, "quarantine"), create=True)
            root = str(state_path(self.ws, "quarantine"))
        else:
            root = os.path.realpath(self.root)
            os.makedirs(root, exist_ok=True)
            parent = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            for n in range(1, 100_000):
                try:
                    os.mkdir(str(n), 0o700, dir_fd=parent)
                except FileExistsError:
                    continue
                self.fd = os.open(
                    str(n), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent
                )
                self.path = os.path.join(root, str(n))
                return self.fd
        finally:
            os.close(parent)
        raise FileExistsError(errno.EEXIST, "quarantine is full", str(root))

    def take(self, src_fd: int, name: str, rel: str) -> str:
        """Rename `name` (in `src_fd`) into the box; returns where it went, relative to ws."""
        try:
            box = self.open()
        except (UnsafePath, NotADirectoryError):
            return self._take_in_place(src_fd, name, rel)
        flat = (rel.replace("/", "__") or "workspace-root").lstrip(".") or "dot"
        dest, i = flat, 1
        while _exists(box, dest):
            i += 1
            dest = f"{flat}.{i}"
        try:
            os.rename(name, dest, src_dir_fd=src_fd, dst_dir_fd=box)
        except OSError as exc:
            if exc.errno != errno.EXDEV:  # a mount inside the workspace
                raise
            return self._take_in_place(src_fd, name, rel)
        _defang(os.path.join(self.path, dest))
        self.moved.append((rel, dest))
        return _rel(self.ws, os.path.join(self.path, dest))

    def _take_in_place(self, src_fd: int, name: str, rel: str) -> str:
        """No usable quarantine folder: rename beside itself, to a name git never looks for."""
        for n in range(1, 1000):
            dest = f"{name}.git-guard-quarantined-{n}"
            if not _exists(src_fd, dest):
                break
        os.rename(name, dest, src_dir_fd=src_fd, dst_dir_fd=src_fd)
        where = os.path.join(os.path.dirname(os.path.join(self.ws, rel)), dest)
        _defang(where)
        return _rel(self.ws, where)

    def close(self) -> None:
        if self.fd is None:
            return
        lines = [
            "Moved here by cerveau's git guard: a command or a file write left code for the next git.",
            "Every HEAD was renamed HEAD.quarantined and every .git dot-git.quarantined, so git does",
            "not take anything here for a repository. To restore one, move it back and undo those.",
            "",
            *(f"{dest}  <-  {rel or '(workspace root)'}" for rel, dest in self.moved),
        ]
        try:
            write_at(self.fd, "README.txt", ("\n".join(lines) + "\n").encode())
        finally:
            os.close(self.fd)
            self.fd = None


def neutralize(
    workspace: Path | str, findings: list[Finding], quarantine_dir: Path | None = None
) -> list[str]:
    """Make each finding harmless; returns what was done, one line each, for the person and the
    model. A finding that could not be undone says so ("NOT undone: ...")."""
    ws = os.path.realpath(workspace)
    box = _Box(ws, quarantine_dir)
    actions: list[str] = []
    try:
        done: set[str] = set()
        for f in findings:  # existing repositories first: their files, one by one
            if f.new_repo or f.path in done:
                continue
            done.add(f.path)
            actions.append(_guarded(lambda f=f: _restore(box, ws, f), f.path, ws))
        entries = {f.repo: f for f in findings if f.new_repo}
        for _entry, f in sorted(entries.items()):
            actions.append(
                _guarded(lambda f=f: _take_repo(box, ws, f), os.path.join(ws, f.repo), ws)
            )
    finally:
        box.close()
    return actions


def _guarded(action, path: str, ws: str) -> str:  # type: ignore[no-untyped-def]
    try:
        return str(action())
    except (OSError, UnsafePath) as exc:
        return f"NOT undone: {_rel(ws, path)} ({exc.strerror or exc})"


def _restore(box: _Box, ws: str, f: Finding) -> str:
    rel = _rel(ws, f.path)
    if rel == f.path:
        return f"NOT undone: {f.path} is outside the workspace"
    parent_rel, name = os.path.split(rel)
    fd = open_dir_beneath(Path(ws), parent_rel)
    try:
        if not _exists(fd, name):
            return f"{rel}: already gone"
        where = box.take(fd, name, rel)
        prev = f.previous
        if prev is None or prev.kind == "missing":
            return f"moved {rel} to {where}"
        if _put_back(fd, name, prev):
            return f"restored {rel} as it was before (the new version is in {where})"
        return f"moved {rel} to {where} (its previous version was not kept: {prev.kind})"
    finally:
        os.close(fd)


def _put_back(fd: int, name: str, prev: Control) -> bool:
    if prev.kind == "link" and prev.link is not None:
        os.symlink(prev.link, name, dir_fd=fd)
        return True
    if prev.kind == "dir":
        os.mkdir(name, prev.mode, dir_fd=fd)
        return True
    if prev.kind != "file" or prev.data is None:
        return False
    write_at(fd, name, prev.data)
    # write_at keeps the mode of the file it replaces, and that file was moved away: a restored
    # hook must stay executable.
    f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        os.fchmod(f, prev.mode)
    finally:
        os.close(f)
    return True


def _take_repo(box: _Box, ws: str, f: Finding) -> str:
    if f.kind == "unscannable" or f.repo_kind != "bare":
        target = f.repo
        label = "moved"
    else:
        target = os.path.join(f.repo, "HEAD") if f.repo else "HEAD"
        label = "moved the HEAD of bare repository"
    parent_rel, name = os.path.split(target)
    fd = open_dir_beneath(Path(ws), parent_rel)
    try:
        if not _exists(fd, name):
            return f"{target}: already gone"
        if f.kind == "unscannable":
            _open_up(os.path.join(ws, target))
        where = box.take(fd, name, target)
    finally:
        os.close(fd)
    if label != "moved":
        return f"{label} {f.repo or '(workspace root)'} to {where}: git no longer takes it for a repository"
    return f"moved {target} to {where}"


def _defang(path: str) -> None:
    """Rename every HEAD and .git under `path` (itself included), following no link."""
    base = os.path.basename(path)
    if base in _DEFANG:  # never: take() names entries after their relative path
        return
    try:
        is_dir = os.path.isdir(path) and not os.path.islink(path)
    except OSError:
        return
    if not is_dir:
        return
    _open_up(path)
    for top, dirs, files in os.walk(path, followlinks=False):
        for name in dirs:
            _open_up(os.path.join(top, name))
        for name in list(dirs) + files:
            if name in _DEFANG:
                os.rename(os.path.join(top, name), os.path.join(top, _DEFANG[name]))
                if name in dirs:
                    dirs[dirs.index(name)] = _DEFANG[name]


def _open_up(path: str) -> None:
    """Give the owner rwx on the real directory `path` (never through a link): a folder made
    unlistable (`chmod 100`) could hide a repository from the walk, and moving a directory to
    another parent needs write access to it (its `..` entry changes)."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o700 == 0o700:
        return
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        # fchmod refuses an O_PATH descriptor; its /proc link names exactly this inode.
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) | 0o700)
    finally:
        os.close(fd)


def _exists(fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def _rel(ws: str, path: str) -> str:
    if path.startswith(ws + os.sep):
        return path[len(ws) + 1 :]
    return path
