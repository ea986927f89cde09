#!/usr/bin/env bash
# Overhead benchmark of `ebprof mem` (`make bench`). Usage: bench/run.sh OUTDIR (default build)
#
# Measures, side by side in one run (this is a noisy shared VM: only compare numbers taken in
# the same run), alternating untraced and traced runs BENCH_RUNS times (default 5) and taking
# the median of each:
#   (a) ns per malloc(64)/free pair of bench/loop.c, untraced;
#   (b) the same under `ebprof mem -o TMP/report.json -- loop N`; the added cost and the ratio;
#   (c) start-up: from launching `ebprof mem -- stamp` (date +%s%N just before) to the moment
#       stamp's main() reads CLOCK_REALTIME, i.e. until probes are live and the child runs;
#       the same for launching stamp untraced, and ebprof's total wall time for that run;
#   (d) peak RSS and CPU of the traced runs, from wait4() (GNU time, or bench/rusage.c when GNU
#       time is missing). They cover ebprof AND the traced loop it waits for; the untraced loop's
#       own figures are shown too so the reader can tell them apart.
# Prints a markdown table and writes it to OUTDIR/bench.md; the last traced report is kept as
# OUTDIR/bench/last-report.json. Environment: BENCH_N (pairs per run, default 2000000),
# BENCH_RUNS (default 5), BENCH_NO_GNU_TIME=1 (use bench/rusage.c even if GNU time exists).
set -euo pipefail

out=${1:-build}
N=${BENCH_N:-2000000}
RUNS=${BENCH_RUNS:-5}
cd "$(dirname "$0")/.."

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (ebprof loads BPF programs and attaches uprobes); try: sudo make bench"
case "$N$RUNS" in *[!0-9]*) die "BENCH_N and BENCH_RUNS must be positive integers" ;; esac
if [ "$N" -eq 0 ] || [ "$RUNS" -eq 0 ]; then
	die "BENCH_N and BENCH_RUNS must be positive integers"
fi
ebprof=$out/ebprof
[ -x "$ebprof" ] || die "$ebprof not found or not executable; build it first: make $ebprof"

# Build the helpers (no Makefile rule: they are the benchmark's own).
bin=$out/bench
mkdir -p "$bin"
for prog in loop stamp rusage; do
	if [ ! -x "$bin/$prog" ] || [ "bench/$prog.c" -nt "$bin/$prog" ]; then
		gcc -O2 -g -fno-omit-frame-pointer -Wall "bench/$prog.c" -o "$bin/$prog" ||
			die "cannot build bench/$prog.c"
	fi
done
loop=$bin/loop
stamp=$bin/stamp

if [ -z "${BENCH_NO_GNU_TIME:-}" ] && [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null; then
	timer=gnu
	timer_name="GNU time"
else
	timer=rusage
	timer_name="bench/rusage.c (wait4)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measured RESULT_FILE CMD...: run CMD recording "maxrss_kb user_s sys_s wall_s" in RESULT_FILE.
measured() {
	local res=$1
	shift
	if [ $timer = gnu ]; then
		/usr/bin/time -f '%M %U %S %e' -o "$res" "$@"
	else
		"$bin/rusage" "$res" "$@"
	fi
}

# run_ebprof LABEL ARGS...: run ebprof; on failure explain and stop the benchmark.
run_ebprof() {
	local label=$1 rc=0
	shift
	"$@" >"$tmp/ebprof.out" 2>"$tmp/ebprof.err" || rc=$?
	if [ $rc -ne 0 ]; then
		[ "$1" != measured ] || shift 2 # show the ebprof command, not the wrapper
		{
			echo "bench: ebprof failed (exit status $rc) during the $label measurement."
			echo "bench: command: $*"
			if [ -s "$tmp/ebprof.err" ] || [ -s "$tmp/ebprof.out" ]; then
				echo "bench: its last messages:"
				tail -n 20 "$tmp/ebprof.err" | sed 's/^/    /'
				tail -n 5 "$tmp/ebprof.out" | sed 's/^/    (stdout) /'
			fi
			echo "bench: no results; fix ebprof (or run 'make' again) and re-run 'make bench'."
		} >&2
		exit 1
	fi
}

ns_of() { # the X of "loop: N pairs, X ns/pair"
	sed -n 's/.* \([0-9.]*\) ns\/pair$/\1/p' "$1"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "bench: N=$N pairs, $RUNS alternating runs each; ebprof = $ebprof; timer = $timer_name" >&2

: >"$tmp/untraced.ns"
: >"$tmp/traced.ns"
: >"$tmp/traced.ru"
: >"$tmp/untraced.ru"
for i in $(seq "$RUNS"); do
	rm -f "$tmp/loop.txt"
	measured "$tmp/ru" "$loop" "$N" "$tmp/loop.txt" || die "the untraced loop failed"
	ns_of "$tmp/loop.txt" >>"$tmp/untraced.ns"
	cat "$tmp/ru" >>"$tmp/untraced.ru"

	rm -f "$tmp/loop.txt" "$tmp/report.json"
	run_ebprof "traced loop (b)" measured "$tmp/ru" "$ebprof" mem -o "$tmp/report.json" -- "$loop" "$N" "$tmp/loop.txt"
	[ -s "$tmp/loop.txt" ] || die "ebprof exited 0 but the traced loop did not run (no result from $loop)"
	ns_of "$tmp/loop.txt" >>"$tmp/traced.ns"
	cat "$tmp/ru" >>"$tmp/traced.ru"
	if [ -s "$tmp/report.json" ]; then
		cp "$tmp/report.json" "$bin/last-report.json"
	else
		echo "bench: warning: ebprof wrote no report to $tmp/report.json" >&2
	fi
	echo "bench: run $i/$RUNS: untraced $(tail -n1 "$tmp/untraced.ns") ns/pair, traced $(tail -n1 "$tmp/traced.ns") ns/pair" >&2
done

: >"$tmp/start.untraced"
: >"$tmp/start.traced"
: >"$tmp/wall.traced"
for i in $(seq "$RUNS"); do
	rm -f "$tmp/stamp.txt"
	t0=$(date +%s%N)
	"$stamp" "$tmp/stamp.txt"
	echo $(($(cat "$tmp/stamp.txt") - t0)) >>"$tmp/start.untraced"

	rm -f "$tmp/stamp.txt"
	t0=$(date +%s%N)
	run_ebprof "start-up (c)" "$ebprof" mem -o "$tmp/stamp.json" -- "$stamp" "$tmp/stamp.txt"
	t1=$(date +%s%N)
	[ -s "$tmp/stamp.txt" ] || die "ebprof exited 0 but did not run $stamp"
	echo $(($(cat "$tmp/stamp.txt") - t0)) >>"$tmp/start.traced"
	echo $((t1 - t0)) >>"$tmp/wall.traced"
done

# ---- summary ----
u_ns=$(median <"$tmp/untraced.ns")
t_ns=$(median <"$tmp/traced.ns")
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
secs() { awk -v v="$1" 'BEGIN { printf "%.2f s", v }'; }
ms() { awk -v v="$1" 'BEGIN { printf "%.1f ms", v / 1e6 }'; }
t_rss=$(col 1 "$tmp/traced.ru")
t_user=$(col 2 "$tmp/traced.ru")
t_sys=$(col 3 "$tmp/traced.ru")
t_wall=$(col 4 "$tmp/traced.ru")
u_rss=$(col 1 "$tmp/untraced.ru")
u_user=$(col 2 "$tmp/untraced.ru")
u_sys=$(col 3 "$tmp/untraced.ru")
u_wall=$(col 4 "$tmp/untraced.ru")
list() { tr '\n' ' ' <"$1" | sed 's/ $//'; }

{
	echo "## ebprof mem overhead ($(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) CPUs)"
	echo
	echo "loop = bench/loop.c, $N malloc(64)/free pairs; medians of $RUNS alternating runs."
	echo
	echo "| measurement | untraced | under ebprof | added |"
	echo "|---|---:|---:|---:|"
	awk -v u="$u_ns" -v t="$t_ns" 'BEGIN {
		printf "| ns per malloc+free pair | %.1f | %.1f | %+.1f ns (x%.1f) |\n", u, t, t - u, (u > 0 ? t / u : 0) }'
	awk -v u="$(median <"$tmp/start.untraced")" -v t="$(median <"$tmp/start.traced")" 'BEGIN {
		printf "| launch until the program runs | %.1f ms | %.1f ms | %+.1f ms |\n", u / 1e6, t / 1e6, (t - u) / 1e6 }'
	echo "| total wall of \`ebprof mem -- stamp\` (incl. detach, report) | | $(ms "$(median <"$tmp/wall.traced")") | |"
	awk -v u="$u_rss" -v t="$t_rss" 'BEGIN {
		printf "| peak RSS (traced: ebprof + loop, max of the two) | %.1f MiB | %.1f MiB | |\n", u / 1024, t / 1024 }'
	echo "| CPU user (traced: ebprof + loop) | $(secs "$u_user") | $(secs "$t_user") | |"
	echo "| CPU sys (traced: ebprof + loop; probe hits count here) | $(secs "$u_sys") | $(secs "$t_sys") | |"
	echo "| wall of the whole run | $(secs "$u_wall") | $(secs "$t_wall") | |"
	echo
	echo "Raw values, in run order:"
	echo
	echo "- untraced ns/pair: $(list "$tmp/untraced.ns")"
	echo "- traced ns/pair: $(list "$tmp/traced.ns")"
	echo "- launch until running, untraced (ns): $(list "$tmp/start.untraced")"
	echo "- launch until running, under ebprof (ns): $(list "$tmp/start.traced")"
	echo "- resource use per traced run (maxrss_kb user_s sys_s wall_s): $(tr '\n' ';' <"$tmp/traced.ru" | sed 's/;$//; s/;/; /g')"
	echo
	echo "Resource figures come from $timer_name. The CPU and RSS of a traced run include the"
	echo "traced loop itself, whose untraced figures are in the first column."
} | tee "$out/bench.md"
echo "bench: written to $out/bench.md" >&2
