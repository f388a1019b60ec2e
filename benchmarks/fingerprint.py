"""Fingerprint a 10,000-file / ~200 MB tree: cold, warm no-change, one file changed, vs git status.

    .venv/bin/python benchmarks/fingerprint.py [--dir /tmp/cerveau-bench-fp] [--repeat 5]

The harness's cost of one `bash` round, the walk (before) against inotify (after), in one run:

    .venv/bin/python benchmarks/fingerprint.py --rounds 20 --files 100000 [--json]

builds a tree like a repository (nested folders, small files, a node_modules and a build/ that
are ignored, a git repository at the root) and runs R rounds that each change 1-3 files, through
the real Bash tool, the real GuardedRunner (git guard) over NoSandbox, the progress hook's
`scan().digest` and the changed-on-disk check. Overhead = the round's wall time minus the
command's own (the runner's duration_ms). `round_context` / `bash_round` / `close_context` are
what benchmarks/scale.py imports.

The tree is generated once (random bytes, committed to git) and reused on later runs. Prints
medians; no assertions. The machine is shared and noisy: read the ratios, not the last digit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter  # noqa: E402

SMALL = 9_980
LARGE_SIZES_MIB = [2.6 + i * (13.6 - 2.6) / 19 for i in range(20)]  # 2.6 .. 13.6 MiB
MARKER = ".bench-complete"


def generate(root: Path) -> None:
    if (root / MARKER).exists():
        return
    t0 = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    rnd = os.urandom(1 << 20)
    for i in range(SMALL):
        d = root / f"pkg{i % 100:03d}" / f"mod{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        size = 1024 + (i * 7919) % (9 * 1024)
        off = (i * 104729) % ((1 << 20) - size)
        (d / f"file{i:05d}.py").write_bytes(rnd[off : off + size])
    big = root / "assets"
    big.mkdir(exist_ok=True)
    for i, mib in enumerate(LARGE_SIZES_MIB):
        (big / f"blob{i:02d}.bin").write_bytes(os.urandom(int(mib * (1 << 20))))
    git = [
        "git",
        "-c",
        "core.compression=0",
        "-c",
        "core.looseCompression=0",
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@b",
    ]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "bench"], check=True)
    (root / MARKER).write_text("")
    with open(root / ".git" / "info" / "exclude", "a") as f:
        f.write(f"{MARKER}\n")
    print(f"generated tree in {time.perf_counter() - t0:.1f}s")


def median(
    fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None
) -> float:
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=0, help="bash rounds, walk vs inotify")
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.rounds:
        from fingerprint_rounds import rounds_main

        rounds_main(a.dir or f"/tmp/cerveau-bench-rounds-{a.files}", a.files, a.rounds, a.json)
        return
    a.dir = a.dir or "/tmp/cerveau-bench-fp"
    root = Path(a.dir)
    generate(root)
    files = sum(len(fs) for d, _, fs in os.walk(root) if ".git" not in Path(d).parts)
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    print(
        f"tree: {files} files, {total / (1 << 20):.0f} MiB, warm page cache, median of {a.repeat}"
    )

    def git_status() -> None:
        subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain"], check=True, capture_output=True
        )

    git_status()  # warm git's index and the page cache
    g = median(git_status, a.repeat)

    cold = median(lambda: Fingerprinter(root).scan().digest, a.repeat)
    fp = Fingerprinter(root)
    fp.scan()
    walk = median(lambda: sum(1 for _ in fp._walk()), a.repeat)
    before = fp.hash_count
    warm = median(lambda: fp.scan().digest, a.repeat)
    warm_hashed = fp.hash_count - before

    small = root / "pkg000" / "mod0" / "file00000.py"
    big = root / "assets" / "blob19.bin"
    counter = [0]

    def touch(path: Path) -> Callable[[], None]:
        def go() -> None:
            counter[0] += 1
            with open(path, "r+b") as f:
                f.write(counter[0].to_bytes(8, "little"))

        return go

    one_small = median(lambda: fp.scan().digest, a.repeat, setup=touch(small))
    one_big = median(lambda: fp.scan().digest, a.repeat, setup=touch(big))
    git_after = median(git_status, a.repeat)
    rows = [
        ("git status --porcelain", g),
        ("git status --porcelain (tree dirty)", git_after),
        ("cold scan: walk + read + blake3 every file", cold),
        ("stat-only walk (gitignore + ignore dirs)", walk),
        (f"warm scan, nothing changed ({warm_hashed} files re-read)", warm),
        ("one small file changed", one_small),
        (f"one {big.stat().st_size / (1 << 20):.1f} MiB file changed", one_big),
    ]
    print(f"{'pass':<52} {'seconds':>8} {'x git':>7}")
    for name, secs in rows:
        print(f"{name:<52} {secs:8.3f} {secs / g:7.1f}")


if __name__ == "__main__":
    main()
