#!/usr/bin/env bash
# Tests that need root: BPF-level tests (tests/bpf, the collector loaded in the test process)
# and end-to-end tests (tests/e2e, bats, the CLI on fixtures and real programs).
# Usage: tests/run-e2e.sh OUTDIR [bats files...]   (with files: only those bats files)
# Prints "e2e: N passed, M failed" counting test cases; exit 1 if any failed.
#
# The bats tests run in two groups: first those that may run beside another test, two at a
# time (EBPROF_E2E_JOBS, default 2; bats --jobs needs GNU parallel), then those tagged
# `alone` (`# bats test_tags=alone`, or `file_tags` for a whole file) one at a time, the
# machine to themselves: machine-wide runs (-a), bpftrace's machine-wide oracles, the disk's
# own counts, fixed ports, a screen read at a moment. Most tests wait (on a fixture's naps, a
# duration, a window), so two at a time take about half the time on two CPUs. The rule for a
# new test is in tests/e2e/helpers.bash; a test that runs -a, bpftrace or the disk's counts
# without a tag saying which group it belongs to is refused here.
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
# a test that looks machine-wide must say whether it runs alone (tag alone) or, having been
# checked, may run beside another (tag concurrent: e.g. its -a runs are usage errors)
if awk 'FNR == 1 { ftag = 0; ttag = 0 }
	/^[ \t]*#[ \t]*bats[ \t]+file_tags=.*(alone|concurrent)/ { ftag = 1 }
	/^[ \t]*#[ \t]*bats[ \t]+test_tags=.*(alone|concurrent)/ { ttag = 1 }
	/^@test / { body = 1; line = FNR; hit = ""; next }
	body && /^}/ {
		if (hit != "" && !ttag && !ftag) { print FILENAME ":" line ": " hit; bad = 1 }
		body = 0; ttag = 0; next
	}
	body && !/^[ \t]*#/ {
		if ($0 ~ /(^|[ \t"])-a([ \t"]|$)/) hit = "runs -a"
		else if ($0 ~ /bpftrace/) hit = "runs bpftrace"
		else if ($0 ~ /var_tmp_disk|--device/) hit = "counts a disk"
	}
	END { exit !bad }' "${files[@]}"; then
	echo "e2e: the tests above look machine-wide but have no tag: add '# bats test_tags=alone'"
	echo "e2e: before each ('concurrent' if it may run beside another: tests/e2e/helpers.bash)"
	fail=$((fail + 1))
fi
jobs=${EBPROF_E2E_JOBS:-2}
# (grep reads all of it: with -q it could end first, parallel then die of SIGPIPE, and pipefail
# say there is none)
if [ "$jobs" -gt 1 ] && ! parallel --version 2> /dev/null | grep '^GNU parallel' > /dev/null; then
	echo "e2e: GNU parallel is not installed (scripts/install-deps.sh installs it):" \
		"every test runs one at a time" >&2
	jobs=1
fi
# GNU parallel, which bats runs, prints no citation notice with --will-cite
export PARALLEL="--will-cite${PARALLEL:+ $PARALLEL}"
# bats_group NAME ARGS...: one bats run, its output added to the log, its wall time said
brc=0
bats_group() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	bats --timing "$@" 2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	echo "e2e: $name: $(($(date +%s) - t0)) s"
	[ "$rc" -eq 0 ] || brc=$rc
}
: > "$log"
if [ "$jobs" -gt 1 ]; then
	# a file's tests one after another, files side by side: bats' own scheduling of tests
	# within files waits up to a second for each free slot (~25% more time, measured)
	bats_group "tests $jobs at a time" --jobs "$jobs" --no-parallelize-within-files \
		--filter-tags '!alone' "${files[@]}"
	bats_group "tests alone" --filter-tags alone "${files[@]}"
else
	bats_group "tests one at a time" "${files[@]}"
fi
p=$(grep -c '^ok ' "$log")
f=$(grep -c '^not ok ' "$log")
pass=$((pass + p))
fail=$((fail + f))
[ "$brc" -eq 0 ] || [ "$f" -gt 0 ] || fail=$((fail + 1))
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
