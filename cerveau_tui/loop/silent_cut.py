"""A server that cut the prompt and said nothing: caught from its own count of what it read.

Peers' users found it the hard way: Ollama's default `num_ctx` (2,048, later 4,096) keeps the end
of a longer prompt and answers 200 OK; an OpenAI-compatible route ignores the window it was sent;
a proxy trims from the left. The harness then believes the model saw its instructions, the task
and the plan, while it saw the last rounds only. Every server that reports usage says how many
prompt tokens it read (`usage.prompt_tokens`, or llama-server's `timings` prompt_n + cache_n), so
after each request that count is compared with the harness's own count of the messages it sent.

The rules (pure, `tests/foundation/test_silent_cut.py`):
- Only the messages are compared: a chat template adds framing (the server's count is higher, as
  it should be), and tools may or may not be rendered, so they are left out of ours.
- A cut: the server read fewer than (1 - TOLERANCE) of our count, less FLOOR. Our count is an
  estimate without the model's tokenizer, so the tolerance is wide; a real cut is far beyond it
  (a 6k prompt read as 2k).
- The window becomes what the server really keeps: what it read plus the reply cap, and never
  more than the setting the server states (Ollama's `num_ctx`, asked of `/api/show`), so the next
  request is compacted to fit instead of cut again.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The share of our count the server may read less of before it is a cut (our count may be an
#: estimate: four characters a token, off by a fifth on code).
TOLERANCE = 0.2
#: Tokens of difference that are never a cut (a short prompt counted two ways).
FLOOR = 64


@dataclass(frozen=True)
class SilentCut:
    sent: int  # our count of the messages
    read: int  # the server's count of the prompt it read
    window: int  # the window the server really keeps, from now on
    setting: str = ""  # the server's setting that did it, when it is known

    def text(self) -> str:
        cause = f" ({self.setting})" if self.setting else ""
        return (
            f"the server read {self.read:,} prompt tokens of the ~{self.sent:,} sent: it cut the "
            f"prompt silently{cause}. The window is now {self.window:,} tokens, what it keeps; "
            "raise the server's context size to give the model more."
        )


def silent_cut(
    sent: int, read: int, *, n_ctx: int, reply_cap: int, setting: int | None = None, said: str = ""
) -> SilentCut | None:
    """A cut when the server read far fewer tokens than the messages we sent; None otherwise.
    `setting`: the window the server states it keeps (Ollama's num_ctx), `said`: how to name it."""
    if sent <= 0 or read <= 0 or read >= sent * (1 - TOLERANCE) - FLOOR:
        return None
    window = min(n_ctx, read + reply_cap)
    if setting:
        window = min(window, setting)
    return SilentCut(sent, read, max(window, 256), said)
