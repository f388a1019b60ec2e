#!/bin/sh
# Hidden check: tail() gives the last n items; the rest of the recipes still work.
cd "$1" && python3 -c '
from moreiter import tail, take, chunked
assert list(tail(3, "ABCDEFG")) == ["E", "F", "G"], list(tail(3, "ABCDEFG"))
assert list(tail(5, "AB")) == ["A", "B"]
assert list(tail(1, range(100))) == [99]
assert take(2, "abc") == ["a", "b"] and list(chunked(range(3), 2)) == [[0, 1], [2]]
'
