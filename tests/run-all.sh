#!/usr/bin/env bash
# `make check`: unit tests, BPF-level and end-to-end tests (as root the unit tests run beside the
# end-to-end tests that run two at a time: tests/run-e2e.sh). The last line is the total:
# "check: N passed, M failed".
set -u
set -o pipefail		# the tee below must not hide a runner's failure
out=${1:-build}
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
if [ "$(id -u)" -eq 0 ]; then
	# the unit tests need no machine to themselves: run-e2e.sh runs them beside the
	# end-to-end tests that run two at a time, before the BPF-level tests (their output
	# comes after that group's)
	EBPROF_E2E_BESIDE="bash tests/run-unit.sh '$out'" bash tests/run-e2e.sh "$out" 2>&1 |
		tee "$log" || rc=1
else
	bash tests/run-unit.sh "$out" 2>&1 | tee "$log" || rc=1
	bash tests/run-e2e.sh "$out" 2>&1 | tee -a "$log" || rc=1
fi
pass=$(sed -n 's/^\(unit\|e2e\): \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | awk "{ s += \$1 } END { print s + 0 }")
fail=$(sed -n 's/^\(unit\|e2e\): \([0-9]*\) passed, \([0-9]*\) failed$/\3/p' "$log" | awk "{ s += \$1 } END { print s + 0 }")
echo "check: ${pass:-0} passed, ${fail:-0} failed"
exit $rc
