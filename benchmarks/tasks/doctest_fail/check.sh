#!/bin/sh
# Hidden check: the doctests pass as written (the docstring unchanged) and more amounts format.
cd "$1" && grep -q "    >>> format_cents(7)" money.py && grep -q "    '\$0.07'" money.py \
  && python3 -m doctest money.py && python3 -c '
from money import format_cents
assert format_cents(100005) == "$1000.05", format_cents(100005)
assert format_cents(0) == "$0.00"
'
