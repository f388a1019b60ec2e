"""The prebuilt server wheel against the source build (issue 34). No assertions; prints figures.

1. Cold: an empty cache (`CERVEAU_CACHE_DIR` = a new folder), this venv as it is: seconds from
   nothing to a server answering /health (`stack provision`, then `stack up`: the model's wheel
   downloaded and unzipped, the server started), each in its own process as a person runs them.
   With `--pip` also `pip install xllamacpp` into a fresh scratch venv (the wheel's share of a
   first set-up).
2. Speed: the wheel's server and the source-built llama-server (the cached build, found with
   `use_wheel=False`) on the same model, n_ctx, prompt and seed, alternated N rounds; median
   prompt and generation tokens/s of each and their ratio, in one run.

    .venv/bin/python benchmarks/prebuilt_server.py [--rounds N] [--pip] [--cold-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from cerveau_tui.stack import keys, wheel
from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import locate
from cerveau_tui.stack.server import ManagedServer

PROMPT = (
    "Write a short Python function that returns the n-th Fibonacci number, then explain in two "
    "sentences how it works. " * 3
)


def stack(cache: Path, *args: str) -> float:
    env = {**os.environ, "CERVEAU_CACHE_DIR": str(cache)}
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "cerveau_tui.stack", *args], env=env, check=True, cwd="/",
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - t0


def cold(cache: Path) -> None:
    shutil.rmtree(cache, ignore_errors=True)
    t_prov = stack(cache, "provision")
    t_up = stack(cache, "up", "--n-ctx", "4096")
    try:
        url = [r for r in _records(cache)][0]
        assert httpx.get(url + "/health", timeout=5).status_code == 200
    finally:
        stack(cache, "down")
    print(f"cold (empty {cache}, this venv): provision {t_prov:.1f} s + up to /health {t_up:.1f} s"
          f" = {t_prov + t_up:.1f} s")  # fmt: skip


def _records(cache: Path) -> list[str]:
    from cerveau_tui.stack.state import live_records

    return [r.url for r in live_records(cache / "run")]


def pip_install() -> None:
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-m", "venv", d], check=True)
        t0 = time.perf_counter()
        subprocess.run(
            [f"{d}/bin/python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "--no-deps", wheel.REQ], check=True, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"pip install {wheel.REQ} into a fresh venv: {time.perf_counter() - t0:.1f} s")


def measure(url: str, seed: int) -> tuple[float, float]:
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 128,
        "temperature": 0,
        "seed": seed,
        "cache_prompt": False,  # every round reads the whole prompt: prompt speed, not cache
        "ignore_eos": True,
    }
    r = httpx.post(url + "/v1/chat/completions", json=body, timeout=300,
                   headers=keys.headers_for(url))  # fmt: skip
    r.raise_for_status()
    t = r.json()["timings"]
    return float(t["prompt_per_second"]), float(t["predicted_per_second"])


def speed(rounds: int) -> None:
    paths = stack_paths()
    wheel_loc = locate(paths)
    build_loc = locate(paths, use_wheel=False)
    if wheel_loc.source != "wheel" or build_loc.source != "build":
        print(f"speed: needs the wheel and a cached source build ({wheel_loc.source}, "
              f"{build_loc.source}); run `stack provision --source-build` once")  # fmt: skip
        return
    assert wheel_loc.binary and build_loc.binary and wheel_loc.model
    results: dict[str, list[tuple[float, float]]] = {"wheel": [], "build": []}
    with tempfile.TemporaryDirectory() as tmp:
        servers = {
            name: ManagedServer(loc.binary, wheel_loc.model, n_ctx=4096,  # type: ignore[arg-type]
                                log_path=Path(tmp) / f"{name}.log", check_capabilities=False)
            for name, loc in (("wheel", wheel_loc), ("build", build_loc))
        }  # fmt: skip
        try:
            for s in servers.values():
                s.start(timeout_s=120)
            for s in servers.values():
                measure(s.url, 0)  # warm-up round, not counted
            for i in range(rounds):
                # One server at a time, alternating: they never compete for the two cores.
                for name, s in servers.items():
                    results[name].append(measure(s.url, i))
        finally:
            for s in servers.values():
                s.stop()
    med = {n: (statistics.median(p for p, _ in r), statistics.median(g for _, g in r))
           for n, r in results.items()}  # fmt: skip
    for name, (pp, tg) in med.items():
        print(f"{name:5s}: prompt {pp:7.1f} tok/s, generation {tg:6.1f} tok/s (median of {rounds})")
    print(f"ratio wheel/build: prompt {med['wheel'][0] / med['build'][0]:.2f}, "
          f"generation {med['wheel'][1] / med['build'][1]:.2f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pip", action="store_true")
    ap.add_argument("--cold-dir", type=Path, default=Path("/tmp/newcache"))
    ap.add_argument("--no-cold", action="store_true")
    args = ap.parse_args()
    if args.pip:
        pip_install()
    if not args.no_cold:
        cold(args.cold_dir)
    speed(args.rounds)


if __name__ == "__main__":
    main()
