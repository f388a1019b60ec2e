"""The bash circuit breaker: failures counted by SHAPE, not by exact command.

A model that hits a missing dependency does not experience it as a wall: each retry is a fresh
idea to it (another flag, another package name, another path), so it can spend a whole run circling
one absent thing. Counting identical commands never sees that; counting the underlying failure does.

What "the same underlying failure" means here, decided once:
- A missing DEPENDENCY is one thing whatever the tool that noticed it: `import leftpadx` (No module
  named), `pip install leftpadx==1.2` (no matching distribution), `apt-get install python3-leftpadx`
  (unable to locate) and `leftpadx --help` (command not found) all count against
  "missing dependency: leftpadx". Names are normalised (case, `-_.`, version pins, extras, the
  `python3-` prefix of Debian packages, submodules).
- A missing FILE is keyed by its basename: `cat config.yaml`, `cat src/config.yaml` and
  `python3 ../config.yaml` circle one absent file; `ls a`, `ls b`, `ls c` are three different files,
  i.e. exploration, and do not trip.
- A WALL is one thing whatever is thrown at it: "Connection refused" (nothing is listening: the
  model trying port after port is still looking for one absent server), "Permission denied"
  (the sandbox says no, whichever path it is tried on) and "No network" (whichever host).
- Anything else is its exit status, the program, and the last error-looking line of its output
  with numbers, paths, hex, timestamps and quoted literals stripped.
- Exit 1 with no output at all is not a failure: it is grep/test/diff answering "no".

A success resets a streak only when it touches the same thing: a command naming the missing
dependency or file, or the same program on the same first argument. An unrelated `ls` between two
attempts must not let the model circle for free.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Trailers the bash tool appends to what the model reads; they are not the program's output.
_TRAILER = re.compile(
    r"\n?\[(?:exit code [^\]]*|killed: [^\]]*|processes left running[^\]]*)\]\s*$"
)

_MODULE = re.compile(r"No module named ['\"]?([A-Za-z_][\w.]*)")
_PIP = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the requirement)"
    r"\s+['\"]?([^\s'\"]+)"
)
_APT = re.compile(
    r"Unable to locate package\s+([^\s'\"]+)"
    r"|Package ['\"]?([^\s'\"]+?)['\"]? has no installation candidate"
)
_CMD_NOT_FOUND = (
    re.compile(r"^[^\n:]*?:\s*(?:line \d+:\s*)?([^\s:]+): command not found", re.M),  # bash
    re.compile(r"^[^\n:]*?sh: \d+: ([^\s:]+): not found", re.M),  # dash (sh -c)
    re.compile(r"command not found: ([^\s:]+)"),  # zsh
)
_FILE_PATTERNS = (
    re.compile(r"No such file or directory: ['\"](.+?)['\"]"),  # Python FileNotFoundError
    re.compile(r"can't open file ['\"](.+?)['\"]"),  # python3 missing.py
    re.compile(r"['\"]([^'\"\n]+)['\"]: No such file or directory"),  # ls: cannot access 'x'
    re.compile(r"([^\s:'\"]+): No such file or directory"),  # cat: x: No such file
)
_REFUSED = re.compile(r"connection refused|ECONNREFUSED|Failed to connect to", re.I)
# The sandbox's walls: bubblewrap mounts outside the workspace read-only (EROFS, not EACCES).
_DENIED = re.compile(
    r"permission denied|operation not permitted|read-only file system|EACCES", re.I
)
_OFFLINE = re.compile(
    r"could not resolve host|temporary failure in name resolution|name or service not known|"
    r"network is unreachable",
    re.I,
)
_ERRORISH = re.compile(
    r"error|exception|fatal|failed|fail:|denied|invalid|cannot|can't|unable", re.I
)

_NORMALISERS = (
    (
        re.compile(
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<t>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<t>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,}\b"), "<hex>"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|‘[^’\n]*’"), "<q>"),
    (re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+-]+)+/?|\b[\w.-]+/[\w./-]+"), "<path>"),
    (re.compile(r"\d+"), "<n>"),
    (re.compile(r"\s+"), " "),
)

_WRAPPERS = {"sudo", "env", "nohup", "time", "exec", "command", "timeout", "stdbuf", "nice"}


@dataclass(frozen=True)
class _Shape:
    kind: str  # dependency | file | refused | denied | offline | timeout | exit
    text: str  # what shape_of returns
    subject: str | None = None  # the absent thing, for dependency and file kinds

    @property
    def key(self) -> str:
        if self.kind == "dependency":
            return f"missing dependency: {self.subject}"
        if self.kind == "file":
            return f"missing file: {self.subject}"
        return self.text


@dataclass
class Trip:
    shape: str
    count: int
    question: str


@dataclass
class _Streak:
    count: int = 0
    shapes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    signatures: set[str] = field(default_factory=set)


def shape_of(command: str, exit_code: int | None, output: str) -> str | None:
    """The failure shape of one bash result, or None when it is not a failure."""
    shape = _classify(command, exit_code, output)
    return shape.text if shape else None


def _clean(output: str) -> tuple[str, bool]:
    text = _ANSI.sub("", output or "").replace("\r", "")
    timed_out = "[killed: timed out" in text
    prev = None
    while prev != text:
        prev = text
        text = _TRAILER.sub("", text).rstrip()
    if text.strip() == "(no output)":
        text = ""
    return text, timed_out


def _dep_name(raw: str, *, module: bool = False, apt: bool = False) -> str:
    name = raw.strip("'\"`,;:")
    if module:
        name = name.split(".")[0]
    name = re.split(r"[\[<>=!~;@ :]", name, maxsplit=1)[0]
    name = re.sub(r"[-_.]+", "-", name.lower()).strip("-")
    if apt:
        name = re.sub(r"^(?:python3?|py3?)-", "", name)
    return name or raw


def _classify(command: str, exit_code: int | None, output: str) -> _Shape | None:
    if exit_code == 0:
        return None
    text, timed_out = _clean(output)
    family = family_of(command)
    if timed_out:
        return _Shape("timeout", f"timed out: {family}")

    if m := _MODULE.search(text):
        name = _dep_name(m.group(1), module=True)
        return _Shape("dependency", f"No module named {name}", name)
    if m := _PIP.search(text):
        name = _dep_name(m.group(1))
        return _Shape("dependency", f"No matching distribution found for {name}", name)
    if m := _APT.search(text):
        name = _dep_name(m.group(1) or m.group(2), apt=True)
        return _Shape("dependency", f"Unable to locate package {name}", name)
    for rx in _CMD_NOT_FOUND:
        if m := rx.search(text):
            raw = m.group(1)
            if "/" in raw:  # `./run.sh: not found` is a missing file, not a missing program
                base = os.path.basename(raw.rstrip("/")) or raw
                return _Shape("file", f"No such file or directory: {base}", base)
            name = _dep_name(raw)
            return _Shape("dependency", f"command not found: {name}", name)
    if "No such file or directory" in text:
        for rx in _FILE_PATTERNS:
            if m := rx.search(text):
                base = os.path.basename(m.group(1).rstrip("/")) or m.group(1)
                return _Shape("file", f"No such file or directory: {base}", base)
        return _Shape("file", "No such file or directory", "?")
    if _REFUSED.search(text) or (family == "curl" and exit_code == 7):
        return _Shape("refused", "Connection refused")
    if _DENIED.search(text):
        return _Shape("denied", "Permission denied")
    if _OFFLINE.search(text):
        return _Shape("offline", "No network")
    if exit_code is None:
        return None  # not run at all (refused by a hook, interrupted): not the program failing
    if exit_code == 1 and not text.strip():
        return None  # grep / test / diff saying "no"
    return _Shape("exit", f"exit {exit_code} from {family}: {_tail(text)}")


def _tail(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    pick = next((ln for ln in reversed(lines) if _ERRORISH.search(ln)), lines[-1])
    for rx, sub in _NORMALISERS:
        pick = rx.sub(sub, pick)
    return pick.strip()[:120]


def _last_segment(command: str) -> str:
    # `cd x && python3 a.py | tail`: the program that failed is, most often, the first of the last
    # pipeline; a shell-level split is good enough for naming a family.
    segs = [s for s in re.split(r"&&|\|\||;|\n", command) if s.strip()]
    seg = segs[-1] if segs else command
    return seg.split("|")[0]


def _tokens(command: str) -> list[str]:
    seg = _last_segment(command)
    try:
        toks = shlex.split(seg)
    except ValueError:
        toks = seg.split()
    out = list(toks)
    while out and (re.match(r"^[A-Za-z_]\w*=", out[0]) or out[0] in _WRAPPERS):
        head = out.pop(0)
        if head == "timeout" and out and re.match(r"^[\d.]+[smh]?$", out[0]):
            out.pop(0)
        while head in ("sudo", "env") and out and out[0].startswith("-"):
            out.pop(0)
    return out


def family_of(command: str) -> str:
    """The program a command is about: `python3 -m pip install x` -> pip, `pip3.11` -> pip."""
    toks = _tokens(command)
    if not toks:
        return "sh"
    prog = os.path.basename(toks[0])
    if re.match(r"^python[\d.]*$", prog):
        if "-m" in toks[1:-1]:
            prog = toks[toks.index("-m") + 1]
        else:
            prog = "python"
    if re.match(r"^pip[\d.]*$", prog):
        prog = "pip"
    if prog == "uv" and len(toks) > 1 and toks[1] == "pip":
        prog = "pip"
    return prog


def _signature(command: str) -> str:
    toks = _tokens(command)
    first = next((t for t in toks[1:] if not t.startswith("-")), "")
    return f"{family_of(command)} {first}".strip()


class Breaker:
    """Counts bash failures per shape; at `threshold` of one, returns a Trip whose question the model
    reads instead of the error, and starts that shape's count again (one prompt per streak)."""

    def __init__(self, threshold: int = 3) -> None:
        self.threshold = max(1, threshold)
        self._streaks: dict[str, _Streak] = {}
        self._subjects: dict[str, str] = {}  # key -> the absent thing's name, for resets

    def reset(self) -> None:
        self._streaks.clear()
        self._subjects.clear()

    def counts(self) -> dict[str, int]:
        return {k: s.count for k, s in self._streaks.items()}

    def observe(self, command: str, exit_code: int | None, output: str) -> Trip | None:
        shape = _classify(command, exit_code, output)
        if shape is None:
            if exit_code == 0:
                self._clear_touched(command)
            return None
        key = shape.key
        streak = self._streaks.setdefault(key, _Streak())
        streak.count += 1
        if shape.text not in streak.shapes:
            streak.shapes.append(shape.text)
        streak.commands.append(command)
        streak.signatures.add(_signature(command))
        if shape.subject:
            self._subjects[key] = shape.subject
        if streak.count < self.threshold:
            return None
        del self._streaks[key]
        self._subjects.pop(key, None)
        return Trip(shape=key, count=streak.count, question=_question(shape, streak))

    def _clear_touched(self, command: str) -> None:
        low = command.lower()
        norm = re.sub(r"[-_.]+", "-", low)
        sig = _signature(command)
        for key in list(self._streaks):
            subject = self._subjects.get(key)
            if subject and subject != "?":
                touched = subject in norm or subject.replace("-", "_") in low
            else:
                touched = sig in self._streaks[key].signatures
            if touched:
                del self._streaks[key]
                self._subjects.pop(key, None)


def _short(command: str, n: int = 80) -> str:
    one = " ".join(command.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def _question(shape: _Shape, streak: _Streak) -> str:
    tried = "; ".join(f"`{_short(c)}`" for c in streak.commands[-3:])
    head = (
        f"[breaker] {streak.count} attempts failed the same way ({'; '.join(streak.shapes)}). "
        f"You tried: {tried}. Varying the command will not change this result, so I did not show "
        "the error again. Stop and answer before your next call: "
    )
    if shape.kind == "dependency":
        body = (
            f"`{shape.subject}` is not available on this machine and the ways you tried to get it "
            "failed. Is it really needed? Can the goal be reached with what is here (the standard "
            "library, code already in the workspace, a few lines written yourself)? If it cannot, "
            f"stop and ask the person to install `{shape.subject}`."
        )
    elif shape.kind == "file":
        body = (
            f"`{shape.subject}` does not exist at any path you tried. List the directory to see what "
            "does exist, create the file if the task needs it, or ask the person where it is."
        )
    elif shape.kind == "refused":
        body = (
            "nothing is listening at the address you tried. If the task needs that server, start it "
            "yourself in the background on a free port and wait for it; otherwise check the address "
            "or ask the person whether it should be running."
        )
    elif shape.kind == "denied":
        body = (
            "this is not allowed here (sandbox or file permissions). Do the work inside the "
            "workspace instead, or ask the person for access, saying exactly what you need."
        )
    elif shape.kind == "offline":
        body = (
            "there is no network access from here. Work with what is already on this machine, or "
            "ask the person to fetch what you need (or to allow network access), naming it."
        )
    elif shape.kind == "timeout":
        body = (
            "the command runs until it is killed. If it is a server or a watcher, start it in the "
            "background (`cmd > log 2>&1 &`) and check on it; if it waits for input, give it the "
            "input or a flag that avoids the prompt."
        )
    else:
        body = (
            "what is the actual cause of this error? Read the code or file it points to, try a "
            "different approach, or ask the person."
        )
    return head + body
