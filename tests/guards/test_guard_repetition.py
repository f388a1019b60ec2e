"""A reply that repeats itself is cut once the repeat is certain, and legitimate repetitive output
never is (rules in loop/guards/repetition.py). The texts are fed as a stream is, a few characters
a fragment, so every point along the way is judged, not only the end."""

from __future__ import annotations

import json
import zlib

from cerveau_tui.loop.guards.repetition import (
    LINE_COVER,
    LONG_COVER,
    MAX_SPAN,
    MIN_COPIES,
    SHORT_COVER,
    Repetition,
    RepetitionWatch,
    repetition_at_end,
)


def _stream(text: str, piece: int = 4) -> tuple[Repetition | None, int]:
    """What the watch said while `text` streamed, and after how many characters."""
    watch = RepetitionWatch()
    for at in range(0, len(text), piece):
        found = watch.feed(text[at : at + piece])
        if found is not None:
            return found, at + piece
    return None, len(text)


# --- the rules ---------------------------------------------------------------------------------


def test_a_sentence_said_again_and_again_is_cut_long_before_the_cap() -> None:
    """Rule 3, the failure itself: "This is a test." streamed 2.5k characters to the cap."""
    found, at = _stream("Here is the file content: " + "This is a test. " * 160)
    assert found is not None and len(found.span) == 16 and found.span in "This is a test. " * 2
    assert found.times * len(found.span) >= LONG_COVER
    assert at < 600, at


def test_identical_plan_steps_inside_a_call_s_arguments_are_cut_at_a_few() -> None:
    step = {"title": "Read calc.py and check the add function", "files": ["calc.py"]}
    args = json.dumps({"steps": [step] * 20})
    found, at = _stream(args)
    assert found is not None and len(found.span) == len(json.dumps(step)) + 2
    assert found.times == MIN_COPIES and at < len(args) // 2


def test_only_an_exact_repeat_counts_a_counter_that_moves_is_not_one() -> None:
    """Rule 1: the same line with its number moving is a table, not a loop."""
    assert _stream("".join(f"This is test number {i}.\n" for i in range(300)))[0] is None


def test_the_span_named_is_the_shortest_that_repeats() -> None:
    """Rule 2: "ab" x 1000, not "abab" x 500 (and the short rule decides it)."""
    found = repetition_at_end("ab" * 1000)
    assert found is not None and found.span in ("ab", "ba") and found.times == 1000


def test_a_span_longer_than_max_span_is_not_looked_for() -> None:
    block = "".join(chr(ord("a") + i % 26) for i in range(MAX_SPAN + 1))
    assert repetition_at_end(block * 10) is None


def test_a_long_span_needs_its_copies_not_only_its_characters() -> None:
    """Rule 3: seven copies of a 100-character paragraph are 700 characters but not certain."""
    para = "The parser reads one token at a time and keeps a stack of open brackets here.\n"
    assert len(para) > 60
    assert repetition_at_end(para * (MIN_COPIES - 1)) is None
    assert repetition_at_end(para * MIN_COPIES) is not None


def test_a_plain_span_on_one_line_is_cut_at_the_line_cover() -> None:
    """Rule 4: a rule line or a row of zeros fits a line; three hundred characters of it do not."""
    assert repetition_at_end("-" * (LINE_COVER - 1)) is None
    assert repetition_at_end("-" * LINE_COVER) is not None
    assert repetition_at_end("x = [" + "0, " * (LINE_COVER // 3 - 1)) is None


def test_dot_one_inside_a_plan_s_check_is_cut_at_the_line_cover_not_two_thousand() -> None:
    """The failure: ".1.1.1" in a commit_plan's check field, 670 characters over 2m18s."""
    head = '{"tool": "commit_plan", "arguments": {"steps": [{"id": "1", "title": "t", "check": "1'
    found, at = _stream(head + ".1" * 335)
    assert found is not None and found.span in (".1", "1.")
    assert at - len(head) <= LINE_COVER + 4


def test_a_plain_span_across_lines_is_cut_only_at_the_short_cover() -> None:
    """Rule 4: rows of zeros in test data are legitimately long, raw or as JSON escapes them."""
    for row in ("0,0,0,0,0,0,0\n", "0,0,0,0,0,0,0\\n"):
        n = SHORT_COVER // len(row)
        assert repetition_at_end(row * n) is None
        assert repetition_at_end(row * (n + 1)) is not None
    row = "[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],\n    "
    assert repetition_at_end(row * 30) is None


def test_a_plain_row_escaped_as_json_counts_as_a_line_where_its_copy_begins() -> None:
    """Read as a ring: the span at the end may begin between the escape's two characters."""
    text = '{"content": "' + "0,0\\n" * 150 + "0,0\\"  # 150 rows, the next one cut after `\\`
    assert repetition_at_end(text) is None


def test_the_watch_speaks_once() -> None:
    """Rule 5."""
    watch = RepetitionWatch()
    said = [watch.feed("This is a test. ") for _ in range(200)]
    assert sum(1 for s in said if s is not None) == 1


def test_the_reasoning_is_watched_too_apart_from_the_answer() -> None:
    """A model thinking in a loop wastes the same minutes; the answer's text does not mix in."""
    watch = RepetitionWatch()
    said = [watch.feed("", reasoning="Let me check calc.py again. ") for _ in range(40)]
    found = next(s for s in said if s is not None)
    assert found.span.strip() in "Let me check calc.py again. " * 2
    assert said.index(found) < 20
    # Interleaved, each stream alone never repeats: no cut.
    watch = RepetitionWatch()
    said = [watch.feed(f"line {i}\n", reasoning=f"step {i}: ok. ") for i in range(300)]
    assert not any(said)


def test_what_it_says_names_the_span_and_the_count() -> None:
    assert str(Repetition("x" * 16, 30)) == "repeating: a span of 16 characters x 30"


# --- legitimate repetitive output: never cut ---------------------------------------------------


def test_a_markdown_table_of_similar_rows_is_not_cut() -> None:
    for name in ("alice", "bob"):
        rows = [f"| {name}{i} | {i * 3} | {'yes' if i % 2 else 'no'} | ok |" for i in range(80)]
        rows = ["| name | score | passed | status |", "|---|---|---|---|", *rows]
        assert _stream("\n".join(rows))[0] is None


def test_csv_test_data_with_a_few_duplicate_rows_is_not_cut() -> None:
    rows = ["id,name,city,amount"] + [f"{i},user{i % 7},London,{i * 1.5:.2f}" for i in range(400)]
    rows += ["401,alice,Paris,10.00"] * 5  # duplicates, for a dedupe test
    rows += [f"{i},,,0" for i in range(402, 450)]
    assert _stream("\n".join(rows))[0] is None


def test_a_long_list_of_similar_test_functions_is_not_cut() -> None:
    funcs = "".join(
        f"\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n    assert add(1, {i}) == {i + 1}\n"
        for i in range(60)
    )
    funcs += "".join(
        f"\n\n@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_case_{c}(x):\n    assert f(x)\n"
        for c in "abcdefghijklmnop"
    )
    assert _stream("import pytest\n" + funcs)[0] is None


def test_a_lookup_table_in_code_is_not_cut() -> None:
    crc = [zlib.crc32(bytes([i])) for i in range(256)]
    table = "CRC_TABLE = [\n" + "".join(
        "    " + ", ".join(f"0x{v:08x}" for v in crc[i : i + 8]) + ",\n" for i in range(0, 256, 8)
    )
    zeros = "ZERO = [\n" + "    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,\n" * 32 + "]\n"
    names = "CODES = {\n" + "".join(f"    {i}: 'E{i:03d}',\n" for i in range(200)) + "}\n"
    for text in (table + "]\n", zeros, names):
        assert _stream(text)[0] is None


def test_a_json_fixture_of_records_is_not_cut() -> None:
    records = [
        {"id": i, "name": f"item {i}", "tags": ["a", "b"], "price": 9.99} for i in range(120)
    ]
    assert (
        _stream(json.dumps({"path": "data.json", "content": json.dumps(records, indent=2)}))[0]
        is None
    )


def test_separators_and_an_empty_board_are_not_cut() -> None:
    board = "BOARD = [\n" + "    [0, 0, 0, 0, 0, 0, 0, 0, 0],\n" * 9 + "]\n"
    banner = ("# " + "-" * 78 + "\n") * 3 + "=" * 120 + "\n"
    assert _stream(board + banner + board)[0] is None
