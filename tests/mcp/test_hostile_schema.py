"""A server's inputSchema is the server's bytes: checking arguments against it must cost the
harness bounded work, and a schema too big to check sends nothing (the server's marker file,
written on any tools/call, is checked on the host)."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.schema import MAX_STEPS, check
from cerveau_tui.mcp.tools import McpCall
from cerveau_tui.tools.base import ToolError

from .conftest import Box
from .one_tool_server import install

#: A schema of four options that each refer back to the whole: 4^16 visits within the depth
#: bound. Before the step budget it held the harness's thread at full CPU on the first call.
BOMB = {"anyOf": [{"$ref": "#"}] * 4}
#: The bound of a broken run (a hang), not a measurement.
PATIENCE_S = 120.0

CALLED = """    open(sys.argv[1], "w").write("called")
    return {"content": [{"type": "text", "text": "called"}]}"""


def _bounded(fn: Any) -> Any:
    """fn() on a thread, given PATIENCE_S: what it returned, or what it raised."""
    got: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            got.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - raised again on the test's thread
            got.append((False, exc))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(PATIENCE_S)
    assert got, f"did not return within {PATIENCE_S:g} s"
    returned, value = got[0]
    if not returned:
        raise value
    return value


def test_a_self_referring_schema_is_refused_within_the_step_budget() -> None:
    assert _bounded(lambda: check(BOMB, 1)) == [
        f"the tool's schema takes more than {MAX_STEPS} steps to check; not checked"
    ]


def test_an_ordinary_schema_with_a_long_array_is_still_checked() -> None:
    schema = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": {"type": "integer"}}},
    }
    assert check(schema, {"xs": list(range(999))}) == []
    assert check(schema, {"xs": [*range(999), "x"]}) == [
        "arguments.xs[999]: expected integer, got string"
    ]


def test_a_servers_schema_bomb_costs_bounded_work_and_sends_nothing(box: Box) -> None:
    marker = box.ws / "called.txt"
    srv = install(box.root / "srv" / "bomb-mcp", CALLED, BOMB)
    hub = box.hub(bomb=McpServerConfig(command=str(srv), args=[str(marker)]))
    assert [t.name for _, t in hub.catalogue()] == ["t"]
    tool = McpCall(hub)
    args = tool.Args(server="bomb", tool="t", arguments={"x": 1})
    ctx = SimpleNamespace(output_cap=16_000, cancel=None, workspace=box.ws)

    def call() -> str:
        with pytest.raises(ToolError) as refused:
            tool.run(args, ctx)  # type: ignore[arg-type]
        return str(refused.value)

    said = _bounded(call)
    assert "nothing was sent" in said and "steps to check" in said
    assert not marker.exists()  # the server was never called


#: Before each answer, one line of JSON nested deeper than Python's parser recurses.
NESTED = """    sys.stdout.write("[" * 100000 + "]" * 100000 + "\\n")
    return {"content": [{"type": "text", "text": "answered"}]}"""


def test_a_line_nested_too_deep_is_skipped_and_the_answer_after_it_read(box: Box) -> None:
    """Before: RecursionError ended the reader thread; the call waited out its timeout."""
    srv = install(box.root / "srv" / "deep-mcp", NESTED)
    hub = box.hub(deep=McpServerConfig(command=str(srv), timeout_s=PATIENCE_S))
    out = _bounded(lambda: hub.call("deep", "t", {}, 16_000))
    assert (out.ok, out.text) == (True, "answered")
    assert _bounded(lambda: hub.call("deep", "t", {}, 16_000)).text == "answered"  # still alive
