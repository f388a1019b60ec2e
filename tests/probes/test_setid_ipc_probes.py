"""Boundary IV probes, verified from the host after each run, both backends, as root and as an
ordinary user (`useradd`, `runuser -u`):

- no set-id bit leaves the sandbox: the named member (`cp /bin/sh x; chmod u+s x`) and others
  (chmod 4755, g+s, os.chmod, install -m, an O_CREAT/O_TMPFILE mode, mknod, fchmodat2, a tar
  member, file capabilities) leave no file the host sees as set-id; files that carry the bits
  some other way are cleared by the sweep and the model is told, and neither a symlink nor a
  hard link makes the sweep touch a file outside the workspace;
- host unix sockets (pathname and abstract) get no connection, whatever the family's high bits;
- host IPC: a System V shared-memory segment (named in the issue), a message queue, a semaphore
  and a POSIX message queue are neither read nor written.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.command import CommandSpec, Grant
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi
from cerveau_tui.sandbox.setid import SETID_BITS
from tests.sandbox.test_seccomp_table import RUNS as TABLE_RUNS

from .conftest import ordinary_user

BACKENDS = [
    *(["bubblewrap"] if find_bwrap() else []),
    *(["landlock"] if landlock_abi() > 0 else []),
]
WHO = ["root", "user"]
SYSTEM_PY = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
REPO = Path(__file__).parents[2]
USER = "cerveau-probe"

_libc = ctypes.CDLL(None, use_errno=True)

DRIVER = """
import json, sys
from pathlib import Path
from cerveau_tui.sandbox.command import CommandSpec, Grant
backend, ws, cmd, py, granted = sys.argv[1:6]
if backend == "bubblewrap":
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
    r = BubblewrapRunner()
else:
    from cerveau_tui.sandbox.landlock import LandlockRunner
    r = LandlockRunner(python=py)
grant = Grant(network=True, hosts=("example.invalid",)) if granted == "1" else None
res = r.run(CommandSpec(cmd, Path(ws), timeout=60, grant=grant))
r.kill_background()
print(json.dumps({"exit_code": res.exit_code, "output": res.output, "notes": res.notes}))
"""


def _ordinary_user() -> str | None:
    return ordinary_user(USER) if SYSTEM_PY.exists() else None


@dataclass
class Where:
    who: str
    root: Path  # holds ws/ and outside/
    ws: Path
    outside: Path

    def chown(self) -> None:
        """As the ordinary user: everything under root is theirs (the workspace is their own)."""
        if self.who == "root":
            return
        pw = pwd.getpwnam(USER)
        for dirpath, dirnames, filenames in os.walk(self.root):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.chown(n, pw.pw_uid, pw.pw_gid, follow_symlinks=False)


@pytest.fixture(params=WHO)
def where(request: pytest.FixtureRequest) -> Iterator[Where]:
    if request.param == "user" and _ordinary_user() is None:
        pytest.skip("needs root, runuser and the system python to make an ordinary user")
    root = Path(tempfile.mkdtemp(prefix="cerveau-b4-", dir="/var/tmp"))
    root.chmod(0o755)
    (root / "ws").mkdir()
    (root / "outside").mkdir()
    yield Where(request.param, root, root / "ws", root / "outside")
    shutil.rmtree(root, ignore_errors=True)


def run(backend: str, where: Where, command: str, granted: bool = False) -> dict:  # type: ignore[type-arg]
    """Run `command` through the real runner, as root in this process or as the ordinary user
    through runuser (the system python, this checkout and the venv's packages on its path);
    `granted`: under a network grant (to a host that does not exist)."""
    if where.who == "root":
        runner = BubblewrapRunner() if backend == "bubblewrap" else LandlockRunner()
        grant = Grant(network=True, hosts=("example.invalid",)) if granted else None
        res = runner.run(CommandSpec(command, workspace=where.ws, timeout=60, grant=grant))
        runner.kill_background()
        return {"exit_code": res.exit_code, "output": res.output, "notes": res.notes}
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    argv = [shutil.which("runuser") or "runuser", "-u", USER, "--", str(SYSTEM_PY), "-c", DRIVER]
    proc = subprocess.run(
        [*argv, backend, str(where.ws), command, str(SYSTEM_PY), "1" if granted else "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join([str(REPO), *site])},
    )
    if "setting up uid map" in proc.stderr:
        pytest.skip("unprivileged user namespaces are off here")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _setid_files(top: Path) -> list[str]:
    """From the host: regular files under `top` with a set-id bit or a file capability."""
    out = []
    for dirpath, _dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_mode & SETID_BITS:
                out.append(f"{os.path.relpath(p, top)} {oct(st.st_mode)}")
            try:
                os.getxattr(p, "security.capability", follow_symlinks=False)
                out.append(f"{os.path.relpath(p, top)} has file capabilities")
            except OSError:
                pass
    return out


# -- no set-id bit leaves the sandbox ---------------------------------------------------------------

_PY_SETID = r"""
import ctypes, os, stat, struct, tarfile, io
def attempt(name, fn):
    try:
        fn()
        print("MADE", name)
    except Exception as e:  # tarfile wraps the refusal in its own error
        print("REFUSED", name, e)
open("x4", "wb").write(b"#!/bin/sh\n")
attempt("os.chmod", lambda: os.chmod("x4", 0o4755))
attempt("O_CREAT", lambda: os.close(os.open("x6", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("mknod", lambda: os.mknod("x7", stat.S_IFREG | 0o6755))
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
    os.link(f"/proc/self/fd/{fd}", "x8", follow_symlinks=True)
attempt("O_TMPFILE", tmpfile)
open("x9", "wb").write(b"x")
libc = ctypes.CDLL(None, use_errno=True)
def fchmodat2():
    if libc.syscall(452, -100, b"x9", 0o2755, 0) != 0:
        raise OSError(ctypes.get_errno(), "fchmodat2")
attempt("fchmodat2", fchmodat2)
open("x10", "wb").write(b"x")
fd = os.open("x10", os.O_RDONLY)
attempt("fchmod", lambda: os.fchmod(fd, 0o4755))
# a file capability (cap_setuid+ep): the same privilege as a set-user-ID bit, another way
open("x11", "wb").write(b"x")
cap = struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0)
attempt("security.capability", lambda: os.setxattr("x11", "security.capability", cap))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as t:
    info = tarfile.TarInfo("x12"); info.size = 1; info.mode = 0o4755
    t.addfile(info, io.BytesIO(b"x"))
buf.seek(0)
with tarfile.open(fileobj=buf) as t:
    kw = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
    attempt("tar", lambda: t.extractall(".", **kw))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_set_id_file_a_command_makes_reaches_the_host(backend: str, where: Where) -> None:
    (where.ws / "setid.py").write_text(_PY_SETID)
    where.chown()
    command = (
        "cp /bin/sh x1; chmod u+s x1; "  # the member the issue names
        "cp /bin/sh x2; chmod 4755 x2; "
        "cp /bin/sh x3; chmod g+s x3; "
        "install -m 4755 /bin/sh x5; "
        "python3 setid.py"
    )
    res = run(backend, where, command)
    assert (where.ws / "x1").exists() and (where.ws / "x12").exists(), res  # it did run
    assert _setid_files(where.ws) == [], res["output"]
    # The filter held alone: the sweep (the second line) had nothing to clear.
    assert not [n for n in res["notes"] if "set-user-ID" in n], res["notes"]


def _plant(path: Path, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy("/bin/true", path)
    path.chmod(mode)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_set_id_file_made_some_other_way_is_cleared_and_said(backend: str, where: Where) -> None:
    # Planted from the host: set-id files the filter never saw (already there; in .git's objects
    # and node_modules, where a sweep that skips folders would miss them).
    planted = {"pre": 0o4755, ".git/objects/ab/cdef": 0o2755, "node_modules/m/bin/run": 0o6755}
    planted["deep/a/b/c/d/e"] = 0o4755
    for rel in planted:
        _plant(where.ws / rel, 0o755)
    where.chown()  # chown clears set-id bits: so they are set after it, as the owner would
    for rel, mode in planted.items():
        (where.ws / rel).chmod(mode)
    res = run(backend, where, "true")
    assert _setid_files(where.ws) == []
    assert all((where.ws / rel).stat().st_mode & 0o777 == 0o755 for rel in planted)
    note = [n for n in res["notes"] if "set-user-ID" in n]
    assert len(note) == 1 and "pre" in note[0] and note[0] in res["output"], res
    assert len(note[0].splitlines()) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_sweep_never_changes_a_file_outside_through_a_link(backend: str, where: Where) -> None:
    host = where.outside / "host-setid"
    _plant(host, 0o4755)
    (where.ws / "ln").symlink_to(host)
    os.link(host, where.ws / "hl")  # a hard link to a set-id file outside
    where.chown()
    host.chmod(0o4755)  # chown cleared it
    res = run(backend, where, "true")
    assert host.stat().st_mode & 0o7777 == 0o4755  # the outside file keeps its bits
    assert (where.ws / "ln").is_symlink()
    assert not (where.ws / "hl").exists()  # the workspace's name for it is gone
    assert any("hl (removed" in n for n in res["notes"]), res["notes"]


# -- host unix sockets --------------------------------------------------------------------------------

_PY_UNIX = r"""
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
path, abstract = sys.argv[1], "\0" + sys.argv[2]
for fam in (1, 1 | (1 << 32), 1 | 0xFFFFFFFF00000000, 1 | (1 << 63)):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        fd = libc.syscall(41, ctypes.c_long(fam), kind, 0)
        if fd < 0:
            continue
        s = socket.socket(fileno=fd)
        for target in (path, abstract):
            try:
                s.connect(target) if kind == socket.SOCK_STREAM else s.sendto(b"x", target)
                print("REACHED", hex(fam), kind, repr(target))
            except OSError as e:
                print("refused", e)
try:
    socket.socket(socket.AF_UNIX).connect(path)
    print("REACHED plain")
except OSError as e:
    print("refused", e)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_host_unix_socket_gets_a_connection(backend: str, where: Where) -> None:
    name = f"cerveau-probe-{uuid.uuid4().hex[:10]}"
    listeners = []
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        for addr in (str(where.ws / f"s{kind}.sock"), "\0" + name + str(kind)):
            s = socket.socket(socket.AF_UNIX, kind)
            s.bind(addr)
            if not addr.startswith("\0"):
                os.chmod(addr, 0o777)  # the ordinary user could connect but for the sandbox
            if kind == socket.SOCK_STREAM:
                s.listen(8)
            s.setblocking(False)
            listeners.append(s)
    try:
        (where.ws / "unix.py").write_text(_PY_UNIX)
        where.chown()
        # the stream listeners' names; SOCK_DGRAM ones get the same probes via sendto
        res = run(backend, where, f"python3 unix.py {where.ws / 's1.sock'} {name}1")
        run(backend, where, f"python3 unix.py {where.ws / 's2.sock'} {name}2")
        assert "refused" in res["output"], res  # it did run
        for s in listeners:  # from the host: no connection, no datagram
            with pytest.raises(BlockingIOError):
                s.accept() if s.type == socket.SOCK_STREAM else s.recv(16)
    finally:
        for s in listeners:
            s.close()


# -- host IPC -------------------------------------------------------------------------------------------

IPC_CREAT, IPC_NOWAIT, IPC_RMID, GETVAL = 0o1000, 0o4000, 0, 12

_PY_IPC = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key, shmid, msqid, semid, mq = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
for sid in (libc.shmget(key, 0, 0), shmid):
    p = libc.shmat(sid, None, 0)
    if p not in (None, ctypes.c_void_p(-1).value):
        print("READ", ctypes.string_at(p, 32))
        ctypes.memmove(p, b"OVERWRITTEN-BY-THE-COMMAND", 26)
for qid in (libc.msgget(key, 0), msqid):
    msg = ctypes.create_string_buffer(b"\x01\0\0\0\0\0\0\0hello", 13)
    print("msgsnd", libc.msgsnd(qid, msg, 5, 0o4000), ctypes.get_errno())
for sid in (libc.semget(key, 0, 0), semid):
    op = (ctypes.c_short * 3)(0, 1, 0)
    print("semop", libc.semop(sid, op, 1), ctypes.get_errno())
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
q = libc.mq_open(mq.encode(), 1)
print("mq_open", q, ctypes.get_errno())
if q >= 0:
    print("mq_send", libc.mq_send(q, b"x", 1, 0))
print("ran")
"""


@dataclass
class HostIpc:
    key: int
    shmid: int
    addr: int
    msqid: int
    semid: int
    mq: str
    mqd: int
    marker: bytes


@pytest.fixture
def host_ipc() -> Iterator[HostIpc]:
    _libc.shmat.restype = ctypes.c_void_p
    _libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    key = int.from_bytes(os.urandom(3), "big") | 0x40000000
    shmid = _libc.shmget(key, 4096, IPC_CREAT | 0o666)
    msqid = _libc.msgget(key, IPC_CREAT | 0o666)
    semid = _libc.semget(key, 1, IPC_CREAT | 0o666)
    mq = f"/cerveau-probe-{uuid.uuid4().hex[:8]}"
    old = os.umask(0)  # 0o666 whatever the umask: as the ordinary user only the sandbox stops it
    try:
        mqd = _libc.mq_open(mq.encode(), os.O_CREAT | os.O_RDONLY | os.O_NONBLOCK, 0o666, None)
    finally:
        os.umask(old)
    if min(shmid, msqid, semid, mqd) < 0:
        pytest.skip(f"the host cannot create IPC objects here (errno {ctypes.get_errno()})")
    addr = _libc.shmat(shmid, None, 0)
    marker = f"host-shm-{uuid.uuid4().hex}".encode()
    ctypes.memmove(addr, marker, len(marker))
    try:
        yield HostIpc(key, shmid, addr, msqid, semid, mq, mqd, marker)
    finally:
        _libc.shmdt(ctypes.c_void_p(addr))
        _libc.shmctl(shmid, IPC_RMID, None)
        _libc.msgctl(msqid, IPC_RMID, None)
        _libc.semctl(semid, 0, IPC_RMID)
        os.close(mqd)
        _libc.mq_unlink(mq.encode())


@pytest.mark.parametrize("backend", BACKENDS)
def test_host_ipc_objects_are_out_of_reach(backend: str, where: Where, host_ipc: HostIpc) -> None:
    h = host_ipc
    (where.ws / "ipc.py").write_text(_PY_IPC)
    where.chown()
    args = f"{h.key} {h.shmid} {h.msqid} {h.semid} {h.mq}"
    res = run(backend, where, f"python3 ipc.py {args}")
    assert "ran" in res["output"], res  # it did run
    # From the host: the segment is as the test left it, nothing queued, the semaphore untouched.
    assert ctypes.string_at(h.addr, len(h.marker)) == h.marker
    assert h.marker.decode() not in res["output"]
    buf = ctypes.create_string_buffer(64)
    assert _libc.msgrcv(h.msqid, buf, 32, 0, IPC_NOWAIT) == -1  # ENOMSG: nothing arrived
    assert _libc.semctl(h.semid, 0, GETVAL) == 0
    got = ctypes.create_string_buffer(8192)
    assert _libc.mq_receive(h.mqd, got, 8192, None) == -1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_host_posix_shared_memory_object_is_not_readable(backend: str, where: Where) -> None:
    # POSIX shm is a file in /dev/shm: Landlock's rule on /dev read it (no IPC namespace there).
    secret = f"host-posix-shm-{uuid.uuid4().hex}"
    shm = Path("/dev/shm") / f"cerveau-probe-{uuid.uuid4().hex[:8]}"
    shm.write_text(secret)
    shm.chmod(0o644)
    try:
        where.chown()
        res = run(backend, where, f"cat {shm} > got.txt; cp {shm} got2.txt; echo ran")
        assert "ran" in res["output"], res
        for got in ("got.txt", "got2.txt"):
            p = where.ws / got
            assert not p.exists() or secret not in p.read_text()
        assert shm.read_text() == secret
    finally:
        shm.unlink()


def test_landlock_says_what_of_ipc_and_scopes_still_cannot_hold() -> None:
    from cerveau_tui.sandbox.landlock import landlock_gaps

    assert any("signals not scoped" in g for g in landlock_gaps(5))
    assert not any("signals not scoped" in g for g in landlock_gaps(6))
    assert any("/dev/shm" in g for g in landlock_gaps(7))


@pytest.mark.parametrize("table", [r for r, (b, _, _) in TABLE_RUNS.items() if b in BACKENDS])
def test_the_rule_table_holds_for_root_and_an_ordinary_user(table: str, where: Where) -> None:
    # The generated table probe (tests/sandbox/test_seccomp_table.py), here also as the ordinary
    # user, each run with and without a network grant: every refused value, as is and with a
    # high bit, refused; every control passes.
    from tests.sandbox.test_seccomp_table import _NR, CASES, PROBE

    if os.uname().machine != "x86_64":
        pytest.skip("x86_64 syscall numbers")
    backend, granted, _ = TABLE_RUNS[table]
    cases = CASES[table]
    (where.ws / "probe.py").write_text(PROBE)
    spec = [{"id": c.id, "syscall": c.syscall, "nr": _NR[c.syscall], "args": c.args} for c in cases]
    (where.ws / "cases.json").write_text(json.dumps(spec))
    where.chown()
    res = run(backend, where, "python3 probe.py cases.json < /dev/null", granted)
    results = json.JSONDecoder().raw_decode(res["output"][res["output"].find("{") :])[0]
    wrong = [
        c.id
        for c in cases
        if (results[c.id][0] < 0 if not c.refused else tuple(results[c.id]) not in
            {(-1, e) for e in c.refused})
    ]  # fmt: skip
    assert wrong == []
    assert _setid_files(where.ws) == []
