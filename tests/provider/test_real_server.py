"""The provider against the REAL llama-server with the real SmolLM2-135M (e2e)."""

from __future__ import annotations

import pytest

from cerveau_tui.provider.llama import LlamaProvider

pytestmark = pytest.mark.e2e

BASH = {
    "name": "bash",
    "description": "Run a shell command",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}
ASK = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Print hello using the shell."},
]


def test_the_default_model_is_driven_in_constrained_mode_and_replies_with_a_valid_action(
    real_stack: str,
) -> None:
    p = LlamaProvider(real_stack, temperature=0.0)
    assert p.props().supports_tools is False and p.resolved_mode() == "constrained"
    done = p.complete(ASK, [BASH], max_tokens=64)
    assert done.via == "constrained" and done.finish_reason == "stop"
    # The schema guarantees the format, not the wisdom: either a bash call or an answer.
    if done.tool_calls:
        assert done.tool_calls[0].name == "bash" and isinstance(
            done.tool_calls[0].parsed()["command"], str
        )
    else:
        assert done.content
    assert done.timings is not None and done.timings.predicted_n > 0


def test_a_repeated_prefix_is_served_from_the_prompt_cache(real_stack: str) -> None:
    p = LlamaProvider(real_stack, temperature=0.0)
    p.complete(ASK, [BASH], max_tokens=8)
    again = p.complete(ASK, [BASH], max_tokens=8)
    assert again.timings is not None and again.timings.cache_n > again.timings.prompt_n
