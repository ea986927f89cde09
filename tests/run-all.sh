#!/usr/bin/env bash
# `make check`: unit tests, then end-to-end tests. Prints one summary line at the end.
set -u
out=${1:-build}
cd "$(dirname "$0")/.."
rc=0
bash tests/run-unit.sh "$out" || rc=1
bash tests/run-e2e.sh "$out" || rc=1
if [ $rc -eq 0 ]; then echo "check: all tests passed"; else echo "check: FAILED" >&2; fi
exit $rc
