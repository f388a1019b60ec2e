"""What a sandboxed process sees of the machine: an allow list, never "everything minus a list".

The failure that motivated it: `/` was bound read-only whole and a deny list masked the secrets
we had thought of. Probed from the host, 24 other kinds of credentials in a home folder reached
the model with no prompt (`.pgpass`, `.my.cnf`, registry `auth.json`, Maven and Gradle settings,
`hub`/`glab` tokens, shell histories, a browser profile, `/etc/ssl/private`, `/etc/wireguard`).
A list ends; the formats do not. So a command sees:

- the system (`/usr` and the merged-usr links, `/opt`), read-only;
- of `/etc`, only what toolchains read (the name service, the loader, certificates, locale,
  timezone, the system-wide git and Python configs): shadow, sudoers, private keys, wireguard,
  ssh host keys are simply not there;
- of every home folder, nothing: `HOME` is an empty private folder, and only the usual toolchain
  folders of the person's home appear, read-only, at their real paths (cargo and rustup, nvm,
  pyenv, uv, `~/.local/bin`, go) so `cargo test` or a pyenv Python keep working; the credential
  files inside them stay masked;
- the harness's own interpreter and package, read-only (a done check `python -m pytest` must find
  the same Python), and nothing of its control files (config, trust store, grant key, cache);
- the workspace, and what the person grants.

The same view decides what the harness's own file tools may read outside the workspace without
asking (`visible`), so the tools are never the way around it.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .etc_view import EtcItem, etc_plan

#: Top-level system folders, read-only (each bound if it exists; a link is recreated as a link).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix")

#: The parts of /etc a toolchain reads. Not here, so absent: shadow, gshadow, sudoers(.d),
#: ssl/private, wireguard, ssh (host keys), security, pam.d, the package manager's credentials
#: (apt/auth.conf.d), npmrc and pip.conf (they can hold index tokens).
ETC = (
    "passwd",
    "group",
    "hosts",
    "hostname",
    "resolv.conf",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    "networks",
    "ethertypes",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "pki/tls/certs",
    "alternatives",
    "localtime",
    "timezone",
    "locale.alias",
    "locale.gen",
    "locale.conf",
    "default/locale",
    "mime.types",
    "magic",
    "magic.mime",
    "os-release",
    "debian_version",
    "lsb-release",
    "issue",
    "shells",
    "login.defs",
    "environment",
    "profile",
    "profile.d",
    "bash.bashrc",
    "inputrc",
    "terminfo",
    "gitconfig",
    "python3",
    "python3.11",
    "python3.12",
    "python3.13",
    "perl",
    "java-17-openjdk",
    "java-21-openjdk",
    "maven",
    "fonts",
    "xdg",
    "vim",
    "nanorc",
    "manpath.config",
    "mke2fs.conf",
    "subuid",
    "subgid",
)

#: Toolchain folders of a home, read-only at their real path; each with the credential files
#: inside it that stay masked.
HOME_TOOLCHAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (".cargo/bin", ()),
    (".rustup", ()),
    (".nvm", ()),
    (".pyenv", ()),
    (".local/bin", ()),
    (".local/share/uv", ()),
    (".volta", ()),
    ("go/bin", ()),
    (".go", ()),
)

#: Folders of the machine a workspace may not be or hold (besides SYSTEM): the kernel's, the
#: configuration, the state, the homes.
HOST_FOLDERS = ("/etc", "/proc", "/sys", "/dev", "/boot", "/var", "/home", "/root", "/run")

#: Environment a toolchain needs to find itself once HOME is the private one.
TOOLCHAIN_ENV = (("RUSTUP_HOME", ".rustup"), ("NVM_DIR", ".nvm"), ("PYENV_ROOT", ".pyenv"))


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def person_homes() -> list[Path]:
    """The homes a toolchain folder is taken from: `$HOME` and the running uid's own (they differ
    under `sudo -E` or a test's HOME), realpath'd, never `/`."""
    out: list[Path] = []
    cands = [os.environ.get("HOME", "")]
    try:
        cands.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    for raw in cands:
        if raw and os.path.isabs(raw):
            real = Path(os.path.realpath(raw))
            if real != Path("/") and real not in out:
                out.append(real)
    return out


#: Beside the person's config: the trust store, the grant key, the lasting approval rules.
CONTROL_BESIDE_CONFIG = ("trusted-workspaces.json", "session-grants.key", "workspace-rules.json")


def control_paths() -> list[Path]:
    """The harness's own control files: what decides how the NEXT session is bounded (the
    person's config, the trust store and the grant key beside it) and the cache that holds the
    llama-server it starts. Never visible inside the sandbox, never written by the file tools.
    Files, not their folder: a test (or a person) may keep a workspace beside them."""
    from ..config import user_config_path

    config = Path(os.path.realpath(user_config_path()))
    out = [config, *(config.parent / n for n in CONTROL_BESIDE_CONFIG)]
    cache = os.environ.get("CERVEAU_CACHE_DIR")
    out.append(Path(os.path.realpath(cache)) if cache else _default_cache())
    # The workspaces' state kept outside them (state_home.py: the alternates' folder and any
    # `--state-dir` chosen): the session logs and the next config, like `.cerveau` inside.
    from ..state_home import protected

    out += protected()
    return sorted(set(out))


def config_dir() -> Path:
    from ..config import user_config_path

    return Path(os.path.realpath(user_config_path().parent))


def _default_cache() -> Path:
    import platformdirs

    return Path(os.path.realpath(platformdirs.user_cache_dir("cerveau")))


def runtime_paths() -> list[Path]:
    """The running harness's interpreter and package (found from the process, not a name): bound
    read-only inside, refused to the file tools' writes. An editable checkout's package source is
    here too: the next start would run what a command wrote there. The same places the deny list
    never masks (protect.runtime_dirs)."""
    from .protect import runtime_dirs

    return runtime_dirs()


def refuse_workspace(ws: Path) -> str | None:
    """Why `ws` cannot be a workspace, or None. `/` would put the whole disk in the model's
    hands (and `.cerveau/` at the root); a home folder, or any folder holding the person's config,
    puts the harness's own control files (config, trust store, grant key) inside the workspace."""
    real = Path(os.path.realpath(ws))
    if real == Path("/"):
        return (
            "refusing the workspace /: the whole disk would be the model's to change; "
            "start cerveau in a project folder (or pass --workspace PROJECT)"
        )
    held = [s for s in (*SYSTEM, *HOST_FOLDERS) if _under(Path(s), real) and os.path.lexists(s)]
    if held:
        return (
            f"refusing the workspace {real}: it is or holds the system's own folders "
            f"({', '.join(held[:3])}); start cerveau in a project folder"
        )
    for home in person_homes():
        if real == home:
            return (
                f"refusing the workspace {real}: it is your home folder, which holds your "
                "credentials and cerveau's own config; start cerveau in a project folder inside it"
            )
    for ctl in [config_dir()]:  # the person's config, the trust store and the grant key
        if _under(ctl, real):
            return (
                f"refusing the workspace {real}: it holds cerveau's own config ({ctl}), which "
                "decides how the next session is bounded; start cerveau in a project folder"
            )
    return None


def own_files_inside(ws: Path) -> list[Path]:
    """The harness's own files (control files, cache, interpreter, package) inside `ws`. Under a
    backend that cannot make a folder inside the workspace read-only (Landlock), a command could
    rewrite them, and the next start would run what it wrote (the cache's llama-server, an
    editable checkout's package): such a session is NOT enforced (every command asked)."""
    real = Path(os.path.realpath(ws))
    return [p for p in (*control_paths(), *runtime_paths()) if _under(p, real)]


@dataclass(frozen=True)
class Bind:
    src: Path
    dest: Path
    link: str | None = None  # recreate as a symbolic link to this target instead of binding


@dataclass(frozen=True)
class MachineView:
    system: tuple[Bind, ...]
    etc: tuple[Bind, ...]
    homes: tuple[Path, ...]  # each an empty private folder inside
    toolchains: tuple[Path, ...]
    masked: tuple[Path, ...]  # files inside a toolchain folder that stay hidden
    runtime: tuple[Path, ...]
    control: tuple[Path, ...]
    env: tuple[tuple[str, str], ...]
    etc_plan: tuple[EtcItem, ...] = ()

    def readable_roots(self) -> list[Path]:
        """Folders (and files) a sandboxed process can read outside the workspace."""
        out = [b.dest for b in (*self.system, *self.etc)]
        out += [*self.toolchains, *self.runtime]
        return out

    def visible(self, path: Path) -> bool:
        """Whether a sandboxed command could read `path` (a realpath): what the file tools may read
        outside the workspace without it being a crossing. By set lookups of the path and its
        ancestors (asked for every deny entry of every command)."""
        chain = {str(path), *(str(p) for p in path.parents)}
        if chain & self._control or str(path) in self._masked:
            return False
        return bool(chain & self._roots)

    def bound(self, path: Path) -> bool:
        """Whether `path` lies under a folder bound inside, control files or not: what a mask
        must then hide (a control file under a `sandbox_read` folder is bound with it)."""
        return bool({str(path), *(str(p) for p in path.parents)} & self._roots)

    @cached_property
    def _roots(self) -> frozenset[str]:
        return frozenset(str(r) for r in self.readable_roots())

    @cached_property
    def _control(self) -> frozenset[str]:
        return frozenset(str(c) for c in self.control)

    @cached_property
    def _masked(self) -> frozenset[str]:
        return frozenset(str(m) for m in self.masked)


def _bind(path: Path) -> Bind | None:
    if not os.path.lexists(path):
        return None
    if path.is_symlink():
        target = os.readlink(path)
        real = Path(os.path.realpath(path))
        if not real.exists():
            return None
        # A top-level link (merged /usr: /bin -> usr/bin) is recreated as a link; one in /etc that
        # points elsewhere (resolv.conf -> /run/...) is bound at its target's content.
        if path.parent == Path("/"):
            return Bind(path, path, link=target)
        return Bind(real, path)
    return Bind(path, path)


def machine_view(extra_read: Iterable[Path] = ()) -> MachineView:
    system = tuple(b for p in SYSTEM if (b := _bind(Path(p))) is not None)
    etc = tuple(b for name in ETC if (b := _bind(Path("/etc") / name)) is not None)
    homes = tuple(person_homes())
    tools: list[Path] = []
    masked: list[Path] = []
    env: list[tuple[str, str]] = []
    for home in homes:
        for rel, secrets in HOME_TOOLCHAINS:
            p = home / rel
            if os.path.isdir(p) and not p.is_symlink():
                tools.append(p)
                masked += [p / s for s in secrets if os.path.lexists(p / s)]
        for key, rel in TOOLCHAIN_ENV:
            if os.path.isdir(home / rel) and key not in dict(env):
                env.append((key, str(home / rel)))
    for extra in extra_read:
        real = Path(os.path.realpath(extra))
        if real.exists() and real != Path("/"):
            tools.append(real)
    control = tuple(control_paths())
    runtime = tuple(p for p in runtime_paths() if not any(_under(p, c) for c in control))
    return MachineView(
        system,
        etc,
        homes,
        tuple(dict.fromkeys(tools)),
        tuple(masked),
        runtime,
        control,
        tuple(env),
        tuple(etc_plan(etc)),
    )


def bwrap_args(
    view: MachineView, size: str, open_file: Callable[[Path], int] | None = None
) -> list[str]:
    """The allow-listed system part of a bubblewrap command line (bwrap's root is an empty tmpfs,
    so what is not named here does not exist inside). `open_file` gives a readable descriptor of
    an /etc file whose bytes bwrap copies in (`--file`; the root is remounted read-only last);
    without it (argv shown, not run) each file is a read-only bind, the same view."""
    del size
    a: list[str] = []
    for b in view.system:
        a += (
            ["--symlink", b.link, str(b.dest)] if b.link else ["--ro-bind", str(b.src), str(b.dest)]
        )
    a += ["--dir", "/etc"]
    for item in view.etc_plan:
        if item.kind == "dir":
            a += ["--dir", str(item.dest)]
        elif item.kind == "link":
            a += ["--symlink", item.target, str(item.dest)]
        elif item.kind == "file" and open_file is not None and item.src is not None:
            try:
                fd = open_file(item.src)
            except OSError:
                continue  # gone or not a regular file any more: absent inside
            a += ["--perms", "0644", "--file", str(fd), str(item.dest)]
        else:
            a += ["--ro-bind", str(item.src), str(item.dest)]
    a += ["--symlink", "../proc/self/mounts", "/etc/mtab"]
    return a


def view_home_args(view: MachineView, size: str) -> list[str]:
    """Each home an empty private folder (size-capped RAM), the toolchain folders read-only on
    top at their real paths, their credential files masked. After the private /tmp: a home
    under /tmp (a test's) must not be hidden by it."""
    a: list[str] = []
    for home in view.homes:
        a += ["--size", size, "--tmpfs", str(home)]
    for p in view.toolchains:
        a += ["--ro-bind", str(p), str(p)]
    for p in view.masked:
        a += ["--ro-bind", "/dev/null", str(p)]
    return a
