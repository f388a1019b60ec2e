"""The process-count cap one command runs under: a pids cgroup of its own, else RLIMIT_NPROC.

Why a cgroup first: the app often runs as root, and the kernel exempts uid 0 from RLIMIT_NPROC
(also inside a user namespace mapped to it), so a fork bomb under `ulimit -u` still takes the
machine; a pids cgroup counts every task in it whoever owns it. Why the command is put into the
cgroup BEFORE it runs anything (a one-line `sh` that writes its own pid, then execs the launcher),
and not by writing the child's pid after spawn: in between, the child could already have forked,
and those forks would stay outside the cap.

RLIMIT_NPROC is the fallback for an ordinary user without a writable pids cgroup. It counts every
process of that user, not of the command, so the limit is set to what the user runs now plus the
cap. Where neither works, `gap` says so and the runner lists it.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, then a v2 root
GROUP_PREFIX = "cerveau-cmd-"
# `sh -c JOIN procs_file argv...`: join the cgroup, then become the launcher. The paths arrive as
# positional arguments, never spliced into the script.
_JOIN = 'echo $$ > "$1" || { echo "cerveau: could not join the process-count cgroup" >&2; exit 126; }; shift; exec "$@"'
# RLIMIT_NPROC is `ulimit -u` in bash and busybox, `-p` in dash (where bash's -p is the pipe size,
# read-only, so a wrong guess fails rather than setting something else).
_ULIMIT = '{ ulimit -u "$1" 2>/dev/null || ulimit -p "$1"; } || { echo "cerveau: could not set the process limit" >&2; exit 126; }; shift; exec "$@"'


@dataclass
class CommandGroup:
    """One command's pids cgroup (None path: the rlimit fallback or no cap at all)."""

    path: Path | None
    wrapper: list[str] = field(default_factory=list)  # prefix for the launcher argv

    def pids(self) -> list[int]:
        if self.path is None:
            return []
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(x) for x in text.split()]

    def remove(self, *, kill: bool, attempts: int = 100) -> bool:
        """Remove the cgroup; with `kill`, kill what is still in it first. False if it stays (a
        process that will not die yet): the caller keeps it to try again later."""
        if self.path is None:
            return True
        for attempt in range(attempts):
            left = self.pids()
            if left and not kill:
                return False
            for pid in left:
                try:
                    os.kill(pid, 9)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                # The PID namespace's init has exited and the kernel is still reaping the rest:
                # usually done within a millisecond, so start short.
                time.sleep(min(0.001 * (attempt + 1), 0.02))
        return False


def _pids_root() -> Path | None:
    for root in PIDS_ROOTS:
        if (root / "cgroup.procs").exists() and _has_pids_controller(root):
            if os.access(root, os.W_OK):
                return root
    return None


def _has_pids_controller(root: Path) -> bool:
    if root.name == "pids":
        return True
    try:  # a v2 root: only if the pids controller is enabled for its children
        return "pids" in (root / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


class ProcessCap:
    """Makes the per-command group: `mode` is "cgroup", "rlimit" or "none" (then `gap` says so)."""

    def __init__(self, max_procs: int = 512, *, root: Path | None = None) -> None:
        self.max_procs = max_procs
        self.root = root if root is not None else _pids_root()
        if self.root is not None and not self._works():
            self.root = None
        if self.root is not None:
            self.mode = "cgroup"
            sweep_stale(self.root)
        elif os.geteuid() != 0:
            self.mode = "rlimit"
        else:
            self.mode = "none"

    @property
    def gap(self) -> str | None:
        if self.mode == "none":
            return (
                "no process-count limit (no writable pids cgroup, and RLIMIT_NPROC does not bind "
                "root): a fork bomb is stopped only by the timeout"
            )
        return None

    def _works(self) -> bool:
        try:
            group = self.new_group()
        except OSError:
            return False
        group.remove(kill=True)
        return True

    def new_group(self) -> CommandGroup:
        """A fresh group for one command; raises OSError if the cgroup cannot be made."""
        if self.root is not None:
            path = self.root / f"{GROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
            path.mkdir()
            try:
                (path / "pids.max").write_text(str(self.max_procs))
            except OSError:
                path.rmdir()
                raise
            procs = str(path / "cgroup.procs")
            return CommandGroup(path, ["/bin/sh", "-c", _JOIN, "cerveau-join", procs])
        if self.mode == "rlimit":
            limit = _tasks_of(os.getuid()) + self.max_procs
            return CommandGroup(None, ["/bin/sh", "-c", _ULIMIT, "cerveau-limit", str(limit)])
        return CommandGroup(None, [])


def sweep_stale(root: Path) -> None:
    """Remove the empty command groups of sessions that are gone (a crash, or a Landlock runner
    that kept a group for a background process and was never closed). Groups still holding
    processes are left alone: whose they are is not ours to decide here."""
    try:
        names = [n for n in os.listdir(root) if n.startswith(GROUP_PREFIX)]
    except OSError:
        return
    for name in names:
        owner = name[len(GROUP_PREFIX) :].split("-", 1)[0]
        # Our own groups too are left alone: one made for a command that has not joined it yet
        # is empty, and a second runner built at that moment (an MCP server's) removed it, so
        # the command failed "could not join the process-count cgroup".
        if owner.isdigit() and (int(owner) == os.getpid() or _alive(int(owner))):
            continue
        CommandGroup(root / name).remove(kill=False, attempts=1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _tasks_of(uid: int) -> int:
    """Threads the user runs now (RLIMIT_NPROC counts threads, across all of the user's processes)."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("Threads:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total
