"""The generation rate as the tokens arrive, over the last RATE_WINDOW_S seconds.

The status bar showed the server's `predicted_per_second` of the previous reply: 5.8 tok/s
through a whole reply the server produced at 0.3-1.3 (a short prompt had been fast, a long one
was not), and nothing at all through the first. The rate here is measured on the person's side
from the running token count of the reply being written (reply_progress), at the moments the
app received it: what they are waiting on, now.

Rules (`rate_at`):
- The rate is the tokens between an anchor sample and the newest one, over the time between
  them. The anchor is the newest sample at least RATE_WINDOW_S older than the newest, else the
  first of the reply (the first token's arrival: the prompt's reading before it is not counted).
- When nothing arrived for longer than that span, the span is stretched to now, so a stream
  that went quiet shows its rate falling instead of the last figure frozen.
- Under MIN_SPAN_S of samples, or fewer than two, there is no rate yet: None, never a guess.
"""

from __future__ import annotations

from collections import deque

RATE_WINDOW_S = 5.0
MIN_SPAN_S = 0.5
#: Samples kept: at 60 progress events a second, the window and then some.
MAX_SAMPLES = 600


class TokenSamples:
    """(time, tokens this round) as each progress arrives; the first one marks the stream's
    start, so it stays while the reply lasts."""

    def __init__(self) -> None:
        self.first: tuple[float, int] | None = None
        self.recent: deque[tuple[float, int]] = deque(maxlen=MAX_SAMPLES)

    def clear(self) -> None:
        self.first = None
        self.recent.clear()

    def add(self, t: float, tokens: int) -> None:
        if self.recent and tokens <= self.recent[-1][1]:
            return  # nothing new (a prompt progress, a repeated figure)
        if self.first is None:
            self.first = (t, tokens)
        self.recent.append((t, tokens))
        # Older samples than the newest anchor candidate are never read again.
        while len(self.recent) > 2 and self.recent[1][0] <= t - RATE_WINDOW_S:
            self.recent.popleft()

    def rate_at(self, now: float) -> float | None:
        if self.first is None or not self.recent:
            return None
        last_t, last_n = self.recent[-1]
        anchor = self.first
        for sample in self.recent:
            if sample[0] <= last_t - RATE_WINDOW_S:
                anchor = sample
            else:
                break
        span = last_t - anchor[0]
        if span < MIN_SPAN_S:
            return None
        end = max(last_t, now - span)
        return (last_n - anchor[1]) / (end - anchor[0])
