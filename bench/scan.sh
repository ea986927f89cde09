#!/usr/bin/env bash
# The leak scan's cost: how long a process is stopped per MB of heap and per block.
# Usage: bench/scan.sh OUTDIR   (root; `make bench-scan`)
# For each heap shape, `ebprof mem --leaks -- heapfill N SIZE` scans at exit; the report's
# stopped_ns is the time from stopping every thread to letting them go (reading the live
# table, the roots and every block reached, classifying). Median of BENCH_RUNS (default 3).
# Also the scan's answer is checked: half the blocks reachable, the other half lost (one
# definitely, the rest indirectly).
set -euo pipefail
out=${1:-build}
runs=${BENCH_RUNS:-3}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench/scan.sh: needs root (loads BPF)" >&2; exit 1; }
mkdir -p "$out/bench"
gcc -O2 -g -fno-omit-frame-pointer -o "$out/bench/heapfill" bench/heapfill.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

{
echo "| blocks | block size | heap | stopped (median) | per MB of heap | per 1000 blocks | read |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for shape in "100000 64" "1000000 64" "16384 4096" "2000000 64" "65536 4096"; do
	set -- $shape
	n=$1 size=$2
	: > "$tmp/stopped"
	for ((i = 0; i < runs; i++)); do
		"$out/ebprof" mem --leaks -q --max-live $((n + 4096)) -o "$tmp/r.json" -- \
			"$out/bench/heapfill" "$n" "$size"
		jq -e --argjson n "$n" '.processes[0].leaks
			| .reachable.count >= ($n / 2 | floor) and .definite.count == 1 and
			  .indirect.count == ($n - ($n / 2 | floor) - 1)' "$tmp/r.json" > /dev/null || {
			echo "bench/scan.sh: wrong classes for $n x $size:" >&2
			jq '.processes[0].leaks' "$tmp/r.json" >&2
			exit 1
		}
		jq '.processes[0].leaks.stopped_ns' "$tmp/r.json" >> "$tmp/stopped"
		jq '.processes[0].leaks.scanned_bytes' "$tmp/r.json" > "$tmp/read"
	done
	ns=$(median < "$tmp/stopped")
	heap=$((n * size))
	awk -v n="$n" -v s="$size" -v heap="$heap" -v ns="$ns" -v rd="$(cat "$tmp/read")" 'BEGIN {
		mb = heap / 1048576
		printf "| %d | %d B | %.1f MB | %.1f ms | %.2f ms | %.3f ms | %.1f MB |\n",
			n, s, mb, ns / 1e6, ns / 1e6 / mb, ns / 1e6 / (n / 1000), rd / 1048576
	}'
done
} | tee "$out/bench-scan.md"
