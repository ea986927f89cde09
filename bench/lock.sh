#!/usr/bin/env bash
# What `ebprof lock` costs (`make bench-lock`): a mutex-heavy loop (bench/mutexloop.c: 4 threads
# taking one pthread mutex, a little work inside and outside) alone, launched by `ebprof lock
# --`, under `ebprof lock -a`, and under bpftrace doing the same tracking for the loop: every
# futex wait timed from sys_enter_futex to sys_exit_futex, summed per (pid, futex address, user
# stack), EAGAIN counted apart; every kernel lock contention timed from contention_begin to
# contention_end per thread, summed per (pid, lock, kernel stack, user stack).
# Usage: bench/lock.sh OUTDIR (default build)   (root)
#
# BENCH_LOCK_ROUNDS rounds (default 5), the configurations' order rotated each round; each cell
# is the median of the rounds. The figure is the loop's own mean ns per acquisition (it times
# itself), so start-up and report writing are not in it; with it, the futex waits and kernel
# contentions ebprof counted (the event rate). This is a noisy shared 2-core VM: compare only
# figures of one run. Then, untimed (kernel.bpf_stats_enabled=1 slows every BPF program), the
# cost per event of each program: bpf_stats run_time_ns / run_cnt from `bpftool prog show`,
# read while the loop runs under each tool. Writes the table to stdout and OUTDIR/bench-lock.md.
set -euo pipefail

out=${1:-build}
ROUNDS=${BENCH_LOCK_ROUNDS:-5}
THREADS=${BENCH_LOCK_THREADS:-4}
N=${BENCH_LOCK_N:-200000}
cd "$(dirname "$0")/.."

die() { printf 'bench-lock: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
EBPROF=$out/ebprof
[ -x "$EBPROF" ] || die "$EBPROF is not built (make all)"
command -v bpftrace >/dev/null || die "bpftrace is not installed (scripts/install-deps.sh)"
grep -q tracefs /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing
mkdir -p "$out/bench"
LOOP=$out/bench/mutexloop
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$LOOP" bench/mutexloop.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

BT_PROG='BEGIN { printf("ready\n"); }
tracepoint:syscalls:sys_enter_futex /comm == "mutexloop"/ {
	$c = args->op & 127;
	if ($c == 0 || $c == 9 || $c == 6 || $c == 13 || $c == 11) {
		@s[tid] = nsecs; @a[tid] = args->uaddr;
	}
}
tracepoint:syscalls:sys_exit_futex /@s[tid]/ {
	if (args->ret == -11) { @nowait[pid, @a[tid]] = count(); }
	else {
		@n[pid, @a[tid], ustack] = count();
		@t[pid, @a[tid], ustack] = sum(nsecs - @s[tid]);
	}
	delete(@s[tid]); delete(@a[tid]);
}
tracepoint:lock:contention_begin /comm == "mutexloop"/ { @ks[tid] = nsecs; @kl[tid] = args->lock_addr; }
tracepoint:lock:contention_end /@ks[tid] && @kl[tid] == args->lock_addr/ {
	@kn[pid, args->lock_addr, kstack, ustack] = count();
	@kt[pid, args->lock_addr, kstack, ustack] = sum(nsecs - @ks[tid]);
	delete(@ks[tid]); delete(@kl[tid]);
}
END { clear(@s); clear(@a); clear(@ks); clear(@kl); }'

# One configuration: prints the loop's ns per acquisition, then the waits ebprof counted.
run_one() {
	local cfg=$1 pid
	case $cfg in
	alone)
		"$LOOP" "$THREADS" "$N" ;;
	ebprof)
		"$EBPROF" lock -q -o "$tmp/e.json" -- "$LOOP" "$THREADS" "$N"
		jq -r '"\(.info.futex_waits) \(.info.kernel_contentions)"' "$tmp/e.json" >&3 ;;
	ebprof-a)
		"$EBPROF" lock -q -v -a -o "$tmp/a.json" 2> "$tmp/a.err" &
		pid=$!
		until grep -q "tracepoints:" "$tmp/a.err" 2>/dev/null; do sleep 0.05; done
		"$LOOP" "$THREADS" "$N"
		kill -INT $pid
		wait $pid ;;
	bpftrace)
		bpftrace -e "$BT_PROG" > "$tmp/bt.out" 2>&1 &
		pid=$!
		until grep -q ready "$tmp/bt.out" 2>/dev/null; do sleep 0.05; done
		"$LOOP" "$THREADS" "$N"
		kill -INT $pid
		wait $pid || true ;;
	esac
}

CFGS=(alone ebprof ebprof-a bpftrace)
declare -A res
: > "$tmp/waits"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < ${#CFGS[@]}; i++)); do
		cfg=${CFGS[$(((i + r) % ${#CFGS[@]}))]}
		v=$(run_one "$cfg" 3>>"$tmp/waits" | tail -1)
		res[$cfg]+="$v "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${res[alone]}" | median)
futex=$(awk '{ print $1 }' "$tmp/waits" | median)
kern=$(awk '{ print $2 }' "$tmp/waits" | median)

# bpf_stats: ns per run of each program while the loop runs (not timed: the statistics slow
# every program a little)
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
	ebprof)
		rm -f "$tmp/go" "$tmp/done"
		"$EBPROF" lock -q -o "$tmp/s.json" -- sh -c "until [ -e '$tmp/go' ]; do sleep 0.05;
			done; '$LOOP' $THREADS $N >/dev/null; touch '$tmp/done'; sleep 60" &
		pid=$!
		sleep 1
		touch "$tmp/go"
		until [ -e "$tmp/done" ]; do sleep 0.05; done ;;
	bpftrace)
		bpftrace -e "$BT_PROG" > "$tmp/bs.out" 2>&1 &
		pid=$!
		until grep -q ready "$tmp/bs.out" 2>/dev/null; do sleep 0.05; done
		"$LOOP" "$THREADS" "$N" >/dev/null ;;
	esac
	stats "$pat" > "$tmp/stats.$cfg"
	kill -INT $pid
	wait $pid || true
	sysctl -q kernel.bpf_stats_enabled=0
}
stats_of ebprof '^(lock_begin|lock_end|futex_enter|futex_exit)$'
# bpftrace names a program after its probe, cut at 15 characters
stats_of bpftrace '^(sys_enter_fute|sys_exit_futex|contention_beg|contention_end)'

{
	echo "## ebprof lock: cost on a mutex-heavy loop"
	echo
	echo "mutexloop: $THREADS threads x $N acquisitions of one mutex, $ROUNDS rounds each, median"
	echo "ns per acquisition; under ebprof a run had (median) $futex futex waits and $kern kernel"
	echo "lock contentions; kernel $(uname -r), $(nproc) CPUs."
	echo
	echo "| configuration | ns per acquisition | slowdown |"
	echo "|---|---:|---:|"
	for cfg in "${CFGS[@]}"; do
		m=$(echo "${res[$cfg]}" | median)
		echo "| $cfg | $m | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2fx", a / b }') |"
	done
	echo
	echo "bpf_stats while the loop ran (ns per run = run_time_ns / run_cnt; every run, the"
	echo "early returns on other processes' and other system calls' events included):"
	echo
	echo "| tool | program | runs | ns per run |"
	echo "|---|---|---:|---:|"
	for cfg in ebprof bpftrace; do
		while read -r name t c; do
			echo "| $cfg | $name | $c | $((t / c)) |"
		done < "$tmp/stats.$cfg"
	done
	echo
	# per event of the loop: every program's time over the loop's own events (ebprof's JSON of
	# that run: its futex calls, waits or not, and its kernel contentions)
	calls=$(jq '(.info.futex_waits | tonumber) + (.info.futex_nowait | tonumber)' "$tmp/s.json")
	kc=$(jq '.info.kernel_contentions | tonumber' "$tmp/s.json")
	sum_t() { awk -v pat="$2" '$1 ~ pat { t += $2 } END { print t + 0 }' "$tmp/stats.$1"; }
	per_run() { awk -v pat="$2" '$1 ~ pat && $3 > 0 { t += $2 / $3 } END { printf "%.0f", t }' \
		"$tmp/stats.$1"; }
	echo "Per event: ebprof's futex programs spent" \
		"$(awk -v t="$(sum_t ebprof '^futex_')" -v n="$calls" 'BEGIN { printf "%.0f", t / n }')" \
		"ns per futex call of the loop ($calls calls; they run on every system call of the" \
		"machine, so this counts the early returns on all the others too), its lock programs" \
		"$(awk -v t="$(sum_t ebprof '^lock_')" -v n="$kc" 'BEGIN { printf "%.0f", n ? t / n : 0 }')" \
		"ns per kernel contention of the loop ($kc); bpftrace's run only on futex calls and" \
		"contentions: $(per_run bpftrace '^sys_e') ns per futex call (enter + exit), and" \
		"$(per_run bpftrace '^contention') ns per contention (begin + end)."
} | tee "$out/bench-lock.md"
