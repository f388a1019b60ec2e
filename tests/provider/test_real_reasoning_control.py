"""llama-server's reasoning control on the REAL binary `cerveau stack` builds (e2e): the route is
there and found by asking it (its `/props` does not advertise it), and a completion the server
could not arm (SmolLM2's template has no thinking tags) is refused with the server's reason,
so "stop thinking" falls back (loop/thinking.py)."""

from __future__ import annotations

import pytest

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Delta, ReasoningEnd

pytestmark = pytest.mark.e2e


def test_the_real_server_has_the_control_route_and_props_does_not_name_it(real_stack: str) -> None:
    p = LlamaProvider(real_stack, temperature=0.0)
    raw = p.props().raw
    assert "reasoning_control" not in str(raw) and "completions/control" not in str(raw)
    assert p._control.offered() is True
    p.close()


def test_an_end_of_a_completion_it_could_not_arm_is_refused_with_its_reason(
    real_stack: str,
) -> None:
    p = LlamaProvider(real_stack, temperature=0.0)
    ended: list[ReasoningEnd] = []

    def on_delta(d: Delta) -> None:
        if (d.content or d.reasoning) and not ended:
            ended.append(p.end_reasoning())

    p.complete(
        [{"role": "user", "content": "Count to twenty."}], [], max_tokens=48, on_delta=on_delta
    )
    p.close()
    assert ended and not ended[0].ok and ended[0].detail.startswith("the server refused: ")
