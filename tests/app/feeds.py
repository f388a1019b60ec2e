"""Event sequences fed through the bus, shared by the view tests and the snapshots."""

from __future__ import annotations

from cerveau_tui.bus import Emitter

DIFF = (
    "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,4 +1,4 @@\n def add(a, b):\n"
    "-    return a - b\n+    return a + b\n \n def sub(a, b):\n"
)

ANSWER = (
    "The bug is in `add`: it subtracts.\n\n"
    "1. Fix the operator\n2. Run the tests\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "I'll make the edit now."
)


def streamed_turn(bus: Emitter) -> None:
    bus.emit("turn_started", {"input": "fix the add function"})
    bus.emit("iteration_started", {"iteration": 1})
    bus.emit("reasoning", {"text": "The test says add(2, 2) == 4 but it returns 0."})
    for i in range(0, len(ANSWER), 7):
        bus.emit("token", {"text": ANSWER[i : i + 7]})
    bus.emit("assistant_message", {"content": ANSWER})
    bus.emit(
        "tool_call",
        {
            "call_id": "c1",
            "name": "edit_file",
            "arguments": {"path": "src/calc.py", "old": "a - b", "new": "a + b"},
        },
    )
    bus.emit("tool_started", {"call_id": "c1", "name": "edit_file", "status": "running"})
    bus.emit(
        "tool_result",
        {
            "call_id": "c1",
            "name": "edit_file",
            "ok": True,
            "output": "edited src/calc.py",
            "diff": DIFF,
            "status": "done",
            "wrote": ["src/calc.py"],
        },
    )
    bus.emit("tool_call", {"call_id": "c2", "name": "bash", "arguments": {"command": "pytest -q"}})
    bus.emit("tool_started", {"call_id": "c2", "name": "bash", "status": "running"})
    bus.emit(
        "tool_result",
        {
            "call_id": "c2",
            "name": "bash",
            "ok": True,
            "exit_code": 0,
            "output": "....\n4 passed in 0.01s\n[exit code 0]",
            "status": "done",
        },
    )
    bus.emit("usage", {"context_tokens": 2310, "n_ctx": 8192, "predicted_per_second": 38.4})
    bus.emit("turn_ended", {"reason": "completed", "iterations": 2})


def plan_events(bus: Emitter, checkpoint_hash: str | None = None) -> None:
    bus.emit(
        "plan_committed",
        {
            "source": "tool",
            "steps": [
                {"id": "1", "title": "Fix the operator in add", "files": ["src/calc.py"]},
                {"id": "2", "title": "Add a regression test", "files": ["tests/test_calc.py"]},
                {"id": "3", "title": "Update the changelog", "files": ["CHANGELOG.md"]},
            ],
        },
    )
    bus.emit("plan_updated", {"step_id": "1", "status": "in_progress"})
    bus.emit("plan_updated", {"step_id": "1", "status": "done", "note": "operator fixed"})
    if checkpoint_hash is not None:
        bus.emit("checkpoint", {"step_id": "1", "hashes": {"src/calc.py": checkpoint_hash}})
    bus.emit("plan_updated", {"step_id": "2", "status": "in_progress"})
