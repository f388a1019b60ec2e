"""Each cut says how many line breaks it took, and counting goes through the markers, so the
card's "earlier lines not shown" is the true number however many cuts the output met."""

from __future__ import annotations

from cerveau_tui.app.widgets.tool_card import clip_output
from cerveau_tui.context.budget import fit_result
from cerveau_tui.sandbox.process import _Sink, cap_output
from cerveau_tui.text_cut import line_breaks

LOG = "".join(f"{i}\n" for i in range(1, 5001))  # 5,000 lines


def test_the_output_cap_marker_stands_for_the_line_breaks_it_cut() -> None:
    capped, cut = cap_output(LOG, 2000)
    assert cut and line_breaks(capped) == LOG.count("\n")


def test_the_streamed_cap_marker_stands_for_the_line_breaks_it_cut() -> None:
    sink = _Sink(2000)
    for i in range(0, len(LOG), 999):
        sink.add(LOG[i : i + 999].encode())
    streamed, cut = sink.text(2000)
    assert cut and line_breaks(streamed) == LOG.count("\n")


def test_a_window_cut_of_a_capped_output_keeps_the_count_of_both_cuts() -> None:
    capped, _ = cap_output(LOG, 8000)
    fitted = fit_result(capped, 300, lambda t: len(t) // 4)
    assert len(fitted) < len(capped) // 2
    assert line_breaks(fitted) == LOG.count("\n")


def test_the_card_counts_the_lines_both_cuts_took_as_not_shown() -> None:
    capped, _ = cap_output(LOG, 8000)
    fitted = fit_result(capped, 300, lambda t: len(t) // 4)
    first = clip_output(fitted, 10).splitlines()[0]
    assert first == f"… {5000 - 10:,} earlier lines not shown"


def test_a_marker_a_command_printed_with_a_huge_count_is_not_read_as_one() -> None:
    fake = "[… " + "9" * 5000 + " lines, about 1 bytes cut …]"
    text = "x\n" + fake + "\n" + "\n".join(str(i) for i in range(100))
    assert line_breaks(text) == text.count("\n")
    assert clip_output(text).startswith("… 62 earlier lines not shown")
