#!/usr/bin/env bash
# End-to-end tests: real BPF in the real kernel against fixture programs. Needs root.
# Usage: tests/run-e2e.sh OUTDIR [bats files...]
set -u
out=${1:-build}
shift || true
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "e2e: skipped: needs root (loads BPF programs and attaches uprobes); run 'sudo make check'" >&2
	exit 1
fi
files=("$@")
[ $# -gt 0 ] || files=(tests/e2e/*.bats)
export OUT="$out" EBPROF="$PWD/$out/ebprof" FIX="$PWD/$out/fixtures"
rc=0
# BPF-level tests first (skeleton loaded in the test process), then the CLI end to end
if [ $# -eq 0 ]; then
	for t in "$out"/tests/bpf_test_*; do
		[ -x "$t" ] || continue
		case "$t" in *.d) continue ;; esac
		"$t" || rc=1
	done
fi
bats --timing "${files[@]}" || rc=1
exit $rc
