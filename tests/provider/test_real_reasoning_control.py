"""llama-server's reasoning control on the REAL binary `cerveau stack` builds (e2e, b1-0c1e570):
the route is there and found by asking it (its `/props` does not advertise it), and an end sent
mid-stream, with the id the stream gave, is accepted while the stream goes on to its end."""

from __future__ import annotations

import pytest

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Delta, ReasoningEnd

pytestmark = pytest.mark.e2e


def test_the_real_server_has_the_control_route_and_props_does_not_name_it(real_stack: str) -> None:
    p = LlamaProvider(real_stack, temperature=0.0)
    raw = p.props().raw
    assert "reasoning_control" not in str(raw) and "completions/control" not in str(raw)
    # Asked to end with no stream read yet, it answers as a server WITH the route does ("no id
    # yet"), not "the server has no reasoning control": the route was found by asking it.
    assert p.end_reasoning() == ReasoningEnd(False, "the stream has not said its completion id yet")
    p.close()


def test_the_real_server_accepts_an_end_mid_stream_and_the_stream_still_answers(
    real_stack: str,
) -> None:
    # SmolLM2 does not reason; the server armed the completion all the same and says yes: the
    # same stream goes on and ends as any other (what "stop thinking" relies on).
    p = LlamaProvider(real_stack, temperature=0.0)
    ended: list[ReasoningEnd] = []

    def on_delta(d: Delta) -> None:
        if (d.content or d.reasoning) and not ended:
            ended.append(p.end_reasoning())

    done = p.complete(
        [{"role": "user", "content": "Count to twenty."}], [], max_tokens=48, on_delta=on_delta
    )
    p.close()
    assert ended == [ReasoningEnd(True)]
    assert done.finish_reason in ("stop", "length") and done.content
