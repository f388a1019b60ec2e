#!/usr/bin/env bash
# The real terminal path: run `cerveau` in tmux against a real llama-server, type a task with
# send-keys, read the screen with capture-pane, check it, quit with Ctrl+Q and check the app
# exited cleanly. The headless Pilot tests never touch a real pty; this does.
#
#   scripts/tmux_smoke.sh [SERVER_URL]     # default: `cerveau stack up --json` (then `stack down`)
#   scripts/tmux_smoke.sh --managed        # no server: the app provisions and stops its own
#
# Prints every capture it checks; exits non-zero on the first failed check.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
SESSION="cerveau-smoke-$$"
WS="$(mktemp -d /tmp/cerveau-smoke-ws.XXXXXX)"
OUT="$(mktemp -d /tmp/cerveau-smoke-out.XXXXXX)"
STARTED_STACK=0
SERVER_ARGS=()

cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    if [ "$STARTED_STACK" = 1 ]; then
        (cd "$ROOT" && "$PY" -m cerveau_tui.cli stack down --json >/dev/null 2>&1) || true
    fi
}
trap cleanup EXIT

MANAGED=0
servers() { pgrep -x llama-server 2>/dev/null | sort || true; }
SERVERS_BEFORE="$(servers)"
if [ "${1:-}" = "--managed" ]; then
    MANAGED=1
    echo "mode: managed (the app starts its own llama-server)"
elif [ -n "${1:-}" ]; then
    SERVER_ARGS=(--server "$1")
    echo "mode: server $1"
else
    UP="$(cd "$ROOT" && "$PY" -m cerveau_tui.cli stack up --json)"
    URL="$(echo "$UP" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["server_url"])')"
    # Stop it afterwards only if this script started it: someone else may be using theirs.
    if echo "$UP" | "$PY" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("already_running") else 1)'; then
        STARTED_STACK=0
    else
        STARTED_STACK=1
    fi
    SERVER_ARGS=(--server "$URL")
    echo "mode: stack up at $URL"
fi

printf 'def add(a, b):\n    return a - b\n' > "$WS/calc.py"

screen() { tmux capture-pane -p -t "$SESSION" > "$OUT/screen.txt"; cat "$OUT/screen.txt"; }

wait_for() {  # wait_for PATTERN SECONDS: poll the screen until PATTERN shows
    local pattern="$1" seconds="$2" i
    for ((i = 0; i < seconds * 2; i++)); do
        if tmux capture-pane -p -t "$SESSION" | grep -qE "$pattern"; then
            return 0
        fi
        sleep 0.5
    done
    echo "--- timed out waiting for /$pattern/; the screen was:"
    screen
    return 1
}

check() {  # check PATTERN WHAT
    if grep -qE "$1" "$OUT/screen.txt"; then echo "ok: $2"; else echo "FAIL: $2 (/$1/ not on screen)"; exit 1; fi
}

tmux new-session -d -s "$SESSION" -x 120 -y 36 \
    "cd '$ROOT' && TERM=xterm-256color CERVEAU_LIMITS__MAX_ITERATIONS=4 CERVEAU_MAX_TOKENS=128 CERVEAU_CONFIG='$OUT/config.toml' '$PY' -m cerveau_tui.cli --workspace '$WS' ${SERVER_ARGS[*]:-}; echo \$? > '$OUT/exit_code'; sleep 30"

wait_for "sandbox: " 180
wait_for "^ ready " 300
echo "=== after start-up"; screen
check "sandbox: (bubblewrap|landlock|none)" "the status bar says which sandbox backend runs"
check "SmolLM2|gguf" "the status bar names the model"

tmux send-keys -t "$SESSION" -l "Reply with one short sentence: what does calc.py do?"
tmux send-keys -t "$SESSION" Enter
wait_for "what does calc.py do" 30
echo "ok: the prompt shows in the chat"
# The turn runs; a tool call may ask for approval: deny it with a reason, as a person would.
# The WORK is bounded (4 rounds of a 128-token cap, which a cut call's retry doubles: 1,920 tokens
# at most), not the time: at the derived 1,024 cap a 20-step commit_plan, cut and retried at
# 2,048, was still writing after 11 min on 2 cores loaded 5 times over. The wait below is only a
# backstop far past that work.
for _ in $(seq 1 1200); do  # up to 10 min
    if tmux capture-pane -p -t "$SESSION" | grep -q "Allow "; then
        sleep 1
        tmux send-keys -t "$SESSION" n
        tmux send-keys -t "$SESSION" -l "just answer in text"
        tmux send-keys -t "$SESSION" Enter
    fi
    if tmux capture-pane -p -t "$SESSION" | grep -qE "^ ready .*[0-9]+\.[0-9] tok/s"; then
        break
    fi
    sleep 0.5
done
echo "=== after the turn"; screen
check "^ ready .*[0-9]+\.[0-9] tok/s" "the turn ended and the status bar shows tokens/s"
check "ctx [0-9,]+/[0-9,]+ \([0-9]+%\)" "the status bar shows the context used of n_ctx"

tmux send-keys -t "$SESSION" C-q
for _ in $(seq 1 60); do [ -f "$OUT/exit_code" ] && break; sleep 0.5; done
if [ "$(cat "$OUT/exit_code" 2>/dev/null)" = "0" ]; then
    echo "ok: Ctrl+Q quit the app with exit code 0"
else
    echo "FAIL: the app did not exit cleanly after Ctrl+Q (exit code: $(cat "$OUT/exit_code" 2>/dev/null || echo none))"
    screen
    exit 1
fi
if [ "$MANAGED" = 1 ]; then
    LEFT="$(comm -13 <(echo "$SERVERS_BEFORE") <(servers) | tr '\n' ' ')"
    if [ -n "${LEFT// /}" ]; then
        echo "FAIL: llama-server started by the app still running after quit: $LEFT"
        exit 1
    fi
    echo "ok: the app's own llama-server stopped on quit"
fi
echo "smoke passed (screens in $OUT)"
