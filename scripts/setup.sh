#!/usr/bin/env bash
# Make this checkout runnable: apt packages, .venv, the package and its test extras.
# Safe to run again; a second run only checks (dpkg -s, a stamp of pyproject.toml) and returns.
# The model stack (llama-server + SmolLM2) is provisioned separately, by the app on first use or
# by `python -m cerveau_tui.stack provision`, because it can take minutes and shows progress.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
say() { echo "[setup] $*" >&2; }

# bubblewrap: the sandbox; tmux: TUI tests drive the app in a real terminal; cmake/g++/make: the
# one-time llama-server build; python3-venv: `python3 -m venv` on Debian needs it.
apt_packages=(bubblewrap tmux cmake g++ make python3-venv)
# nodejs/npm: the JavaScript/TypeScript stack's checks (adapters/node.py). Only when no `node` is
# on PATH: a machine with nodesource's nodejs already has npm, and Debian's npm conflicts with it.
command -v node >/dev/null 2>&1 || apt_packages+=(nodejs npm)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1; then
        sudo=(sudo -n)
    else
        sudo=(false)
    fi
    say "installing apt packages: ${missing[*]}"
    # update only when something is missing: a warm machine never touches the network here.
    if ! { "${sudo[@]}" apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; then
        say "WARNING: could not install ${missing[*]} (not root and no sudo?). Install them yourself:"
        say "  apt-get install -y ${missing[*]}"
    fi
fi

python="${CERVEAU_PYTHON:-}"
if [ -z "$python" ]; then
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
    done
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { say "Python 3.11+ is required (found $("$python" --version 2>&1))"; exit 1; }
    say "creating .venv with $python"
    "$python" -m venv .venv
fi

# Reinstall only when pyproject.toml changed: `pip install -e` costs seconds even when satisfied.
stamp=".venv/.cerveau-setup-stamp"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $(.venv/bin/python -V 2>&1)"
if [ ! -x .venv/bin/cerveau ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "installing cerveau-tui and test dependencies into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
    echo "$want" > "$stamp"
fi
