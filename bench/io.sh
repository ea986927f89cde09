#!/usr/bin/env bash
# What `ebprof io` costs per block request (`make bench-io`), beside bpftrace doing the same
# histograms (bench/io.bt: latency, queue and service time and size per disk and operation,
# from block_io_start to block_rq_complete): the kernel time of each configuration's BPF
# programs, from bpf_stats (kernel.bpf_stats_enabled=1: run_cnt and run_time_ns per program,
# read with bpftool right before and right after the workload, while the programs are loaded).
# Usage: bench/io.sh OUTDIR (default build)   (root; /var/tmp on a block device)
#
# Workload: BENCH_IO_READS (default 20000) O_DIRECT 4 KiB reads by dd of a file under
# /var/tmp (one block request each, issued by dd). Configurations, BENCH_IO_ROUNDS rounds each
# (default 3), in turn:
#   ebprof -a    `ebprof io -a`: every request recorded with its user and kernel stacks
#   ebprof -p    `ebprof io -p PID`: dd's requests recorded, every other one looked at and left
#   bpftrace     `bpftrace bench/io.bt`: every request, histograms only, no stacks
# Per configuration: the requests completed in the window (its completion program's run_cnt),
# and per program its runs and its mean ns per run; the total BPF ns per request (every program
# of the configuration, over the requests), the median of the rounds. Also dd's wall time
# (median): an I/O-bound workload, for scale. bpf_stats timestamps each run, which adds to every
# figure; compare the configurations of one run, not with other machines.
#
# Writes the table to stdout and OUTDIR/bench-io.md, raw values to OUTDIR/bench/io-raw.txt.
set -euo pipefail

out=${1:-build}
READS=${BENCH_IO_READS:-20000}
ROUNDS=${BENCH_IO_ROUNDS:-3}
cd "$(dirname "$0")/.."

die() {
	printf 'bench-io: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (loads BPF programs, sets kernel.bpf_stats_enabled)"
command -v bpftool >/dev/null || die "bpftool is not installed"
command -v bpftrace >/dev/null || die "bpftrace is not installed (the anchor): apt-get install bpftrace"
[ -x "$out/ebprof" ] || die "$out/ebprof is not built: make"
read -r maj _ < <(stat -c '%Hd %Ld' /var/tmp)
[ "$maj" -ne 0 ] || die "/var/tmp is on $(stat -f -c %T /var/tmp), no block device: no request to measure"
# bpftrace's tracepoints need tracefs
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

work=$(mktemp -d /var/tmp/ebprof-bench-io.XXXXXX)
raw=$out/bench/io-raw.txt
mkdir -p "$out/bench"
: >"$raw"
stats_old=$(sysctl -n kernel.bpf_stats_enabled)
bg=""
cleanup() {
	[ -z "$bg" ] || kill -INT "$bg" 2>/dev/null || true
	sysctl -q -w kernel.bpf_stats_enabled="$stats_old" || true
	rm -rf "$work"
}
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1

dd if=/dev/urandom of="$work/f" bs=4096 count="$READS" status=none
sync "$work/f"

# "NAME RUN_CNT RUN_TIME_NS" of the programs of a configuration: ebprof's by name (io_*),
# bpftrace's by the tracepoint it names them after.
snapshot() {
	bpftool -j prog show | jq -r --arg cfg "$1" '.[]
		| select(if $cfg == "bpftrace" then .type == "tracepoint" and (.name | startswith("block_"))
			 else .type == "tracing" and (.name | test("^io_(start|insert|issue|complete|done)$")) end)
		| "\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}

# Wait until the configuration's completion program is loaded.
wait_loaded() {
	for _ in $(seq 200); do
		snapshot "$1" | grep -qE '^(io_complete|block_rq_comple)' && return 0
		sleep 0.05
	done
	die "$1: its programs never showed up"
}

# One round of configuration $1: the profiler started, the workload timed between two
# snapshots, the profiler stopped. Appends "CFG ROUND NAME RUNS NS" lines and "CFG ROUND wall MS"
# to the raw file.
round() {
	local cfg=$1 r=$2 t0 t1 s0 s1 go ddpid=""
	case $cfg in
	ebprof-a)
		"$out/ebprof" io -q -a -o "$work/a.json" &
		bg=$!
		;;
	ebprof-p)
		go=$work/go
		rm -f "$go"
		mkfifo "$go"
		bash -c "read _ < '$go'; exec dd if='$work/f' of=/dev/null bs=4096 count=$READS iflag=direct status=none" &
		ddpid=$!
		"$out/ebprof" io -q -p "$ddpid" -o "$work/p.json" &
		bg=$!
		;;
	bpftrace)
		bpftrace bench/io.bt >"$work/bt.out" 2>&1 &
		bg=$!
		;;
	esac
	wait_loaded "${cfg%%-*}"
	sleep 0.5
	s0=$(snapshot "${cfg%%-*}")
	t0=$(date +%s%N)
	if [ -n "$ddpid" ]; then
		echo go >"$go"
		wait "$ddpid"
	else
		dd if="$work/f" of=/dev/null bs=4096 count="$READS" iflag=direct status=none
	fi
	t1=$(date +%s%N)
	s1=$(snapshot "${cfg%%-*}")
	kill -INT "$bg" 2>/dev/null || true
	wait "$bg" || true
	bg=""
	join <(echo "$s0") <(echo "$s1") | awk -v c="$cfg" -v r="$r" \
		'{ print c, r, $1, $4 - $2, $5 - $3 }' >>"$raw"
	echo "$cfg $r wall $(((t1 - t0) / 1000000))" >>"$raw"
}

for r in $(seq "$ROUNDS"); do
	for cfg in ebprof-a ebprof-p bpftrace; do
		round "$cfg" "$r"
	done
done

# The table: per configuration, each program's runs and ns per run (medians over rounds), the
# requests, the BPF ns per request, dd's wall time.
report() {
	awk '
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$3 == "wall" { wall[$1] = wall[$1] " " $4; next }
	{
		key = $1 " " $3; runs[key] = runs[key] " " $4
		per[key] = per[key] " " ($4 ? $5 / $4 : 0)
		tot[$1 " " $2] += $5; progs[$1] = progs[$1] " " $3
		if ($3 ~ /^(io_complete|block_rq_comple)/) req[$1 " " $2] = $4
		rounds[$1] = rounds[$1] " " $2
	}
	END {
		n = split("ebprof-a ebprof-p bpftrace", cfgs, " ")
		print "| configuration | program | runs | ns per run |"
		print "|---------------|---------|-----:|-----------:|"
		for (c = 1; c <= n; c++) {
			cfg = cfgs[c]; split(progs[cfg], p, " "); delete seen
			for (i in p) if (!(p[i] in seen)) { seen[p[i]] = 1
				k = cfg " " p[i]
				printf "| %s | %s | %d | %.0f |\n", cfg, p[i], median(runs[k]), median(per[k]) }
		}
		print ""
		print "| configuration | requests | BPF ns per request | dd wall (ms) |"
		print "|---------------|---------:|-------------------:|-------------:|"
		for (c = 1; c <= n; c++) {
			cfg = cfgs[c]; s = ""; q = ""; split(rounds[cfg], rr, " "); delete seen
			for (i in rr) if (!(rr[i] in seen)) { seen[rr[i]] = 1; k = cfg " " rr[i]
				s = s " " (req[k] ? tot[k] / req[k] : 0); q = q " " req[k] }
			printf "| %s | %d | %.0f | %d |\n", cfg, median(q), median(s), median(wall[cfg])
		}
	}' "$raw"
}

{
	echo "bench-io: $READS O_DIRECT 4 KiB reads by dd, $ROUNDS rounds, $(uname -r), $(date -u +%F)"
	echo
	report
} | tee "$out/bench-io.md"
