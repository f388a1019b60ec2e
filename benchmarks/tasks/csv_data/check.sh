#!/bin/sh
# Hidden check: the header and the twenty rows, in order (a trailing newline or not).
cd "$1" && python3 -c '
rows = open("data/squares.csv").read().strip().splitlines()
want = ["n,square"] + [f"{n},{n * n}" for n in range(1, 21)]
assert [r.strip() for r in rows] == want, rows[:3]
'
