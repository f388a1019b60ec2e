#!/bin/sh
# Hidden check: slugify exists and behaves as the prompt says; the other helpers are untouched.
cd "$1" && python3 -c '
from textutil import slugify, truncate
assert slugify("Hello, World!") == "hello-world", slugify("Hello, World!")
assert slugify("Ten tips for Python 3") == "ten-tips-for-python-3"
assert slugify("  many   spaces ") == "many-spaces"
assert truncate("abcdef", 4) == "abc…"
' && python3 build.py >/dev/null
