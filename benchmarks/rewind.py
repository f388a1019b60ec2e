"""Rewind's costs (issue 25). Prints figures; asserts nothing.

    .venv/bin/python benchmarks/rewind.py [--files 10000] [--changed 10] [--server] [--tokens 3000]

(a) A restore point per turn on a `--files` workspace with `--changed` files changed between two
    points, with the fingerprint watching (as a session does: the point looks at the paths that
    moved only) and walking: the time of `Capture.take()` (the fingerprint's scan, the modes it
    saw, the changed files' blobs) and the bytes it stored (blobs, and the point's delta record in the log), the
    first (cold) point beside it; then the same change recorded by a shadow git under .cerveau
    (`git add -A && git commit`), the alternative the issue names, when git is installed.
(b) With --server, on the real stack (SmolLM2-135M, as benchmarks/slot_resume.py starts it): two
    turns, a rewind of both to turn 2's start, one more turn: the tokens the server evaluated
    (prompt_n) and reused (cache_n) for the first request after the rewind, beside turn 2's.
(c) With --real, the same figure through the cache probe (cerveau_tui/testing/rewind_probe.py):
    scripted turns that use the file tools and a command, every request replayed to the real
    server; a live rewind, then `cerveau rewind` + `run --resume last` in a new session.

    CERVEAU_CACHE_DIR=$HOME/.cache/cerveau .venv/bin/python benchmarks/rewind.py --real --skip-points
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def checkpoint_cost(files: int, changed: int, watch: bool = False) -> None:
    from cerveau_tui.session.rewind.points import Point, Points
    from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
    from cerveau_tui.workspace.restore.checkpoints import Capture
    from cerveau_tui.workspace.restore.store import BlobStore

    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-rewind-"))
    ws = root / "ws"
    for i in range(files):
        d = ws / f"pkg{i % 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"# module {i}\n" + "x = 1\n" * 40)
    store = BlobStore(ws)
    pts = Points(store)
    cap = Capture(store, Fingerprinter(ws, watch=watch))
    print(f"-- the fingerprint {'watches (inotify, as a session)' if watch else 'walks'}")

    def point() -> tuple[float, int, int]:
        t = time.perf_counter()
        m = cap.take()
        p = pts.next_delta(
            Point(id=str(len(pts.points)), at="turn"), m, (cap.moved_from, cap.moved)
        )
        took = (time.perf_counter() - t) * 1000
        pts.add(p)
        return took, cap.bytes_stored, len(json.dumps(p.dump()))

    time.sleep(0.2)  # past the fingerprint's racy window: the stat cache serves the next scans
    cold = point()
    print(f"first point ({files:,} files, cold): {cold[0]:.0f} ms, {cold[1]:,} blob bytes")
    time.sleep(0.2)
    warm = []
    for r in range(5):
        for i in range(changed):
            (ws / f"pkg{i % 100}" / f"m{i}.py").write_text(f"# round {r} change {i}\n")
        time.sleep(0.15)
        warm.append(point())
    ms = sorted(w[0] for w in warm)[len(warm) // 2]
    scans = []
    for _ in range(5):
        t = time.perf_counter()
        cap.fp.scan()
        scans.append((time.perf_counter() - t) * 1000)
    print(
        f"of which the fingerprint's own scan (nothing changed, median of 5, {cap.fp.method}):"
        f" {sorted(scans)[2]:.1f} ms (the turn pays it anyway: it scans at its start)"
    )
    print(
        f"a turn's point ({changed} of {files:,} files changed, median of 5): {ms:.1f} ms,"
        f" {warm[-1][1]:,} blob bytes + a {warm[-1][2]:,}-byte record in the log;"
        f" {cap.looked_at:,} paths looked at ({cap.fp.method})"
    )
    cap.fp.close()
    git = shutil.which("git")
    if watch:
        shutil.rmtree(root, ignore_errors=True)
        return
    if git is None:
        print("shadow git: git not installed, not measured")
        return
    env = {**os.environ, "GIT_DIR": str(root / "shadow.git"), "GIT_WORK_TREE": str(ws)}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b")
    env["GIT_COMMITTER_EMAIL"] = "b@b"

    def git_point() -> tuple[float, int]:
        before = _du(root / "shadow.git")
        t = time.perf_counter()
        subprocess.run([git, "add", "-A"], env=env, check=True, capture_output=True)
        subprocess.run(
            [git, "commit", "-qm", "p", "--allow-empty"], env=env, check=True, capture_output=True
        )
        return (time.perf_counter() - t) * 1000, _du(root / "shadow.git") - before

    subprocess.run([git, "init", "-q"], env=env, check=True)
    subprocess.run([git, "config", "gc.auto", "0"], env=env, check=True)
    (ws / ".gitignore").write_text(".cerveau/\n")
    g_cold = git_point()
    runs = []
    for r in range(5):
        for i in range(changed):
            (ws / f"pkg{i % 100}" / f"m{i}.py").write_text(f"# git round {r} change {i}\n")
        runs.append(git_point())
    g_ms = sorted(x[0] for x in runs)[2]
    print(
        f"shadow git: first commit {g_cold[0]:.0f} ms; a turn's commit ({changed} changed,"
        f" median of 5): {g_ms:.1f} ms, {runs[-1][1]:,} bytes added to the shadow repository"
    )
    shutil.rmtree(root, ignore_errors=True)


def _du(p: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(p):
        for n in names:
            try:
                total += os.lstat(os.path.join(dirpath, n)).st_size
            except FileNotFoundError:
                pass
    return total


def prompt_cost(tokens: int, n_ctx: int) -> None:
    from cerveau_tui.bus import Emitter, Recorder
    from cerveau_tui.config import load_settings
    from cerveau_tui.protocol import EventType
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    loc = locate(stack_paths())
    assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-rewind-srv-"))
    ws = root / "ws"
    ws.mkdir()
    server = managed_for(stack_paths(root / "cache"), loc.binary, loc.model, n_ctx)
    server.start(timeout_s=120.0)
    try:
        env = {"CERVEAU_TEMPERATURE": "0", "CERVEAU_MAX_TOKENS": "16"}
        settings = load_settings(ws, environ=env, user_config=root / "none.toml")
        settings.limits.max_iterations = 1
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(server.url))
        try:
            sentence = "The harbour was quiet and the boats were tied up for the night. "

            def usage(task: str) -> dict[str, Any]:
                n = len(rec.of(EventType.USAGE))
                s.engine.run(task)
                return dict(rec.of(EventType.USAGE)[n].payload)

            first = usage(sentence * max(1, tokens // 14) + "\nSay hello.")
            second = usage("Say goodbye.")
            assert s.rewinder is not None
            s.rewinder.rewind(2, "both")
            after = usage("Say it another way.")
        finally:
            s.close()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    for name, u in (("turn 1", first), ("turn 2", second), ("first after rewind", after)):
        print(f"{name}: prompt_n {u.get('prompt_n'):,} evaluated, cache_n {u.get('cache_n'):,}")


def prompt_cost_probe(n_ctx: int) -> None:
    """(c) The figure through the cache probe (cerveau_tui/testing/rewind_probe.py)."""
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for
    from cerveau_tui.testing import rewind_probe

    loc = locate(stack_paths())
    assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-rewind-probe-"))
    server = managed_for(stack_paths(root / "cache"), loc.binary, loc.model, n_ctx)
    server.start(timeout_s=120.0)
    try:
        print(f"-- the cache probe, real llama-server ({loc.model.name}, -c {n_ctx})")
        for way in (rewind_probe.live, rewind_probe.resumed):
            cost = way(server.url, root)
            t2 = cost.turn2_first
            print(
                f"turn 2's first request (the point rewound to, then its task):"
                f" {t2.prompt_n:,} evaluated, {t2.cache_n:,} reused"
            )
            print(cost.line())
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--server", action="store_true", help="(b): the real llama-server")
    ap.add_argument(
        "--real",
        action="store_true",
        help="(c): the real llama-server through the cache probe, live and after a resume",
    )
    ap.add_argument("--skip-points", action="store_true", help="(a) not measured")
    ap.add_argument("--tokens", type=int, default=3000)
    ap.add_argument("--n-ctx", type=int, default=8192)
    args = ap.parse_args()
    if not args.skip_points:
        checkpoint_cost(args.files, args.changed, watch=True)
        checkpoint_cost(args.files, args.changed)
    if args.server:
        prompt_cost(args.tokens, args.n_ctx)
    if args.real:
        prompt_cost_probe(args.n_ctx)


if __name__ == "__main__":
    main()
