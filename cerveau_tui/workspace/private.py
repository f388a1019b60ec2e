"""A workspace is private by its properties, not by its name.

The failure that motivated it (issue 32, probed from the host): `/tmp` was accepted as a
workspace and bound writable whole into the sandbox, with every user's files and sockets in it;
`/var/tmp`, `/dev/shm`, a `chmod 1777` folder or one owned by another user were accepted the same
way. A list of refused names (sandbox/view.py refuses `/`, the system's folders, the homes) ends
where the list ends: `/srv/scratch` made 0777 by an admin is the same hole under another name.
So a folder is refused for what it IS:

- sticky (S_ISVTX): the mark of a folder meant to be shared between users (`/tmp`, `/dev/shm`);
- writable by every user (S_IWOTH): anyone could change what the model and the commands read;
- writable by its group when that group has members besides the person: the same, for them;
- owned by another uid: the commands would change another user's files with the person's rights
  (as root: plant root-owned files in their tree);
- any ancestor up to `/` that someone else could rename the workspace out of: other- or
  group-writable WITHOUT the sticky bit, or owned by another uid (neither root nor the person).
  A sticky parent is fine: `/tmp/mine` (mine, 0755) cannot be moved by anyone else, which is
  why pytest's `tmp_path` and a `mktemp -d` folder stay good workspaces.

The path is resolved first (a link to `/tmp` is `/tmp`). The answer is one sentence that names
the property and what to do; the entry points print it and exit 2.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections.abc import Callable
from pathlib import Path


def group_members(gid: int) -> set[str]:
    """Every account in group `gid`: its listed members and the accounts whose primary group it
    is (a user-private group, `alice:alice`, has only alice)."""
    try:
        names = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        names = set()
    try:
        names |= {p.pw_name for p in pwd.getpwall() if p.pw_gid == gid}
    except OSError:
        pass
    return names


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _others_in_group(gid: int, euid: int, members: Callable[[int], set[str]]) -> list[str]:
    me = _user(euid)
    return sorted(n for n in members(gid) if n != me)


def refuse_shared(
    ws: Path,
    *,
    euid: int | None = None,
    members: Callable[[int], set[str]] = group_members,
    is_mount: Callable[[str], bool] = os.path.ismount,
) -> str | None:
    """Why `ws` is not private to the person (one sentence), or None. `euid`, `members` and
    `is_mount` are injected so each rule is testable without making users and mounts."""
    uid = os.geteuid() if euid is None else euid
    real = Path(os.path.realpath(ws))
    try:
        st = os.stat(real)
    except OSError:
        return None  # a missing workspace is said by whoever opens it, not as "shared"
    mode = st.st_mode
    octal = f"{stat.S_IMODE(mode):04o}"
    if mode & stat.S_ISVTX:
        what = (
            "the top of a scratch filesystem every user shares"
            if is_mount(str(real))
            else "a folder shared with every user"
        )
        return (
            f"refusing the workspace {real}: it is {what} (sticky bit, mode {octal}), so other "
            "users' files and sockets would be bound writable into the sandbox; make a folder of "
            f"your own inside it (mkdir -m 700 {real / 'NAME'}) and start cerveau there"
        )
    if mode & stat.S_IWOTH:
        return (
            f"refusing the workspace {real}: it is writable by every user of this machine (mode "
            f"{octal}), so anyone could change what the model and your commands read; remove "
            f"that right (chmod o-w {real}) or start cerveau in a folder of your own"
        )
    if st.st_uid != uid:
        return (
            f"refusing the workspace {real}: it is owned by another user ({_user(st.st_uid)}), "
            "whose files your commands would change with your rights; start cerveau in a folder "
            f"you own (copy it: cp -r {real} ~/NAME)"
        )
    if mode & stat.S_IWGRP and (others := _others_in_group(st.st_gid, uid, members)):
        return (
            f"refusing the workspace {real}: it is writable by its group, which has other members "
            f"({', '.join(others[:3])}), so they could change what the model and your commands "
            f"read; remove that right (chmod g-w {real}) or start cerveau in a folder of your own"
        )
    return _ancestor(real, uid, members)


def _ancestor(real: Path, uid: int, members: Callable[[int], set[str]]) -> str | None:
    """The first folder above `real` someone else could rename the workspace out of (and put a
    folder of theirs in its place between two commands)."""
    for parent in real.parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue
        if st.st_mode & stat.S_ISVTX:
            continue  # only an entry's owner may rename it: /tmp/mine stays mine
        why = None
        if st.st_mode & stat.S_IWOTH:
            why = f"writable by every user (mode {stat.S_IMODE(st.st_mode):04o}) without the sticky bit"
        elif st.st_uid not in (0, uid):
            why = f"owned by another user ({_user(st.st_uid)})"
        elif st.st_mode & stat.S_IWGRP and (others := _others_in_group(st.st_gid, uid, members)):
            why = f"writable by a group with other members ({', '.join(others[:3])})"
        if why:
            return (
                f"refusing the workspace {real}: the folder above it, {parent}, is {why}, so "
                "someone else could swap the workspace for a folder of theirs; move the project "
                "to a folder of your own"
            )
    return None


class SharedWorkspace(ValueError):
    """The workspace is not private to the person; the message is refuse_shared's sentence."""


def require_private(ws: Path) -> None:
    """Raise SharedWorkspace when `ws` is shared: the session's own check, so a session built by
    any entry (not only the CLI's, which refuses first with exit 2) never binds a shared folder."""
    reason = refuse_shared(ws)
    if reason is not None:
        raise SharedWorkspace(reason)
