"""The grammar of `cerveau stack provision|up|down|status`, apart from the commands (cli.py): the
main CLI builds its parser before every start of the app, and cli.py's imports (httpx, the
provisioning, the server records) cost the first frame ~100 ms that only `cerveau stack` uses."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_stack_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("stack", help="provision, start, stop and inspect the local model")
    sub = p.add_subparsers(dest="stack_command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object")
    common.add_argument("--verbose", action="store_true", help="show the tools' full output")
    prov = sub.add_parser("provision", parents=[common], help="get llama-server and the model")
    prov.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    prov.add_argument("--adopt", type=Path, metavar="BINARY",
                      help="install a llama-server built with the portable flags into the cache")  # fmt: skip
    prov.add_argument("--downloads-from", type=Path, action="append", default=[], metavar="DIR",
                      help="a directory holding the sdist/wheel already downloaded")  # fmt: skip
    prov.add_argument("--jobs", type=int, default=None)
    prov.add_argument("--source-build", action="store_true",
                      help="build llama-server from source instead of using the prebuilt wheel")  # fmt: skip
    up = sub.add_parser("up", parents=[common], help="start the server in the background")
    up.add_argument("--n-ctx", type=int, default=None)
    up.add_argument("--model", default=None, help="a GGUF file (default: SmolLM2-135M)")
    up.add_argument("--timeout", type=float, default=120.0)
    down = sub.add_parser(
        "down", parents=[common], help="stop the `stack up` server and any whose app is gone"
    )
    down.add_argument("--all", action="store_true",
                      help="also stop servers that running apps and test sessions own")  # fmt: skip
    sub.add_parser("status", parents=[common], help="what is installed and running")
