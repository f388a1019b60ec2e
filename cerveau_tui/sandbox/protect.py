"""What every enforcing backend protects besides "writes stay in the workspace": the harness's own
state folder, and the secrets on the person's deny-read list.

The state folder (`.cerveau/`) holds the config the NEXT session reads, the session log and the
blob store. A read-only bind of `.cerveau/config.toml` protected nothing: with no file yet the
command created one saying `sandbox = "full-access"`, and with one present `mv .cerveau x` and a
new folder did the same. So the runner makes `.cerveau` a real directory BEFORE the first command
and bubblewrap binds the whole folder read-only: a mount point cannot be renamed or removed from
inside, and nothing beneath it can be created, replaced or linked.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..state_home import STATE_DIR, UNWRITABLE, chosen, offer


class StateDirRefused(RuntimeError):
    """`.cerveau` in the workspace is not a real directory: a command would run with the harness's
    state redirected (a link) or unprotectable (a file)."""


class StateDirUnwritable(StateDirRefused):
    """`.cerveau` cannot be made or written: a read-only workspace (a mounted image, a checkout on
    a read-only share). A session cannot keep its log, undo copies or memory, so it does not start;
    the message says what the person can do, instead of the raw `OSError` it used to end in."""


_UNWRITABLE = UNWRITABLE


def unwritable_message(ws: Path, why: str) -> str:
    """One line, the same in the TUI's chat and on the headless runner's stderr: where the
    state could go instead and the flag that puts it there (state_home.py)."""
    return offer(ws, why)


def ensure_state_dir(ws: Path) -> Path:
    """Make `ws/.cerveau` a real directory (never following a link), or refuse.

    Refused rather than moved aside: a link there was made by someone who meant the harness to
    write its state elsewhere, and the person should see that, not have it silently tidied."""
    alt = chosen(ws)
    if alt is not None:  # the person's own folder (state_home.choose made it, no link followed)
        if not os.path.isdir(alt) or os.path.islink(alt):
            raise StateDirRefused(f"refused to run: the state folder {alt} is not a directory")
        return alt
    path = ws / STATE_DIR
    try:
        os.mkdir(path, 0o755)
        keep_out_of_git(ws)
        return path
    except FileExistsError:
        pass
    except OSError as exc:
        if exc.errno in _UNWRITABLE:
            raise StateDirUnwritable(unwritable_message(ws, exc.strerror or str(exc))) from None
        raise
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        # There, but a session could not write its log in it (a read-only mount keeps a folder a
        # checkout already had): said now, not as an OSError from the first write.
        if not os.access(path, os.W_OK):
            raise StateDirUnwritable(unwritable_message(ws, "not writable"))
        keep_out_of_git(ws)
        return path
    kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a directory"
    target = f" to {os.readlink(path)}" if stat.S_ISLNK(st.st_mode) else ""
    raise StateDirRefused(
        f"refused to run: {path} is {kind}{target}; the harness's state folder must be a real "
        f"directory. Inspect it, then remove or rename it (outside this session) to continue."
    )


GITIGNORE = "# cerveau's own state (sessions, blobs, the undo log): not part of the project\n*\n"


def require_writable_state_dir(ws: Path) -> None:
    """Before a session builds anything (the embedded server takes minutes to load a model):
    StateDirUnwritable when its state has nowhere to go. A link or a file at `.cerveau` is left to
    the runner, which refuses each command with its own message (ensure_state_dir)."""
    try:
        ensure_state_dir(Path(ws))
    except StateDirUnwritable:
        raise
    except (StateDirRefused, OSError):
        pass


def keep_out_of_git(ws: Path) -> None:
    """`.cerveau/.gitignore` saying `*`, unless one is there: the session log and blob store were
    showing up in `git status` and went into a person's commit with `git add -A`. Written beneath
    the workspace following no link, so a planted `.cerveau/.gitignore` link writes nowhere else."""
    from ..workspace.io.beneath import UnsafePath, atomic_write_beneath

    if chosen(ws) is not None:
        return  # the state is outside the workspace: nothing of ours in its git status
    if os.path.isdir(ws / STATE_DIR) and not os.path.lexists(ws / STATE_DIR / ".gitignore"):
        try:
            atomic_write_beneath(ws, f"{STATE_DIR}/.gitignore", GITIGNORE, create_dirs=False)
        except (OSError, UnsafePath):
            pass  # a state folder we cannot write is reported by whoever needs it, not here


def runtime_dirs() -> list[Path]:
    """Where the app's own interpreter and code live: never masked, or the command (and a done
    criterion `python -m pytest`) could not start the same Python."""
    here = Path(os.path.realpath(__file__)).parents[1]  # the cerveau_tui package
    dirs = {Path(os.path.realpath(sys.prefix)), Path(os.path.realpath(sys.base_prefix)), here}
    return sorted(dirs)


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def maskable(
    denied: Iterable[Path],
    workspace: Path,
    keep: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
) -> list[Path]:
    """The denied paths a backend can hide: existing, not `/`, not holding the workspace or a
    kept dir (hiding them would hide those too), not inside the workspace (the model's own files)
    or a kept dir, not under a `hidden` dir (bubblewrap's private /tmp). Outermost first."""
    out: list[Path] = []
    for p in sorted({Path(os.path.realpath(d)) for d in denied}, key=lambda x: len(x.parts)):
        if p == Path("/") or not os.path.lexists(p) or any(_under(p, h) for h in hidden):
            continue
        if _under(workspace, p) or _under(p, workspace):
            continue
        if any(_under(k, p) or _under(p, k) for k in keep):
            continue
        if any(_under(p, o) for o in out):
            continue  # already hidden by an outer mask
        out.append(p)
    return out


def default_denied() -> list[Path]:
    """The default deny-read list, for runners built without settings (tests, tools)."""
    from ..deny_read import DEFAULT_DENY_READ, deny_read_paths

    return deny_read_paths(DEFAULT_DENY_READ)
