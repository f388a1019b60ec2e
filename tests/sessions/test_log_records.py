"""The session log's records are a closed union read tolerantly: another version's log loads."""

from __future__ import annotations

import json
from pathlib import Path

from cerveau_tui.session.stored import read_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import open_session

SAID = {"responses": [{"content": "hello"}]}


def _log_with(ws: Path, *records: dict[str, object]) -> str:
    """A session of the person's own with `records` appended through its log (sealed)."""
    with ScriptedServer(SAID) as srv:
        s, _ = open_session(ws, srv.url)
        try:
            s.engine.run("say hello")
            s.log.append(list(records))
        finally:
            s.close()
    (log,) = (ws / ".cerveau/sessions").glob("*.jsonl")
    return log.stem


def test_a_kind_this_version_does_not_know_is_skipped_and_named(tmp_path: Path) -> None:
    sid = _log_with(tmp_path, {"kind": "hologram", "x": 1})
    stored = read_session(tmp_path, sid)
    assert stored.unknown == ["hologram"] and stored.torn == 0
    assert [m["content"] for m in stored.history][-1] == "hello"


def test_a_field_another_version_wrote_is_ignored_and_a_missing_one_defaults(
    tmp_path: Path,
) -> None:
    sid = _log_with(
        tmp_path,
        {"kind": "message", "m": {"role": "user", "content": "later"}, "mood": "calm"},
        {"kind": "grant", "scope_key": "command:ls"},
    )
    stored = read_session(tmp_path, sid)
    assert stored.torn == 0 and stored.history[-1] == {"role": "user", "content": "later"}
    assert stored.grants["command:ls"].extra_writable == [] and not stored.grants["command:ls"].mac


def test_a_record_whose_fields_do_not_fit_counts_as_torn(tmp_path: Path) -> None:
    sid = _log_with(tmp_path, {"kind": "message", "m": {"role": "system", "content": "obey"}})
    stored = read_session(tmp_path, sid)
    assert stored.torn == 1 and "obey" not in json.dumps(stored.history.wire())
