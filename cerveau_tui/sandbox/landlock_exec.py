"""The Landlock helper, exec'd (never run as a preexec_fn: that is unsafe in a threaded parent).

    python -E -m cerveau_tui.sandbox.landlock_exec --workspace WS --mode MODE [--writable P]...
           [--network] -- /bin/sh -c CMD

In this order, because each step needs the previous one: a new session (no controlling terminal),
drop every capability including the bounding set (root re-gains capabilities on execve from the
bounding set), no_new_privs, a Landlock domain (read+exec on /, full access to the workspace and
the granted paths, TCP denied unless granted, signals and abstract sockets scoped), the seccomp
filter, then execve. Exit 126 with a message on stderr if any step fails: a helper that could not
confine must never run the command anyway.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import sys

PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Character devices every shell script writes to (`2>/dev/null`).
DEV_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read().strip())
    except OSError:
        last = 40
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM when not privileged: nothing to drop
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def apply_landlock(workspace: str, mode: str, writable: list[str], network: bool) -> None:
    import landlockpy as ll

    abi = ll.abi_version()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    everything = ll.fs_for_abi(abi)
    read = ll.AccessFS.READ_FILE | ll.AccessFS.READ_DIR | ll.AccessFS.EXECUTE
    handled_net = ll.AccessNet.NONE if network else ll.net_for_abi(abi)
    scoped = ll.scope_for_abi(abi)  # abstract unix sockets and signals stay inside the domain
    with ll.Ruleset(handled_fs=everything, handled_net=handled_net, scoped=scoped) as rs:
        # A rule on a file (not a directory) may only carry file rights, or the kernel says EINVAL.
        file_rights = everything & (ll.AccessFS.WRITE_FILE | ll.AccessFS.READ_FILE | ll.AccessFS.EXECUTE
                                    | ll.AccessFS.TRUNCATE | ll.AccessFS.IOCTL_DEV)
        rs.allow_path("/", read)
        for dev in DEV_WRITABLE:
            if os.path.exists(dev):
                rs.allow_path(dev, file_rights)
        paths = ([workspace] if mode != "read-only" else []) + writable
        for p in paths:
            if os.path.exists(p):
                rs.allow_path(p, everything if os.path.isdir(p) else file_rights)
        rs.restrict(no_new_privs=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="landlock_exec")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--mode", default="workspace-write")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--network", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    try:
        try:
            os.setsid()
        except PermissionError:
            pass  # already a session leader (the parent started us with start_new_session)
        drop_capabilities()
        apply_landlock(os.path.realpath(args.workspace), args.mode, [os.path.realpath(p) for p in args.writable], args.network)
        from cerveau_tui.sandbox.seccomp_filter import load_in_process

        load_in_process()
    except Exception as exc:  # noqa: BLE001 - any failure means: do not run unconfined
        sys.stderr.write(f"cerveau landlock helper: could not confine the command: {exc}\n")
        os._exit(126)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
