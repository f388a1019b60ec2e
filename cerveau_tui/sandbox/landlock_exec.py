"""The Landlock helper, exec'd (never a preexec_fn: that is unsafe in a threaded parent).

    python -I -S landlock_exec.py --workspace WS --mode MODE [--writable P]...
           [--tcp-connect PORT]... --seccomp-fd N -- /bin/sh -c CMD

Standalone on purpose (stdlib + ctypes only, run with -I -S): it starts once per command, and
importing the package, landlockpy and pyseccomp cost ~80 ms on every command.

In this order, because each step needs the previous one: the parent-death signal (the command
dies with the session, even a kill -9'd one; see reaper.py for its children), a new session (no controlling terminal),
drop every capability including the bounding set (root regains capabilities on execve from the
bounding set), no_new_privs, a Landlock domain (read+exec on /, full access to the workspace and
the granted paths, TCP bind denied and TCP connect only to the `--tcp-connect` ports (a network
grant's proxy, see netproxy.py), signals and abstract sockets scoped), the seccomp filter the
parent built (classic BPF read from a fd), then execve. Exit 126 with a message on
stderr if any step fails: a helper that could not confine never runs the command anyway.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
from collections.abc import Callable

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture that has Landlock
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2
CONNECT_TCP = 2  # LANDLOCK_ACCESS_NET_CONNECT_TCP
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# LANDLOCK_ACCESS_FS_*
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
READ = READ_FILE | READ_DIR | EXECUTE

# Character devices every shell script writes to (`2>/dev/null`).
DEV_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when unavailable (too old, or disabled at boot)."""
    ret = _libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET,
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return int(ret) if ret > 0 else 0


def fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= 1 << 13  # REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def net_rights(abi: int) -> int:
    rights = 0
    if abi >= 4:
        rights |= 1 | 2  # BIND_TCP, CONNECT_TCP
    if abi >= 10:
        rights |= 4 | 8  # BIND_UDP, CONNECT_SEND_UDP
    return rights


def drop_capabilities() -> None:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read().strip())
    except OSError:
        last = 40
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM when unprivileged: nothing to drop
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _allow(ruleset_fd: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        attr = _PathBeneath(rights, fd)
        _check(
            _libc.syscall(
                SYS_LANDLOCK_ADD_RULE, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(attr), 0
            ),
            f"landlock_add_rule {path}",
        )
    finally:
        os.close(fd)


def _under(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def read_only_these(reads: list[str], deny: list[str], allow: Callable[[str, int], None]) -> None:
    """Read on the allowed paths only (the machine view: the system, the parts of /etc toolchains
    read, toolchain folders, the interpreter), each minus the denied paths inside it. Landlock is
    an allow list by nature; granting read on / and carving secrets out was the deny-list
    construction whose holes reached the model."""
    for root in sorted({os.path.normpath(r) for r in reads if os.path.exists(r)}):
        inside = [d for d in deny if _under(d, root) and d != root]
        if any(_under(root, d) for d in deny):
            continue  # the root itself is denied
        if inside:
            read_everything_but(inside, allow, top=root)
        else:
            try:
                allow(root, READ if os.path.isdir(root) else READ_FILE | EXECUTE)
            except OSError:
                continue


def read_everything_but(deny: list[str], allow: Callable[[str, int], None], top: str = "/") -> None:
    """Read on / except the denied paths. Landlock rules only add access, so a denied path cannot
    be carved out of a rule on /: instead, read is granted on every sibling along the way down to
    each denied path, and only READ_DIR on the folders on the way (their names stay listable,
    beneath them READ_DIR too: a denied folder's file NAMES can be listed, never their contents).

    Symlinks among the siblings are skipped, never followed: a rule attaches to the inode a link
    points at, so `~/x -> ~/.ssh` would otherwise open the secret again. Whatever a link points
    at is reached through its real place, which this walk covers."""
    denied = {os.path.normpath(d) for d in deny if d != "/" and os.path.lexists(d)}
    if not denied:
        allow(top, READ)
        return
    on_the_way: set[str] = set()
    for d in denied:
        parent = os.path.dirname(d)
        while True:
            on_the_way.add(parent)
            if parent in (top, "/"):
                break
            parent = os.path.dirname(parent)
    on_the_way -= denied  # a denied folder that holds another is denied whole
    for folder in sorted(on_the_way):
        if any(folder == d or folder.startswith(d + "/") for d in denied):
            continue
        allow(folder, READ_DIR)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path in denied or path in on_the_way or os.path.islink(path):
                continue
            try:
                allow(path, READ if os.path.isdir(path) else READ_FILE | EXECUTE)
            except OSError:
                continue  # less access, never more: a sibling we cannot name stays unreadable


def apply_landlock(
    workspace: str,
    mode: str,
    writable: list[str],
    connect_ports: list[int],
    deny: list[str] | None = None,
    reads: list[str] | None = None,
) -> None:
    """`connect_ports`: the only TCP ports the command may connect to (on any address: Landlock
    rules name ports, not addresses); none means no TCP at all. Never any TCP bind."""
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    everything = fs_rights(abi)
    # A rule on a file (not a directory) may only carry file rights, or the kernel says EINVAL.
    file_rights = everything & (WRITE_FILE | READ_FILE | EXECUTE | TRUNCATE | IOCTL_DEV)
    deny = deny or []
    net = net_rights(abi)
    if connect_ports and not net & CONNECT_TCP:
        # Said in the runner's gaps; here only so that a grant never narrows to nothing.
        connect_ports = []
    attr = _RulesetAttr(everything, net, 3 if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # older kernels reject fields they do not know
    ruleset = _check(
        _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0),
        "landlock_create_ruleset",
    )
    try:
        add = lambda path, rights: _allow(ruleset, path, rights)  # noqa: E731
        if reads is None:
            read_everything_but(deny, add)
        else:
            read_only_these([*reads, workspace], deny, add)
        for dev in DEV_WRITABLE:
            if os.path.exists(dev):
                _allow(ruleset, dev, file_rights)
        for p in ([workspace] if mode != "read-only" else []) + writable:
            if os.path.exists(p):
                _allow(ruleset, p, everything if os.path.isdir(p) else file_rights)
        for port in connect_ports:
            rule = _NetPort(CONNECT_TCP, port)
            _check(
                _libc.syscall(
                    SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_NET_PORT, ctypes.byref(rule), 0
                ),
                f"landlock_add_rule tcp port {port}",
            )
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL when the session dies (kept across execve); exit now if it already died before
    the request took effect, when no signal would ever come."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    if os.getppid() != parent_pid:
        os._exit(137)


def load_seccomp(fd: int) -> None:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    program = b"".join(chunks)
    if not program or len(program) % 8:
        raise OSError("the seccomp filter is empty or malformed")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.addressof(buf))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="landlock_exec")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--mode", default="workspace-write")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--tcp-connect", type=int, action="append", default=[])
    parser.add_argument("--deny", action="append", default=[])
    parser.add_argument("--read", action="append", default=None)
    parser.add_argument("--seccomp-fd", type=int)
    parser.add_argument("--parent-pid", type=int, default=0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    try:
        if args.parent_pid:
            die_with_parent(args.parent_pid)
        try:
            os.setsid()
        except PermissionError:
            pass  # already a session leader (the parent started us with start_new_session)
        drop_capabilities()
        apply_landlock(
            os.path.realpath(args.workspace),
            args.mode,
            [os.path.realpath(p) for p in args.writable],
            args.tcp_connect,
            [os.path.realpath(p) for p in args.deny],
            None if args.read is None else [os.path.realpath(p) for p in args.read],
        )
        if args.seccomp_fd is None:
            raise OSError("no seccomp filter was passed")
        load_seccomp(args.seccomp_fd)
    except Exception as exc:  # noqa: BLE001 - any failure means: do not run unconfined
        sys.stderr.write(f"cerveau landlock helper: could not confine the command: {exc}\n")
        sys.stderr.flush()
        os._exit(126)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
