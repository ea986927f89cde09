#!/usr/bin/env bash
# Run every unit test binary (cmocka, no root needed). Usage: tests/run-unit.sh OUTDIR
set -u
out=${1:-build}
pass=0 fail=0
for t in "$out"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.d) continue ;; esac
	if (cd "$(dirname "$0")/.." && OUT="$out" "$t"); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "unit: FAILED $t" >&2
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
