"""The cache ledger's rules (loop/cache_ledger.py), one test per rule."""

from __future__ import annotations

from cerveau_tui.loop.cache_ledger import (
    CAUSE_COMPACTION,
    CAUSE_CUT,
    CAUSE_HISTORY,
    CAUSE_INSTRUCTIONS,
    CAUSE_REMINDER,
    CAUSE_UNSEEN,
    CacheLedger,
    Figures,
    TurnCache,
    figures_of,
    is_miss,
    miss_cause,
)
from cerveau_tui.loop.remind import REMINDER_HEADER
from cerveau_tui.provider.types import Completion, Timings, Usage

SYS = {"role": "system", "content": "you are a coder"}
U1 = {"role": "user", "content": "fix it"}
A1 = {"role": "assistant", "content": "done"}


def test_figures_are_the_servers_timings() -> None:
    c = Completion(timings=Timings(cache_n=900, prompt_n=40, predicted_n=7), usage=Usage(940, 7))
    assert figures_of(c) == Figures(evaluated=40, cached=900, predicted=7)


def test_without_timings_the_figures_come_from_usage_cached_tokens() -> None:
    c = Completion(usage=Usage(prompt_tokens=1000, completion_tokens=5, cached_tokens=960))
    assert figures_of(c) == Figures(evaluated=40, cached=960, predicted=5)


def test_without_any_figure_nothing_is_known() -> None:
    assert figures_of(Completion()) is None


def test_the_first_request_is_never_a_miss() -> None:
    assert CacheLedger().record([SYS, U1], Figures(3000, 0)) is None


def test_a_request_that_reads_what_it_appended_is_no_miss() -> None:
    ledger = CacheLedger()
    ledger.record([SYS, U1], Figures(500, 0, 20))
    assert ledger.record([SYS, U1, A1], Figures(60, 500)) is None


def test_a_request_that_rereads_the_history_is_a_miss_with_its_figures() -> None:
    ledger = CacheLedger()
    ledger.record([SYS, U1], Figures(2000, 0, 20))
    miss = ledger.record([SYS, U1, A1], Figures(2050, 10))
    assert miss is not None
    assert (miss.evaluated, miss.appended, miss.cached) == (2050, 40, 10)
    assert "2,050" in miss.text() and miss.cause == CAUSE_UNSEEN


def test_small_rereads_are_noise() -> None:
    assert not is_miss(200, 0)
    assert is_miss(300, 0)
    assert not is_miss(1000, 400)


def test_the_cause_is_the_compaction_when_one_came_before() -> None:
    assert miss_cause([SYS, U1], [SYS, U1], compacted=True) == CAUSE_COMPACTION


def test_a_changed_system_prompt_is_the_instructions() -> None:
    other = {"role": "system", "content": "you are a coder. AGENTS.md: tabs"}
    assert miss_cause([SYS, U1], [other, U1], compacted=False) == CAUSE_INSTRUCTIONS


def test_a_moved_reminder_is_named() -> None:
    rem = {"role": "user", "content": f"{REMINDER_HEADER}\nx changed"}
    assert miss_cause([SYS, rem, U1], [SYS, U1, rem], compacted=False) == CAUSE_REMINDER


def test_an_earlier_message_that_changed_is_the_history() -> None:
    edited = {"role": "user", "content": "fix it now"}
    assert miss_cause([SYS, U1, A1], [SYS, edited, A1], compacted=False) == CAUSE_HISTORY


def test_turn_sums_add_every_request_and_skip_unknown_ones() -> None:
    t = TurnCache()
    t.add(Figures(100, 0))
    t.add(None)
    t.add(Figures(30, 100))
    assert t.fields() == {"prompt_evaluated": 130, "prompt_cached": 100}


def test_a_compaction_since_the_last_request_is_the_cause_once() -> None:
    ledger = CacheLedger()
    ledger.record([SYS, U1], Figures(2000, 0))
    ledger.compacted = True
    miss = ledger.record([SYS, U1], Figures(1500, 10))
    assert miss is not None and miss.cause == CAUSE_COMPACTION
    assert ledger.compacted is False


def test_a_longer_conversation_read_as_no_longer_prompt_is_a_cut() -> None:
    """A server keeping only its window's worth (Ollama's num_ctx) reads the same count again."""
    ledger = CacheLedger()
    ledger.record([SYS, U1], Figures(1500, 0))
    miss = ledger.record([SYS, U1, A1, U1], Figures(900, 600))
    assert miss is not None and miss.cause == CAUSE_CUT
