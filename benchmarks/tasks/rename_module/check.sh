#!/bin/sh
# Hidden check: strings.py holds the helpers, helpers.py is gone, nothing imports it, app runs.
cd "$1" && test -f strings.py && test ! -e helpers.py \
  && ! grep -qw helpers app.py report.py \
  && test "$(python3 app.py)" = "$(printf 'HELLO!\n2 items...')"
