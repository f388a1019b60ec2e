"""Which arguments a scope for a program covers: an allow list of shapes, never a list of dangers.

The failure that motivated it (Boundary IV): "git push to github.com only" covered
`git push --receive-pack=PROG`, an option that names the program to run, so an arbitrary program
ran with the network; `command:git` covered `git -c core.sshCommand=... fetch` the same way, and
"curl to github.com only" covered `curl -xhttp://127.0.0.1:1 ...` (an attached proxy value a list
of bad options missed). A list of dangerous options is always one option short.

So a scope for a program covers a simple command only when EVERY argument fits a shape on that
program's allow list:
- a positional word that is plain: no `=` (a `VAR=value` make or an `--opt=` smuggled as a word
  asks; a URL's query and a pip version spec are plain), no `::` (git's `ext::`, a remote helper);
- an option on the program's table (per subcommand for git, pip, npm, cargo, go...), with its value
  where the table says it takes one (`-m MSG`, `-oFILE`, `--format=%H`);
- for a program with no table: bare flags only (`-v`, `--verbose`, `-abc`, letters) and plain
  words; an option carrying a value (`--x=y`, `-xhttp://...`) asks, and so does an option whose
  name says it runs or configures something (`NEVER`), the second line for a bare `--exec PROG`.
No table holds an option that names a program to run, a hook, a config override or an exec
(`--receive-pack`, `--upload-pack`, `--exec`, `-c`, `--config`, `--config-env`, `--git-dir`,
`--work-tree`, `--template`, `--ssh`, `--rsh`, curl's `-K` and `--proxy` family, make's
`SHELL=`, `-f` and `-C`, git's `-C`, npm's `--script-shell`, go's `-exec`/`-toolexec`/`-ldflags`,
pytest's `-p`/`-c`/`-o`/`-W`): such a command asks. Programs that run their arguments or a
script (`find -exec`, `sed`'s `e`, `tar -I`, `ssh`, `npx`) are runners: only their exact
command is ever offered.

These decide only whether to ASK. Where a granted command's traffic may go is the proxy's job
(Grant.hosts), never a parse of its options.
"""

from __future__ import annotations

import re
from pathlib import Path

from .shape_tables import FLAG, OPTIONAL, TABLES, VALUE, Options, Shape

# Programs whose arguments are a program or a script to run: "commands starting with `bash`" is
# every command, and so is `find . -exec`, `sed 's/x/id/e'`, `tar -I PROG`, `ssh -o ProxyCommand`.
RUNNERS = frozenset(
    "sh bash dash zsh ksh fish env sudo su doas xargs exec eval nohup nice timeout time command "
    "builtin watch strace ltrace chroot unshare nsenter setsid busybox python python3 perl ruby "
    "node deno bun php lua tclsh awk gawk mawk find sed tar ssh scp sftp rsync parallel flock "
    "stdbuf script expect npx pnpx bunx uvx pipx ionice taskset chrt runuser pkexec systemd-run "
    "firejail bwrap xvfb-run valgrind gdb ltrace".split()
)
_VERSIONED_RUNNER = re.compile(r"^(python|pypy|perl|ruby|node|php|lua)[0-9.]*$")

# Second line for programs with no table (and a check on the tables, tests/policy): option names
# that run, hook or configure something. A bundle holding `c` or `e` (`-c CMD`, `-e PROG`) asks.
NEVER = re.compile(
    r"^--?(?!no-)(?:[a-z0-9]+[-_])*(exec|execdir|ok|okdir|rsh|ssh|shell|command|cmd|program|prog|"
    r"hooks?|script|plugins?|load|require|eval|editor|pager|preprocessor|interpreter|toolexec|"
    r"config|config-file|config-env|proxy|preproxy|socks\w*|receive-pack|upload-pack|template|"
    r"git-dir|work-tree|rsync-path|exec-path|node-options|python|python-executable|"
    r"to-command|checkpoint-action|use-compress-program)$"
)
_NEVER_LETTERS = frozenset("ceK")
_BARE_FLAG = re.compile(r"^(-[A-Za-z]+|--[A-Za-z][A-Za-z0-9-]*)$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SPEC = re.compile(r"[<>=!~]=")
_NUMERIC = re.compile(r"^-[0-9]+$")


def runs_programs(program: str) -> bool:
    """A program whose arguments are a program or a script (`sh -c`, `find -exec`, `npx`)."""
    name = Path(program).name
    return name in RUNNERS or bool(_VERSIONED_RUNNER.match(name))


def fits(words: list[str]) -> bool:
    """Every argument of this simple command has a shape its program's allow list holds (module
    docstring); False asks."""
    shape = TABLES.get(Path(words[0]).name)
    args = words[1:]
    if shape is None:
        return _unknown_fits(args)
    if shape.subcommands is None:
        return _args_fit(args, shape.options, shape)
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        used = _option(args, i, shape.options, shape)
        if used is None:
            return False
        i += used
    if i == len(args):
        return True
    sub = shape.subcommands.get(args[i])
    return sub is not None and _args_fit(args[i + 1 :], sub, shape)


def _args_fit(args: list[str], opts: Options, shape: Shape) -> bool:
    i = 0
    while i < len(args):
        w = args[i]
        if w == "--" and shape.dashdash:
            # Past `--` every word is an operand (git's paths, a test binary's own flags), still
            # no assignment. Not for a program that may not read `--` so: checked on.
            return all(_plain(x, shape) for x in args[i + 1 :])
        if w == "--":
            i += 1
            continue
        if w.startswith("-") and w != "-":
            used = _option(args, i, opts, shape)
            if used is None:
                return False
            i += used
            continue
        if w.startswith("-") or not _plain(w, shape):
            return False
        i += 1
    return True


def _option(args: list[str], i: int, opts: Options, shape: Shape) -> int | None:
    """How many words the option at `i` takes (itself and its value), or None: not on the list."""
    w = args[i]
    if shape.numeric and _NUMERIC.match(w):
        return 1
    whole = opts.get(w)
    if whole is not None:  # first: wget's `-nv` is one option, not `-n -v`
        if whole != VALUE:
            return 1
        return 2 if i + 1 < len(args) else None
    if w.startswith("--") or shape.single_dash_long:
        name, eq, _ = w.partition("=")
        long = opts.get(name)
        if long is None or (long == FLAG and eq):
            return None
        return 2 if long == VALUE and not eq and i + 1 < len(args) else 1
    # A bundle of short options: `-sSL`; the first one that takes a value takes the rest of the
    # word (`-ofile`, `-xhttp://...`: `-x` is on no list, so the whole word asks).
    for j in range(1, len(w)):
        short = opts.get("-" + w[j])
        if short is None:
            return None
        if short == FLAG:
            continue
        if j + 1 < len(w) or short == OPTIONAL:
            return 1
        return 2 if i + 1 < len(args) else None
    return 1


def _plain(w: str, shape: Shape | None) -> bool:
    """A plain positional word: a path, a name, a URL (its query may hold `=`), a pip version spec;
    not an assignment (`SHELL=/x`), not a transport (`ext::sh -c id`)."""
    if _URL.match(w):
        return True
    if "::" in w:
        return False
    if "=" in w:
        return shape is not None and shape.specs and bool(_SPEC.search(w))
    return True


def _unknown_fits(args: list[str]) -> bool:
    """A program with no table: bare flags and plain words only. A flag may take the next word as
    its value unseen (`--exec PROG`), hence the NEVER names and letters as a second line."""
    for w in args:
        if w.startswith("-") and w not in ("-", "--"):
            if not _BARE_FLAG.match(w) or NEVER.match(w):
                return False
            if not w.startswith("--") and _NEVER_LETTERS & set(w[1:]):
                return False
        elif not _plain(w, None):
            return False
    return True
