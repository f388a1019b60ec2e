"""A pre_tool hook's path glob holds against every spelling of the same path: the matcher reads
the path as the tool resolves it (contract.call_paths), checked by what landed on the host."""

from __future__ import annotations

import json
import os

from .conftest import Place, answer, call, toml_list

BLOCK = ["sh", "-c", "echo 'src is frozen' >&2; exit 2"]


def test_a_path_glob_blocks_every_spelling_of_a_path_the_tool_would_write(place: Place) -> None:
    src = place.ws / "src"
    src.mkdir()
    (src / "kept.py").write_text("original\n")
    os.symlink("src", place.ws / "lnk")
    place.config(
        f"[[hooks.pre_tool]]\ncommand = {toml_list(BLOCK)}\n"
        'match = "write_file(src/**)|edit_file(src/**)"\nwhere = "host"\n'
    )
    spellings = [
        "src/a",
        "./src/b",
        "src//c",
        str(src / "d"),  # the absolute path: got through a textual matcher
        "x/../src/e",  # `..` from a folder that is not src: got through
        "lnk/f",  # a link into src/: got through
        "src/./g",
    ]
    script = [call("write_file", path=p, content="pwned\n") for p in spellings]
    script.append(call("edit_file", path="lnk/kept.py", old="original", new="pwned"))
    run = place.run([*script, answer()])
    assert sorted(os.listdir(src)) == ["kept.py"], run.proc.stderr[-2000:]
    assert (src / "kept.py").read_text() == "original\n"
    blocked = [e for e in run.of("hook_ran") if e["outcome"] == "blocked"]
    assert len(blocked) == len(script)


def test_the_event_names_the_path_as_the_tool_resolves_it(place: Place) -> None:
    (place.ws / "src").mkdir()
    os.symlink("src", place.ws / "lnk")
    log = place.out / "events.jsonl"
    hook = ["sh", "-c", f"cat >> {log}; echo >> {log}"]
    place.config(f'[[hooks.pre_tool]]\ncommand = {toml_list(hook)}\nwhere = "host"\n')
    place.run([call("write_file", path="lnk/../lnk/x.py", content="x\n"), answer()])
    (event,) = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert event["tool"]["arguments"]["path"] == "lnk/../lnk/x.py"  # what the model sent
    assert "src/x.py" in event["tool"]["paths"]  # where the write lands
    assert (place.ws / "src" / "x.py").read_text() == "x\n"


def test_a_path_glob_holds_for_a_tool_that_walks_a_folder_holding_it(place: Place) -> None:
    secret = "HOOK-PROBE-SECRET-7f3a"
    (place.ws / "secrets").mkdir()
    (place.ws / "secrets" / "key.txt").write_text(f"token = {secret}\n")
    (place.ws / "docs").mkdir()
    (place.ws / "docs" / "a.md").write_text("hello\n")
    place.config(
        f'[[hooks.pre_tool]]\ncommand = {toml_list(BLOCK)}\nmatch = "*(secrets/**)"\nwhere = "host"\n'
    )
    script = [
        call("search", pattern="token"),  # no path: the tool walks the root
        call("search", pattern="token", path="."),
        call("list_files", path="secrets"),
        call("read_file", path="./docs/../secrets/key.txt"),
        call("list_files", path="docs"),  # the control: a folder that cannot hold secrets/
    ]
    run = place.run([*script, answer()])
    outcomes = [e["outcome"] for e in run.of("hook_ran")]
    assert outcomes == ["blocked"] * 4, run.proc.stderr[-2000:]
    results = [m["content"] for m in run.requests[-1]["messages"] if m["role"] == "tool"]
    assert secret not in run.sent() and not any("key.txt" in r for r in results)
    assert "a.md" in results[-1]  # docs/ was listed: the hook ran for none of it
