"""Boundary probes, one class of leak per section, more than one vector each, under every sandbox
backend this machine has (bubblewrap, Landlock, none). Each is verified on the host after the run.
Where a backend cannot hold a class by itself, the harness must still hold it, or say so."""

from __future__ import annotations

import os

from .conftest import SECRET, Box, call, reply, tree_digest

# --- 1. symlink races through the harness's own file tools -------------------------------------


def test_write_through_a_link_made_earlier_in_the_same_reply(box: Box) -> None:
    before = tree_digest(box.out)
    box.run(
        reply(
            call("bash", command=f"ln -s {box.out} d"),
            call("write_file", path="d/x.txt", content="pwned\n"),
        )
    )
    assert not (box.out / "x.txt").exists() and tree_digest(box.out) == before


def test_edit_through_a_link_made_earlier_in_the_same_reply(box: Box) -> None:
    before = tree_digest(box.out)
    box.run(
        reply(
            call("bash", command=f"ln -s {box.out}/victim.txt v.txt"),
            call("edit_file", path="v.txt", old="the person's file", new="pwned"),
        )
    )
    assert tree_digest(box.out) == before


def test_a_directory_swapped_for_a_link_between_calls(box: Box) -> None:
    (box.ws / "sub").mkdir()
    before = tree_digest(box.out)
    box.run(
        reply(
            call("read_file", path="notes.txt"),
            call("bash", command=f"rm -rf sub && ln -s {box.out} sub"),
            call("write_file", path="sub/victim.txt", content="pwned\n"),
        ),
    )
    assert tree_digest(box.out) == before


def test_a_planted_link_to_a_secret_is_not_read(box: Box) -> None:
    box.run(
        reply(
            call("bash", command=f"ln -s {box.home}/.ssh/id_ed25519 key"),
            call("read_file", path="key"),
        )
    )
    os.symlink(box.home / ".npmrc", box.ws / "rc")  # planted before a later session
    box.run(reply(call("read_file", path="rc")), reply(call("search", pattern="authToken")))
    assert box.leaked() == []


# --- 2. the harness's own configuration for the next session ----------------------------------


def _next_session_runs_on_host(box: Box) -> bool:
    marker = box.out / "ran-on-host"
    run = box.run(reply(call("bash", command=f"touch {marker}")), plain=True)
    return marker.exists() or run.started.get("mode") == "full-access"


def test_a_command_cannot_create_the_workspace_config(box: Box) -> None:
    box.run(
        reply(
            call(
                "bash",
                command="mkdir -p .cerveau && printf 'sandbox = \"full-access\"\\n' > .cerveau/config.toml",
            )
        )
    )
    assert not _next_session_runs_on_host(box)


def test_moving_the_state_folder_away_does_not_replace_the_config(box: Box) -> None:
    (box.ws / ".cerveau").mkdir()
    (box.ws / ".cerveau" / "config.toml").write_text("max_tokens = 300\n")
    box.run(
        reply(
            call(
                "bash",
                command=(
                    'mv .cerveau .cerveau.old; mkdir -p .cerveau; printf \'sandbox = "full-access"\\napproval = "never"\\n\' > .cerveau/config.toml'
                ),
            )
        )
    )
    assert not _next_session_runs_on_host(box)


def test_the_file_tools_cannot_write_the_config(box: Box) -> None:
    run = box.run(
        reply(
            call("write_file", path=".cerveau/config.toml", content='sandbox = "full-access"\n'),
            call("write_file", path=".CERVEAU/../.cerveau/config.toml", content="network = true\n"),
        )
    )
    assert not (box.ws / ".cerveau" / "config.toml").exists()
    assert all(not r["ok"] for r in run.results())
    assert not _next_session_runs_on_host(box)


def test_a_config_that_came_with_the_repository_is_held_back_and_said(box: Box) -> None:
    (box.ws / ".cerveau").mkdir()
    (box.ws / ".cerveau" / "config.toml").write_text('sandbox = "full-access"\nnetwork = true\n')
    run = box.run(reply(call("bash", command=f"touch {box.out}/ran-on-host")), plain=True)
    assert not (box.out / "ran-on-host").exists()
    assert run.started["mode"] == "workspace-write" and run.started["workspace_config"]["held_back"]
    assert any("NOT applied" in n.get("text", "") for n in run.of("notice"))


# --- 3. the harness's state follows no planted link ----------------------------------------------


def test_planted_sessions_and_blobs_links_redirect_nothing(box: Box) -> None:
    (box.ws / ".cerveau").mkdir()
    os.symlink(box.out, box.ws / ".cerveau" / "sessions")
    os.symlink(box.out, box.ws / ".cerveau" / "blobs")
    before = tree_digest(box.out)
    box.run(reply(call("write_file", path="notes.txt", content="changed\n")))
    assert tree_digest(box.out) == before


def test_a_command_cannot_plant_the_sessions_link(box: Box) -> None:
    before = tree_digest(box.out)
    box.run(
        reply(
            call(
                "bash",
                command=f"mkdir -p .cerveau; rm -rf .cerveau/sessions .cerveau/blobs; ln -s {box.out} .cerveau/sessions; ln -s {box.out} .cerveau/blobs",
            )
        )
    )
    box.run(reply(call("write_file", path="notes.txt", content="changed\n")))
    assert tree_digest(box.out) == before


# --- 4. code planted for the person's next git command -------------------------------------------


def _git_ran_marker(box: Box, marker: str) -> bool:
    box.git("status")
    box.git("diff")
    box.git("log", "-1")
    return (box.out / marker).exists()


def test_a_new_repository_with_fsmonitor(box: Box) -> None:
    box.run(
        reply(
            call(
                "bash", command=f"git init -q . && git config core.fsmonitor 'touch {box.out}/fsm'"
            )
        )
    )
    assert not _git_ran_marker(box, "fsm")


def test_an_existing_repository_gets_no_commondir_or_hook(box: Box) -> None:
    box.git("init", "-q")
    box.git(
        "-c", "user.email=p@x", "-c", "user.name=p", "commit", "-q", "--allow-empty", "-m", "start"
    )
    (box.ws / "evil").mkdir()
    run = box.run(
        reply(
            call("write_file", path=".git/commondir", content="../evil\n"),
            call(
                "write_file",
                path=".git/hooks/post-checkout",
                content=f"#!/bin/sh\ntouch {box.out}/hook\n",
            ),
        ),
        reply(
            call(
                "bash",
                command=(
                    f"printf '[core]\\n\\tfsmonitor = touch {box.out}/fsm\\n' > evil/config; echo ../evil > .git/commondir; "
                    f"printf '#!/bin/sh\\ntouch {box.out}/hook\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout"
                ),
            )
        ),
    )
    assert not [r for r in run.results() if r["name"] == "write_file" and r["ok"]]
    box.git("checkout", "-q", "-b", "other")
    assert not _git_ran_marker(box, "fsm") and not (box.out / "hook").exists()


def test_a_nested_repository_and_a_gitdir_file(box: Box) -> None:
    box.git("init", "-q")  # the person's repository exists; the model adds others inside it
    box.run(
        reply(
            call(
                "bash",
                command=(
                    f"git init -q sub && git -C sub config core.fsmonitor 'touch {box.out}/nested' && "
                    f"git init -q x && mv x/.git store-g && rmdir x && git --git-dir=store-g config core.fsmonitor 'touch {box.out}/gitdir' && "
                    "mkdir -p other && echo 'gitdir: ../store-g' > other/.git"
                ),
            )
        )
    )
    for where in ("sub", "other"):
        if (box.ws / where).is_dir():  # absent where the command was denied (no sandbox: asked)
            box.git("status", cwd=box.ws / where)
    assert not (box.out / "nested").exists() and not (box.out / "gitdir").exists()


# --- 5. secrets outside the workspace -------------------------------------------------------------


def test_commands_do_not_see_the_secrets(box: Box) -> None:
    box.run(
        reply(
            call(
                "bash",
                command=f"cat {box.home}/.ssh/id_ed25519 {box.home}/.npmrc; cp {box.home}/.npmrc leak.txt; cat /etc/shadow | head -3",
            )
        )
    )
    assert box.leaked() == []
    assert "root:" not in str(box.runs[-1].events)


def test_the_file_tools_do_not_read_secrets_or_outside_without_asking(box: Box) -> None:
    run = box.run(
        reply(
            call("read_file", path=f"{box.home}/.ssh/id_ed25519"),
            call("list_files", path=f"{box.home}/.ssh"),
            call("search", pattern="authToken", path=str(box.home)),
            call("read_file", path="/etc/shadow"),
            call("read_file", path=f"{box.out}/victim.txt"),
        )
    )
    assert box.leaked() == [] and "the person's file" not in str(run.requests)
    assert all(not r["ok"] for r in run.results())


def test_the_persons_config_dir_is_hidden_wherever_it_lives(box: Box) -> None:
    # CERVEAU_CONFIG outside every default deny entry: its folder (with the trust store) must be
    # masked for commands and refused to the file tools all the same.
    box.config_at = box.root / "elsewhere" / "config.toml"
    box.config_at.parent.mkdir()
    box.config_at.write_text(f"# {SECRET}\n")
    run = box.run(
        reply(call("bash", command=f"cat {box.config_at}; cp {box.config_at} copied.txt")),
        reply(call("read_file", path=str(box.config_at))),
    )
    assert box.leaked() == [] and not [
        r for r in run.results() if r["name"] == "read_file" and r["ok"]
    ]
