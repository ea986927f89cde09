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
[ ${#files[@]} -gt 0 ] || files=(tests/e2e/*.bats)
export OUT="$out" EBPROF="$PWD/$out/ebprof" FIX="$PWD/$out/fixtures"
exec bats --timing "${files[@]}"
