"""Hold llama.cpp's server from the `xllamacpp` wheel in this process until it is signalled.

    python -I ... cerveau_tui.stack.wheel_server -m MODEL --host 127.0.0.1 --port P -c N \\
        --jinja -np 1 --slot-save-path DIR --api-key-file /dev/stdin [--seed S] [-b N] [-ub N]
        [--cache-reuse N] [--metrics]

The argv is llama-server's own (the subset the harness and its benchmarks pass), so ManagedServer
starts either with the same arguments and everything after the start (health, /props, records,
watchdog, SIGTERM to the group) is the same. `xllamacpp.Server(params)` returns once the model is
loaded and the HTTP threads listen; this process then only waits: SIGTERM's default action ends
it, as it ends llama-server.

Differences from the binary handled here: the slot save path is joined to the filename without a
separator (`/slots/0?action=save` wrote `slotsNAME.bin` beside the folder), so a trailing `/` is
added; the bundled web UI is off (nothing of ours uses it, and it is one more thing a page in a
browser could reach).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="wheel_server", allow_abbrev=False)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("-c", "--ctx-size", type=int, default=0)
    p.add_argument("-np", "--parallel", type=int, default=1)
    p.add_argument("--jinja", action="store_true")
    p.add_argument("--slot-save-path", default="")
    p.add_argument("--api-key-file", default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("-b", "--batch-size", type=int, default=None)
    p.add_argument("-ub", "--ubatch-size", type=int, default=None)
    p.add_argument("--cache-reuse", type=int, default=None)
    p.add_argument("--metrics", action="store_true")
    return p.parse_args(argv)


def read_keys(path: str | None) -> list[str]:
    """The keys, one a line, as llama-server's --api-key-file reads them. `/dev/stdin` is how the
    harness passes its key: never in argv (every user reads /proc/PID/cmdline) nor environ."""
    if not path:
        return []
    with open(path, encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip()]


def slot_dir(path: str) -> str:
    # xllamacpp joins slot_save_path + filename as strings: without the separator a save landed
    # beside the folder, and a restore looked there too.
    return path if not path or path.endswith(os.sep) else path + os.sep


def params(args: argparse.Namespace, keys: list[str]):  # type: ignore[no-untyped-def]
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.hostnames = [args.host]
    p.port = args.port
    p.n_ctx = args.ctx_size
    p.n_parallel = args.parallel
    p.use_jinja = True  # llama-server's default in this build; --jinja is accepted and implied
    p.slot_save_path = slot_dir(args.slot_save_path)
    p.api_keys = keys
    p.ui = False
    p.endpoint_metrics = args.metrics
    if args.seed is not None:
        p.sampling.seed = args.seed
    if args.batch_size is not None:
        p.n_batch = args.batch_size
    if args.ubatch_size is not None:
        p.n_ubatch = args.ubatch_size
    if args.cache_reuse is not None:
        p.n_cache_reuse = args.cache_reuse
    return p


def main(argv: list[str]) -> int:
    args = parse(argv)
    keys = read_keys(args.api_key_file)
    import xllamacpp

    try:
        server = xllamacpp.Server(params(args, keys))
    except RuntimeError as exc:
        # The reason ("couldn't bind ... port: P") is already in the log above this line.
        print(f"wheel_server: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"wheel_server: listening at {server.listening_address}", file=sys.stderr, flush=True)
    threading.Event().wait()  # until SIGTERM/SIGKILL; `server` stays referenced meanwhile
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
