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
   certain at LINE_COVER characters while it stays on one line, at SHORT_COVER once it holds a
   line break (raw, or `\\n` as a call's JSON arguments write it): rows of zeros in test data
   are legitimately long; one line is not. Measured over 6,705 real text files (site-packages,
   /usr/share/doc, this repo; `benchmarks/repetition_corpus.py`): the longest one-line run is
   271 characters (a README's `-` rule; 99.9% of files stay under 108), the longest run of
   identical low-information lines 1,264 (ASCII art in an HTML page). Found (issue 37): ".1.1.1"
   inside a commit_plan's check streamed 670 characters over 2m18s; it is now cut at 320.
5. Said once: the watch that spoke stays silent (its caller ends the stream).

The answer and the reasoning are watched apart (two watches, one reply): a loop in either is
the same waste, and text joined across the two would repeat where neither does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

MAX_SPAN = 400  # a paragraph, a function body: a longer repeat is rare and costs more to find
MIN_SPAN = 8
MIN_DISTINCT = 8  # a zero-filled grid row ("[0, 0, 0],\n") has 6: legitimately repeated
MIN_COPIES = 8  # more identical lines in a row than any table or test data written by hand
LONG_COVER = 480
LINE_COVER = 320  # above the corpus's longest one-line run (271), a minute at the pace measured
SHORT_COVER = 2000  # a 100-row CSV of zeros is 1.6k: test data, written by hand
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


def _one_line(span: str) -> bool:
    """No line break in the span, raw or escaped as JSON writes it; read as a ring, since a copy
    may begin between the backslash and the `n`."""
    return "\n" not in span and "\\n" not in span + span


def _certain(span: str, copies: int) -> bool:
    cover = copies * len(span)
    if len(span) >= MIN_SPAN and len(set(span)) >= MIN_DISTINCT:
        return copies >= MIN_COPIES and cover >= LONG_COVER
    return cover >= (LINE_COVER if _one_line(span) else SHORT_COVER)


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
    """One reply's watch: feed it each fragment (the answer's, the reasoning's); it answers once,
    when a repeat in either is certain."""

    def __init__(self) -> None:
        self._texts = {"answer": "", "reasoning": ""}
        self._said = False

    def feed(self, fragment: str, reasoning: str = "") -> Repetition | None:
        if self._said:
            return None
        for stream, piece in (("answer", fragment), ("reasoning", reasoning)):
            if piece and (found := self._feed(stream, piece)) is not None:
                self._said = True
                return found
        return None

    def _feed(self, stream: str, fragment: str) -> Repetition | None:
        text = self._texts[stream] + fragment
        if len(text) > 2 * KEPT:  # only the end is read: kept bounded, trimmed rarely
            text = text[-KEPT:]
        self._texts[stream] = text
        return repetition_at_end(text)


class RepetitionCut(Exception):
    """Raised from the stream's delta callback: the provider closes the stream on the way out,
    and the turn tells the model (Reply.after_repetition)."""

    def __init__(self, found: Repetition) -> None:
        super().__init__(str(found))
        self.found = found
