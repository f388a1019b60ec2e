"""The deny-read list: secrets outside the workspace that a command never sees (masked inside the
sandbox) and the file tools never read (refused), unless the person changes `deny_read`.

Found by probing: commands and the file tools read `~/.ssh`, `~/.npmrc` and `/etc/shadow` with
approval `never` and no prompt, and the bytes went to the model, the server and the session log.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Read-denied by default: what a command (masked inside the sandbox) and the file tools (refused)
#: never see without the person changing this list. `~/` is every home on the machine (the
#: person's, root's, each /home/*): the app may run as root, and root can read them all.
DEFAULT_DENY_READ: tuple[str, ...] = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.npmrc",
    "~/.pypirc",
    "~/.yarnrc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.local/share/keyrings",
    "~/.password-store",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.lesshst",
    "~/.config/cerveau",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh",
)


def homes() -> list[Path]:
    """Every home directory a `~/` deny pattern stands for: $HOME, root's, and each account's
    under /home that exists (system accounts' "homes" such as /usr/sbin hold no secrets). The app
    may run as root, which can read them all."""
    import pwd

    seen: list[Path] = []
    candidates = [os.environ.get("HOME", ""), "/root"]
    try:
        candidates += [p.pw_dir for p in pwd.getpwall() if p.pw_dir.startswith("/home/")]
    except OSError:
        pass
    for raw in candidates:
        if not raw or raw == "/" or not os.path.isdir(raw):
            continue
        real = Path(os.path.realpath(raw))
        if real != Path("/") and real not in seen:
            seen.append(real)
    return seen


def deny_read_paths(patterns: list[str] | tuple[str, ...]) -> list[Path]:
    """The absolute paths a deny-read list names (`~/x` once per home), realpath'd, in order.
    Paths that do not exist are kept: a secret created later must be denied too."""
    out: list[Path] = []
    for pat in patterns:
        if pat.startswith("~/"):
            cands = [h / pat[2:] for h in homes()]
        elif pat.startswith("/"):
            cands = [Path(pat)]
        else:
            continue  # a relative pattern has no meaning outside a workspace; rules cover those
        for c in cands:
            p = Path(os.path.realpath(c))
            if p not in out:
                out.append(p)
    return out
