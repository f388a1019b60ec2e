#!/bin/sh
# Hidden check: a partial last page counts, an empty listing has no page.
cd "$1" && python3 -c '
from pagination import page_count, page_slice
assert [page_count(n, 10) for n in (0, 1, 10, 11, 20, 21)] == [0, 1, 1, 2, 2, 3]
assert page_count(7, 3) == 3 and page_slice(1, 5) == (0, 5)
'
