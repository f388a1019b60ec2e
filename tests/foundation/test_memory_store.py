"""The memory database is never opened through a link planted in `.cerveau/`."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.memory.store import MemoryStore


def test_a_planted_cerveau_link_receives_no_database(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (ws / ".cerveau").symlink_to(out)
    m = MemoryStore(ws)
    m.add("fact", "tests run with pytest")
    m.close()
    assert list(out.iterdir()) == []
    assert (ws / ".cerveau" / "memory.sqlite").is_file()
    assert [x.path for x in m.moved_aside] == [".cerveau"]


def test_a_planted_database_link_leaves_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "ws" / ".cerveau").mkdir(parents=True)
    (tmp_path / "ws" / ".cerveau" / "memory.sqlite").symlink_to(victim)
    m = MemoryStore(tmp_path / "ws")
    m.add("lesson", "read before editing")
    assert m.recent() == [("lesson", "read before editing")]
    m.close()
    assert victim.read_text() == "precious\n"
    assert [x.moved_to for x in m.moved_aside] == [".cerveau/memory.sqlite.suspect-1"]
