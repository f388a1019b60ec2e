"""The provider against the REAL llama-server with the real SmolLM2-135M (e2e)."""

from __future__ import annotations

import re

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


def test_the_real_grammar_refuses_a_blank_command_that_the_model_is_pushed_towards(
    real_stack: str,
) -> None:
    """llama-server's converter reads the not-blank pattern (an unreadable one is dropped with a
    warning, minLength with it). The quote tokens are biased so the model wants `""` at once: the
    control with a bare string schema gets it, the tool's own schema never does."""
    import httpx

    from cerveau_tui.provider.constrained import response_format
    from cerveau_tui.stack.keys import headers_for
    from cerveau_tui.tools.bash import Bash
    from cerveau_tui.tools.plan_tools import PLAN_TOOLS
    from cerveau_tui.tools.registry import default_tools

    def tokens(text: str) -> list[int]:
        got: list[int] = httpx.post(
            f"{real_stack}/tokenize", json={"content": text}, headers=headers_for(real_stack)
        ).json()["tokens"]
        return got

    bias = [[t, 30] for s in ['"', '""', '"}', '""}', ' "', ' ""'] for t in tokens(s)]
    ask = [{"role": "user", "content": "Run a shell command."}]

    def command_for(schema: dict) -> str:
        """The JSON text of the command's value from its opening quote on (`"` alone: empty)."""
        body = {
            "messages": ask,
            "max_tokens": 24,
            "temperature": 0,
            "logit_bias": bias,
            "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
        }
        r = httpx.post(
            f"{real_stack}/v1/chat/completions", json=body, timeout=120,
            headers=headers_for(real_stack),
        )  # fmt: skip
        assert r.status_code == 200, r.text[:300]
        text = str(r.json()["choices"][0]["message"]["content"])
        opened = re.search(r'"command"\s*:\s*"', text)
        assert opened, text
        return text[opened.end() :]

    loose = {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    }
    assert command_for(loose).startswith('"')  # control: the bias does push towards ""
    tools = [t.schema() for t in [*default_tools(), *(c() for c in PLAN_TOOLS)]]
    bash_only = response_format([Bash.schema()])["json_schema"]["schema"]["oneOf"][0]
    value = command_for(bash_only["properties"]["arguments"])
    assert value and not value.startswith('"') and not value[0].isspace(), value
    # and the whole action schema of every tool is accepted by the real converter
    full = {"messages": ask, "max_tokens": 8, "response_format": response_format(tools)}
    assert (
        httpx.post(
            f"{real_stack}/v1/chat/completions", json=full, timeout=120,
            headers=headers_for(real_stack),
        ).status_code
        == 200
    )  # fmt: skip
