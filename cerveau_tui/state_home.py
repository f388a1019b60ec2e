"""Where a workspace's state lives: the one place that decides it.

By default `<workspace>/.cerveau/` (sessions, blobs, config.toml, prompt history, quarantine,
the verify scratch, the handoff, the memory and lessons, skills). A read-only workspace (a
mounted image, a `chmod -w` checkout, a folder of another user) used to end every start in an
error. The alternate is a folder of the person's own, never the workspace's:
`$XDG_STATE_HOME/cerveau/workspaces/<name>-<hash of the real path>/` (default ~/.local/state),
used when the person asks for it: `--state-dir DIR|user|auto` on the command line, `state_dir`
in their own config (or CERVEAU_STATE_DIR); a workspace's own `.cerveau/config.toml` cannot
(config.py drops the key there: it would choose where the harness reads its next config from).

Every state path is `locate(workspace, sub)`: a (root, rel) pair for the beneath-fd functions
(workspace/io/beneath.py), `(workspace, ".cerveau/sub")` or `(alternate, "sub")`. The alternate is
made here one component at a time, never following a link (`_make_dirs`), and below it the
callers open everything beneath its fd as they do in the workspace. The sandbox keeps it out of
reach (sandbox/view.py control_paths: not visible to commands, never granted, never written by
the file tools).

The choice is per process and per workspace (its real path): `choose()` records it, the CLI's
`load_settings` makes it before the workspace config is read (from wherever the state is).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path

STATE_DIR = ".cerveau"
#: The values of `--state-dir` / `state_dir` that are not a folder.
WORKSPACE, USER, AUTO = "workspace", "user", "auto"
FLAG = "--state-dir"

#: errno values meaning "this folder is not ours to write", as opposed to a link or a file there.
UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)

_chosen: dict[str, Path] = {}


class StateHomeError(ValueError):
    """The state folder asked for cannot be used (inside the workspace, a link, not a folder)."""


def _real(workspace: Path | str) -> Path:
    return Path(os.path.realpath(workspace))


def user_state_root() -> Path:
    """`$XDG_STATE_HOME/cerveau` (an absolute XDG_STATE_HOME only, as the spec says), else
    `~/.local/state/cerveau`."""
    raw = os.environ.get("XDG_STATE_HOME", "")
    base = Path(raw) if raw and os.path.isabs(raw) else Path.home() / ".local" / "state"
    return base / "cerveau"


def alternates_root() -> Path:
    """The folder every workspace's alternate is made in (kept out of the sandbox whole)."""
    return user_state_root() / "workspaces"


def alternate_for(workspace: Path | str) -> Path:
    """`<name>-<12 hex of sha256(real path)>`: two checkouts named alike never share one."""
    real = _real(workspace)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", real.name or "root")[:40].lstrip(".") or "ws"
    digest = hashlib.sha256(os.fsencode(str(real))).hexdigest()[:12]
    return alternates_root() / f"{name}-{digest}"


def chosen(workspace: Path | str) -> Path | None:
    """The alternate in use for `workspace`, or None: its state is `<workspace>/.cerveau`."""
    return _chosen.get(str(_real(workspace)))


def locate(workspace: Path | str, sub: str | Path = "") -> tuple[Path, str]:
    """(root, rel) of the state entry `sub` (e.g. "sessions"), for the beneath-fd functions."""
    sub = Path(sub).as_posix() if str(sub) else ""
    sub = "" if sub == "." else sub
    alt = chosen(workspace)
    if alt is not None:
        return alt, sub
    return Path(workspace), f"{STATE_DIR}/{sub}" if sub else STATE_DIR


def state_path(workspace: Path | str, sub: str | Path = "") -> Path:
    """The same entry as a path, to show (and for readers that open by path)."""
    root, rel = locate(workspace, sub)
    return root / rel if rel else root


def shown(workspace: Path | str, sub: str | Path = "") -> str:
    """How a message names it: relative to the workspace (`.cerveau/sub`) there, else in full."""
    root, rel = locate(workspace, sub)
    return rel if chosen(workspace) is None else str(root / rel if rel else root)


def in_workspace(workspace: Path | str) -> bool:
    return chosen(workspace) is None


def protected() -> list[Path]:
    """What the sandbox and the file tools keep out of reach besides the workspace's own
    `.cerveau`: the alternates' folder and every alternate chosen in this process."""
    out = {Path(os.path.realpath(alternates_root())), *_chosen.values()}
    return sorted(out)


def resolve(workspace: Path | str, spec: str) -> Path | None:
    """The folder `spec` names for `workspace` (None: the workspace's own `.cerveau`). AUTO is
    the alternate only when the workspace's own cannot be written."""
    spec = spec.strip()
    if spec in ("", WORKSPACE):
        return None
    if spec == USER:
        return alternate_for(workspace)
    if spec == AUTO:
        return None if unwritable_reason(workspace) is None else alternate_for(workspace)
    path = Path(os.path.expanduser(spec))
    if not path.is_absolute():
        raise StateHomeError(f"{FLAG} {spec}: give an absolute folder, or user, auto, workspace")
    return path


def choose(workspace: Path | str, spec: str | None) -> Path | None:
    """Record where `workspace`'s state lives for this process and make the folder (0o700, no
    link followed on the way). None (the flag absent) keeps what was chosen before."""
    if spec is None:
        return chosen(workspace)
    key = str(_real(workspace))
    target = resolve(workspace, spec)
    if target is None:
        _chosen.pop(key, None)
        return None
    real_ws = _real(workspace)
    lexical = Path(os.path.abspath(target))
    if lexical == real_ws / STATE_DIR:
        _chosen.pop(key, None)
        return None
    for p in (lexical, Path(os.path.realpath(lexical.parent)) / lexical.name):
        if p == real_ws or real_ws in p.parents or p in real_ws.parents:
            raise StateHomeError(
                f"{FLAG} {target}: inside (or holding) the workspace {real_ws}, where commands "
                "could rewrite it; give a folder outside it (or user)"
            )
    try:
        _make_dirs(lexical)
    except OSError as exc:
        raise StateHomeError(f"{FLAG} {target}: cannot use it: {exc.strerror or exc}") from None
    _chosen[key] = lexical
    return lexical


def forget(workspace: Path | str | None = None) -> None:
    """Back to `<workspace>/.cerveau` (all workspaces when None): tests, and a new choice."""
    if workspace is None:
        _chosen.clear()
    else:
        _chosen.pop(str(_real(workspace)), None)


def _make_dirs(path: Path) -> None:
    """mkdir -p, one component at a time by fd, refusing a link on the way (O_NOFOLLOW); the
    last component is made 0o700 and must be a real directory the process can write."""
    parts = [p for p in path.parts[1:] if p]
    cur = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                os.mkdir(part, 0o700 if last else 0o755, dir_fd=cur)
            except FileExistsError:
                pass
            try:
                nxt = os.open(
                    part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=cur
                )
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    st = os.stat(part, dir_fd=cur, follow_symlinks=False)
                    if stat.S_ISLNK(st.st_mode) and _trusted_link(Path("/", *parts[: i + 1])):
                        nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=cur)
                    else:
                        what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
                        shown = "/" + "/".join(parts[: i + 1])
                        raise OSError(exc.errno, f"{shown} is {what}") from None
                else:
                    raise
            os.close(cur)
            cur = nxt
        if not os.access(path, os.W_OK):
            raise OSError(errno.EACCES, "not writable")
    finally:
        os.close(cur)


def _trusted_link(here: Path) -> bool:
    """A link above the person's state folder is the system's (merged /usr, /home on another
    disk), not planted by a command: followed, as the person's own paths are. At or below
    `user_state_root()` (cerveau's own folders) a link is refused."""
    root = user_state_root()
    return not (here == root or root in here.parents)


def unwritable_reason(workspace: Path | str) -> str | None:
    """Why `<workspace>/.cerveau` cannot hold the state (EROFS, EACCES, EPERM), or None. Makes
    the folder when it can (the session would a moment later)."""
    path = Path(workspace) / STATE_DIR
    try:
        os.mkdir(path, 0o755)
        return None
    except FileExistsError:
        pass
    except OSError as exc:
        if exc.errno in UNWRITABLE:
            return exc.strerror or str(exc)
        return None  # something else (ENOENT of the workspace): said by whoever needs it
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode) and not os.access(path, os.W_OK):
        return "not writable"
    if stat.S_ISDIR(st.st_mode):
        # os.access answers for the mode bits; a read-only mount says EROFS only on a write.
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            os.mkdir(".cerveau-probe", 0o700, dir_fd=fd)
            os.rmdir(".cerveau-probe", dir_fd=fd)
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno in UNWRITABLE:
                return exc.strerror or str(exc)
        finally:
            os.close(fd)
    return None


def offer(workspace: Path | str, why: str) -> str:
    """One line: why the workspace cannot hold the state, where it could go, the flag to use."""
    import shlex

    alt = alternate_for(workspace)
    return (
        f"cannot keep this session's state in {Path(workspace) / STATE_DIR} ({why}); run again "
        f'with {FLAG} user to keep it in {alt} instead (state_dir = "auto" in your own config '
        f"does it for every read-only workspace), or work on a writable copy "
        f"(cp -a {shlex.quote(str(workspace))} COPY)"
    )
