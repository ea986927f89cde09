#!/usr/bin/env bash
# Run every unit test binary (cmocka, no root needed). Usage: tests/run-unit.sh OUTDIR
# Prints "unit: N passed, M failed" counting test cases; exit 1 if any failed.
set -u
set -o pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
pass=0 fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$out"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.d) continue ;; esac
	rc=0
	OUT="$out" "$t" 2>&1 | tee "$log" || rc=1
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ $rc -ne 0 ] && [ -z "$f" ]; then
		fail=$((fail + 1))	# crashed or failed outside a test case
		echo "unit: FAILED $t" >&2
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
