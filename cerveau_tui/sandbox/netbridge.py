"""The bridge a granted command starts with, inside bubblewrap: the proxy's door into its netns.

    python -I -S netbridge.py --fd N --port P -- /bin/sh -c CMD

The command's network namespace has only `lo`, so nothing it opens reaches anywhere. This makes a
TCP listener on 127.0.0.1:P inside that namespace, hands the LISTENING socket to the harness over
the inherited socketpair N (SCM_RIGHTS), closes its own copies and execs the command. The harness
accepts on it from outside: a socket belongs to the namespace it was made in, whichever process
holds it, so the command's connections to 127.0.0.1:P arrive at the proxy (netproxy.py), and the
proxy's own connections leave from the host's namespace. No pathname socket is needed inside (the
seccomp filter refuses AF_UNIX sockets), and nothing of the harness stays in the command's
process: the listener's only holder is the harness.

Standalone (run with -I -S, and only C modules imported: `socket.py` pulls in `enum` and `selectors`,
which tripled the bridge's start) because it starts on every granted command. Exit 126
with a message if any step fails: a command that was meant to have the proxy does not run
without it (it would have no network, and a confusing error).
"""

from __future__ import annotations

import _socket
import os
import sys


def main(argv: list[str]) -> None:
    try:
        split = argv.index("--")
        opts, command = argv[:split], argv[split + 1 :]
        fd = int(opts[opts.index("--fd") + 1])
        port = int(opts[opts.index("--port") + 1])
        if not command:
            raise ValueError("no command")
        handoff = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, fd)
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        rights = listener.fileno().to_bytes(4, sys.byteorder)  # one C int, as SCM_RIGHTS wants
        handoff.sendmsg([b"L"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        listener.close()
        handoff.close()
    except Exception as exc:  # noqa: BLE001 - any failure: the command does not run
        sys.stderr.write(f"cerveau network bridge: could not start the proxy: {exc}\n")
        sys.stderr.flush()
        os._exit(126)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
