#!/usr/bin/env bash
# What probe placement saves (docs/PERFORMANCE.md, "Probe placement"); root.
# For glibc's free and each function whose probe placement moves off the entry, a tight loop of
# allocate/free pairs (bench/placeloop.c) untraced, with one counting uprobe at the function's
# entry, and with it where ebprof puts it; medians of RUNS alternating runs, as a markdown table.
# The loop runs on a private copy of libc (ld.so --library-path): uprobes are per inode, so
# another tracer's system-wide probes on the shared libc cannot single-step it.
# Usage: bench/placement.sh [OUTDIR]   (RUNS=5 N=200000 by default)
set -euo pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
N=${N:-200000}
[ "$(id -u)" -eq 0 ] || { echo "placement: needs root (uprobes)" >&2; exit 1; }
make --no-print-directory "$out/libebprof.a" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -Isrc bench/placeloop.c "$out/libebprof.a" -lelf -ldw -lz -llzma -liberty \
	-lcapstone -o "$tmp/placeloop"
cp /lib/x86_64-linux-gnu/libc.so.6 "$tmp/"
run() { /lib64/ld-linux-x86-64.so.2 --library-path "$tmp" "$tmp/placeloop" "$@"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

fns=(free memalign posix_memalign valloc pvalloc)
for ((r = 0; r < RUNS; r++)); do
	for f in "${fns[@]}"; do
		for m in none entry point; do
			line=$(run "$f" "$m" "$N")
			# "free point +0x3: 556.1 ns/pair, 50000 hits"
			echo "$line" | awk '{ print $4 }' >>"$tmp/$f.$m"
			echo "$line" | awk '{ sub(":", "", $3); print $3 }' >"$tmp/$f.$m.off"
			hits=$(echo "$line" | awk '{ print $6 }')
			[ "$m" = none ] || [ "$hits" -eq "$N" ] ||
				{ echo "placement: $f $m: $hits hits for $N calls" >&2; exit 1; }
		done
	done
done
echo "| function (glibc) | probe point | untraced ns/pair | uprobe at entry: added ns | uprobe at the point: added ns | saved per call |"
echo "|---|---|---|---|---|---|"
for f in "${fns[@]}"; do
	u=$(median <"$tmp/$f.none")
	e=$(median <"$tmp/$f.entry")
	p=$(median <"$tmp/$f.point")
	awk -v f="$f" -v off="$(cat "$tmp/$f.point.off")" -v u="$u" -v e="$e" -v p="$p" 'BEGIN {
		printf "| %s | %s | %.0f | %.0f | %.0f | %.0f ns (%.1fx less) |\n",
			f, off, u, e - u, p - u, e - p, (e - u) / (p - u) }'
done
echo
echo "$N pairs per run, medians of $RUNS alternating runs; every probed run counted exactly $N hits."
