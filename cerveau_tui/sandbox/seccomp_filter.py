"""The seccomp filter every sandboxed command runs under, built with pyseccomp (libseccomp).

What it closes that namespaces and mounts do not:
- socket(AF_UNIX): a read-only bind of / still lets a process *connect* to a host socket file
  (the docker socket, an ssh-agent, a session bus) and act through it; abstract sockets too.
  socketpair() stays allowed: it cannot reach anything outside.
- io_uring_*: its own path to syscalls that seccomp argument filters cannot see.
- ioctl(TIOCSTI / TIOCLINUX): this kernel allows pushing keystrokes into a terminal's input queue.
- set-id bits: run as root, a command's files are root's on the host, and a set-user-ID copy of
  an interpreter it left in the workspace gave another user euid 0 (setid.py sweeps what still
  carries the bits after each command).
- System V IPC and POSIX message queues: Landlock has no IPC namespace, and a command read and
  wrote a host shared-memory segment.
- a few kernel attack surfaces no build or test needs (bpf, perf_event_open, userfaultfd, keyrings).
Denials are errnos, not kills, so a program that probes for a feature falls back instead of dying.

Argument width: the filter sees each argument as the 64-bit register, the kernel reads an `int`
as its low 32 bits. An exact 64-bit comparison let `socket(AF_UNIX | 1 << 32, ...)` through as
"not AF_UNIX" and the kernel made an AF_UNIX socket: a command reached host unix sockets, sent
UDP under Landlock with no grant, and typed into the person's tmux server. So every rule below
compares the low 32 bits (MASKED_EQ), and a call whose filtered argument has any high bit set is
refused outright (the belt to those braces). The rules are one table, `arg_rules`, so the probe
suite can try every refused value, plain and with high bits, from the same source.

One filter per run, never two stacked: what differs between runs is what a command may do with
IPv4/IPv6 sockets (`Inet`), and that is a column of the same table.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

TIOCSTI = 0x5412
TIOCLINUX = 0x541C
LOW32 = 0xFFFFFFFF

_DENY_ENOSYS = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # openat2 carries its mode in a struct seccomp cannot read (an O_CREAT mode with S_ISUID
    # would pass unseen). ENOSYS is what an older kernel says: glibc and every runtime we run
    # never use it for an ordinary open, and programs that try it fall back to openat.
    "openat2",
)
_DENY_EPERM = ("bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key")

#: Landlock has no IPC namespace: a command attached, read and wrote a host System V shared
#: memory segment. Refused on both backends (bubblewrap's --unshare-ipc already isolates them;
#: one filter is simpler than two). POSIX message queues are the same class (the host's mqueue
#: namespace, by name); POSIX shared memory is files in /dev/shm, a Landlock path rule's job.
SYSV_IPC = (
    "shmget", "shmat", "shmctl", "shmdt",
    "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
)  # fmt: skip
MQUEUE = ("mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr")

#: Syscall numbers libseccomp may not know by name (added after its release). Since 5.1 new
#: syscalls have one number on every architecture (alpha aside), so the number is safe to use.
_UNIFIED_NR = {"fchmodat2": 452}

SETID = (stat.S_ISUID, stat.S_ISGID)
#: The kernel reads open's mode only with O_CREAT or O_TMPFILE (__O_TMPFILE is O_TMPFILE's own
#: bit; O_TMPFILE also sets O_DIRECTORY). A mode with set-id bits and neither flag is ignored by
#: the kernel, so it is not refused: a runtime that passes a default mode on every open works.
_O_TMPFILE_BIT = 0o20000000
CREATES = (os.O_CREAT, _O_TMPFILE_BIT)


class SeccompUnavailable(RuntimeError):
    pass


#: Socket families a command may open: by allow list, since a new family is a new way out. Netlink
#: stays (getifaddrs, `ip addr`); AF_UNIX is refused. AF_VSOCK is the one that matters most: it
#: ignores network namespaces and reaches a VM's host. IPv4 and IPv6 as `Inet` says.
_FAMILY_MAX = 64
_INET = (socket.AF_INET, socket.AF_INET6)
_ALWAYS = (socket.AF_NETLINK,)
_SOCK_TYPE_MASK = 0xF  # the kernel's SOCK_TYPE_MASK; the bits above are SOCK_NONBLOCK/CLOEXEC

#: What a command may do with IPv4/IPv6 sockets. "any": a network namespace decides (bubblewrap,
#: granted or not: the namespace has only its loopback and the proxy's bridge). "none": Landlock
#: with no grant; Landlock restricts only TCP, and a UDP datagram left the machine with no grant.
#: "tcp": Landlock with a grant; its network rules let the command connect by TCP to the proxy's
#: port alone, but know nothing of UDP, SCTP or MPTCP, and a datagram left under a grant.
Inet = Literal["any", "none", "tcp"]


@dataclass(frozen=True)
class ArgRule:
    """Refuse `syscall` when argument `arg`, read as the kernel reads it (the low 32 bits, or
    `mask`), is one of `values` (`bits=False`), or carries any one of the bits in `values`
    (`bits=True`). `when=(arg, mask, value)`: the rule applies only while that argument, masked,
    is that value (open's mode counts only with O_CREAT; a socket's type only for an inet
    family). `above`: also refuse every value above it, on all 64 bits (an allow list's upper
    end). `high_bits`: also refuse any value of `arg` above 32 bits. `inet`: the runs whose filter
    holds the row (see Inet)."""

    syscall: str
    arg: int
    values: tuple[int, ...]
    errno: int
    bits: bool = False
    mask: int = LOW32
    when: tuple[int, int, int] | None = None
    above: int | None = None
    high_bits: bool = True
    inet: tuple[Inet, ...] = ("any", "none", "tcp")


def _socket_rules() -> list[ArgRule]:
    families = (socket.AF_UNIX, *(f for f in range(_FAMILY_MAX) if f not in (*_ALWAYS, *_INET)))
    rules = [
        ArgRule("socket", 0, tuple(sorted(set(families))), errno.EAFNOSUPPORT),
        ArgRule("socket", 0, _INET, errno.EAFNOSUPPORT, inet=("none",)),
    ]
    # "tcp": a plain stream only. The type by its low nibble; the protocol by allow list (0 or
    # TCP): above TCP refused on all 64 bits, IPPROTO_MPTCP (262) and any high bit with it.
    streams = tuple(k for k in range(_SOCK_TYPE_MASK + 1) if k != socket.SOCK_STREAM)
    refuse = errno.EPROTONOSUPPORT
    for family in _INET:
        inet = (0, LOW32, family)
        rules += [
            ArgRule("socket", 1, streams, refuse, mask=_SOCK_TYPE_MASK, when=inet, inet=("tcp",)),
            ArgRule(
                "socket", 2, tuple(range(1, socket.IPPROTO_TCP)), refuse, when=inet,
                above=socket.IPPROTO_TCP, inet=("tcp",),
            ),
        ]  # fmt: skip
    return rules


def _setid_rules() -> list[ArgRule]:
    eperm = errno.EPERM
    rules = [
        ArgRule("chmod", 1, SETID, eperm, bits=True),
        ArgRule("fchmod", 1, SETID, eperm, bits=True),
        ArgRule("fchmodat", 2, SETID, eperm, bits=True),
        ArgRule("fchmodat2", 2, SETID, eperm, bits=True),
        ArgRule("creat", 1, SETID, eperm, bits=True),
        # mknod(S_IFREG | S_ISUID) makes a set-user-ID regular file. mkdir is not here: Linux
        # honours only the sticky bit in mkdir's mode (mkdir(2), NOTES).
        ArgRule("mknod", 1, SETID, eperm, bits=True),
        ArgRule("mknodat", 2, SETID, eperm, bits=True),
    ]
    for name, flags, mode in (("open", 1, 2), ("openat", 2, 3)):
        for create in CREATES:
            when = (flags, create, create)
            rules.append(ArgRule(name, mode, SETID, eperm, bits=True, when=when))
        rules.append(ArgRule(name, flags, (), errno.EINVAL))  # only the high-bits belt
    return rules


def arg_rules(inet: Inet = "any") -> list[ArgRule]:
    """The argument rules of one run's filter, as a table (the probe suite is generated from it)."""
    rules = [
        *_socket_rules(),
        # ioctl's request: no high-bits belt. musl declares `int ioctl(int, int, ...)` and widens
        # the request with sign extension, so an ordinary request with bit 31 set (TIOCGPTN,
        # 0x80045430, in every openpty) arrives with the high half all ones. The masked
        # comparison alone reads what the kernel reads (`unsigned int cmd`).
        ArgRule("ioctl", 1, (TIOCSTI, TIOCLINUX), errno.EPERM, high_bits=False),
        *_setid_rules(),
    ]
    return [r for r in rules if inet in r.inet]


def _nr(sc, name: str) -> int | str:  # type: ignore[no-untyped-def]
    try:
        if sc.resolve_syscall(sc.Arch.NATIVE, name) >= 0:
            return name
    except (OSError, ValueError):
        pass
    return _UNIFIED_NR.get(name, name)


def _add(sc, f, rule: ArgRule) -> None:  # type: ignore[no-untyped-def]
    nr = _nr(sc, rule.syscall)
    cond = []
    if rule.when is not None:
        when_arg, when_mask, when_value = rule.when
        cond.append(sc.Arg(when_arg, sc.MASKED_EQ, when_mask, when_value))
    for value in rule.values:
        mask = value if rule.bits else rule.mask
        f.add_rule(sc.ERRNO(rule.errno), nr, sc.Arg(rule.arg, sc.MASKED_EQ, mask, value), *cond)
    if rule.above is not None:
        f.add_rule(sc.ERRNO(rule.errno), nr, sc.Arg(rule.arg, sc.GT, rule.above), *cond)
    if rule.high_bits:
        f.add_rule(sc.ERRNO(errno.EINVAL), nr, sc.Arg(rule.arg, sc.GT, LOW32), *cond)


def _build(inet: Inet):  # type: ignore[no-untyped-def]
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # libseccomp.so missing
        raise SeccompUnavailable(f"pyseccomp/libseccomp unavailable: {exc}") from exc
    f = sc.SyscallFilter(sc.ALLOW)
    for rule in arg_rules(inet):
        _add(sc, f, rule)
    for name in _DENY_ENOSYS:
        f.add_rule(sc.ERRNO(errno.ENOSYS), _nr(sc, name))
    for name in (*_DENY_EPERM, *SYSV_IPC, *MQUEUE):
        f.add_rule(sc.ERRNO(errno.EPERM), _nr(sc, name))
    return f


@lru_cache(maxsize=3)
def filter_bpf(inet: Inet = "any") -> bytes:
    """The filter as classic BPF bytes, for `bwrap --seccomp FD` and the Landlock helper."""
    with tempfile.TemporaryFile() as tmp:
        _build(inet).export_bpf(tmp)
        tmp.seek(0)
        return tmp.read()


def bpf_fd(inet: Inet = "any") -> int:
    """A fresh readable fd holding the filter, positioned at 0 (bwrap and the Landlock helper read
    it to EOF). Caller closes it after the child has started."""
    data = filter_bpf(inet)
    fd = os.memfd_create("cerveau-seccomp", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
