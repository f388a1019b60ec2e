"""What a server's result points at is never opened by the harness: a resource link, an embedded
resource without text, an image block, a path in text or structuredContent naming the person's
home. The planted home's secret is what must not reach the model; and a name the model crafts
reaches no server (nothing is called: the server's marker file, checked on the host)."""

from __future__ import annotations

import json

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.hub import McpHub, UnknownTool

from .conftest import SECRET, Box
from .one_tool_server import install

#: argv: the planted home, the marker a call writes.
POINTERS = """    open(sys.argv[2], "w").write("called")
    f = "file://" + sys.argv[1] + "/notes.txt"
    return {"content": [
        {"type": "resource_link", "uri": f, "name": "n"},
        {"type": "resource", "resource": {"uri": f, "mimeType": "text/plain"}},
        {"type": "resource", "resource": {"uri": f, "blob": "AAAA"}},
        {"type": "image", "data": "", "mimeType": "image/png", "uri": f},
        {"type": "text", "text": "see " + f},
    ], "structuredContent": {"path": sys.argv[1] + "/.ssh/id_rsa"}}"""


def _hub(box: Box) -> McpHub:
    srv = install(box.root / "srv" / "r-mcp", POINTERS)
    return box.hub(
        r=McpServerConfig(command=str(srv), args=[str(box.home), str(box.ws / "called")])
    )


def test_a_result_pointing_at_a_file_is_shown_as_its_address_never_read(box: Box) -> None:
    hub = _hub(box)
    out = hub.call("r", "t", {}, 16000)
    assert "[resource file://" in out.text and "[image image/png" in out.text
    assert SECRET not in out.text


@pytest.mark.parametrize("server", ["r ", "R", "\uff52", "r\u200b", "../r", "r/../r", "srv"])
def test_a_crafted_server_name_calls_nothing(box: Box, server: str) -> None:
    hub = _hub(box)
    with pytest.raises(UnknownTool):
        hub.call(server, "t", {}, 16000)
    with pytest.raises(UnknownTool):
        hub.call("r", json.loads('"t\\u0000"'), {}, 16000)
    assert not (box.ws / "called").exists()
    hub.call("r", "t", {}, 16000)  # the control: the right names call it
    assert (box.ws / "called").exists()
