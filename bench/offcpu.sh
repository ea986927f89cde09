#!/usr/bin/env bash
# What `ebprof offcpu` costs on a context-switch-heavy workload (`make bench-offcpu`), beside
# bpftrace doing the same tracking (bench/offcpu.bt: the off-CPU time of the launched command's
# threads summed per kernel and user stack at the switch-out, from tracepoint sched_switch).
# Usage: bench/offcpu.sh OUTDIR (default build)   (root)
#
# Workload: tests/fixtures/pingpong.c, BENCH_OFFCPU_ROUNDS (default 300000) round trips of a
# byte between two threads through two pipes: every round is two blocking reads, so two
# switch-outs and two switch-ins of the traced threads (and the wakeups). It times the
# ping-pong itself (CLOCK_MONOTONIC from the threads' creation to their end) and prints it as
# elapsed_ns: the tools' start-up and read-out are outside it. Configurations, in turn, the
# order rotated each round (BENCH_OFFCPU_REPEAT rounds, default 5):
#   alone           the workload untraced
#   ebprof          `ebprof offcpu -o FILE.json -- pingpong N`
#   ebprof-wakers   the same with --wakers (the waker's stacks at sched_waking too)
#   ebprof-wall     `ebprof cpu --offcpu` (99 Hz samples and off-CPU time)
#   bpftrace        `bpftrace -c 'pingpong N' bench/offcpu.bt`
# Per configuration: the median elapsed time, its ratio to alone's median, and the time added
# per context switch of the workload (2 per round). The machine may be shared: compare the
# ratios of one run.
#
# Writes the table to stdout and OUTDIR/bench-offcpu.md, raw values to OUTDIR/bench/offcpu-raw.txt.
set -euo pipefail

out=${1:-build}
N=${BENCH_OFFCPU_ROUNDS:-300000}
REPEAT=${BENCH_OFFCPU_REPEAT:-5}
cd "$(dirname "$0")/.."

die() {
	printf 'bench-offcpu: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (loads BPF programs)"
command -v bpftrace >/dev/null || die "bpftrace is not installed (the anchor): apt-get install bpftrace"
[ -x "$out/ebprof" ] || die "$out/ebprof is not built: make"
[ -x "$out/fixtures/pingpong" ] || die "$out/fixtures/pingpong is not built: make fixtures"
# bpftrace's tracepoints need tracefs
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

pp=$out/fixtures/pingpong
work=$(mktemp -d)
raw=$out/bench/offcpu-raw.txt
mkdir -p "$out/bench"
: >"$raw"
trap 'rm -rf "$work"' EXIT

configs=(alone ebprof ebprof-wakers ebprof-wall bpftrace)

# One run of configuration $1: prints the workload's elapsed_ns.
one() {
	case $1 in
	alone) "$pp" "$N" ;;
	ebprof) "$out/ebprof" offcpu -q -o "$work/e.json" -- "$pp" "$N" ;;
	ebprof-wakers) "$out/ebprof" offcpu -q --wakers -o "$work/w.json" -- "$pp" "$N" ;;
	ebprof-wall) "$out/ebprof" cpu -q --offcpu -o "$work/c.json" -- "$pp" "$N" ;;
	bpftrace) bpftrace -c "$pp $N" bench/offcpu.bt 2>/dev/null ;;
	esac | awk '/^elapsed_ns/ { print $2 }'
}

for ((r = 0; r < REPEAT; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		cfg=${configs[(i + r) % ${#configs[@]}]}
		ns=$(one "$cfg")
		[ -n "$ns" ] || die "$cfg: the workload printed no elapsed_ns"
		echo "$cfg $r $ns" >>"$raw"
	done
done
switches=$(jq -r '.info.switches' "$work/e.json")

median() {
	awk -v c="$1" '$1 == c { print $3 }' "$raw" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

base=$(median alone)
{
	echo "Workload: $N rounds of pingpong ($((2 * N)) blocking reads; ebprof counted $switches"
	echo "switches of its threads in its last run), median of $REPEAT rounds."
	echo
	echo "| configuration | elapsed (ms) | ratio to alone | added per switch (ns) |"
	echo "|---------------|-------------:|---------------:|----------------------:|"
	for cfg in "${configs[@]}"; do
		m=$(median "$cfg")
		awk -v c="$cfg" -v m="$m" -v b="$base" -v n="$N" 'BEGIN {
			printf "| %s | %.0f | %.2f | %.0f |\n", c, m / 1e6, m / b, (m - b) / (2 * n) }'
	done
} | tee "$out/bench-offcpu.md"
