"""The done gate, with and without, on scripted scenarios: iterations to green, tokens, false "done".

Each scenario is a scripted model (the same script in both modes) working on a real tiny Python
project with a real pytest gate, run through the real CLI (`cerveau run --json`) against the
scripted server. "Without" is the same workspace config with `[done] enabled = false`.

After each run the ORIGINAL tests are put back and run independently; a run that ended claiming
completion while they fail is a false "done". One that also surfaced nothing (no unmet criteria,
no protected path written) is a silent false done, the kind a person cannot see.

Issue 14 adds the gate a new user gets without writing any config: "auto" is the same project
with NO `.cerveau/config.toml` and `cerveau run --gate auto` (the detected pytest check, the
adapter's tests protected), with polish on green (the default), and "auto, no polish" the same
with `CERVEAU_DONE__POLISH=false`. The polish column says what became of each polish round.
Issue 22 adds "default": no config and no flag at all, what `cerveau run` does out of the box
(the detected gate since issue 22), and "undecided", the same with `CERVEAU_DONE__GATE=""`: the
gate left undecided, which was the headless default before (no check, the detected one offered).

    .venv/bin/python benchmarks/gate.py [MODE ...]   # all modes, or only the ones named
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402

GATE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_sub():\n    assert sub(5, 2) == 3\n\n\ndef test_mul():\n    assert mul(2, 4) == 8\n"
)
WEAK = "def test_nothing():\n    assert True\n"
ONE_FIXED = FIXED.split("\n\n\ndef sub")[0] + "\n\n\ndef sub" + CALC.split("\n\n\ndef sub")[1]
TWO_FIXED = ONE_FIXED.replace("return a + b\n\n\ndef mul", "return a - b\n\n\ndef mul")
SPRAYED = "def add(a, b):\n    return 0\n\n\ndef sub(a, b):\n    return 0\n\n\ndef mul(a, b):\n    return 0\n"


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def say(text: str) -> dict[str, Any]:
    return {"content": text}


SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "fixes first try": [write("calc.py", FIXED), say("Fixed all three.")],
    "claims done early": [say("Done, it should work now."), write("calc.py", FIXED), say("Fixed.")],
    "slow, one per cycle": [
        write("calc.py", ONE_FIXED),
        say("Fixed add."),
        write("calc.py", TWO_FIXED),
        say("Fixed sub."),
        write("calc.py", FIXED),
        say("Fixed mul."),
    ],
    "weakens the test": [write("tests/test_calc.py", WEAK), say("Tests pass.")],
    "regresses after near-green": [
        write("calc.py", ONE_FIXED),
        say("Fixed add."),
        write("calc.py", SPRAYED),
        say("Simplified."),
        write("calc.py", FIXED),
        say("Fixed all."),
    ],
    "never fixes it": [say(f"I am confident it is done ({i}).") for i in range(12)],
    # Beyond the six: what polish on green is for and against. A green fix whose "tidy-up"
    # breaks it (reverted, the green result stands).
    "polish breaks it": [
        write("calc.py", FIXED),
        say("Fixed."),
        write("calc.py", SPRAYED),
        say("Tidied."),
    ],
}


MODES = ("no gate", "gate", "auto", "auto, no polish", "default", "undecided")


def make_project(ws: Path, mode: str) -> None:
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "__init__.py").write_text("")
    (ws / "tests" / "test_calc.py").write_text(TESTS)
    (ws / "calc.py").write_text(CALC)
    if mode.startswith("auto") or mode in ("default", "undecided"):
        return  # a new user's project: no harness config at all
    gate = mode == "gate"
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nenabled = {"true" if gate else "false"}\nprotected = ["tests/**"]\n'
        f'[[done.criteria]]\nname = "tests"\ncommand = "{GATE}"\n'
    )


def pristine_tests_pass(ws: Path) -> bool:
    (ws / "tests" / "test_calc.py").write_text(TESTS)
    proc = subprocess.run(GATE, shell=True, cwd=ws, capture_output=True, timeout=120)
    return proc.returncode == 0


def run(script: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cerveau-gate-") as tmp:
        ws = Path(tmp) / "ws"
        make_project(ws, mode)
        env = {**os.environ, "CERVEAU_CONFIG": str(Path(tmp) / "none.toml")}
        if mode == "auto, no polish":
            env["CERVEAU_DONE__POLISH"] = "false"
        if mode == "undecided":
            env["CERVEAU_DONE__GATE"] = ""
        flags = ["--gate", "auto"] if mode.startswith("auto") else []
        with ScriptedServer(script) as srv:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cerveau_tui",
                    "run",
                    "--json",
                    "--workspace",
                    str(ws),
                    "--server",
                    srv.url,
                    "--trust-workspace-config",  # the criteria are commands (config_tighten.py)
                    *flags,
                    "make the tests pass",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                env=env,
                cwd=ROOT,
            )
        events = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
        end = next(e["payload"] for e in reversed(events) if e["type"] == "turn_ended")
        green = pristine_tests_pass(ws)
        claimed = end["reason"] == "completed"
        surfaced = bool(end.get("unmet") or end.get("touched_protected"))
        return {
            "iterations": end["iterations"],
            "tokens": sum(end.get("usage", {}).values()),
            "reason": end["reason"],
            "green": green,
            "false_done": claimed and not green,
            "silent_false_done": claimed and not green and not surfaced,
            "verification": end.get("verification") or "-",
            "polish": ",".join(e["payload"]["result"] for e in events if e["type"] == "polish")
            or "-",
        }


def main() -> int:
    modes = [m for m in MODES if m in sys.argv[1:]] or list(MODES)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    for name, script in SCENARIOS.items():
        for mode in modes:
            rows.append((name, mode, run(script, mode)))
    head = (
        f"{'scenario':28} {'mode':15} {'iters':>5} {'tokens':>7} {'green':>5}  {'reason':11} "
        f"{'seal':11} {'polish':8} false-done"
    )
    print(head)
    print("-" * len(head))
    for name, mode, r in rows:
        flag = "SILENT" if r["silent_false_done"] else ("yes" if r["false_done"] else "no")
        print(
            f"{name:28} {mode:15} {r['iterations']:>5} {r['tokens']:>7} {str(r['green']):>5}  "
            f"{r['reason']:11} {r['verification']:11} {r['polish']:8} {flag}"
        )
    print()
    for mode in modes:
        sel = [r for _, m, r in rows if m == mode]
        greens = [r for r in sel if r["green"]]
        iters = sum(r["iterations"] for r in greens) / max(1, len(greens))
        print(
            f"{mode:15}: green {len(greens)}/{len(sel)}, mean iterations to green {iters:.1f}, "
            f"tokens {sum(r['tokens'] for r in sel)}, false done {sum(r['false_done'] for r in sel)} "
            f"(silent {sum(r['silent_false_done'] for r in sel)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
