"""A reply that says the same thing again and again is stopped while it streams.

Found (issue 37): one `write_file` streamed "This is a test." for 3 minutes (2.5k characters at
about a token a second) until the token cap; another reply committed 20 identical plan steps, and
did so three times. Nothing watched the stream itself: the cap was the only end, and the round
was lost whole, minutes of it.

`RepetitionWatch.feed` takes the reply's text as it grows (the answer and the tool calls'
arguments, as the model writes them) and says "repeating: a span of N characters x K" once, when
the repetition is certain. Rules, pure:
1. Only an EXACT repeat counts, at the end of the text: one span said K times back to back (the
   copy being written at the very end counts as its start). Tables, CSV rows, a run of similar
   test functions and lookup tables differ from row to row by a name or a number, so none of
   them is one span repeated: a loosened rule (digits ignored) would trip on every CSV.
2. The span is the shortest that repeats ("abab" is "ab" twice), and at most MAX_SPAN characters.
3. A span of MIN_SPAN characters or more, with MIN_DISTINCT different characters or more (a
   sentence, a line of code, a plan step), is certain at MIN_COPIES copies covering LONG_COVER
   characters: "This is a test. " is cut at 480 characters (about half a minute at the pace
   measured), not 2.5k; twenty identical 49-character plan steps at the tenth (504 of 991).
4. Any other span (a rule line of `-`, a row of `0, 0, 0`, padding, `0x00, ` in a byte table) is
   certain only at SHORT_COVER characters: such runs are legitimately a few hundred characters.
5. Said once: the watch that spoke stays silent (its caller ends the stream).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

MAX_SPAN = 400  # a paragraph, a function body: a longer repeat is rare and costs more to find
MIN_SPAN = 8
MIN_DISTINCT = 8  # a zero-filled grid row ("[0, 0, 0],\n") has 6: legitimately repeated
MIN_COPIES = 8  # more identical lines in a row than any table or test data written by hand
LONG_COVER = 480
SHORT_COVER = 2000
#: The end of the text the rules look at: the longest certain repeat fits in it.
KEPT = max(SHORT_COVER, MAX_SPAN * MIN_COPIES) + MAX_SPAN


@dataclass(frozen=True)
class Repetition:
    span: str
    times: int

    def __str__(self) -> str:
        return f"repeating: a span of {len(self.span)} characters x {self.times}"


def _primitive(span: str) -> bool:
    """Not itself a shorter span repeated: "abab" is not, "abc" is."""
    return (span + span).find(span, 1) == len(span)


def _certain(span: str, copies: int) -> bool:
    if len(span) >= MIN_SPAN and len(set(span)) >= MIN_DISTINCT:
        return copies >= MIN_COPIES and copies * len(span) >= LONG_COVER
    return copies * len(span) >= SHORT_COVER


def _periods(text: str) -> Iterator[int]:
    """The spans the text might end in a repeat of, shortest first: where its last few
    characters occurred before, found by `rfind` (trying all MAX_SPAN lengths at every fragment
    cost a third of a millisecond on a 14k-character JSON file)."""
    n = len(text)
    k = min(4, n)
    tail, lo, end = text[n - k :], max(0, n - MAX_SPAN - k), n - 1
    while (i := text.rfind(tail, lo, end)) >= 0:
        yield n - i - k
        end = i + k - 1


def repetition_at_end(text: str) -> Repetition | None:
    """The repeat the text ends in, once certain (the rules above); None otherwise."""
    n = len(text)
    for p in _periods(text):
        if 2 * p > n:
            break
        span = text[n - p :]
        if text[n - 2 * p : n - p] != span:
            continue
        copies = 2
        while (copies + 1) * p <= n and text[n - (copies + 1) * p : n - copies * p] == span:
            copies += 1
        if _primitive(span) and _certain(span, copies):
            return Repetition(span, copies)
    return None


class RepetitionWatch:
    """One reply's watch: feed it each fragment; it answers once, when the repeat is certain."""

    def __init__(self) -> None:
        self._text = ""
        self._said = False

    def feed(self, fragment: str) -> Repetition | None:
        if self._said or not fragment:
            return None
        self._text += fragment
        if len(self._text) > 2 * KEPT:  # only the end is read: kept bounded, trimmed rarely
            self._text = self._text[-KEPT:]
        found = repetition_at_end(self._text)
        self._said = found is not None
        return found


class RepetitionCut(Exception):
    """Raised from the stream's delta callback: the provider closes the stream on the way out,
    and the turn tells the model (Reply.after_repetition)."""

    def __init__(self, found: Repetition) -> None:
        super().__init__(str(found))
        self.found = found
