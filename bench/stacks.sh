#!/usr/bin/env bash
# What `ebprof stacks -e EVENT` costs an event (`make bench-stacks`): a workload firing one
# tracepoint at a high, known rate, and a real program reading its own events, each run alone,
# under ebprof stacks (user + kernel stacks, the default), and under the two anchors taking the
# same stacks at the same event: `perf record -e EVENT -g` and bpftrace's
# `tracepoint:EVENT /pid == cpid/ { @[kstack, ustack] = count(); }`; and under the floor.
# Usage: bench/stacks.sh OUTDIR (default build)   (root)
#
# Workloads (BENCH_STACKS_WORKLOADS, default "sysloop grep"):
#   sysloop  bench/sysloop.c, `sysloop getppid BENCH_STACKS_N` (default 200000) getppid(2)
#            calls through glibc's syscall(): event syscalls:sys_enter_getppid, exactly N of them
#            (nothing else in the process calls getppid). Built with frame pointers (its main
#            keeps one; glibc's syscall() does not): the anchors' best case.
#   grep     `grep -rl -F EOWNERDEAD BENCH_STACKS_GREP_DIR` (default /usr/include):
#            every file and directory opened, event BENCH_STACKS_GREP_EVENT (default
#            syscalls:sys_enter_openat, "who opens files"); Debian's grep and libc have no frame
#            pointers. Its output is checked against an untraced run's on every run.
# Configurations, each launching the same command (the order rotated from round to round,
# BENCH_STACKS_ROUNDS rounds, default 5, medians):
#   alone     the workload
#   floor     `bench/floor --raw-tp TP -- CMD`: one empty BPF program on the raw tracepoint ebprof
#             attaches for the event (sys_enter for a syscall's entry, on every system call of
#             the machine as ebprof's is): what the tracepoint's dispatch alone costs
#   ebprof    `ebprof stacks -e EVENT -o FILE.json -- CMD` (its caches in a directory of the run,
#             filled by the untimed check run: what every run after the first since boot pays)
#   ebprof-fp the same with --unwind fp: user stacks by frame pointers, no tables
#   ebprof-other the workload alone while `ebprof stacks -e EVENT -p PID` traces another process
#             (a sleep): what the event costs a process ebprof does not trace (a syscall event's
#             program runs on every system call of the machine and returns early)
#   perf      `perf record -e EVENT -g -o FILE -- CMD` (every event a sample; user stacks by
#             frame pointers, kernel stacks by the kernel's unwinder)
#   bpftrace  `bpftrace -e 'tracepoint:EVENT /pid == cpid/ { @[kstack, ustack] = count(); }'
#             -c CMD` (ustack by frame pointers: bpf_get_stackid)
# (BENCH_STACKS_CONFIGS picks a subset; alone is always run.)
#
# Measured per run: the workload's own CPU time (user + system) and wall time, inside it, by
# bench/timeit_preload.c (constructor to destructor: no tool's start-up, detach or report; the
# BPF programs and perf's sample writing in the kernel run in the workload's thread and are in
# it; it makes no getppid or openat call in that window); the CPU time of the whole tree (tool
# and workload) from start to exit by bench/rusage.c (wait4): the tool's own CPU is that less
# the workload's, start-up and report included (perf's copying of its samples to the file is
# there); and the events each tool counted: ebprof's report (the traced processes' hits of the
# event), perf's samples and LOST records (`perf report --stats`), bpftrace's counts summed.
# Added per event = the median over the rounds of (CPU under the tool - CPU alone in the same
# round) / the workload's events; and the same from each configuration's fastest run.
#
# Before the rounds, untimed: each workload once under ebprof with bpftrace counting the same
# event per pid beside it (the same events): ebprof's count must equal bpftrace's for its pid
# (and N for sysloop). After them, untimed, with kernel.bpf_stats_enabled=1 (restored after):
# the programs' run counts and time while sysloop runs under ebprof, bpftrace and the floor.
# Last, what each tool's most frequent stack held in its last timed run (kernel frames, user
# frames, the user frames' names).
#
# This is a noisy VM that other engineers' builds share: compare only the figures of one run.
# Writes the tables to stdout and OUTDIR/bench-stacks.md, raw values to
# OUTDIR/bench/stacks-raw.txt.
set -euo pipefail

out=${1:-build}
ROUNDS=${BENCH_STACKS_ROUNDS:-5}
N=${BENCH_STACKS_N:-200000}
WORKLOADS=${BENCH_STACKS_WORKLOADS:-sysloop grep}
GREP_DIR=${BENCH_STACKS_GREP_DIR:-/usr/include}
GREP_EVENT=${BENCH_STACKS_GREP_EVENT:-syscalls:sys_enter_openat}
CONFIGS=${BENCH_STACKS_CONFIGS:-floor ebprof ebprof-fp ebprof-other perf bpftrace}
STATS=${BENCH_STACKS_STATS:-1}
cd "$(dirname "$0")/.."

die() { printf 'bench-stacks: %s\n' "$*" >&2; exit 1; }
note() { printf 'bench-stacks: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || die "needs root (loads BPF programs, opens perf events); try: sudo make bench-stacks"
for v in "$ROUNDS" "$N"; do
	case "$v" in '' | *[!0-9]* | 0) die "BENCH_STACKS_ROUNDS and BENCH_STACKS_N must be positive integers" ;; esac
done
for w in $WORKLOADS; do
	case "$w" in sysloop | grep) ;; *) die "unknown workload '$w' (known: sysloop grep)" ;; esac
done
configs=(alone)
for c in $CONFIGS; do
	case "$c" in
	floor | ebprof | ebprof-fp | ebprof-other | perf | bpftrace) configs+=("$c") ;;
	alone) ;;
	*) die "unknown configuration '$c' (known: floor ebprof ebprof-fp ebprof-other perf bpftrace)" ;;
	esac
done
EBPROF=$out/ebprof
FLOOR=$out/bench/floor
[ -x "$EBPROF" ] || die "$EBPROF is not built: make"
[ -x "$FLOOR" ] || [[ " ${configs[*]} " != *" floor "* ]] || die "$FLOOR is not built: make $FLOOR"
command -v jq >/dev/null || die "jq is not installed (scripts/install-deps.sh)"
command -v bpftrace >/dev/null || die "bpftrace is not installed (the oracle and an anchor): apt-get install bpftrace"
command -v perf >/dev/null || [[ " ${configs[*]} " != *" perf "* ]] ||
	die "perf is not installed (an anchor): apt-get install linux-perf, or BENCH_STACKS_CONFIGS without perf"
[[ " $WORKLOADS " != *" grep "* ]] || [ -d "$GREP_DIR" ] ||
	die "$GREP_DIR is not a directory (BENCH_STACKS_GREP_DIR; /usr/include is libc6-dev's)"
# perf's and bpftrace's tracepoint events are classic tracepoints: they need tracefs (ebprof's
# syscall events do not); mounted as the other benches and the tests do, and left mounted
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

bin=$out/bench
mkdir -p "$bin"
build() { # SRC OUT CFLAGS...
	local src=$1 dst=$2
	shift 2
	if [ ! -e "$dst" ] || [ "$src" -nt "$dst" ] || [ "$0" -nt "$dst" ]; then
		gcc "$@" "$src" -o "$dst" || die "cannot build $src"
	fi
}
build bench/sysloop.c "$bin/sysloop-fp" -O2 -g -fno-omit-frame-pointer -Wall
build bench/timeit_preload.c "$bin/timeit.so" -O2 -fPIC -shared -Wall
build bench/rusage.c "$bin/rusage" -O2 -g -Wall
SYSLOOP=$(cd "$bin" && pwd)/sysloop-fp
TIMEIT=$(cd "$bin" && pwd)/timeit.so
RUSAGE=$bin/rusage

tmp=$(mktemp -d)
stats_old=
other_sleep=
cleanup() {
	[ -z "$stats_old" ] || sysctl -q -w kernel.bpf_stats_enabled="$stats_old" || true
	[ -z "$other_sleep" ] || kill "$other_sleep" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
raw=$out/bench/stacks-raw.txt
: >"$raw"

# ---- the workloads ----
wl_event() {
	case $1 in sysloop) echo syscalls:sys_enter_getppid ;; grep) echo "$GREP_EVENT" ;; esac
}
wl_cmd() { # WORKLOAD: sets w (the command)
	case $1 in
	sysloop) w=("$SYSLOOP" getppid "$N") ;;
	grep) w=(grep -rl -F EOWNERDEAD "$GREP_DIR") ;;
	esac
}
wl_text() {
	case $1 in
	sysloop) echo "sysloop getppid $N" ;;
	grep) echo "grep -rl -F EOWNERDEAD $GREP_DIR" ;;
	esac
}
# the raw tracepoint ebprof attaches for EVENT: syscalls go through sys_enter/sys_exit
raw_tp() {
	case $1 in
	syscalls:sys_enter_*) echo sys_enter ;;
	syscalls:sys_exit_*) echo sys_exit ;;
	*) echo "${1#*:}" ;;
	esac
}
# the workload's stdout ($tmp/wl.out) is what it must be (bpftrace -c adds blank lines to it)
wl_check() {
	case $1 in
	sysloop) grep -Eqx '[0-9]+(\.[0-9]+)?' "$tmp/wl.out" ;;
	grep) grep -v '^$' "$tmp/wl.out" | cmp -s - "$tmp/grep.want" ;;
	esac
}
if [[ " $WORKLOADS " == *" grep "* ]]; then
	wl_cmd grep
	"${w[@]}" >"$tmp/grep.want" || die "grep found nothing in $GREP_DIR: ${w[*]}"
fi

# ---- the configurations ----
inner=(/usr/bin/env LD_PRELOAD="$TIMEIT" BENCH_TIME_OUT="$tmp/time")
tool_cmd() { # CONFIG WORKLOAD: sets cmd
	local ev
	ev=$(wl_event "$2")
	wl_cmd "$2"
	case $1 in
	alone) cmd=("${inner[@]}" "${w[@]}") ;;
	floor) cmd=("$FLOOR" --raw-tp "$(raw_tp "$ev")" -- "${inner[@]}" "${w[@]}") ;;
	ebprof) cmd=(env EBPROF_CACHE_DIR="$tmp/cache" "$EBPROF" stacks -q -e "$ev" -o "$tmp/e.json"
		-- "${inner[@]}" "${w[@]}") ;;
	ebprof-fp) cmd=(env EBPROF_CACHE_DIR="$tmp/cache" "$EBPROF" stacks -q --unwind fp -e "$ev"
		-o "$tmp/e.json" -- "${inner[@]}" "${w[@]}") ;;
	perf) cmd=(perf record -q -e "$ev" -g -o "$tmp/perf.data" -- "${inner[@]}" "${w[@]}") ;;
	# -o: its maps to a file, the workload's output apart
	bpftrace) cmd=(bpftrace -o "$tmp/bt.out" -e "tracepoint:$ev /pid == cpid/ { @[kstack, ustack] = count(); }"
		-c "${inner[*]} ${w[*]}") ;;
	esac
}
# the events CONFIG counted in its last run (perf: samples and lost, "S+L")
counted() {
	local ev
	ev=$(wl_event "$2")
	case $1 in
	ebprof-other) echo - ;;
	ebprof*) jq -r --arg ev "$ev" '[.processes[].calls[$ev] // 0] | add // 0' "$tmp/e.json" ;;
	perf) perf report --stats -i "$tmp/perf.data" 2>/dev/null | awk '
		/ SAMPLE events:/ { s = $3 } / LOST(_SAMPLES)? events:/ { l[$1] = $3 }
		END { printf "%s+%d\n", s == "" ? "?" : s, l["LOST"] + l["LOST_SAMPLES"] }' ;;
	bpftrace) awk '/^\]: [0-9]+$/ { s += $2 } END { print s + 0 }' "$tmp/bt.out" ;;
	*) echo - ;;
	esac
}

# SIGINT ends bpftrace once it has printed its maps; now and then one is lost (the tests saw it
# too, tests/e2e/helpers.bash), so it is sent again every 5 s, up to 12 times
stop_bt() {
	local _i _j
	for _i in $(seq 12); do
		kill -INT "$1" 2>/dev/null || return 0
		for _j in $(seq 50); do
			kill -0 "$1" 2>/dev/null || { wait "$1" || true; return 0; }
			sleep 0.1
		done
	done
	note "bpftrace $1 still running a minute after SIGINT"
	return 1
}

fail() { # CONFIG WORKLOAD WHY
	note "$1 on $2: $3"
	sed 's/^/  /' "$tmp/err" | tail -20 >&2
	exit 1
}

# ---- the checks: the floor's program fires; ebprof's count against bpftrace's on the same events ----
if [[ " ${configs[*]} " == *" floor "* ]]; then
	"$FLOOR" --raw-tp sys_enter --count -- "$SYSLOOP" getppid 1000 >/dev/null 2>"$tmp/err" ||
		fail floor sysloop "the check run failed"
	hits=$(sed -n 's/^floor: raw_tp //p' "$tmp/err")
	[ "${hits:-0}" -ge 1000 ] || fail floor sysloop "its program ran ${hits:-0} times for 1000 system calls"
fi
: >"$tmp/check"
for wl in $WORKLOADS; do
	ev=$(wl_event "$wl")
	wl_cmd "$wl"
	comm=$(basename "${w[0]}" | cut -c1-15)
	# and every system call of the process: ebprof's and the floor's sys_enter programs run on each
	bpftrace -e "BEGIN { printf(\"ready\\n\"); } tracepoint:$ev /comm == \"$comm\"/ { @[pid] = count(); }
		tracepoint:raw_syscalls:sys_enter /comm == \"$comm\"/ { @sc[pid] = count(); }" \
		>"$tmp/bc.out" 2>&1 &
	bt=$!
	until grep -q '^ready' "$tmp/bc.out" 2>/dev/null; do
		kill -0 $bt 2>/dev/null || { cat "$tmp/bc.out" >&2; die "bpftrace (the check) did not start"; }
		sleep 0.05
	done
	env EBPROF_CACHE_DIR="$tmp/cache" "$EBPROF" stacks -q -e "$ev" -o "$tmp/check.json" -- "${w[@]}" \
		>"$tmp/wl.out" 2>"$tmp/err" || { stop_bt $bt; fail ebprof "$wl" "the check run failed"; }
	stop_bt $bt
	pid=$(jq '.processes[0].pid' "$tmp/check.json")
	e=$(jq -r --arg ev "$ev" '.processes[0].calls[$ev]' "$tmp/check.json")
	b=$(sed -n "s/^@\[$pid\]: \([0-9]*\)$/\1/p" "$tmp/bc.out")
	sc=$(sed -n "s/^@sc\[$pid\]: \([0-9]*\)$/\1/p" "$tmp/bc.out")
	want=${b:-?}
	[ "$wl" != sysloop ] || want=$N
	verdict=equal
	[ "$e" = "${b:-none}" ] && [ "$e" = "$want" ] || verdict=DIFFERENT
	echo "$wl $ev $e ${b:-none} $want $verdict ${sc:-?}" >>"$tmp/check"
	note "check $wl ($ev): ebprof $e, bpftrace ${b:-none}, expected $want: $verdict"
done
declare -A events
while read -r wl _ e _; do events[$wl]=$e; done <"$tmp/check"

# ---- the timed rounds ----
# ebprof-other: ebprof tracing the event in another process (a sleep), started before the
# workload runs alone beside it; returns once its link exists (its descriptors' fdinfo)
other_start() { # WORKLOAD
	sleep 600 &
	other_sleep=$!
	env EBPROF_CACHE_DIR="$tmp/cache" "$EBPROF" stacks -q -e "$(wl_event "$1")" -p $other_sleep \
		-o "$tmp/o.json" 2>"$tmp/err.other" &
	other_ebprof=$!
	until grep -qs '^link_type:' /proc/$other_ebprof/fdinfo/*; do
		kill -0 $other_ebprof 2>/dev/null || { cp "$tmp/err.other" "$tmp/err"; fail ebprof-other "$1" "it did not start"; }
		sleep 0.05
	done
	sleep 0.5	# the rest of its attach (the target's tables)
}
other_stop() { # its target ends, then it does
	kill $other_sleep
	wait $other_sleep 2>/dev/null || true
	other_sleep=
	wait "$other_ebprof" || { cp "$tmp/err.other" "$tmp/err"; fail ebprof-other "$1" "it failed"; }
}

run_one() { # ROUND CONFIG WORKLOAD: appends "ROUND WORKLOAD CONFIG CPU_NS WALL_NS TREE_NS COUNT"
	local r=$1 cfg=$2 wl=$3 rc=0 wall cpu tree n
	rm -f "$tmp/time" "$tmp/tree" "$tmp/perf.data" "$tmp/e.json" "$tmp/bt.out"
	if [ "$cfg" = ebprof-other ]; then
		other_start "$wl"
		tool_cmd alone "$wl"
	else
		tool_cmd "$cfg" "$wl"
	fi
	"$RUSAGE" "$tmp/tree" "${cmd[@]}" >"$tmp/wl.out" 2>"$tmp/err" || rc=$?
	[ "$cfg" != ebprof-other ] || other_stop "$wl"
	[ $rc -eq 0 ] || fail "$cfg" "$wl" "exit status $rc"
	[ -s "$tmp/time" ] || fail "$cfg" "$wl" "no figures from the preloaded workload"
	wl_check "$wl" || fail "$cfg" "$wl" "the workload's output is not what it should be"
	read -r wall cpu <"$tmp/time"
	tree=$(awk '{ printf "%.0f", ($2 + $3) * 1e9 }' "$tmp/tree")
	n=$(counted "$cfg" "$wl")
	case $cfg in
	ebprof-other) ;;
	ebprof*)
		jq -r --arg wl "$wl/$cfg" '"\($wl) " + ([.drops // {} | to_entries[] | select(.value > 0) |
			"\(.key)=\(.value)"] | join(",") | if . == "" then "-" else . end)' "$tmp/e.json" >>"$tmp/drops"
		cp "$tmp/e.json" "$tmp/last.$wl.$cfg.json" ;;
	perf) cp "$tmp/perf.data" "$tmp/last.$wl.perf.data" ;;
	bpftrace) cp "$tmp/bt.out" "$tmp/last.$wl.bt.out" ;;
	esac
	echo "$r $wl $cfg $cpu $wall $tree $n" >>"$raw"
	printf ' %s=%.3f' "$cfg" "$(awk -v c="$cpu" 'BEGIN { print c / 1e9 }')" >&2
}
: >"$tmp/drops"
nc=${#configs[@]}
for r in $(seq "$ROUNDS"); do
	for wl in $WORKLOADS; do
		printf 'bench-stacks: round %s/%s %s (workload CPU s):' "$r" "$ROUNDS" "$wl" >&2
		for k in $(seq 0 $((nc - 1))); do
			run_one "$r" "${configs[$(((k + r) % nc))]}" "$wl"
		done
		echo >&2
	done
done

# ---- bpf_stats: each program's runs and time while sysloop runs (untimed) ----
: >"$tmp/stats"
progs() { # PID PATTERN: "NAME RUN_CNT RUN_TIME_NS" of the programs process PID holds (its
	# descriptors' prog_id) whose names match: other engineers' tests may load programs of the
	# same names meanwhile (this bpftool lists no holders' pids)
	local id
	for id in $(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null || true
	done | jq -r --arg p "$2" 'select(.name != null and (.name | test($p))) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
}
stats_of() { # CONFIG PATTERN: sysloop under CONFIG, the programs read before it ends
	local cfg=$1 pat=$2 pid bt=
	local script="until [ -e '$tmp/go' ]; do sleep 0.05; done; '$SYSLOOP' getppid $N >/dev/null;
		touch '$tmp/done'; until [ -e '$tmp/stop' ]; do sleep 0.05; done"
	rm -f "$tmp/go" "$tmp/done" "$tmp/stop"
	case $cfg in
	ebprof) env EBPROF_CACHE_DIR="$tmp/cache" "$EBPROF" stacks -q -e syscalls:sys_enter_getppid \
		-o "$tmp/s.json" -- sh -c "$script" 2>"$tmp/err" & ;;
	floor) "$FLOOR" --raw-tp sys_enter -- sh -c "$script" 2>"$tmp/err" & ;;
	bpftrace)
		bpftrace -e 'BEGIN { printf("ready\n"); } tracepoint:syscalls:sys_enter_getppid
			/comm == "sysloop-fp"/ { @[kstack, ustack] = count(); }' >"$tmp/bs.out" 2>&1 &
		bt=$!
		until grep -q '^ready' "$tmp/bs.out" 2>/dev/null; do
			kill -0 $bt 2>/dev/null || { note "bpftrace (bpf_stats) did not start"; return 0; }
			sleep 0.05
		done
		sh -c "$script" & ;;
	esac
	pid=$!
	# attached by then (ebprof and the floor release the command only once they are)
	sleep 1
	touch "$tmp/go"
	until [ -e "$tmp/done" ]; do
		kill -0 $pid 2>/dev/null || { note "$cfg (bpf_stats) ended early"; return 0; }
		sleep 0.05
	done
	progs "${bt:-$pid}" "$pat" | sed "s/^/$cfg /" >>"$tmp/stats"
	touch "$tmp/stop"
	wait $pid || true
	[ -z "$bt" ] || stop_bt $bt
}
if [ "$STATS" = 1 ] && [[ " $WORKLOADS " == *" sysloop "* ]]; then
	if ! command -v bpftool >/dev/null; then
		note "bpftool is not installed: no bpf_stats"
	elif ! stats_old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) ||
		! sysctl -q -w kernel.bpf_stats_enabled=1; then
		stats_old=
		note "cannot set kernel.bpf_stats_enabled: no bpf_stats"
	else
		for cfg in "${configs[@]}"; do
			case $cfg in
			ebprof) stats_of ebprof '^stacks_sys_ent' ;;
			floor) stats_of floor '^floor_raw_tp$' ;;
			# bpftrace names a program after its probe, cut at 15 characters
			bpftrace) stats_of bpftrace '^sys_enter_getpp' ;;
			esac
		done
		sysctl -q -w kernel.bpf_stats_enabled="$stats_old" || true
		stats_old=
	fi
fi

# ---- what each tool's most frequent stack held (its last timed run) ----
: >"$tmp/frames"
for wl in $WORKLOADS; do
	for cfg in "${configs[@]}"; do
		case $cfg in
		ebprof*)
			f=$tmp/last.$wl.$cfg.json
			[ -s "$f" ] || continue
			jq -r --arg wl "$wl" --arg cfg "$cfg" '[.sites[] | select(.events != null)] | max_by(.events) as $s |
				($s.frames | map(select((.synthetic | not) and (.inlined | not)))) as $f |
				"\($wl)|\($cfg)|\($s.events)|\([$f[] | select(.kernel)] | length)|\([$f[] | select(.kernel | not)] | length)|" +
				([$f[] | select(.kernel | not) | .function // .offset // "?"] | join(" < "))' "$f" >>"$tmp/frames" ;;
		perf)
			f=$tmp/last.$wl.perf.data
			[ -s "$f" ] || continue
			perf script -i "$f" -F ip,sym,dso 2>/dev/null | awk -v wl="$wl" '
				function flush() { if (nk + nu) { key = nk "|" nu "|" substr(u, 4); n[key]++ } nk = nu = 0; u = "" }
				/^$/ { flush(); next }
				{ if ($NF == "([kernel.kallsyms])") nk++; else { nu++; s = $2; sub(/\+0x[0-9a-f]+$/, "", s); u = u " < " s } }
				END { flush(); for (k in n) if (n[k] > best) { best = n[k]; bk = k }
					printf "%s|perf|%d|%s\n", wl, best, bk }' >>"$tmp/frames" ;;
		bpftrace)
			f=$tmp/last.$wl.bt.out
			[ -s "$f" ] || continue
			awk -v wl="$wl" '
				/^@\[$/ { in_k = 1; nk = nu = 0; u = ""; next }
				/^, *$/ && in_k { in_k = 0; in_u = 1; next }
				/^\]: [0-9]+$/ { if ($2 > best) { best = $2; bk = nk "|" nu "|" substr(u, 4) } in_u = 0; next }
				in_k && NF { nk++ }
				in_u && NF { nu++; s = $1; sub(/\+[0-9]+$/, "", s); u = u " < " s }
				END { printf "%s|bpftrace|%d|%s\n", wl, best, bk }' "$f" >>"$tmp/frames" ;;
		esac
	done
done

# ---- tables ----
{
	echo "## ebprof stacks: what an event's stack costs ($(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	echo "Medians of $ROUNDS interleaved rounds. CPU = the workload's own user + system time (inside"
	echo "it: no tool's start-up or report); added per event = the median over the rounds of (CPU"
	echo "under the tool - CPU alone in the same round) / the workload's events (of minimums: from"
	echo "each configuration's fastest run instead, as other load only ever adds CPU time); vs"
	echo "ebprof's added: the same medians' ratio; tool's own = the whole tree's CPU less the"
	echo "workload's, start-up and report included; events counted: ebprof's report, perf's"
	echo "samples+LOST records, bpftrace's counts, each value with its number of runs."
	for wl in $WORKLOADS; do
		ev=$(wl_event "$wl")
		n=${events[$wl]}
		echo
		echo "### $wl: \`$(wl_text "$wl")\`, event $ev, $n events a run"
		echo
		echo "| configuration | CPU (ms) | wall (ms) | ratio to alone | added per event (ns) | of minimums | vs ebprof's added | tool's own CPU (ms) | events counted (runs) |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
		awk -v wl="$wl" -v cfgs="${configs[*]}" -v n="$n" '
			function med(key,   k, i, j, t, a) {
				k = cnt[key]; if (!k) return -1
				for (i = 1; i <= k; i++) a[i] = val[key, i]
				for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
				return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
			}
			$2 == wl {
				c = $3; val[c "cpu", ++cnt[c "cpu"]] = $4; val[c "wall", ++cnt[c "wall"]] = $5
				val[c "own", ++cnt[c "own"]] = $6 - $4
				if (!(c in mn) || $4 < mn[c]) mn[c] = $4
				cpu[$1, c] = $4; rounds[$1] = 1
				if (!((c, $7) in seen)) { seen[c, $7] = 1; vals[c] = vals[c] " " $7 }
				times[c, $7]++
			}
			END {
				k = split(cfgs, C, " ")
				base = med("alonecpu"); baseown = med("aloneown")
				# per round: the difference from alone in that round
				for (r in rounds) for (i = 1; i <= k; i++) if ((r, C[i]) in cpu && (r, "alone") in cpu)
					val[C[i] "d", ++cnt[C[i] "d"]] = cpu[r, C[i]] - cpu[r, "alone"]
				eb = med("ebprofd")
				for (i = 1; i <= k; i++) {
					c = C[i]; m = med(c "cpu")
					counts = ""
					if (c != "alone" && c != "floor" && c != "ebprof-other") {
						nv = split(substr(vals[c], 2), V, " ")
						for (j = 1; j <= nv; j++) counts = counts sprintf("%s%s (%d)", j > 1 ? ", " : "", V[j], times[c, V[j]])
					}
					printf "| %s | %.1f | %.1f | %.2f | %s | %s | %s | %s | %s |\n", c, m / 1e6,
						med(c "wall") / 1e6, m / base,
						c == "alone" ? "-" : sprintf("%.0f", med(c "d") / n),
						c == "alone" ? "-" : sprintf("%.0f", (mn[c] - mn["alone"]) / n),
						(c == "alone" || c == "ebprof" || eb <= 0) ? "-" : sprintf("%.2fx", med(c "d") / eb),
						c == "ebprof-other" ? "-" : sprintf("%.1f", (med(c "own") - baseown) / 1e6), counts == "" ? "-" : counts
				}
			}' "$raw"
	done
	echo
	echo "Count check (untimed, ebprof launching the workload while bpftrace counted the event per pid):"
	while read -r wl ev e b want verdict sc; do
		echo "- $wl, $ev: ebprof $e, bpftrace $b, expected $want: $verdict (the process made $sc system calls, bpftrace's count)"
	done <"$tmp/check"
	echo
	if [ -s "$tmp/drops" ]; then
		echo "ebprof's drops (every counter of its reports' drops that was not 0, summed over the runs):"
		awk '{ runs[$1]++; if ($2 == "-") next; k = split($2, d, ",")
			for (i = 1; i <= k; i++) { split(d[i], kv, "="); sum[$1, kv[1]] += kv[2]; hit[$1, kv[1]]++
				if (!((kv[1]) in seen)) { seen[kv[1]] = 1; names[++nn] = kv[1] } } }
			END { for (c in runs) { line = ""
				for (i = 1; i <= nn; i++) if ((c, names[i]) in sum)
					line = line sprintf(", %s %d (in %d of %d runs)", names[i], sum[c, names[i]], hit[c, names[i]], runs[c])
				printf "- %s: %s\n", c, line == "" ? "none (every counter 0 in " runs[c] " runs)" : substr(line, 3) } }' \
			"$tmp/drops" | sort
	fi
	if [ -s "$tmp/stats" ]; then
		echo
		echo "bpf_stats while sysloop made its $N getppid calls (untimed; every run of the program:"
		echo "ebprof's and the floor's run on every system call of the machine, bpftrace's on getppid):"
		echo
		echo "| tool | program | runs | ns per run | ns per getppid of the loop |"
		echo "|---|---|---:|---:|---:|"
		awk -v n="$N" '$3 > 0 { printf "| %s | %s | %d | %.0f | %.0f |\n", $1, $2, $3, $4 / $3, $4 / n }' "$tmp/stats"
	fi
	if [ -s "$tmp/frames" ]; then
		echo
		echo "The most frequent stack of each tool's last timed run (its events; kernel and user frames,"
		echo "the user frames leaf first):"
		echo
		echo "| workload | tool | events | kernel frames | user frames | user stack |"
		echo "|---|---|---:|---:|---:|---|"
		awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$tmp/frames"
	fi
} | tee "$out/bench-stacks.md"
