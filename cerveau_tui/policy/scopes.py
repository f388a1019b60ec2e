"""What a grant covers, matched by the command's structure, never by the text of its line.

The failure that motivated it: the scope offered for `curl -s -m 3 http://127.0.0.1:PORT/one; true`
was that whole line, so the next `curl` to the same host asked again; and a prefix of the text is
the wrong test anyway: `git push; rm -rf ~` starts with `git push`. So a command is parsed (shlex),
split into simple commands on `;`, `&&`, `||`, `|`, `&`, and a grant covers it only when EVERY
simple command that is not a known-safe read is covered by one held scope that also gives the room
it needs. What cannot be parsed with confidence (a substitution, a redirection, a subshell, a
newline) is covered only by the exact command.

A scope for a program never covers running another program: it covers a simple command only when
every argument has a shape on that program's allow list (shapes.py: the failure was
`git push --receive-pack=PROG` under "git push to github.com only", an arbitrary program run with
the network). A "never" rule matches by the program's words alone: an odd option does not dodge it.

A host in a scope decides only whether to ASK. Where a command's traffic may go is a network fact:
the Grant a host-scoped cover hands the sandbox carries those hosts (`scoped_room`), and the
harness's proxy lets the command reach them and nothing else; a grant with no hosts is any host,
said so where it is given. A miss in `hosts()` below can only make a command ask, or fail closed
at the proxy.

Scope keys (stable: they are sealed into session logs and lasting rules):
- `exact:<command>`: this command line, exactly;
- `command:<program> [<subcommand>]`: every simple command whose words start with these;
- `command:<program> [<subcommand>]@<host[:port]>`: the same, its every URL naming that host;
- `dir:<folder>`: a file tool's writes under that folder (outside the workspace);
- `write:`, `read:`, `rule:`, `tool:`: a file tool's exact paths, an ask rule, a whole tool.
A key of several parts is a JSON list of them (`["command:git add","command:git commit"]`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..sandbox.base import Grant
from ..sandbox.netpolicy import ANY_HOST, literal, parse_entry
from .shapes import fits, runs_programs

_PROGRAM = re.compile(r"^[A-Za-z0-9._+-][A-Za-z0-9._+/-]*$")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]*$")
_UNSAFE = ("$(", "`", "\n", "\r", "<(", ">(")
# Options that send a program's traffic somewhere its URL does not name: a host-limited grant
# never covers a command that carries one. A second line only: the shapes (shapes.py) keep these
# off every allow list, and the proxy, not this list, decides where traffic goes.
_REROUTE = re.compile(
    r"^(-x|--proxy|--preproxy|--socks\w*|--connect-to|--resolve|-K|--config|--url|-e|"
    r"--execute|--use-ascii|--proxy-\w+|-c|--config-env)(=|$)"
)
_BARE_HOST = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?([/?#]|$)|^[A-Za-z0-9.-]+:\d+")
_NETLOC = re.compile(r"^[a-z0-9.-]+(:\d{1,5})?$")
# Words that run nothing else and need no grant inside a chain (`cd` changes only where the next
# part runs); `git status` runs core.fsmonitor only inside the sandbox like the rest.
_INERT = frozenset(
    "cd true : echo printf pwd ls cat head tail wc sort uniq cut tr nl basename dirname sleep".split()
)


@dataclass(frozen=True)
class Scope:
    key: str
    label: str


def simple_commands(command: str) -> list[list[str]] | None:
    """The words of each simple command, in order; None when the command holds anything a
    structural match cannot vouch for (a substitution, a redirection, a subshell)."""
    if any(s in command for s in _UNSAFE):
        return None
    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lex.whitespace_split = True
    try:
        tokens = list(lex)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok and set(tok) <= set(";&|"):
            out.append([])
        elif tok and set(tok) & set("<>()"):
            return None
        else:
            out[-1].append(tok)
    return [words for words in out if words]


def _needs_cover(words: list[str]) -> bool:
    """Every part of a chain needs a cover but the inert ones: the room a grant gives (the
    network, a folder) is the whole sandboxed run's, so a "known-safe read" that can run a
    program (`rg --pre`, `git diff`'s external driver, `find -exec`) would borrow it."""
    if words[0] in _INERT:
        return False
    return not (words[0] == "git" and words[1:2] in (["status"], ["rev-parse"]))


def program_words(words: list[str]) -> list[str] | None:
    """`git push`, `npm install`, `curl`: the program and a subcommand-like second word. None for
    a program whose arguments are a program (`sh -c`, `env`, `sudo`): only its exact command."""
    if not _PROGRAM.match(words[0]) or runs_programs(words[0]):
        return None
    if len(words) > 1 and _SUBCOMMAND.match(words[1]):
        return words[:2]
    return words[:1]


def hosts(words: list[str]) -> list[str] | None:
    """The hosts (with port) the URLs among the arguments name; None when an option could send
    the traffic elsewhere (a proxy, a resolve override, a config file)."""
    found: list[str] = []
    for w in words[1:]:
        if w.startswith("-"):
            if _REROUTE.match(w):
                return None
            continue
        if "://" in w:
            try:
                netloc = urlsplit(w).netloc.rsplit("@", 1)[-1].lower()
            except ValueError:
                return None
        elif _BARE_HOST.match(w) or w.startswith("["):
            # curl takes `evil.example` without a scheme as a URL: counted as a host (an option's
            # value that looks like one, `-o out.json`, only makes the grant ask again).
            netloc = re.split(r"[/?#]", w, maxsplit=1)[0].lower()
        else:
            continue
        if not netloc or not _NETLOC.match(netloc):
            return None
        if netloc not in found:
            found.append(netloc)
    return found


def parts(key: str) -> list[str]:
    if key.startswith("["):
        try:
            value = json.loads(key)
        except ValueError:
            return []
        return [str(x) for x in value] if isinstance(value, list) else []
    return [key]


def joined(keys: list[str]) -> str:
    return keys[0] if len(keys) == 1 else json.dumps(keys)


def _atom_names(atom: str, words: list[str], command: str) -> bool:
    """The atom names this simple command (its program words, whatever its options): what a
    "never" rule needs."""
    if atom.startswith("exact:"):
        return atom[len("exact:") :] == command.strip()
    if not atom.startswith("command:"):
        return False
    want = atom[len("command:") :].rsplit("@", 1)[0].split(" ")
    return words[: len(want)] == want and program_words(words) is not None


def _atom_covers(atom: str, words: list[str], command: str) -> bool:
    """The atom lets this simple command through: it names it, every argument has an allowed
    shape (shapes.py), and a host-scoped atom's host is the only one its URLs name."""
    if not _atom_names(atom, words, command):
        return False
    if atom.startswith("exact:"):
        return True
    if not fits(words):
        return False
    body = atom[len("command:") :]
    if "@" not in body:
        return True
    named = hosts(words)
    return bool(named) and named == [body.rsplit("@", 1)[1]]


def key_hosts(key: str) -> tuple[str, ...] | None:
    """The hosts a key limits its network to (`command:curl@github.com`); None when any part of
    it is not host-limited (an exact command, `command:curl`): that grant is any host."""
    found: list[str] = []
    for atom in parts(key):
        body = atom[len("command:") :] if atom.startswith("command:") else ""
        if "@" not in body:
            return None
        host = body.rsplit("@", 1)[1].lower()
        if host and host not in found:
            found.append(host)
    return tuple(found) or None


def scoped_room(key: str, room: Grant) -> Grant:
    """The room a grant under `key` gives: a host-scoped key's network is those hosts only (an old
    record that said only `network: true` meant the same host, and now the proxy holds it)."""
    limited = key_hosts(key)
    if not room.network or limited is None:
        return room
    return Grant(extra_writable=room.extra_writable, network=True, hosts=limited)


def merged(*rooms: Grant) -> Grant:
    """Rooms added up: folders joined; the network if any gives it, to any host if any of those
    gives any host, else to the union of their hosts."""
    extra = tuple(dict.fromkeys(p for r in rooms for p in r.extra_writable))
    net = [r for r in rooms if r.network]
    if not net:
        return Grant(extra_writable=extra)
    named = tuple(dict.fromkeys(h for r in net for h in r.hosts if h != ANY_HOST))
    if any(not r.hosts or ANY_HOST in r.hosts for r in net):
        # Any host wins over lists; only an address an approval named stays beside it (a name
        # adds nothing to any host: netpolicy.ANY_HOST).
        kept = tuple(h for h in named if by_address(h))
        return Grant(extra_writable=extra, network=True, hosts=(ANY_HOST, *kept) if kept else ())
    return Grant(extra_writable=extra, network=True, hosts=named)


def any_host_plus_named(command: str | None) -> tuple[str, ...]:
    """The hosts of an approval that gives any host: `*` and the addresses the command's URLs
    name, so the address the person read in the dialog (a loopback service, which "any host"
    alone never reaches) is one the command reaches. Empty (plain any host) when none is named
    or the command cannot be read."""
    simple = simple_commands(command) if command else None
    named: list[str] = []
    for words in simple or []:
        for h in hosts(words) or []:
            # Only what "any host" would not reach anyway: an address literal or localhost
            # (netpolicy.decide reaches this machine's own addresses only when named so).
            if by_address(h) and h not in named:
                named.append(h)
    return (ANY_HOST, *named) if named else ()


def by_address(entry: str) -> bool:
    host, _ = parse_entry(entry)
    return host == "localhost" or literal(host) is not None


def without_named(room: Grant) -> Grant:
    """A stored program-wide any-host room: the addresses one approval named were for that call
    (and an `exact:` key's command), never for every later command of the program."""
    if ANY_HOST not in room.hosts:
        return room
    return Grant(extra_writable=room.extra_writable, network=room.network)


def _room_fits(held: Grant, need: Grant) -> bool:
    if need.network and not held.network:
        return False
    return all(
        any(p == r or r in p.parents for r in held.extra_writable) for p in need.extra_writable
    )


def command_covered(command: str, grants: dict[str, Grant], need: Grant) -> str | None:
    """The key of the grant that lets `command` through with room `need`, or None."""
    keys = command_cover(command, grants, need)
    return keys[0] if keys else None


def command_cover(command: str, grants: dict[str, Grant], need: Grant) -> list[str] | None:
    """The keys of the grants that let `command` through with room `need` (one per part that needs
    a cover, first found), or None. Every simple command that needs a cover must find one held
    scope covering it with all that room; [] when no part needs one."""
    simple = simple_commands(command)
    exact = [k for k, g in grants.items() if f"exact:{command.strip()}" in parts(k)]
    for k in exact:
        if _room_fits(grants[k], need):
            return [k]
    if simple is None:
        return None
    used: list[str] = []
    for words in simple:
        if not _needs_cover(words):
            continue
        hit = next(
            (
                k
                for k, g in grants.items()
                if _room_fits(g, need) and any(_atom_covers(a, words, command) for a in parts(k))
            ),
            None,
        )
        if hit is None:
            return None
        if hit not in used:
            used.append(hit)
    return used


def command_denied(command: str, keys: list[str]) -> str | None:
    """The "never" rule any part of `command` falls under (an unparseable command falls under a
    rule for its first word too: a "never" must not be dodged by adding a `$(true)`)."""
    simple = simple_commands(command)
    if simple is None:
        try:
            first = shlex.split(command)[:2]
        except ValueError:
            first = command.split()[:2]
        simple = [first] if first else []
    for k in keys:
        for a in parts(k):
            if a.startswith("exact:") and a[len("exact:") :] == command.strip():
                return k
            if any(_never_covers(a, w, command) for w in simple if w):
                return k
    return None


def _never_covers(atom: str, words: list[str], command: str) -> bool:
    """A "never curl to h" holds for any curl naming h among its URLs, and for one whose traffic
    could go anywhere (a proxy option): what cannot be told apart is refused."""
    if not _atom_names(atom, words, command):
        return False
    if "@" not in atom or not atom.startswith("command:"):
        return True
    host = atom.rsplit("@", 1)[1]
    named = hosts(words)
    return named is None or host in named


def command_choices(command: str, need: Grant, shown: Callable[[Path], str]) -> list[Scope]:
    """What "approve for session" could cover, narrowest first; the second (the narrowest that a
    next call could use: the program, or the program to its one host) is the default `a`."""
    room = ""
    if need.extra_writable:
        room = ", writing under " + ", ".join(shown(p) for p in need.extra_writable)
    out = [Scope(f"exact:{command.strip()}", f"exactly `{command.strip()}`{room}")]
    simple = simple_commands(command)
    if simple is None:
        return out
    covered = [w for w in simple if _needs_cover(w)]
    progs: list[list[str]] = []
    for words in covered:
        p = program_words(words)
        # A scope the next call could never use is not offered (an option off the allow list:
        # only this exact command).
        if p is None or not fits(words):
            return out
        if p not in progs:
            progs.append(p)
    if not progs:
        return out
    names = ", ".join(f"`{' '.join(p)}`" for p in progs)
    named = {h for w in covered for h in (hosts(w) or [])}
    if need.network and len(named) == 1 and all(hosts(w) for w in covered):
        host = next(iter(named))
        keys = [f"command:{' '.join(p)}@{host}" for p in progs]
        out.append(Scope(joined(keys), f"commands starting with {names} to {host} only{room}"))
        anyhost = ", any host"
    else:
        anyhost = ""
    keys = [f"command:{' '.join(p)}" for p in progs]
    out.append(Scope(joined(keys), f"commands starting with {names}{anyhost}{room}"))
    return out


def folder_choice(
    writes: list[Path], workspace: Path, shown: Callable[[Path], str]
) -> Scope | None:
    """For a file tool's writes outside the workspace: the folder they are in, spelled out. Never
    the home folder or an ancestor of it (or of the workspace): that is every dotfile."""
    if not writes:
        return None
    folders = {p.parent for p in writes}
    if len(folders) != 1:
        return None
    folder = next(iter(folders))
    home = Path.home()
    if folder == folder.parent or folder == home or folder in home.parents:
        return None
    if folder == workspace or folder in workspace.parents or workspace in folder.parents:
        return None
    return Scope(f"dir:{folder.as_posix()}", f"file tools writing under {shown(folder)}")


def folder_covers(key: str, writes: list[Path]) -> bool:
    folders = [Path(a[len("dir:") :]) for a in parts(key) if a.startswith("dir:")]
    return bool(writes) and all(any(d in p.parents for d in folders) for p in writes)
