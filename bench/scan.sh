#!/usr/bin/env bash
# The leak scan's cost: how long a process is stopped per MB of heap and per block.
# Usage: bench/scan.sh OUTDIR   (root; `make bench-scan`)
# For each heap shape, `ebprof mem --leaks -- heapfill N SIZE` scans at exit; the report's
# stopped_ns is the time from stopping every thread to letting them go (reading the live
# table, the roots and every block reached, classifying). Median of BENCH_RUNS (default 3).
# Also the scan's answer is checked: half the blocks reachable, the other half lost (one
# definitely, the rest indirectly).
# Then a real interpreter's heap, dense with interior pointers (perl's arenas of scalar
# bodies): with memcheck's heuristics and without them, which must give the same classes and
# cost about the same (a heuristic once read target memory per interior pointer: 9 s).
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
echo "| blocks | block size | heap | stopped (median) | per MB of heap | per 1000 blocks | read | read calls |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
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
		jq '.processes[0].leaks.read_calls' "$tmp/r.json" > "$tmp/calls"
	done
	ns=$(median < "$tmp/stopped")
	heap=$((n * size))
	awk -v n="$n" -v s="$size" -v heap="$heap" -v ns="$ns" -v rd="$(cat "$tmp/read")" \
		-v calls="$(cat "$tmp/calls")" 'BEGIN {
		mb = heap / 1048576
		printf "| %d | %d B | %.1f MB | %.1f ms | %.2f ms | %.3f ms | %.1f MB | %d |\n",
			n, s, mb, ns / 1e6, ns / 1e6 / mb, ns / 1e6 / (n / 1000), rd / 1048576, calls
	}'
done

# perl: a fixed hash seed, so every run builds the same heap
perl_hash='my %h; for my $i (1..300000) { $h{"key$i"} = [$i, "v" x ($i % 50)] }
	   delete $h{"key$_"} for 1..100000'
classes='.processes[0].leaks | [.definite, .indirect, .possible, .reachable]'
echo
echo "| perl hash, 300,000 keys | blocks | heap | stopped (median) | per MB of heap | read | read calls |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for heur in all none; do
	: > "$tmp/stopped"
	for ((i = 0; i < runs; i++)); do
		PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 "$out/ebprof" mem --leaks -q \
			--leak-heuristics "$heur" -o "$tmp/p-$heur.json" -- perl -e "$perl_hash"
		jq '.processes[0].leaks.stopped_ns' "$tmp/p-$heur.json" >> "$tmp/stopped"
	done
	jq -r '.processes[0].leaks | [.definite, .indirect, .possible, .reachable] as $c
		| [($c | map(.count) | add), ($c | map(.bytes) | add), .scanned_bytes, .read_calls]
		| @tsv' "$tmp/p-$heur.json" |
	awk -v heur="$heur" -v ns="$(median < "$tmp/stopped")" '{
		mb = $2 / 1048576
		printf "| heuristics %s | %d | %.1f MB | %.1f ms | %.2f ms | %.1f MB | %d |\n",
			heur, $1, mb, ns / 1e6, ns / 1e6 / mb, $3 / 1048576, $4
	}'
done
if ! diff <(jq -c "$classes" "$tmp/p-all.json") <(jq -c "$classes" "$tmp/p-none.json") >&2; then
	echo "bench/scan.sh: perl's classes differ with and without heuristics" >&2
	exit 1
fi
} | tee "$out/bench-scan.md"
