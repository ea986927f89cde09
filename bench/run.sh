#!/usr/bin/env bash
# Overhead benchmark of `ebprof mem` (`make bench`). Usage: bench/run.sh OUTDIR (default build)
#
# One run measures, side by side (this is a noisy shared VM: only compare numbers taken in the
# same run), every tracer configuration on every workload, runs interleaved BENCH_RUNS times
# (default 3), medians reported, and the cost each configuration adds per malloc+free pair (per
# allocation for the real programs) as a difference from untraced and a ratio to the floor:
#
# Workloads (BENCH_WORKLOADS, default "loop mixed workset sqlite sqlblob jq"):
#   loop     bench/loop.c: BENCH_N malloc(64)/free pairs (default 300,000), timed inside;
#   mixed    the same loop with sizes spread uniformly over BENCH_MIX_SIZES bytes (16-4095);
#   workset  bench/workset.c: BENCH_WS_LIVE live blocks of mixed sizes (default 100,000),
#            BENCH_WS_N random free+malloc steps (default 300,000), timed inside;
#   sqlite   sqlite3 :memory: building a BENCH_SQL_ROWS-row table (default 100,000);
#   sqlblob  the same rows of hex(randomblob(20)) text, then an index on them: varied sizes and
#            call paths (its stacks are not all one call site's, as sqlite's nearly are), and
#   jq       jq on scripts/gen-json.sh's array of BENCH_JQ_N objects (default 10,000):
#            both timed inside the process by bench/timeit_preload.c (constructor to
#            destructor), so tracer start-up and reports never enter the figure; their
#            output is checked on every run.
# Configurations:
#   untraced;
#   floor        bench/floor.c: empty entry probes on the malloc family and empty return
#                probes, placed by src/core/probes.c exactly as ebprof places its own;
#   floor-entry  bench/floor.c --entry-only: empty entry probes on the allocating functions only,
#                attached as `ebprof mem --alloc-only` attaches its own (the alloc-only floor);
#   floor-malloc bench/floor.c --malloc-uprobe: one bare (plain, perf-event) uprobe on malloc, the
#                comparison issue 6 names for --alloc-only;
#   bpftrace     bench/track.bt, the same tracking in bpftrace (BENCH_BPFTRACE=0 skips it);
#   ebprof modes BENCH_MODES, entries NAME:FLAGS with commas for spaces; a mode whose first flag
#                `ebprof mem --help` does not know is skipped with a note. BENCH_EBPROF_NAME
#                (dashes as underscores) runs mode NAME with another ebprof binary: a build
#                before a change beside the one after, e.g. BENCH_MODES="before: full:"
#                BENCH_EBPROF_before=/tmp/old/ebprof.
# Time is the workload process's CPU time by default (BENCH_CLOCK=cpu: CLOCK_PROCESS_CPUTIME_ID,
# user + system, so uprobe traps and BPF programs count but waiting for a CPU held by another
# process does not: the VM is shared); BENCH_CLOCK=wall uses CLOCK_MONOTONIC instead.
# The workloads pin themselves to one CPU (bench/pin.h; BENCH_PIN: a CPU number, "auto", the
# default: the last CPU when there are two or more, or "off"): unpinned, a loop's CPU time
# under one configuration spread by ~25% run to run on the 2-CPU guest, pinned by ~3%.
# Then: the cost on an unrelated process (bench/loop.c alone, against the same loop while
# ebprof traces another, idle, process); start-up until probes are live (bench/stamp.c); peak
# RSS and CPU of ebprof in full mode on the loop (GNU time, or bench/rusage.c); a process tree
# (a shell running /bin/true BENCH_TREE_N times, default 200): wall per process, untraced and
# under `ebprof mem` (the whole run, start-up and report included, divided by N).
#
# Writes the tables to stdout and OUTDIR/bench.md, raw values to OUTDIR/bench/raw.txt.
set -euo pipefail

out=${1:-build}
RUNS=${BENCH_RUNS:-3}
LOOP_N=${BENCH_N:-300000}
WS_N=${BENCH_WS_N:-300000}
WS_LIVE=${BENCH_WS_LIVE:-100000}
SQL_ROWS=${BENCH_SQL_ROWS:-100000}
TREE_N=${BENCH_TREE_N:-200}
JQ_N=${BENCH_JQ_N:-10000}
MIX_SIZES=${BENCH_MIX_SIZES:-16-4095}
WORKLOADS=${BENCH_WORKLOADS:-loop mixed workset sqlite sqlblob jq}
MODES=${BENCH_MODES:-full: leaks:--leaks sample-bytes:--sample-bytes,524288 sample-every:--sample-every,64 alloc-only:--alloc-only}
BPFTRACE=${BENCH_BPFTRACE:-1}
CLOCK=${BENCH_CLOCK:-cpu}
PIN=${BENCH_PIN:-auto}
cd "$(dirname "$0")/.."

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}
note() { printf 'bench: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || die "must run as root (ebprof loads BPF programs and attaches uprobes); try: sudo make bench"
for v in "$RUNS" "$LOOP_N" "$WS_N" "$WS_LIVE" "$SQL_ROWS" "$JQ_N"; do
	case "$v" in '' | *[!0-9]*) die "BENCH_RUNS, BENCH_N, BENCH_WS_N, BENCH_WS_LIVE, BENCH_SQL_ROWS and BENCH_JQ_N must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_RUNS, BENCH_N, BENCH_WS_N, BENCH_WS_LIVE, BENCH_SQL_ROWS and BENCH_JQ_N must be positive integers"
done
case "$CLOCK" in cpu | wall) ;; *) die "BENCH_CLOCK must be cpu or wall" ;; esac
case "$PIN" in
auto) if [ "$(nproc)" -ge 2 ]; then PIN=$(($(nproc) - 1)); else PIN=off; fi ;;
off) ;;
'' | *[!0-9]*) die "BENCH_PIN must be a CPU number, auto or off" ;;
*) taskset -c "$PIN" true 2>/dev/null || die "BENCH_PIN=$PIN: no such CPU here (CPUs: $(nproc))" ;;
esac
# read by the workloads themselves (bench/pin.h), through every tracer's launch
if [ "$PIN" = off ]; then unset BENCH_CPU; else export BENCH_CPU=$PIN; fi
for w in $WORKLOADS; do
	case "$w" in loop | mixed | workset | sqlite | sqlblob | jq) ;; *) die "unknown workload '$w' in BENCH_WORKLOADS (known: loop mixed workset sqlite sqlblob jq)" ;; esac
done
ebprof=$out/ebprof
floor=$out/bench/floor
[ -x "$ebprof" ] || die "$ebprof not found or not executable; build it first: make $ebprof"
[ -x "$floor" ] || die "$floor not found; build it with: make $floor (make bench does)"

# Build the helpers (the benchmark's own programs; floor has a Makefile rule as it needs BPF).
bin=$out/bench
mkdir -p "$bin"
for prog in loop stamp rusage workset; do
	if [ ! -x "$bin/$prog" ] || [ "bench/$prog.c" -nt "$bin/$prog" ]; then
		gcc -O2 -g -fno-omit-frame-pointer -Wall "bench/$prog.c" -o "$bin/$prog" ||
			die "cannot build bench/$prog.c"
	fi
done
if [ ! -f "$bin/timeit.so" ] || [ bench/timeit_preload.c -nt "$bin/timeit.so" ]; then
	gcc -O2 -fPIC -shared -Wall bench/timeit_preload.c -o "$bin/timeit.so" ||
		die "cannot build bench/timeit_preload.c"
fi
loop=$bin/loop
workset=$bin/workset
stamp=$bin/stamp
timeit=$(cd "$bin" && pwd)/timeit.so

tmp=$(mktemp -d)
bg_pids=()
cleanup() {
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- configurations ----
configs=(untraced floor floor-entry floor-malloc)
declare -A cfg_flags
if [ "$BPFTRACE" = 1 ]; then
	if command -v bpftrace >/dev/null 2>&1; then
		configs+=(bpftrace)
	else
		note "bpftrace is not installed (apt-get install bpftrace, or scripts/install-deps.sh): its row is skipped"
	fi
fi
skipped=()
help=$("$ebprof" mem --help 2>&1 || true)
for m in $MODES; do
	name=${m%%:*}
	flags=${m#*:}
	flags=${flags//,/ }
	first=${flags%% *}
	if [ -n "$first" ] && ! grep -q -- "$first\b" <<<"$help"; then
		skipped+=("$name ($first)")
		continue
	fi
	configs+=("ebprof:$name")
	cfg_flags[ebprof:$name]=$flags
done
[ ${#skipped[@]} -eq 0 ] || note "modes this ebprof does not have, skipped: ${skipped[*]}"

# ---- workloads: wl_cmd WORKLOAD RESULT_FILE prints the command (one word per line) ----
libc=$(ldd "$loop" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -n "$libc" ] || die "cannot find the libc of $loop (ldd)"
sed "s|LIBC|$libc|g" bench/track.bt >"$tmp/track.bt"

sql="create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x<$SQL_ROWS) insert into t select x, printf('%08d-row', x) from c; select count(*) from t;"
sqlblob="create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x<$SQL_ROWS) insert into t select x, hex(randomblob(20)) from c; create index ib on t(b); select count(*) from t;"
for w in sqlite sqlblob; do
	[[ " $WORKLOADS " == *" $w "* ]] || continue
	command -v sqlite3 >/dev/null || die "sqlite3 is not installed (scripts/install-deps.sh installs it)"
	q=$sql
	[ "$w" = sqlite ] || q=$sqlblob
	printf '#!/bin/sh\nexec env LD_PRELOAD=%s BENCH_TIME_OUT="$1" sqlite3 :memory: "%s" >"$2"\n' \
		"$timeit" "$q" >"$tmp/$w.sh"
	chmod +x "$tmp/$w.sh"
	echo "$SQL_ROWS" >"$tmp/$w.expect"
done
if [[ " $WORKLOADS " == *" jq "* ]]; then
	command -v jq >/dev/null || die "jq is not installed (scripts/install-deps.sh installs it)"
	bash scripts/gen-json.sh "$tmp/data.json" "$JQ_N"
	bash scripts/gen-json.sh --expect "$JQ_N" >"$tmp/jq.expect"
	printf '#!/bin/sh\nexec env LD_PRELOAD=%s BENCH_TIME_OUT="$1" jq -c '\''%s'\'' %s >"$2"\n' \
		"$timeit" "$(bash scripts/gen-json.sh --filter)" "$tmp/data.json" >"$tmp/jq.sh"
	chmod +x "$tmp/jq.sh"
fi

wl_cmd() { # WORKLOAD RESULT_FILE
	case $1 in
	loop) echo "$loop $LOOP_N $2" ;;
	mixed) echo "$loop $LOOP_N $2 $MIX_SIZES" ;;
	workset) echo "$workset $WS_N $WS_LIVE $2" ;;
	sqlite | sqlblob | jq) echo "/bin/sh $tmp/$1.sh $2 $tmp/$1.out" ;;
	esac
}

# the result of one run: ns per pair (loop, mixed, workset) or ns the program ran (the programs)
wl_result() { # WORKLOAD RESULT_FILE
	case $1 in
	loop | mixed | workset) sed -n "s/.* \\([0-9.]*\\) ns\\/pair $CLOCK.*/\\1/p" "$2" ;;
	sqlite | sqlblob | jq)
		cmp -s "$tmp/$1.out" "$tmp/$1.expect" ||
			die "$1 printed '$(head -c 200 "$tmp/$1.out")', expected '$(cat "$tmp/$1.expect")'"
		awk -v c="$CLOCK" '{ print c == "cpu" ? $2 : $1 }' "$2"
		;;
	esac
}

# fail CONFIG WORKLOAD STATUS CMD...: explain a failed run and stop
fail() {
	local cfg=$1 wl=$2 rc=$3
	shift 3
	{
		echo "bench: $cfg failed (exit status $rc) on the $wl workload."
		echo "bench: command: $*"
		if [ -s "$tmp/err" ] || [ -s "$tmp/stdout" ]; then
			echo "bench: its last messages:"
			tail -n 20 "$tmp/err" | sed 's/^/    /'
			tail -n 5 "$tmp/stdout" | sed 's/^/    (stdout) /'
		fi
		echo "bench: no results; fix it (or run 'make' again) and re-run 'make bench'."
	} >&2
	exit 1
}

# run_one CONFIG WORKLOAD: one measured run; appends its result to $tmp/CONFIG.WORKLOAD
run_one() {
	local cfg=$1 wl=$2 res=$tmp/result rc=0 cmd
	local -a pre
	rm -f "$res" "$tmp/report.json"
	cmd=$(wl_cmd "$wl" "$res")
	case $cfg in
	untraced) pre=() ;;
	floor) pre=("$floor" --) ;;
	floor-entry) pre=("$floor" --entry-only --) ;;
	floor-malloc) pre=("$floor" --malloc-uprobe --) ;;
	bpftrace) pre=(bpftrace "$tmp/track.bt" -c "$cmd") ;;
	ebprof:*)
		# shellcheck disable=SC2206 # flags are words
		# BENCH_EBPROF_<NAME> (dashes as underscores): this mode with another ebprof binary
		eb=$ebprof
		v=${cfg#ebprof:}
		v=BENCH_EBPROF_${v//-/_}
		[ -z "${!v:-}" ] || eb=${!v}
		pre=("$eb" mem --quiet -o "$tmp/report.json" ${cfg_flags[$cfg]} --)
		if [ "$cfg" = ebprof:full ] && [ "$wl" = loop ]; then
			pre=(measured "$tmp/ru" "${pre[@]}")
		fi
		;;
	esac
	if [ "$cfg" = bpftrace ]; then
		"${pre[@]}" >"$tmp/stdout" 2>"$tmp/err" || rc=$?
	else
		# shellcheck disable=SC2086 # the workload command is words
		"${pre[@]}" $cmd >"$tmp/stdout" 2>"$tmp/err" || rc=$?
	fi
	[ $rc -eq 0 ] || fail "$cfg" "$wl" $rc "${pre[@]}" "$cmd"
	[ -s "$res" ] || fail "$cfg" "$wl" "0, but no result from the workload" "${pre[@]}" "$cmd"
	wl_result "$wl" "$res" >>"$tmp/round/$cfg.$wl"
	if [[ $cfg == ebprof:* ]]; then
		[ -s "$tmp/report.json" ] || fail "$cfg" "$wl" "0, but no report" "${pre[@]}" "$cmd"
		jq '[.drops[]] | add // 0' "$tmp/report.json" >>"$tmp/round/$cfg.$wl.drops"
		if [[ " ${cfg_flags[$cfg]} " != *" --sample-"* ]]; then
			# allocating calls, for the cost per allocation of the real programs (exact
			# in every mode but the sampled ones)
			jq '[.processes[].calls | to_entries[] | select(.key != "free") | .value] | add' \
				"$tmp/report.json" >"$tmp/allocs.$wl"
		fi
		[ "$cfg" != ebprof:full ] || cp "$tmp/report.json" "$bin/last-report.$wl.json"
	fi
	if [ "$cfg" = ebprof:full ] && [ "$wl" = loop ]; then
		cat "$tmp/ru" >>"$tmp/round/full.ru"
	fi
}

if [ -z "${BENCH_NO_GNU_TIME:-}" ] && [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null; then
	timer=gnu
	timer_name="GNU time"
else
	timer=rusage
	timer_name="bench/rusage.c (wait4)"
fi
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

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
list() { tr '\n' ' ' <"$1" | sed 's/ $//'; }

# The floor must really fire: one short counted run (not timed).
"$floor" --count -- "$loop" 1000 "$tmp/result" 2>"$tmp/err" >/dev/null ||
	die "the floor loader failed: $(tail -n 3 "$tmp/err")"
for k in alloc_entry free return; do
	n=$(sed -n "s/^floor: $k //p" "$tmp/err")
	[ -n "$n" ] && [ "$n" -ge 1000 ] ||
		die "the floor's probes did not fire ($k: ${n:-none} hits for 1000 pairs); cannot measure"
done
for f in --entry-only --malloc-uprobe; do
	"$floor" $f --count -- "$loop" 1000 "$tmp/result" 2>"$tmp/err" >/dev/null ||
		die "the floor with $f failed: $(tail -n 3 "$tmp/err")"
	n=$(sed -n "s/^floor: alloc_entry //p" "$tmp/err")
	[ -n "$n" ] && [ "$n" -ge 1000 ] ||
		die "the floor's probes with $f did not fire (${n:-none} hits for 1000 pairs); cannot measure"
done

note "runs=$RUNS; workloads: $WORKLOADS; configurations: ${configs[*]}"
note "loop N=$LOOP_N (mixed: sizes $MIX_SIZES); workset $WS_N steps over $WS_LIVE live; sqlite and sqlblob $SQL_ROWS rows; jq $JQ_N objects"
# Other tracers on this machine (another user's system-wide uprobes on libc, e.g. bpftrace or
# `ebprof mem -a`) would make every configuration pay their traps too. An untraced malloc+free
# costs ~10 ns; a round of measurements counts only if the untraced loop is that cheap both
# before and after it, else it is repeated once the machine is free (up to 5 minutes).
clean() { # true if an untraced malloc+free is cheap right now
	"$loop" 100000 "$tmp/q" >/dev/null && awk -v v="$(wl_result loop "$tmp/q")" 'BEGIN { exit !(v < 100) }'
}
wait_clean() {
	local i
	for i in $(seq 30); do
		clean && return 0
		[ "$i" -gt 1 ] || note "an untraced malloc+free costs $(wl_result loop "$tmp/q") ns: something else probes this machine's libc; waiting for it to end"
		sleep 10
	done
	die "an untraced malloc+free still costs $(wl_result loop "$tmp/q") ns after 5 minutes: another tracer probes every process's libc (bpftool link show; bpftool perf show); stop it and re-run"
}
mkdir -p "$tmp/round"
for i in $(seq "$RUNS"); do
	for wl in $WORKLOADS; do
		while :; do
			wait_clean
			rm -f "$tmp/round/"*
			line=""
			for cfg in "${configs[@]}"; do
				run_one "$cfg" "$wl"
				line+=" ${cfg#ebprof:}=$(tail -n1 "$tmp/round/$cfg.$wl")"
			done
			clean && break
			note "run $i/$RUNS $wl: something else probed libc meanwhile; repeating this round"
		done
		for f in "$tmp/round/"*; do cat "$f" >>"$tmp/${f##*/}"; done
		note "run $i/$RUNS $wl:$line"
	done
done

# ---- the unrelated process: the loop alone, and while ebprof traces another (idle) process ----
: >"$tmp/unrel.alone"
: >"$tmp/unrel.beside"
i=0
while [ "$i" -lt "$RUNS" ]; do
	wait_clean
	"$loop" "$LOOP_N" "$tmp/result" && alone=$(wl_result loop "$tmp/result")
	sleep 600 &
	idle=$!
	bg_pids+=("$idle")
	"$ebprof" mem --quiet -p "$idle" -o "$tmp/idle.json" >"$tmp/stdout" 2>"$tmp/err" &
	tracer=$!
	bg_pids+=("$tracer")
	for _ in $(seq 200); do # until both uprobe_multi links exist
		n=$(find "/proc/$tracer/fd" -lname 'anon_inode:bpf_link' 2>/dev/null | wc -l)
		[ "$n" -ge 2 ] && break
		kill -0 "$tracer" 2>/dev/null || break
		sleep 0.05
	done
	[ "$n" -ge 2 ] || fail "ebprof -p (unrelated-process test)" idle "no probes after 10 s" "$ebprof" mem -p "$idle"
	"$loop" "$LOOP_N" "$tmp/result" && beside=$(wl_result loop "$tmp/result")
	kill -INT "$tracer"
	wait "$tracer" || fail "ebprof -p (unrelated-process test)" idle $? "$ebprof" mem -p "$idle"
	kill "$idle" 2>/dev/null || true
	wait "$idle" 2>/dev/null || true
	bg_pids=()
	if clean; then # else another tracer came meanwhile: measure this pair again
		echo "$alone" >>"$tmp/unrel.alone"
		echo "$beside" >>"$tmp/unrel.beside"
		i=$((i + 1))
	fi
done

# ---- start-up until probes are live ----
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
	"$ebprof" mem --quiet -o "$tmp/stamp.json" -- "$stamp" "$tmp/stamp.txt" >"$tmp/stdout" 2>"$tmp/err" ||
		fail "ebprof" "start-up" $? "$ebprof" mem -- "$stamp"
	t1=$(date +%s%N)
	[ -s "$tmp/stamp.txt" ] || die "ebprof exited 0 but did not run $stamp"
	echo $(($(cat "$tmp/stamp.txt") - t0)) >>"$tmp/start.traced"
	echo $((t1 - t0)) >>"$tmp/wall.traced"
done

# ---- a process tree: a shell running /bin/true TREE_N times (every process execs, ends) ----
tree_sh="i=0; while [ \$i -lt $TREE_N ]; do /bin/true; i=\$((i + 1)); done"
: >"$tmp/tree.untraced"
: >"$tmp/tree.traced"
for i in $(seq "$RUNS"); do
	t0=$(date +%s%N)
	sh -c "$tree_sh"
	t1=$(date +%s%N)
	echo $((t1 - t0)) >>"$tmp/tree.untraced"
	t0=$(date +%s%N)
	"$ebprof" mem --quiet -o "$tmp/tree.json" -- sh -c "$tree_sh" >"$tmp/stdout" 2>"$tmp/err" ||
		fail "ebprof" "process tree" $? "$ebprof" mem -- sh -c "$tree_sh"
	t1=$(date +%s%N)
	echo $((t1 - t0)) >>"$tmp/tree.traced"
done

# ---- tables ----
# added cost per pair (loop, mixed, workset) or per allocation (the programs) of CONFIG on WORKLOAD
added() { # CONFIG WORKLOAD
	local u t
	u=$(median <"$tmp/untraced.$2")
	t=$(median <"$tmp/$1.$2")
	case $2 in
	loop | mixed | workset) awk -v u="$u" -v t="$t" 'BEGIN { printf "%.1f", t - u }' ;;
	*) awk -v u="$u" -v t="$t" -v n="$(cat "$tmp/allocs.$2" 2>/dev/null || echo 0)" \
		'BEGIN { if (n > 0) printf "%.1f", (t - u) / n; else print "?" }' ;;
	esac
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b <= 0) print "?"; else printf "%.2f", a / b }'; }
have() { [[ " ${configs[*]} " == *" $1 "* ]]; }

{
	echo "## ebprof mem overhead ($(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) CPUs)"
	echo
	echo "Medians of $RUNS interleaved runs. Workloads: loop = bench/loop.c, $LOOP_N malloc(64)/free"
	echo "pairs; mixed = the same loop with sizes spread uniformly over $MIX_SIZES B; workset ="
	echo "bench/workset.c, $WS_N random free+malloc steps over $WS_LIVE live blocks"
	echo "of 16 B-64 KiB; sqlite = sqlite3 :memory: building a $SQL_ROWS-row table; sqlblob = the"
	echo "same with rows of hex(randomblob(20)) and an index on them; jq = jq on"
	echo "$JQ_N generated objects (scripts/gen-json.sh). Cells: added ns per malloc+free pair (loop,"
	echo "mixed, workset) or per allocation (sqlite, sqlblob, jq: the program's run time, measured inside it, less"
	echo "untraced, over its allocating calls as ebprof counted them), then x the floor's added cost."
	if [ "$CLOCK" = cpu ]; then
		echo "Times are the workload process's CPU time (user + system: the traps and BPF programs"
		echo "run in it), not wall time, so that other load on this shared VM does not enter them."
	fi
	if [ "$PIN" != off ]; then
		echo "Each workload ran pinned to CPU $PIN (BENCH_PIN); the tracers' own processes were not."
	else
		echo "Times are wall-clock time (BENCH_CLOCK=wall)."
	fi
	echo
	printf '| configuration |'
	for wl in $WORKLOADS; do printf ' %s |' "$wl"; done
	echo
	printf '|---|'
	for wl in $WORKLOADS; do printf -- '---:|'; done
	echo
	printf '| untraced (ns/pair; ms per program run) |'
	for wl in $WORKLOADS; do
		case $wl in
		loop | mixed | workset) printf ' %.1f |' "$(median <"$tmp/untraced.$wl")" ;;
		*) printf ' %.1f ms |' "$(awk -v v="$(median <"$tmp/untraced.$wl")" 'BEGIN { print v / 1e6 }')" ;;
		esac
	done
	echo
	for cfg in "${configs[@]}"; do
		[ "$cfg" != untraced ] || continue
		case $cfg in
		floor) label="floor (empty probes placed as ebprof's)" ;;
		floor-entry) label="floor, entry probes only (as --alloc-only's)" ;;
		floor-malloc) label="floor, one bare uprobe on malloc (plain)" ;;
		bpftrace) label="bpftrace (bench/track.bt)" ;;
		*) label="ebprof ${cfg#ebprof:}${cfg_flags[$cfg]:+ (${cfg_flags[$cfg]})}" ;;
		esac
		printf '| %s |' "$label"
		for wl in $WORKLOADS; do
			a=$(added "$cfg" "$wl")
			# a mode without return and free probes against the floor of its own probes
			den=floor
			[[ " ${cfg_flags[$cfg]:-} " != *" --alloc-only "* ]] || ! have floor-entry ||
				den=floor-entry
			if [ "$cfg" = floor ]; then
				printf ' +%s |' "$a"
			else
				printf ' +%s (x%s) |' "$a" "$(ratio "$a" "$(added $den "$wl")")"
			fi
		done
		echo
	done
	echo
	if [[ " $WORKLOADS " == *" loop "* ]]; then
		echo "Ratios that issue 6 sets targets for (loop):"
		echo
		if have ebprof:full; then
			full=$(added ebprof:full loop)
			echo "- full tracking / floor, added cost: x$(ratio "$full" "$(added floor loop)") (target: at most x1.3)"
			if have bpftrace; then
				echo "- bpftrace / full tracking, added cost: x$(ratio "$(added bpftrace loop)" "$full") (target: at least x3)"
			fi
		fi
		if have ebprof:sample-bytes; then
			echo "- --sample-bytes 524288 / floor: x$(ratio "$(added ebprof:sample-bytes loop)" "$(added floor loop)") (target: at most x1.1)"
		fi
		if have ebprof:alloc-only; then
			if have floor-malloc; then
				echo "- --alloc-only / one bare uprobe on malloc: x$(ratio "$(added ebprof:alloc-only loop)" "$(added floor-malloc loop)") (target: at most x1.1)"
			fi
			echo "- --alloc-only / the entry-probe floor (its own probes, uprobe_multi): x$(ratio "$(added ebprof:alloc-only loop)" "$(added floor-entry loop)")"
		fi
	else
		echo "Ratios that issue 6 sets targets for: not computed (loop is not in BENCH_WORKLOADS)."
		echo
	fi
	for s in "${skipped[@]}"; do echo "- not measured, this ebprof has no such mode: $s"; done
	echo
	printf -- '- drops reported by ebprof (max over runs and workloads):'
	for cfg in "${configs[@]}"; do
		[[ $cfg == ebprof:* ]] || continue
		printf ' %s %s;' "${cfg#ebprof:}" "$(cat "$tmp/$cfg".*.drops | sort -n | tail -n1)"
	done
	echo
	echo
	echo "| other measurements | untraced | under ebprof | |"
	echo "|---|---:|---:|---:|"
	awk -v u="$(median <"$tmp/unrel.alone")" -v t="$(median <"$tmp/unrel.beside")" 'BEGIN {
		printf "| unrelated process: loop ns/pair, alone / while ebprof traces another process | %.1f | %.1f | x%.2f |\n", u, t, t / u }'
	awk -v u="$(median <"$tmp/start.untraced")" -v t="$(median <"$tmp/start.traced")" 'BEGIN {
		printf "| launch until the program runs (probes live) | %.1f ms | %.1f ms | %+.1f ms |\n", u / 1e6, t / 1e6, (t - u) / 1e6 }'
	awk -v t="$(median <"$tmp/wall.traced")" 'BEGIN {
		printf "| total wall of `ebprof mem -- stamp` (incl. detach, report) | | %.1f ms | |\n", t / 1e6 }'
	awk -v u="$(median <"$tmp/tree.untraced")" -v t="$(median <"$tmp/tree.traced")" -v n="$TREE_N" 'BEGIN {
		printf "| process tree: `sh` running `/bin/true` %d times, wall per process (whole run: ebprof start-up and report too) | %.2f ms | %.2f ms | %+.2f ms |\n", n, u / n / 1e6, t / n / 1e6, (t - u) / n / 1e6 }'
	if [ -s "$tmp/full.ru" ]; then
		awk '{ print $1 }' "$tmp/full.ru" | median >"$tmp/rss"
		awk '{ print $2 }' "$tmp/full.ru" | median >"$tmp/user"
		awk '{ print $3 }' "$tmp/full.ru" | median >"$tmp/sys"
		echo "| peak RSS, ebprof full mode on the loop (max of ebprof and the loop) | | $(awk '{ printf "%.1f MiB", $1 / 1024 }' "$tmp/rss") | |"
		echo "| CPU user / sys, ebprof + the traced loop (probe hits are sys) | | $(cat "$tmp/user") s / $(cat "$tmp/sys") s | |"
	fi
	echo
	echo "Resource figures from $timer_name. bpftrace's uprobes are system-wide (0.17): while it"
	echo "ran, every process on the machine took its traps (its programs filter by pid)."
} | tee "$out/bench.md"

{
	echo "raw results, in run order (ns/pair for loop and workset, ns per program run otherwise)"
	for cfg in "${configs[@]}"; do
		for wl in $WORKLOADS; do echo "$cfg $wl: $(list "$tmp/$cfg.$wl")"; done
	done
	echo "unrelated alone: $(list "$tmp/unrel.alone")"
	echo "unrelated beside ebprof: $(list "$tmp/unrel.beside")"
	echo "start untraced (ns): $(list "$tmp/start.untraced")"
	echo "start under ebprof (ns): $(list "$tmp/start.traced")"
	echo "process tree untraced / under ebprof (ns, $TREE_N processes): $(list "$tmp/tree.untraced") / $(list "$tmp/tree.traced")"
	for wl in $WORKLOADS; do echo "allocating calls $wl: $(cat "$tmp/allocs.$wl" 2>/dev/null)"; done
	[ ! -s "$tmp/full.ru" ] || echo "full loop runs (maxrss_kb user_s sys_s wall_s): $(tr '\n' ';' <"$tmp/full.ru")"
} >"$bin/raw.txt"
note "written to $out/bench.md (raw values: $bin/raw.txt)"
