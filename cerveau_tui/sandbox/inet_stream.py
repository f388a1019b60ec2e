"""Under Landlock with a network grant: the IPv4/IPv6 sockets a command may open are TCP only.

Landlock has no network namespace to take away; its network rules (ABI 4+) know TCP ports and
nothing else. A granted command there may connect by TCP to the proxy's port only, but a UDP
datagram, an SCTP association or MPTCP are outside what those rules see, and a DNS query over UDP
would leave the machine. So this second seccomp filter, stacked on the common one
(seccomp_filter.py, which refuses IPv4/IPv6 entirely when there is no grant), refuses every inet
socket that is not a plain stream: type other than SOCK_STREAM, protocol other than 0 or TCP.

Kept apart from seccomp_filter.py (stacked filters both apply; the stricter answer wins) so the
grant's rule reads as one idea. Comparisons as the kernel reads the arguments: the family and the
type are `int`s, compared on their low 32 bits (the type also masked to its low nibble, as
`SOCK_TYPE_MASK`; the rest are SOCK_NONBLOCK/SOCK_CLOEXEC). The protocol is refused when above
TCP on all 64 bits, which also refuses any value with high bits set: fail closed.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from functools import lru_cache

from .seccomp_filter import SeccompUnavailable

_LOW32 = 0xFFFFFFFF
_TYPE_MASK = 0xF


@lru_cache(maxsize=1)
def stream_only_bpf() -> bytes:
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # libseccomp.so missing
        raise SeccompUnavailable(f"pyseccomp/libseccomp unavailable: {exc}") from exc
    f = sc.SyscallFilter(sc.ALLOW)
    refuse = sc.ERRNO(errno.EPROTONOSUPPORT)
    for family in (socket.AF_INET, socket.AF_INET6):
        fam = sc.Arg(0, sc.MASKED_EQ, _LOW32, family)
        for kind in range(_TYPE_MASK + 1):
            if kind != socket.SOCK_STREAM:
                f.add_rule(refuse, "socket", fam, sc.Arg(1, sc.MASKED_EQ, _TYPE_MASK, kind))
        f.add_rule(refuse, "socket", fam, sc.Arg(2, sc.GT, socket.IPPROTO_TCP))
        for proto in range(1, socket.IPPROTO_TCP):
            f.add_rule(refuse, "socket", fam, sc.Arg(2, sc.MASKED_EQ, _LOW32, proto))
    with tempfile.TemporaryFile() as tmp:
        f.export_bpf(tmp)
        tmp.seek(0)
        return tmp.read()


def stream_only_fd() -> int:
    """A readable fd holding the filter (the Landlock helper reads it to EOF); caller closes."""
    fd = os.memfd_create("cerveau-seccomp-stream", os.MFD_CLOEXEC)
    os.write(fd, stream_only_bpf())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
