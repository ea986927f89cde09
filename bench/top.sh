#!/usr/bin/env bash
# What `ebprof top` itself costs at the default interval (1 s): its own CPU time, and the run
# time of its BPF program. Usage: bench/top.sh OUTDIR (default build)   (root; tmux)
#
# Configurations (each in a tmux screen of 160x48, as a person would run it, except batch):
#   all    `ebprof top` (every process, the default)
#   pid    `ebprof top -p PID` of a spinning fixture (bench/cpuburn.c's build of OUTDIR)
#   batch  `ebprof top -b > /dev/null` (every process)
# For each, after BENCH_TOP_WARMUP seconds (default 3: start-up, the kernel symbols, the first
# symbolization of every process's frames), ebprof's utime + stime (/proc/PID/stat) over
# BENCH_TOP_SECS seconds (default 30), as a percentage of one CPU. With kernel.bpf_stats_enabled
# = 1 (BENCH_TOP_STATS=1 sets it for the run and restores it: it slows every BPF program on the
# machine a little), the run time of the programs ebprof holds (bpftool: run_time_ns) over the
# same seconds: the sampling program runs in the interrupted tasks, not in ebprof, so it is not
# in ebprof's own CPU time. BENCH_TOP_ARGS: options added to every configuration (e.g.
# --no-offcpu, to see one part's share side by side). A shared noisy VM: one run's figures,
# compared with each other.
set -euo pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
EBPROF=$PWD/$out/ebprof
secs=${BENCH_TOP_SECS:-30}
warm=${BENCH_TOP_WARMUP:-3}
hz=$(getconf CLK_TCK)
S=ebprof-bench-top-$$
tmp=$(mktemp -d)
burn=
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	tmux kill-session -t "$S" 2>/dev/null || true
	[ -z "$burn" ] || kill "$burn" 2>/dev/null || true
	[ "${BENCH_TOP_STATS:-0}" != 1 ] || sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "${BENCH_TOP_STATS:-0}" != 1 ] || sysctl -qw kernel.bpf_stats_enabled=1
stats=$(sysctl -n kernel.bpf_stats_enabled)

"$out/fixtures/cpuburn" 100000 > /dev/null &
burn=$!

ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/"$1"/stat; }
# nanoseconds on CPU, every thread (the scheduler's account: finer than stat's ticks)
run_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
progs() { sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u; }
bpf_ns() {
	local id sum=0 v
	for id in "$@"; do
		v=$(bpftool -j prog show id "$id" 2>/dev/null | jq -r '.run_time_ns // 0')
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

run_one() {
	local name=$1 pid pane i t0 t1 c0 c1 n0 n1 b0 b1 ids
	shift
	if [ "$name" = batch ]; then
		"$EBPROF" top -b "$@" > /dev/null &
		pid=$!
	else
		tmux new-session -d -s "$S" -x 160 -y 48 "$EBPROF" top "$@"
		pane=$(tmux display-message -p -t "$S" '#{pane_pid}')
		pid=$pane
		for i in $(seq 100); do
			[ "$(cat /proc/"$pid"/comm)" = ebprof ] && break
			pid=$(pgrep -P "$pane" -x ebprof) && break
			pid=$pane
			sleep 0.05
		done
	fi
	sleep "$warm"
	mapfile -t ids < <(progs "$pid")
	t0=$(date +%s.%N); c0=$(ticks "$pid"); n0=$(run_ns "$pid"); b0=$(bpf_ns "${ids[@]}")
	sleep "$secs"
	t1=$(date +%s.%N); c1=$(ticks "$pid"); n1=$(run_ns "$pid"); b1=$(bpf_ns "${ids[@]}")
	if [ "$name" = batch ]; then
		kill -INT "$pid"
		wait "$pid" || true
	else
		tmux send-keys -t "$S" q
		for i in $(seq 100); do tmux has-session -t "$S" 2>/dev/null || break; sleep 0.05; done
		tmux kill-session -t "$S" 2>/dev/null || true
	fi
	awk -v n="$name" -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v b="$((b1 - b0))" \
		-v st="$stats" -v ns="$((n1 - n0))" 'BEGIN {
		d = t1 - t0
		printf "%-6s ebprof own CPU %6.3f%% of one CPU (%.1f ms by schedstat, %d ticks by stat, in %.1f s)",
			n, 100 * ns / 1e9 / d, ns / 1e6, c, d
		if (st == 1) printf "   BPF programs %6.3f%% of one CPU (%.1f ms)", 100 * b / 1e9 / d, b / 1e6
		printf "\n"
	}'
}

echo "ebprof top, default interval, $secs s each after $warm s; bpf_stats_enabled=$stats;" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
read -ra extra <<<"${BENCH_TOP_ARGS:-}"
echo "options: ${extra[*]:-(none)}"
run_one all "${extra[@]}"
run_one pid -p "$burn" "${extra[@]}"
run_one batch "${extra[@]}"
