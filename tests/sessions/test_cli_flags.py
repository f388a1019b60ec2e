"""The resume flags as people type them (Claude Code's and codex's conventions)."""

from __future__ import annotations

from cerveau_tui.cli import build_parser


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(list(argv))


def test_resume_without_an_id_opens_the_tui_on_the_latest_session() -> None:
    args = parse("--resume")
    assert args.cmd is None and args.resume == "last"


def test_resume_with_an_id_opens_the_tui_on_that_session() -> None:
    assert parse("--resume", "abc123").resume == "abc123"


def test_continue_is_the_latest_session_for_the_tui_and_for_run() -> None:
    assert parse("--continue").resume == "last"
    assert parse("run", "--continue", "go on").resume == "last"


def test_run_resume_takes_an_id_then_the_task() -> None:
    args = parse("run", "--json", "--resume", "last", "TASK")
    assert (args.cmd, args.resume, args.task) == ("run", "last", "TASK")


def test_a_fresh_run_resumes_nothing() -> None:
    assert parse("run", "TASK").resume is None
