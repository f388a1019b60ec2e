#!/bin/sh
# Hidden check: report.py runs and prints the mean and spread of its scores.
cd "$1" && test "$(python3 report.py)" = "mean 6.0, spread 7.0"
