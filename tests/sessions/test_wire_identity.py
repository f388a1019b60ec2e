"""The bytes sent to llama-server for one scripted conversation are the ones the code sent before
the history became typed (captured then from the scripted server: data/wire_before.json, made by
wire_scenario.py). The prefix cache is keyed on those bytes: a key order, a space or a wording
changed in the derivation of the wire dicts would re-evaluate every resumed session whole."""

from __future__ import annotations

import json
from pathlib import Path

from .wire_scenario import capture

BEFORE = Path(__file__).parent / "data" / "wire_before.json"


def _messages(body: str) -> str:
    """The request's messages as sent, byte for byte: what the history derives. (The tool
    schemas beside them belong to the tools, whose own changes are not this test's business.)"""
    start = body.index('"messages": ')
    end = body.index(', "tools": ', start) if '"tools": ' in body[start:] else len(body) - 1
    return body[start:end]


def test_a_scripted_sessions_requests_are_byte_identical_to_before(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    before = json.loads(BEFORE.read_text())
    now = capture(ws)
    assert len(now) == len(before)
    for i, (was, is_) in enumerate(zip(before, now, strict=True)):
        assert _messages(is_) == _messages(was), f"request {i} differs"


def test_each_request_extends_the_one_before_it(tmp_path: Path) -> None:
    """Append-only on the wire: request n's messages start with request n-1's, byte for byte."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sent = [json.loads(b)["messages"] for b in capture(ws)]
    for prev, cur in zip(sent, sent[1:], strict=False):
        assert [json.dumps(m) for m in cur[: len(prev)]] == [json.dumps(m) for m in prev]
