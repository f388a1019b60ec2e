"""Seccomp reads arguments as the kernel does: generated from the filter's own rule table
(seccomp_filter.arg_rules), every refused value is tried inside the real sandbox, as is and with
a high bit set, on both backends, with and without a network grant (each run with the rows its
filter holds); each syscall's harmless call, and each conditional row's (a plain TCP socket under
Landlock's grant), is the control that proves the probe would see a pass.

The regression it pins: `socket(AF_UNIX | 1 << 32, ...)` passed a 64-bit EQ rule and the kernel,
reading the low half, made an AF_UNIX socket.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cerveau_tui.sandbox.command import CommandSpec, Grant
from cerveau_tui.sandbox.seccomp_filter import _O_TMPFILE_BIT, ArgRule, Inet, arg_rules
from cerveau_tui.sandbox.setid import SETID_BITS

from .conftest import needs_landlock, require_bwrap

HIGH = 1 << 32
AT_FDCWD = -100
FIOCLEX = 0x5451  # the ioctl control: allowed, and succeeds on any fd
#: Paths as {"path": name}, an open fd of a file as {"fd": name}, a scratch buffer as {"buf": 8}.
F = {"path": "f"}
_NEW_AT = {"creat": 0, "mknod": 0, "mknodat": 1, "open": 0, "openat": 1}
_BASE: dict[str, list[object]] = {
    "socket": [16, 2, 0],  # AF_NETLINK, SOCK_DGRAM: always allowed
    "ioctl": [0, FIOCLEX, {"buf": 8}],
    "chmod": [F, 0o644],
    "fchmod": [{"fd": "f"}, 0o644],
    "fchmodat": [AT_FDCWD, F, 0o644, 0],
    "fchmodat2": [AT_FDCWD, F, 0o644, 0],
    "creat": [None, 0o644],
    "mknod": [None, stat.S_IFREG | 0o644, 0],
    "mknodat": [AT_FDCWD, None, stat.S_IFREG | 0o644, 0],
    "open": [None, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644],
    "openat": [AT_FDCWD, None, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644],
}
#: x86_64 numbers (the probe calls syscall(2) directly, as an attacker would).
_NR = {
    "socket": 41, "ioctl": 16, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
    "creat": 85, "mknod": 133, "mknodat": 259, "open": 2, "openat": 257,
}  # fmt: skip

#: Above an allow list's upper end (ArgRule.above): for the socket protocol, IPPROTO_MPTCP, a
#: protocol the kernel makes over a plain stream.
_ABOVE = {("socket", 2): 262}
#: Each run: its backend, whether the network is granted, and so its filter's rows (Inet).
RUNS: dict[str, tuple[str, bool, Inet]] = {
    "bubblewrap": ("bubblewrap", False, "any"),
    "bubblewrap-granted": ("bubblewrap", True, "any"),
    "landlock": ("landlock", False, "none"),
    "landlock-granted": ("landlock", True, "tcp"),
}
if os.environ.get("ESCAPE_SUITE_CONTROL") == "1":  # unconfined: every refusal must then FAIL
    RUNS["none"] = ("none", False, "any")

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86_64 syscall numbers")


@dataclass(frozen=True)
class Case:
    id: str
    syscall: str
    args: list[object]
    refused: tuple[int, ...]  # errnos that mean "the filter refused it"; () for a control


def _int(v: object) -> int:
    assert isinstance(v, int)
    return v


def _args(rule: ArgRule, n: int, value: int | None, high: bool) -> list[object]:
    args = list(_BASE[rule.syscall])
    if rule.syscall in _NEW_AT:
        args[_NEW_AT[rule.syscall]] = {"path": f"n{n}"}
    if rule.when is not None:
        when_arg, mask, when = rule.when
        if when == _O_TMPFILE_BIT:  # an unnamed file in "."; O_TMPFILE includes O_DIRECTORY
            args[when_arg - 1] = {"path": "."}
            args[when_arg] = os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC
        elif rule.syscall == "socket":  # an inet family: a plain TCP socket is the harmless call
            args[:2] = [when, socket.SOCK_STREAM]
        else:
            args[when_arg] = _int(args[when_arg]) & ~mask | when
    if value is not None:
        args[rule.arg] = (_int(args[rule.arg]) if rule.bits else 0) | value
    if high:
        args[rule.arg] = _int(args[rule.arg]) | HIGH
    return args


def cases(rules: list[ArgRule]) -> list[Case]:
    out: list[Case] = []
    n = 0
    for syscall in sorted({r.syscall for r in rules}):
        rule = next(r for r in rules if r.syscall == syscall)
        out.append(Case(f"{syscall}-control", syscall, _args(rule, n, None, False), ()))
        n += 1
    for rule in rules:
        cond = "" if rule.when is None else f"-when{rule.when[2]:#o}"
        if rule.when is not None:
            tag = f"{rule.syscall}-a{rule.arg}{cond}-control"
            out.append(Case(tag, rule.syscall, _args(rule, n, None, False), ()))
            n += 1
        above = () if rule.above is None else (_ABOVE[rule.syscall, rule.arg],)
        for value in (*rule.values, *above):
            for high in (False, True):
                ok = (rule.errno, errno.EINVAL) if high else (rule.errno,)
                tag = f"{rule.syscall}-a{rule.arg}{cond}-{value:#o}{'-high' if high else ''}"
                out.append(Case(tag, rule.syscall, _args(rule, n, value, high), ok))
                n += 1
        if rule.high_bits:  # the belt: any high bit on an otherwise harmless value
            tag = f"{rule.syscall}-a{rule.arg}{cond}-harmless-high"
            ok = (errno.EINVAL,) if rule.above is None else (errno.EINVAL, rule.errno)
            out.append(Case(tag, rule.syscall, _args(rule, n, None, True), ok))
            n += 1
    return out


CASES = {run: cases(arg_rules(inet)) for run, (_, _, inet) in RUNS.items()}

PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
open("f", "w").close()
out = {}
for case in json.load(open(sys.argv[1])):
    keep, argv, fds = [], [], []
    for a in case["args"]:
        if isinstance(a, dict) and "path" in a:
            keep.append(ctypes.c_char_p(a["path"].encode())); argv.append(keep[-1])
        elif isinstance(a, dict) and "fd" in a:
            fds.append(os.open(a["fd"], os.O_RDONLY)); argv.append(ctypes.c_long(fds[-1]))
        elif isinstance(a, dict) and "buf" in a:
            keep.append(ctypes.create_string_buffer(a["buf"])); argv.append(keep[-1])
        else:
            argv.append(ctypes.c_long(a))
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(case["nr"]), *argv)
    out[case["id"]] = [ret, ctypes.get_errno()]
    if ret >= 0 and case["syscall"] in ("socket", "open", "openat", "creat"):
        os.close(ret)
    for fd in fds:
        os.close(fd)
json.dump(out, sys.stdout)
"""


@dataclass
class Run:
    results: dict[str, list[int]]
    notes: list[str]
    setid_left: list[str]  # seen from the host after the run


def _run_probe(run: str, ws: Path) -> Run:
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
    from cerveau_tui.sandbox.landlock import LandlockRunner
    from cerveau_tui.sandbox.none import NoSandbox

    backend, granted, _ = RUNS[run]
    (ws / "probe.py").write_text(PROBE)
    spec = [
        {"id": c.id, "syscall": c.syscall, "nr": _NR[c.syscall], "args": c.args} for c in CASES[run]
    ]
    (ws / "cases.json").write_text(json.dumps(spec))
    runner = {"bubblewrap": BubblewrapRunner, "landlock": LandlockRunner, "none": NoSandbox}[
        backend
    ]()
    command = f"{sys.executable} probe.py cases.json < /dev/null"
    grant = Grant(network=True, hosts=("example.invalid",)) if granted else None
    try:
        res = runner.run(CommandSpec(command, ws, timeout=60, grant=grant))
    finally:
        runner.kill_background()
    start = res.output.find("{")
    assert start >= 0, res.output
    results = json.JSONDecoder().raw_decode(res.output[start:])[0]
    left = [
        str(p.relative_to(ws))
        for p in ws.rglob("*")
        if p.is_file() and not p.is_symlink() and p.lstat().st_mode & SETID_BITS
    ]
    return Run(results, res.notes, left)


def _marks(run: str) -> list[pytest.MarkDecorator]:
    return [needs_landlock] if RUNS[run][0] == "landlock" else []


@pytest.fixture(scope="module")
def probe_runs() -> Iterator[dict[str, Run]]:
    """Each run once for the module, the first time a test asks for it."""
    root = Path(tempfile.mkdtemp(prefix="cerveau-seccomp-", dir="/var/tmp"))
    try:
        yield _Runs(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


class _Runs(dict[str, Run]):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, run: str) -> Run:
        if RUNS[run][0] == "bubblewrap":
            require_bwrap()
        ws = self.root / run
        ws.mkdir()
        self[run] = _run_probe(run, ws)
        return self[run]


@pytest.mark.parametrize(
    ("run", "case"),
    [
        pytest.param(run, c, id=f"{run}-{c.id}", marks=_marks(run))
        for run in RUNS
        for c in CASES[run]
    ],
)
def test_each_refused_argument_is_refused_as_the_kernel_reads_it(
    probe_runs: dict[str, Run], run: str, case: Case
) -> None:
    ret, err = probe_runs[run].results[case.id]
    if not case.refused:
        assert ret >= 0, f"control {case.id} failed ({os.strerror(err)}): the probe sees no pass"
    else:
        assert ret == -1 and err in case.refused, (ret, os.strerror(err) if err else "")


@pytest.mark.parametrize("run", [pytest.param(run, marks=_marks(run)) for run in RUNS])
def test_no_set_id_file_got_past_the_filter(probe_runs: dict[str, Run], run: str) -> None:
    # From the host: nothing in the workspace carries the bits, and the sweep (the second line)
    # found nothing either, so the filter alone held.
    assert probe_runs[run].setid_left == []
    assert not [n for n in probe_runs[run].notes if "set-user-ID" in n], probe_runs[run].notes


def test_the_table_covers_every_argument_the_issue_names() -> None:
    ruled = {(r.syscall, r.when is not None) for r in arg_rules()}
    for name in ("chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod", "mknodat", "socket"):
        assert (name, False) in ruled
    assert ("open", True) in ruled and ("openat", True) in ruled
    sock = next(r for r in arg_rules() if r.syscall == "socket")
    assert 1 in sock.values and sock.high_bits  # AF_UNIX, with the belt
    # every int rule carries the belt but ioctl's request (musl sign-extends it)
    assert [r.syscall for r in arg_rules() if not r.high_bits] == ["ioctl"]
