"""What the person and the model were told that was not what happened (issue 22, part 3), one
test each, read from the outside: the `--json` wire, the model's requests, the headless text.
(The chat's lines: tests/app/test_protocol_lines.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cerveau_tui.testing.scripted_server import ScriptedServer

from .scenario import CALC_BROKEN, GATE, call, run

MULTI_CALC = (
    "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n\n\n"
    "def mul(a, b):\n    return a + b\n"
)
MULTI_TEST = (
    "from calc import add, mul, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_sub():\n    assert sub(3, 1) == 2\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
)


def gate_project(ws: Path, calc: str, test: str) -> Path:
    for rel, text in {"calc.py": calc, "tests/__init__.py": "", "tests/test_calc.py": test}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nprotected = ["tests/**"]\n[[done.criteria]]\nname = "tests"\ncommand = "{GATE}"\n'
    )
    return ws


def texts(events: list[dict[str, Any]], needle: str) -> list[str]:
    """Every event that carries a text naming `needle`: how many times the fact went out."""
    out = []
    for e in events:
        t = e["payload"].get("text") or e["payload"].get("message") or ""
        if isinstance(t, str) and needle in t:
            out.append(e["type"])
    return out


def test_a_rollback_is_said_once(tmp_path: Path) -> None:
    ws = gate_project(tmp_path / "ws", MULTI_CALC, MULTI_TEST)
    near_green = MULTI_CALC.replace("a - b", "a + b", 1)
    sprayed = "def add(a, b):\n    return 0\n\n\ndef sub(a, b):\n    return 0\n\n\ndef mul(a, b):\n    return 0\n"
    script = [
        call("write_file", path="calc.py", content=near_green),
        {"content": "add is fixed"},
        call("write_file", path="calc.py", content=sprayed),
        {"content": "simplified"},
    ] + [{"content": "done"}] * 8
    with ScriptedServer(script) as srv:
        events = run(ws, srv.url, "make the tests pass")
    assert [e["type"] for e in events].count("rollback") == 1
    assert texts(events, "rolled back") == ["rollback"]


def test_a_protected_write_is_said_once(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    ws = gate_project(tmp_path / "ws", CALC_BROKEN, test)
    script = [
        call("write_file", path="tests/test_calc.py", content=test.replace("== 3", "== -1")),
        {"content": "Tests pass now."},
    ] + [{"content": "done"}] * 8
    with ScriptedServer(script) as srv:
        events = run(ws, srv.url, "make the tests pass")
    said = [e for e in events if e["type"] == "touched_protected"]
    assert len(said) == 1
    assert texts(events, said[0]["payload"]["text"]) == ["touched_protected"]


def test_the_model_is_never_told_about_your_last_tool(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    cut = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse "
        "error at line 1, column 40: syntax error while parsing value - invalid string: missing "
        "closing quote"
    )
    script = [{"error": {"status": 500, "message": cut}}, {"content": "ok"}]
    with ScriptedServer(script) as srv:
        run(tmp_path / "ws", srv.url, "write a long file")
        told = json.dumps(srv.requests[-1]["messages"])
    assert "was cut off" in told
    assert "your last tool`" not in told


def test_headless_text_prints_the_chat_s_lines(tmp_path: Path) -> None:
    """`cerveau run` without --json: every line the chat would show for the session's events
    (protocol/describe.py, computed here from the --json run of the same script) is printed."""
    from cerveau_tui.protocol import parse_payload
    from cerveau_tui.protocol.describe import describe

    script = [
        call("commit_plan", steps=[{"id": "1", "title": "fix add", "files": ["calc.py"]}]),
        call("write_file", path="notes.txt", content="a note\n"),
        call("write_file", path=str(tmp_path / "outside.txt"), content="x"),
        {"content": "Done."},
    ]
    lines: list[str] = []
    for name, as_json in (("a", True), ("b", False)):
        ws = tmp_path / name
        ws.mkdir()
        (ws / "calc.py").write_text(CALC_BROKEN)
        with ScriptedServer(script) as srv:
            if as_json:
                events = run(ws, srv.url, "fix add")
                for e in events:
                    line = describe(parse_payload(e["type"], e["payload"]))
                    if line and line[0]:
                        lines.append(line[0].replace(str(tmp_path / "a"), str(tmp_path / "b")))
            else:
                env = {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "no-user-config.toml")}
                cmd = [sys.executable, "-m", "cerveau_tui", "run", "--workspace", str(ws)]
                proc = subprocess.run(
                    [*cmd, "--server", srv.url, "fix add"],
                    capture_output=True, text=True, timeout=300, env=env,
                )  # fmt: skip
                printed = proc.stdout.splitlines()
    assert any(line.startswith("plan committed: 1 steps") for line in lines)
    assert any(line.startswith("drift: notes.txt") for line in lines)
    for line in lines:
        assert line in printed, (line, printed)
