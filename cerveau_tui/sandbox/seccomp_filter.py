"""The seccomp filter every sandboxed command runs under, built with pyseccomp (libseccomp).

What it closes that namespaces and mounts do not:
- socket(AF_UNIX): a read-only bind of / still lets a process *connect* to a host socket file
  (the docker socket, an ssh-agent, a session bus) and act through it; abstract sockets too.
  socketpair() stays allowed: it cannot reach anything outside.
- io_uring_*: its own path to syscalls that seccomp argument filters cannot see.
- ioctl(TIOCSTI / TIOCLINUX): this kernel allows pushing keystrokes into a terminal's input queue.
- a few kernel attack surfaces no build or test needs (bpf, perf_event_open, userfaultfd, keyrings).
Denials are errnos, not kills, so a program that probes for a feature falls back instead of dying.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from functools import lru_cache

TIOCSTI = 0x5412
TIOCLINUX = 0x541C

_DENY_ENOSYS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
_DENY_EPERM = ("bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key")


class SeccompUnavailable(RuntimeError):
    pass


#: Socket families a command may open: by allow list, since a new family is a new way out. IPv4
#: and IPv6 only where the network is the sandbox's to decide (bubblewrap's network namespace, or
#: a network grant): under Landlock, which restricts only TCP, a UDP datagram left the machine
#: with no grant. Netlink stays (getifaddrs, `ip addr`); AF_UNIX is refused above. AF_VSOCK is
#: the one that matters most: it ignores network namespaces and reaches a VM's host.
_FAMILY_MAX = 64
_INET = (socket.AF_INET, socket.AF_INET6)
_ALWAYS = (socket.AF_NETLINK,)


def _build(inet: bool = True):  # type: ignore[no-untyped-def]
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # libseccomp.so missing
        raise SeccompUnavailable(f"pyseccomp/libseccomp unavailable: {exc}") from exc
    f = sc.SyscallFilter(sc.ALLOW)
    f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, socket.AF_UNIX))
    allowed = {*_ALWAYS, *(_INET if inet else ()), socket.AF_UNIX}
    for family in range(_FAMILY_MAX):
        if family not in allowed:
            f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
    for name in _DENY_ENOSYS:
        f.add_rule(sc.ERRNO(errno.ENOSYS), name)
    for name in _DENY_EPERM:
        f.add_rule(sc.ERRNO(errno.EPERM), name)
    # ioctl's request is an unsigned int: compare the low 32 bits, so a value with high bits set
    # cannot slip past an exact 64-bit comparison.
    for req in (TIOCSTI, TIOCLINUX):
        f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, req))
    return f


@lru_cache(maxsize=2)
def filter_bpf(inet: bool = True) -> bytes:
    """The filter as classic BPF bytes, for `bwrap --seccomp FD`; `inet=False` also refuses IPv4
    and IPv6 sockets (a backend with no network namespace and no network grant)."""
    with tempfile.TemporaryFile() as tmp:
        _build(inet).export_bpf(tmp)
        tmp.seek(0)
        return tmp.read()


def bpf_fd(inet: bool = True) -> int:
    """A fresh readable fd holding the filter, positioned at 0 (bwrap reads it to EOF). Caller
    closes it after the child has started."""
    data = filter_bpf(inet)
    fd = os.memfd_create("cerveau-seccomp", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
