#!/usr/bin/env bash
# Tests that need root: BPF-level tests (tests/bpf, the collector loaded in the test process)
# and end-to-end tests (tests/e2e, bats, the CLI on fixtures and real programs).
# Usage: tests/run-e2e.sh OUTDIR [bats files...]   (with files: only those bats files)
# Prints "e2e: N passed, M failed" counting test cases; exit 1 if any failed.
set -u
set -o pipefail
out=${1:-build}
shift || true
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "e2e: not run: needs root (loads BPF programs and attaches uprobes); run 'sudo make check'" >&2
	echo "e2e: 0 passed, 1 failed"
	exit 1
fi
files=("$@")
[ $# -gt 0 ] || files=(tests/e2e/*.bats)
export OUT="$out" EBPROF="$PWD/$out/ebprof" FIX="$PWD/$out/fixtures"
pass=0 fail=0
log=$(mktemp)
# ebprof's caches (kernel symbols, decompressed debug files): one for this run, filled by its
# first tests, instead of the machine's (unless the caller chose one)
cache=
if [ -z "${EBPROF_CACHE_DIR+set}" ]; then
	cache=$(mktemp -d)
	export EBPROF_CACHE_DIR="$cache/cache"
fi
trap 'rm -f "$log"; [ -z "$cache" ] || rm -rf "$cache"' EXIT
if [ $# -eq 0 ]; then
	for t in "$out"/tests/bpf_test_*; do
		[ -x "$t" ] || continue
		case "$t" in *.d) continue ;; esac
		rc=0
		"$t" 2>&1 | tee "$log"
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		pass=$((pass + ${p:-0}))
		fail=$((fail + ${f:-0}))
		[ $rc -eq 0 ] || [ -n "$f" ] || fail=$((fail + 1))
	done
fi
# a negated command checks nothing unless it is a test's last (errexit ignores a `!`):
# tests/e2e/helpers.bash
# (its command: the `!` line to the next as little indented, which may end it with || false;
# then the test's closing brace)
if awk 'function ind(l) { match(l, /^\t*/); return RLENGTH }
	neg != "" && /\|\| false[ \t]*$/ { ok = 1 }
	neg != "" && $0 != "" && ind($0) <= nind {
		if ($0 !~ /^}/ && !ok) { print FILENAME ":" nline ": " neg; bad = 1 }
		neg = ""
	}
	neg == "" && /^\t*! / { neg = $0; nline = FNR; nind = ind($0); ok = /\|\| false[ \t]*$/ }
	END { exit !bad }' "${files[@]}"; then
	echo "e2e: the lines above check nothing (a negated command not last in its test: add || false)"
	fail=$((fail + 1))
fi
bats --timing "${files[@]}" 2>&1 | tee "$log"
brc=${PIPESTATUS[0]}
p=$(grep -c '^ok ' "$log")
f=$(grep -c '^not ok ' "$log")
pass=$((pass + p))
fail=$((fail + f))
[ "$brc" -eq 0 ] || [ "$f" -gt 0 ] || fail=$((fail + 1))
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
