#!/usr/bin/env bash
# Make this checkout runnable: apt packages, .venv, the package, its test extras and the prebuilt
# llama.cpp server wheel (the `embedded` extra). Safe to run again; a second run only checks
# (dpkg -s, a stamp of pyproject.toml) and returns. The model (SmolLM2) is provisioned by the app
# on first use or by `python -m cerveau_tui.stack provision`, with progress.
# One line per phase; pip's own chatter stays out (-q, and this machine's pip config names index
# folders that do not exist: pip printed a "WARNING: Location ... is ignored" pair per package).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
say() { echo "[setup] $*" >&2; }

apt_install() {
    local missing=() p sudo
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ "${#missing[@]}" -gt 0 ] || return 0
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1; then
        sudo=(sudo -n)
    else
        sudo=(false)
    fi
    say "apt: installing ${missing[*]}"
    # update only when something is missing: a warm machine never touches the network here.
    if ! { "${sudo[@]}" apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
        say "WARNING: could not install ${missing[*]} (not root and no sudo?). Install them yourself:"
        say "  apt-get install -y ${missing[*]}"
    fi
}

# pip, quiet: its errors still show, minus the ignored-location warnings.
pip_quiet() {
    local rc
    set +e
    .venv/bin/python -m pip -q --disable-pip-version-check "$@" 2>&1 |
        grep -v -E "^WARNING: Location '.*' is ignored" >&2
    rc=${PIPESTATUS[0]}  # pip's status, not grep's (which fails when nothing is left to show)
    set -e
    return "$rc"
}

# bubblewrap: the sandbox; tmux: TUI tests drive the app in a real terminal; python3-venv:
# `python3 -m venv` on Debian needs it. cmake/g++/make only below, when the wheel cannot serve.
apt_packages=(bubblewrap tmux python3-venv)
# nodejs/npm: the JavaScript/TypeScript stack's checks (adapters/node.py). Only when no `node` is
# on PATH: a machine with nodesource's nodejs already has npm, and Debian's npm conflicts with it.
command -v node >/dev/null 2>&1 || apt_packages+=(nodejs npm)
apt_install "${apt_packages[@]}"

python="${CERVEAU_PYTHON:-}"
if [ -z "$python" ]; then
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
    done
fi
# A .venv this user cannot use as it is: copied with the clone from another user or folder, or
# made by a Python that is gone. Seen: a clone copied with its .venv to another user failed with
# a bare "Permission denied" (its scripts' #! lines named the first owner's folder). It is moved
# aside (renaming needs only this folder's write permission, not the other owner's files) and a
# new one is made, with one sentence.
venv_problem() {
    [ -e .venv ] || [ -L .venv ] || return 1
    if [ ! -O .venv ]; then
        echo "was made by $(stat -c %U .venv 2>/dev/null || echo 'another user')"
    elif ! .venv/bin/python -c '' >/dev/null 2>&1; then
        echo "has a Python that no longer runs here"
    elif [ -f .venv/bin/cerveau ] && [ "$(head -n1 .venv/bin/cerveau)" != "#!$root/.venv/bin/python" ]; then
        echo "was made in another folder ($(head -n1 .venv/bin/cerveau | cut -c3-))"
    else
        return 1
    fi
}
if why="$(venv_problem)"; then
    aside=".venv.old-$(date +%Y%m%d-%H%M%S)"
    if mv .venv "$aside" 2>/dev/null; then
        say "venv: .venv $why; moved it to $aside and making a new one"
    else
        say "venv: .venv $why and cannot be moved aside here; remove it (or make a fresh clone) and run again"
        exit 1
    fi
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { say "Python 3.11+ is required (found $("$python" --version 2>&1))"; exit 1; }
    say "venv: creating .venv with $python"
    "$python" -m venv .venv
fi

# Reinstall only when pyproject.toml changed: `pip install -e` costs seconds even when satisfied.
stamp=".venv/.cerveau-setup-stamp"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $(.venv/bin/python -V 2>&1)"
if [ ! -x .venv/bin/cerveau ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "packages: cerveau-tui, its test tools and the prebuilt llama.cpp server into .venv"
    if ! pip_quiet install -e '.[test,embedded]'; then
        # The wheel is x86-64 Linux only, and an index may not carry it: the rest still installs,
        # and the first start builds llama-server from source instead (it says so).
        pip_quiet install -e '.[test]' ||
            { say "packages: pip could not install cerveau-tui into .venv (its error is above)"; exit 1; }
        say "packages: the prebuilt server wheel did not install; the first start builds llama-server from source"
    fi
    echo "$want" > "$stamp"
fi

# The source build is the fallback only: its compilers are wanted when no server will be found
# (no llama-server on PATH or in $CERVEAU_LLAMA_SERVER, no wheel, no cached build).
if [ -z "${CERVEAU_LLAMA_SERVER:-}" ] && ! command -v llama-server >/dev/null 2>&1 &&
   ! .venv/bin/python -c 'import sys; from cerveau_tui.stack.provision import locate; from cerveau_tui.stack.paths import stack_paths; sys.exit(locate(stack_paths()).binary is None)' 2>/dev/null; then
    say "server: no prebuilt server here; the first start builds llama-server from source (needs cmake, g++, make)"
    apt_install cmake g++ make
fi
