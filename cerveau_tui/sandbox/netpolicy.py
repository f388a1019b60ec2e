"""Which destination a network grant lets a command reach: the proxy's one decision, pure.

The failure that motivated it: a grant "curl to github.com only" was decided by parsing curl's
options, and `curl -xhttp://127.0.0.1:8080 ...` (an attached option value the parser missed)
reached a loopback service on the host; `git push --receive-pack=PROG` ran a program with the
network. Here the destination is a fact of the connection the proxy is asked to open, never of
a command line: the host and port the client names, and the addresses the proxy itself resolves
and then connects to (no second lookup between the check and the connect, so a name cannot
rebind to another address in between).

The rules:
- A grant with hosts lets through exactly those (`host` or `host:port`; an entry without a port
  is any port). Names are compared as written (lower case, no trailing dot), never by address:
  `127.1` is not `127.0.0.1`, and a name that resolves to a granted address is not granted.
- "Any host" (no hosts, or the entry `*`) is a grant the person spelled out, so any name and any
  public or private address passes: other machines are what "network" means. Beside `*`, named
  entries still match as above: the person who approves `curl http://127.0.0.1:8766/` once (any
  host) has approved that address by name too (`("*", "127.0.0.1:8766")`, policy.py).
- Never, unless the matching grant entry names the address itself (or `localhost`): the host's
  own services. Loopback, the unspecified address (connecting to 0.0.0.0 reaches the host), link
  local (169.254.169.254 hands out cloud credentials), multicast, and any address assigned to
  this machine (a service bound to 0.0.0.0 answers on the host's LAN address too), checked after
  resolution, IPv4-mapped IPv6 unwrapped. Keeping the host's loopback away from commands is the
  point of the sandbox's network namespace; a name resolving to 127.0.0.1 must not undo it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: The hosts entry that means "any other machine" beside named ones.
ANY_HOST = "*"
#: host, port -> the addresses to try, in order (injectable: tests point names at listeners).
Resolver = Callable[[str, int], list[str]]
#: address -> True when it is one of this machine's own (injectable for the same reason).
IsLocal = Callable[[Address], bool]


@dataclass(frozen=True)
class Verdict:
    addresses: tuple[str, ...] = ()  # what the proxy may connect to, in order; empty: refused
    refusal: str = ""  # why not, for the command's notes ("not granted", ...)


def normal_host(host: str) -> str:
    """The host as grants spell it: lower case, no trailing dot, no IPv6 brackets."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def parse_entry(entry: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]:port` or a bare IPv6 literal -> (host, port or None)."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        host, port = entry, ""
    return normal_host(host), int(port) if port.isdigit() else None


def literal(host: str) -> Address | None:
    try:
        ip = ipaddress.ip_address(normal_host(host))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_special(ip: Address, is_local: IsLocal) -> bool:
    """The host's own services, or nothing a grant of "a host" should reach by a name."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast:
        return True
    if isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.IPv4Network("0.0.0.0/8"):
        return True  # "this network": Linux routes it to the host itself
    return is_local(ip)


def matching_entry(hosts: tuple[str, ...], host: str, port: int) -> tuple[str, int | None] | None:
    name = normal_host(host)
    for entry in hosts:
        h, p = parse_entry(entry)
        if h == name and (p is None or p == port):
            return h, p
    return None


def decide(
    hosts: tuple[str, ...], host: str, port: int, resolve: Resolver, is_local: IsLocal
) -> Verdict:
    """The addresses a request for `host:port` may go to under a grant of `hosts`."""
    name = normal_host(host)
    if not name or not 0 < port < 65536:
        return Verdict(refusal="not a valid destination")
    named = tuple(h for h in hosts if h != ANY_HOST)
    entry = matching_entry(named, name, port) if named else None
    if entry is None and named and ANY_HOST not in hosts:
        return Verdict(refusal="not granted")
    ip = literal(name)
    if ip is not None:
        candidates = [str(ip)]
    else:
        try:
            candidates = resolve(name, port)
        except OSError:
            return Verdict(refusal="could not resolve")
    named_itself = entry is not None and (entry[0] == "localhost" or literal(entry[0]) is not None)
    allowed = []
    for text in candidates:
        try:
            addr = ipaddress.ip_address(text)
        except ValueError:
            continue
        if is_special(addr, is_local) and not named_itself:
            continue
        allowed.append(text)
    if not allowed:
        return Verdict(refusal="the host's own or a link-local address; grant it by address")
    return Verdict(addresses=tuple(dict.fromkeys(allowed)))


def system_resolve(host: str, port: int) -> list[str]:
    """The host's resolver (the proxy runs outside the sandbox, so the command needs none)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def assigned_here(ip: Address) -> bool:
    """Is `ip` one of this machine's addresses? bind() succeeds only on an address assigned to a
    local interface (without IP_FREEBIND), which no list of interfaces can get wrong."""
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((str(ip), 0))
        except OSError:
            return False
    return True
