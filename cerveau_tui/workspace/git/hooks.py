"""The hooks git would run, as git decides: each one's bytes AND whether it is executable (git
runs a hook only when it is; `chmod +x` on a hook the person had disabled gave no finding when
hooks were compared by content), and the scripts an in-tree hook runner starts without being a
hook itself (husky)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .snapshot import MISSING, Control, read_control


@dataclass(frozen=True)
class Hook:
    digest: str
    executable: bool  # git runs a hook only when it is
    control: Control = MISSING  # its bytes, for putting it back (not compared)

    def same(self, other: Hook | None) -> bool:
        return other is not None and (self.digest, self.executable) == (
            other.digest,
            other.executable,
        )


def hook(path: str) -> Hook:
    c = read_control(path, follow=True)  # git follows a link to a program, and runs it
    return Hook(c.digest, c.kind == "file" and bool(c.mode & 0o111), c)


def hooks_in(hooks_dir: str) -> dict[str, Hook]:
    try:
        with os.scandir(hooks_dir) as it:
            names = sorted(e.name for e in it if not e.name.endswith(".sample"))
    except OSError:
        return {}
    return {name: hook(os.path.join(hooks_dir, name)) for name in names}


# githooks(5): the names git runs a hook by. Git's own list, used to recognise what a hook runner
# in the hooks folder may start from the folder above it.
HOOK_NAMES = frozenset(
    """applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit
    prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push
    pre-receive update proc-receive post-receive post-update reference-transaction
    push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman
    p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit
    post-index-change""".split()
)
_SCRIPTS_MAX = 256


def hook_scripts(hooks_dir: str, top: str) -> dict[str, Hook]:
    """What a hook in the tree runs without being a hook itself, executable or not (it is
    sourced or started with `sh`): files in the hooks folder's subfolders (husky 8 sources
    `.husky/_/husky.sh`), and, when the hooks folder sits below another folder of the tree, the
    files there named like a hook (husky 9 sets core.hooksPath to `.husky/_`, whose runner
    starts `.husky/pre-commit`)."""
    out: dict[str, Hook] = {}
    stack = [(hooks_dir, 0)]
    while stack and len(out) < _SCRIPTS_MAX:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False) and depth < 3:
                stack.append((e.path, depth + 1))
            elif depth > 0 and not e.name.endswith(".sample"):
                out[e.path] = hook(e.path)
    parent = os.path.dirname(hooks_dir)
    if _inside_tree(top, parent) and parent != top:
        for name in HOOK_NAMES:
            path = os.path.join(parent, name)
            out[path] = hook(path)
    return out


def _inside_tree(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)
