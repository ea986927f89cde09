#!/usr/bin/env bash
# `make check`: unit tests, then BPF-level and end-to-end tests. The last line is the total:
# "check: N passed, M failed".
set -u
set -o pipefail		# the tee below must not hide a runner's failure
out=${1:-build}
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
bash tests/run-unit.sh "$out" 2>&1 | tee "$log" || rc=1
bash tests/run-e2e.sh "$out" 2>&1 | tee -a "$log" || rc=1
pass=$(sed -n 's/^\(unit\|e2e\): \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | awk "{ s += \$1 } END { print s + 0 }")
fail=$(sed -n 's/^\(unit\|e2e\): \([0-9]*\) passed, \([0-9]*\) failed$/\3/p' "$log" | awk "{ s += \$1 } END { print s + 0 }")
echo "check: ${pass:-0} passed, ${fail:-0} failed"
exit $rc
