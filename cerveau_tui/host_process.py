"""The one way the harness starts a process on the host (outside every sandbox).

Probed (issue 32): two helpers were started as `python -m ...` with the workspace as their
working directory and the harness's whole environment. `-m` puts the working directory first on
`sys.path`, so a `subprocess.py` the model wrote with `write_file` at the workspace root was
imported by the search-index builder and ran on the host, with the person's key in reach, at the
next start; a cloned repository large enough to be indexed ran its file with no model call at
all. Fixing the two call sites would leave the next one; so every host process goes through
`spawn` (or `run`), and a contract test (tests/test_host_process_contract.py) fails on any other
way of starting one. What `spawn` guarantees, by construction rather than by each caller:

- the working directory is `/` unless the caller names another (`cwd=`): a caller that needs the
  workspace (git's discovery from a folder, rg's relative ignore file, a full-access command the
  person chose) says so at the call site;
- the environment is built from an allow list, never inherited: `PATH` of fixed system folders,
  `LANG`, the names the caller lists in `inherit` (copied from ours when set) and what it passes
  in `env`. `PYTHONPATH`, `PYTHONSTARTUP`, `LD_PRELOAD`, `BASH_ENV`, `GIT_*` reach a child only
  when a caller names them;
- no descriptor is inherited beyond 0-2 and `pass_fds`; stdin, stdout and stderr are /dev/null
  unless given (a helper never reads or draws on the person's terminal);
- a Python child is started by `python_argv`: `-I` (no working directory or script folder on
  `sys.path`, no user site, every `PYTHON*` variable ignored), the package found where the
  harness found it, never through the working directory.

Programs are named by absolute path (`which` drops relative `PATH` entries: with `.` on the
person's `PATH` and the workspace as our working directory, `shutil.which("x")` would return the
workspace's `x`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

# Re-exported so no other module needs `subprocess` (the contract test forbids importing it).
Popen = subprocess.Popen
CompletedProcess = subprocess.CompletedProcess
TimeoutExpired = subprocess.TimeoutExpired
SubprocessError = subprocess.SubprocessError
CalledProcessError = subprocess.CalledProcessError
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT

#: Where a host child finds programs it runs by name: system folders only, never a folder the
#: person's (or a workspace's direnv-shaped) PATH adds.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: A host child's working directory when the caller names none: outside every workspace.
NEUTRAL_CWD = "/"

Stream = int | IO[Any] | None


def host_env(env: Mapping[str, str] | None = None, inherit: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed environment: fixed PATH, our LANG, the `inherit` names we have (`X_*`: every
    name with that prefix), then `env`."""
    out = {"PATH": SYSTEM_PATH}
    names = ("LANG", *inherit)
    exact = {n for n in names if not n.endswith("*")}
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    for key, value in os.environ.items():
        if key in exact or (prefixes and key.startswith(prefixes)):
            out[key] = value
    if env:
        out.update(env)
    return out


def person_path(workspace: str | os.PathLike[str] | None = None) -> str:
    """Our PATH without the entries that name our working directory: relative ones (`.`, ``,
    `bin`) and, when we were started in a folder that may be a workspace, the ones at or beneath
    it (`PATH=$PWD/bin:$PATH`, a direnv habit). For a child that must find the person's own tools
    (a build's compiler); a helper of ours gets SYSTEM_PATH. A home folder is never a workspace
    (view.py refuses it), so from there (or above it) `~/.local/bin` stays. `workspace`: a
    session's, dropped too wherever we were started (`cerveau run --workspace X` from elsewhere)."""
    home = os.path.realpath(os.path.expanduser("~"))
    guarded = [
        here
        for here in {
            os.path.realpath(os.getcwd()),
            *([os.path.realpath(workspace)] if workspace else []),
        }
        if here != home and not home.startswith(here.rstrip("/") + "/")
    ]

    def ours(p: str) -> bool:
        if not os.path.isabs(p):
            return True
        real = os.path.realpath(p)
        return any(real == here or real.startswith(here.rstrip("/") + "/") for here in guarded)

    kept = [p for p in os.environ.get("PATH", SYSTEM_PATH).split(os.pathsep) if not ours(p)]
    return os.pathsep.join(kept) or SYSTEM_PATH


def spawn(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] = NEUTRAL_CWD,
    env: Mapping[str, str] | None = None,
    inherit: Iterable[str] = (),
    pass_fds: Sequence[int] = (),
    stdin: Stream = DEVNULL,
    stdout: Stream = DEVNULL,
    stderr: Stream = DEVNULL,
    start_new_session: bool = False,
    text: bool = False,
    errors: str | None = None,
    bufsize: int = -1,
) -> subprocess.Popen[Any]:
    """Start argv on the host (see the module docstring for what is guaranteed)."""
    return subprocess.Popen(
        [os.fspath(a) for a in argv],
        cwd=cwd,
        env=host_env(env, inherit),
        close_fds=True,
        pass_fds=tuple(pass_fds),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=start_new_session,
        text=text,
        errors=errors,
        bufsize=bufsize,
    )


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] = NEUTRAL_CWD,
    env: Mapping[str, str] | None = None,
    inherit: Iterable[str] = (),
    input: bytes | str | None = None,
    capture_output: bool = True,
    text: bool = False,
    errors: str | None = None,
) -> subprocess.CompletedProcess[Any]:
    """`spawn`, wait (killed past `timeout`: TimeoutExpired), and the output read whole."""
    out = PIPE if capture_output else DEVNULL
    with spawn(
        argv,
        cwd=cwd,
        env=env,
        inherit=inherit,
        stdin=PIPE if input is not None else DEVNULL,
        stdout=out,
        stderr=out,
        text=text,
        errors=errors,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


# `-c` rather than `-m`: the package and its dependencies must be the ones the harness runs (a
# source checkout or packages on our PYTHONPATH, which `-I` ignores), found AFTER the child's own
# standard library and site (appended: nothing beside them shadows a standard module). Our working
# directory and relative entries are never passed on: they are what `-m` got wrong.
_BOOT = (
    "import sys, runpy; sys.path += [p for p in sys.argv[1].split(':') if p not in sys.path]; "
    "mod = sys.argv[2]; sys.argv = sys.argv[2:]; "
    "runpy.run_module(mod, run_name='__main__', alter_sys=True)"
)


def _import_path() -> str:
    here = os.getcwd()
    keep = [str(Path(__file__).resolve().parent.parent)]
    keep += [p for p in sys.path if os.path.isabs(p) and p != here and ":" not in p]
    return ":".join(dict.fromkeys(keep))


def python_argv(
    target: str | Path, *args: str, site: bool = True, python: str | None = None
) -> list[str]:
    """An isolated interpreter running `target`: a module name (`cerveau_tui.x.y`, run as `-m`
    would, from the package the harness imported) or a script Path (stdlib-only helpers; pass
    `site=False` to skip `site` too). `-B`: no bytecode written beside the package."""
    exe = python or sys.executable
    flags = ["-I", "-B"] if site else ["-I", "-S", "-B"]
    if isinstance(target, Path):
        return [exe, *flags, str(target), *args]
    return [exe, *flags, "-c", _BOOT, _import_path(), target, *args]


def replace_self(argv: Sequence[str], env: Mapping[str, str]) -> NoReturn:
    """Become `argv` (execve), keeping our pid, descriptors and working directory: the harness
    restarting itself with something taken off its own command line (cli.py: a credential in
    `--server`, since any process of the same user reads /proc/PID/cmdline, a sandboxed command
    under Landlock included). Not a way to start another program: the contract test allows it
    here only."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], list(argv), dict(env))


def which(name: str) -> str | None:
    """shutil.which over person_path(): never a program found through our working directory."""
    if os.sep in name:
        return None  # a path is not looked up: shutil.which would take it relative to our cwd
    return shutil.which(name, path=person_path())


#: Where a shared library is looked for when `ldconfig -p` does not list it.
_LIB_DIRS = (
    "/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64",
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
)  # fmt: skip


def find_library(name: str) -> str | None:
    """ctypes.util.find_library without running a program found on PATH.

    The standard one runs `ldconfig -p` from our working directory, and when that does not list
    the library, `gcc`/`cc`, `ld` and `objdump` looked up on our PATH: pyseccomp calls it at
    import (for libc and libseccomp), so with `.` or the workspace on the person's PATH, a
    library missing from ldconfig's cache ran the workspace's `gcc` on the host. Here: ldconfig
    by absolute path through `run`, then the system library folders; never a compiler."""
    import re

    pattern = re.compile(rb"\s(lib%s\.so[^\s]*)\s.*=>\s*(\S+)" % re.escape(name).encode())
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            out = run([ldconfig, "-p"], timeout=30, env={"LC_ALL": "C"}).stdout
        except (OSError, SubprocessError):
            continue
        for soname, _path in pattern.findall(out):
            return os.fsdecode(soname)
    for folder in _LIB_DIRS:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in names:
            if entry.startswith(f"lib{name}.so"):
                return os.path.join(folder, entry)
    return None


def install_find_library() -> None:
    """Make every caller's ctypes.util.find_library (a dependency's included) this one."""
    import ctypes.util

    ctypes.util.find_library = find_library  # type: ignore[assignment]
