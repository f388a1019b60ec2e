"""What a round may call, narrowed by refusing calls, never by changing the tools sent.

Measured (issue 36): a turn whose model claimed "done" with the tests red re-read its whole
prompt at each rung of the ladder (938, then 1,933, then 2,721 tokens for 0-783 appended),
because R1's round offered only the read tools and native tools are rendered into the prompt's
prefix by the chat template: every change of the list is a cache miss from the first tool on.
Discussion mode's switch and the cut retry's narrowed schema did the same. So a session sends one
tools list and one system message from its first request to its last, and every narrowing is a
refusal at dispatch whose text names what runs now (the model reads it as the call's result).

In constrained mode the action grammar is a request field outside the prompt (`response_format`),
so narrowing it costs no cache: the provider is handed the narrowed schemas as `narrow` and keeps
the prompt's tools as they were (provider/llama.py). There the narrowing stays structural.

The rules (pure, `tests/foundation/test_narrow.py`), checked in this order:
1. Discussion mode: only DISCUSS_TOOLS run.
2. A round whose request named `only` tools (R1's read-only round): only those run.
3. A tool the cut retry withheld for this round (guards/cut_retry.py rule 3) does not run.
"""

from __future__ import annotations

from collections.abc import Collection

#: What a discussion turn may use: look (an MCP tool's schema too: it runs nothing), and commit a plan.
DISCUSS_TOOLS = ("read_file", "list_files", "search", "commit_plan", "load_skill", "mcp_describe")


def round_refusal(
    tool: str,
    *,
    discuss: bool,
    only: Collection[str] = (),
    withheld: Collection[str] = (),
    offered: Collection[str] = (),
) -> str | None:
    """Why `tool` does not run this round; None when it may. `offered`: the session's tools, so
    the refusal names only tools that exist."""

    def listed(names: Collection[str]) -> str:
        kept = [n for n in names if not offered or n in offered]
        return ", ".join(kept) or "(none)"

    if discuss and tool not in DISCUSS_TOOLS:
        return (
            f"refused: discussion mode (read and plan only); `{tool}` does not run. Only "
            f"{listed(DISCUSS_TOOLS)} run until the person leaves discussion mode."
        )
    if only and tool not in only:
        return f"refused: only {listed(only)} run this round; `{tool}` comes back in the next."
    if tool in withheld:
        return (
            f"refused: `{tool}` was cut off at the token cap again, so it does not run this "
            "round: make a smaller step with another tool, or answer."
        )
    return None
