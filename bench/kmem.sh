#!/usr/bin/env bash
# What `ebprof kmem` costs (`make bench-kmem`): a system-call-heavy loop (bench/kmemloop.c: open +
# close of /dev/null and pipe + closes, ~12 kernel allocations and frees a round) alone, under
# `ebprof kmem -- CMD` (the workload only; the frees of the whole machine are still looked up),
# under `ebprof kmem -a` (every allocation on the machine counted by stack), and under bpftrace
# counting the same tracepoints per process (`@[pid, probe] = count()` on kmalloc, kfree,
# kmem_cache_alloc/free, mm_page_alloc/free: counting only, no stacks, no pointer tracking), and
# under bpftrace counting the allocations by kernel and user stack as well
# (`@[pid, probe, kstack, ustack] = count()` on the three allocation tracepoints, the frees
# counted as before): the nearest bpftrace does to what ebprof records.
# Usage: bench/kmem.sh OUTDIR (default build)   (root)
#
# BENCH_KMEM_ROUNDS rounds (default 5), the configurations' order rotated each round; each cell
# is the median of the rounds. The figure is the loop's own mean ns per round (it times itself),
# so start-up and report writing are not in it. This is a noisy shared 2-core VM: compare only
# figures of one run. Then, untimed (kernel.bpf_stats_enabled=1 slows every BPF program), the
# cost per event of each program: bpf_stats run_time_ns / run_cnt from `bpftool prog show`,
# read while the loop runs under each tool.
# Writes the tables to stdout and OUTDIR/bench-kmem.md.
set -euo pipefail

out=${1:-build}
ROUNDS=${BENCH_KMEM_ROUNDS:-5}
N=${BENCH_KMEM_N:-200000}
cd "$(dirname "$0")/.."

die() { printf 'bench-kmem: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
EBPROF=$out/ebprof
[ -x "$EBPROF" ] || die "$EBPROF is not built (make all)"
command -v bpftrace >/dev/null || die "bpftrace is not installed (scripts/install-deps.sh)"
grep -q tracefs /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing
mkdir -p "$out/bench"
LOOP=$out/bench/kmemloop
cc -O2 -o "$LOOP" bench/kmemloop.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

BT_PROG='tracepoint:kmem:kmalloc, tracepoint:kmem:kfree, tracepoint:kmem:kmem_cache_alloc,
tracepoint:kmem:kmem_cache_free, tracepoint:kmem:mm_page_alloc, tracepoint:kmem:mm_page_free
{ @[pid, probe] = count(); }'
BT_STACKS='tracepoint:kmem:kmalloc, tracepoint:kmem:kmem_cache_alloc, tracepoint:kmem:mm_page_alloc
{ @s[pid, probe, kstack, ustack] = count(); }
tracepoint:kmem:kfree, tracepoint:kmem:kmem_cache_free, tracepoint:kmem:mm_page_free
{ @[pid, probe] = count(); }'

# One configuration: prints the loop's ns per round.
run_one() {
	local cfg=$1 pid
	case $cfg in
	alone)
		"$LOOP" "$N" ;;
	ebprof)
		"$EBPROF" kmem -q -o "$tmp/e.json" -- "$LOOP" "$N" ;;
	ebprof-a)
		"$EBPROF" kmem -q -v -o "$tmp/a.json" 2> "$tmp/a.err" &
		pid=$!
		until grep -q "every process" "$tmp/a.err" 2>/dev/null; do sleep 0.05; done
		"$LOOP" "$N"
		kill -INT $pid
		wait $pid ;;
	bpftrace|bpftrace-stacks)
		prog=$BT_PROG
		[ "$cfg" = bpftrace ] || prog=$BT_STACKS
		bpftrace -e "BEGIN { printf(\"ready\\n\"); } $prog" > "$tmp/bt.out" 2>&1 &
		pid=$!
		until grep -q ready "$tmp/bt.out" 2>/dev/null; do sleep 0.05; done
		"$LOOP" "$N"
		kill -INT $pid
		wait $pid || true ;;
	esac
}

CFGS=(alone ebprof ebprof-a bpftrace bpftrace-stacks)
declare -A res
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < ${#CFGS[@]}; i++)); do
		cfg=${CFGS[$(((i + r) % ${#CFGS[@]}))]}
		v=$(run_one "$cfg" | tail -1)
		res[$cfg]+="$v "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${res[alone]}" | median)

# bpf_stats: ns per run of each program while the loop runs (not timed)
stats() {
	local pattern=$1
	bpftool prog show 2>/dev/null | awk -v pat="$pattern" '
		/^[0-9]+: / {
			name = ""; t = 0; c = 0
			for (i = 1; i <= NF; i++) {
				if ($i == "name") name = $(i + 1)
				if ($i == "run_time_ns") t = $(i + 1)
				if ($i == "run_cnt") c = $(i + 1)
			}
			if (name ~ pat && c > 0) printf "%s %d %d\n", name, t, c
		}'
}
stats_of() {
	local cfg=$1 pat=$2 pid
	sysctl -q kernel.bpf_stats_enabled=1
	case $cfg in
	ebprof-a)
		"$EBPROF" kmem -q -v -o "$tmp/s.json" 2> "$tmp/s.err" &
		pid=$!
		until grep -q "every process" "$tmp/s.err" 2>/dev/null; do sleep 0.05; done ;;
	bpftrace|bpftrace-stacks)
		prog=$BT_PROG
		[ "$cfg" = bpftrace ] || prog=$BT_STACKS
		bpftrace -e "BEGIN { printf(\"ready\\n\"); } $prog" > "$tmp/bs.out" 2>&1 &
		pid=$!
		until grep -q ready "$tmp/bs.out" 2>/dev/null; do sleep 0.05; done ;;
	esac
	"$LOOP" "$N" >/dev/null
	stats "$pat" > "$tmp/stats.$cfg"
	kill -INT $pid
	wait $pid || true
	sysctl -q kernel.bpf_stats_enabled=0
}
stats_of ebprof-a '^kmem_'
# bpftrace names a program after its probe, cut at 15 characters
BT_NAMES='^(kmalloc|kfree|kmem_cache_all.*|kmem_cache_fre.*|mm_page_alloc|mm_page_free)$'
stats_of bpftrace "$BT_NAMES"
stats_of bpftrace-stacks "$BT_NAMES"

{
	echo "## ebprof kmem: cost on a system-call-heavy loop"
	echo
	echo "kmemloop $N rounds (open+close, pipe+2 closes), $ROUNDS rounds each, median ns per round;"
	echo "kernel $(uname -r), $(nproc) CPUs."
	echo
	echo "| configuration | ns per round | slowdown |"
	echo "|---|---:|---:|"
	for cfg in "${CFGS[@]}"; do
		m=$(echo "${res[$cfg]}" | median)
		echo "| $cfg | $m | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2fx", a / b }') |"
	done
	echo
	echo "bpf_stats while the loop ran (every program of the tool; ns per run = run_time_ns / run_cnt):"
	echo
	echo "| tool | program | runs | ns per run |"
	echo "|---|---|---:|---:|"
	for cfg in ebprof-a bpftrace bpftrace-stacks; do
		while read -r name t c; do
			echo "| $cfg | $name | $c | $((t / c)) |"
		done < "$tmp/stats.$cfg"
	done
} | tee "$out/bench-kmem.md"
