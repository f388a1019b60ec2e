"""Which git settings make the person's next `git` run a program, and how a config file is read.

A repository's config is code: `core.fsmonitor` runs on every `git status`, `core.pager` on every
`git log` at a terminal, a `filter.*.clean` on `git add`, `include.path` pulls in another file that
can say any of these. The model can write all of it from inside the sandbox (a repository it
creates, a nested one, one reached through `commondir`), and the person's git then runs it on the
host with their full rights. This module names those settings; guard.py decides what to do.

The list is a deny-list taken from git-config(1) (every key that names a program, a shell snippet
or another config file to read, or redirects where git looks), plus a catch-all on the variable's
name (`...cmd`, `...command`, `...program`, `...helper`, `...hook`...) so a key git adds later in
the same style is caught too. Anything else in a config (user.name, remote URLs, branch tracking)
is left to the model: it legitimately sets those.

The file is parsed by git itself (`git config --file - --list --null`), so the key names are the
ones the person's git will see, with quoting, continuation lines and case folded exactly as git
does. The bytes go through stdin: git never opens a path the model chose, and `--no-includes` keeps
it from reading anything else. A file git cannot parse is reported as such, never as "clean".
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from ... import host_process

ConfigItems = frozenset[tuple[str, str]]
# bytes -> the (key, value) pairs, or None when git could not parse them (or could not be run).
ParseConfig = Callable[[bytes], ConfigItems | None]

# section.variable (no subsection) that run something or redirect git.
_PLAIN = {
    "core.fsmonitor": "runs a program on every git status",
    "core.hookspath": "moves where hooks are run from",
    "core.sshcommand": "runs a program on fetch and push",
    "core.pager": "runs a program when git pages output",
    "core.editor": "runs a program when git opens an editor",
    "core.askpass": "runs a program when git asks for a password",
    "core.gitproxy": "runs a program for git:// connections",
    "core.alternaterefscommand": "runs a program on fetch and push",
    "core.worktree": "moves the working tree git operates on",
    "core.attributesfile": "reads attributes (filter and diff drivers) from another file",
    "sequence.editor": "runs a program on rebase -i",
    "diff.external": "runs a program on every git diff",
    "credential.helper": "runs a program when git needs credentials",
    "gpg.program": "runs a program to sign or verify",
    "include.path": "reads another config file",
    "uploadpack.packobjectshook": "runs a program when serving fetches",
    "interactive.difffilter": "runs a program on add -p",
    "man.viewer": "runs a program on git help",
    "web.browser": "runs a program on git help --web",
    "imap.tunnel": "runs a program on imap-send",
    "instaweb.httpd": "runs a program on git instaweb",
    "sendemail.smtpserver": "may name a program run by send-email",
    "sendemail.tocmd": "runs a program on send-email",
    "sendemail.cccmd": "runs a program on send-email",
    "sendemail.headercmd": "runs a program on send-email",
    "protocol.allow": "enables transports such as ext:: that run programs",
}

# section.<subsection>.variable: (section, variable) pairs.
_SUB = {
    ("diff", "textconv"): "runs a program on diff and log -p",
    ("diff", "command"): "runs a program on diff",
    ("difftool", "cmd"): "runs a program on difftool",
    ("difftool", "path"): "runs a program on difftool",
    ("mergetool", "cmd"): "runs a program on mergetool",
    ("mergetool", "path"): "runs a program on mergetool",
    ("filter", "clean"): "runs a program on add, status and diff",
    ("filter", "smudge"): "runs a program on checkout",
    ("filter", "process"): "runs a program on add, status, diff and checkout",
    ("merge", "driver"): "runs a program on merge",
    ("credential", "helper"): "runs a program when git needs credentials",
    ("gpg", "program"): "runs a program to sign or verify",
    ("includeif", "path"): "reads another config file",
    ("remote", "uploadpack"): "runs a program on fetch",
    ("remote", "receivepack"): "runs a program on push",
    ("remote", "vcs"): "runs a remote helper on fetch",
    ("protocol", "allow"): "enables transports such as ext:: that run programs",
    ("url", "insteadof"): "rewrites remote URLs (to ext:: or a local path)",
    ("url", "pushinsteadof"): "rewrites remote URLs (to ext:: or a local path)",
    ("man", "cmd"): "runs a program on git help",
    ("man", "path"): "runs a program on git help",
    ("browser", "cmd"): "runs a program on git help --web",
    ("browser", "path"): "runs a program on git help --web",
    ("guitool", "cmd"): "runs a program from git gui",
    ("tar", "command"): "runs a program on git archive",
    ("trailer", "command"): "runs a program on commit --trailer",
    ("trailer", "cmd"): "runs a program on commit --trailer",
    ("sendemail", "smtpserver"): "may name a program run by send-email",
}

# Whole sections whose every key configures a program (config-based hooks, git >= 2.46).
_SECTIONS = {"hook": "defines a hook command"}

# The catch-all: a variable named like this configures a program whatever its section.
_PROGRAM_SUFFIXES = ("cmd", "command", "program", "editor", "pager", "helper", "hook", "driver")

_FALSE = {"false", "no", "off", "0", ""}
# An alias that reaches one of these options can set any config for the command it runs.
_ALIAS_OPTIONS = ("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "-C")


def split_key(key: str) -> tuple[str, str | None, str]:
    """`section.sub.sec.tion.var` -> (section, subsection, var); git has already lower-cased the
    section and the variable, the subsection keeps its case and may hold dots."""
    section, _, rest = key.partition(".")
    sub, _, var = rest.rpartition(".")
    return section.lower(), (sub or None), var.lower()


def danger(key: str, value: str) -> str | None:
    """Why this setting lets the next git run something, or None."""
    section, sub, var = split_key(key)
    plain = f"{section}.{var}"
    if sub is None and plain in _PLAIN:
        if plain == "core.fsmonitor" and value.strip().lower() in _FALSE:
            return None
        return _PLAIN[plain]
    if sub is not None and (section, var) in _SUB:
        return _SUB[(section, var)]
    if section in _SECTIONS:
        return _SECTIONS[section]
    if section == "pager" and value.strip().lower() not in {*_FALSE, "true", "yes", "on", "1"}:
        return "runs a program as the pager of one command"
    if section == "alias":
        return _alias_danger(value)
    if section == "submodule" and var == "update" and value.lstrip().startswith("!"):
        return "runs a program on submodule update"
    if var.endswith(_PROGRAM_SUFFIXES):
        return "names a program git may run"
    return None


def _alias_danger(value: str) -> str | None:
    text = value.strip()
    if text.startswith("!"):
        return "an alias that runs a shell command"
    for word in text.split():
        if word in _ALIAS_OPTIONS or any(word.startswith(o + "=") for o in _ALIAS_OPTIONS[:4]):
            return "an alias that changes git's config or programs"
    return None


def include_paths(items: ConfigItems) -> list[str]:
    """The files this config pulls in (include.path and every includeIf.*.path, conditions
    ignored: a condition the person's next cd satisfies is one we must assume)."""
    out = []
    for key, value in sorted(items):
        section, sub, var = split_key(key)
        if var == "path" and (
            (section == "include" and sub is None) or (section == "includeif" and sub is not None)
        ):
            out.append(value)
    return out


def last_value(items_in_order: list[ConfigItems], key: str) -> str | None:
    """The value the person's git would use for a single-valued key (the last file that sets it).
    Within one file the pairs are a set, so a key set twice in one file is ambiguous: we take the
    lexically last value, and both are checked by `danger` anyway."""
    found: str | None = None
    for items in items_in_order:
        values = sorted(v for k, v in items if k.lower() == key)
        if values:
            found = values[-1]
    return found


_GIT_ENV = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C",
    "HOME": "/nonexistent",
    "XDG_CONFIG_HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    # No repository discovery: the harness's cwd may itself be a repository the model wrote.
    "GIT_DIR": "/nonexistent",
}


def find_git() -> str | None:
    """git at system paths only: a `git` the model planted on a PATH it controls never runs."""
    return shutil.which("git", path="/usr/bin:/bin:/usr/local/bin")


_MISS = object()


class GitConfigParser:
    """`git config --file - --list --null` on bytes, cached by content: the same config read before
    and after every command costs one git run per distinct content, not two per command."""

    def __init__(
        self,
        git: str | None = None,
        run: Callable[..., host_process.CompletedProcess[bytes]] = host_process.run,
    ) -> None:
        self.git = git if git is not None else find_git()
        self._run = run
        self._cache: dict[bytes, ConfigItems | None] = {}

    def __call__(self, data: bytes) -> ConfigItems | None:
        # .get, not `in` then []: commands of one reply run in parallel threads, and another
        # thread's clear() between the two would raise KeyError.
        hit = self._cache.get(data, _MISS)
        if hit is not _MISS:
            return hit  # type: ignore[return-value]
        items = self._parse(data)
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[data] = items
        return items

    def _parse(self, data: bytes) -> ConfigItems | None:
        if not data.strip():
            return frozenset()
        if self.git is None:
            return None
        try:
            out = self._run(
                [self.git, "config", "--no-includes", "--file", "-", "--list", "--null"],
                input=data, capture_output=True, env=_GIT_ENV, cwd="/", timeout=10,
            )  # fmt: skip
        except (OSError, host_process.SubprocessError):
            return None
        if out.returncode != 0:
            return None
        pairs = set()
        for record in out.stdout.split(b"\0"):
            if not record:
                continue
            key, _, value = record.decode("utf-8", errors="replace").partition("\n")
            pairs.add((key, value))
        return frozenset(pairs)
