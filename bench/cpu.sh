#!/usr/bin/env bash
# What CPU sampling costs (`make bench-cpu`): `ebprof cpu -F 99` beside the two anchors the issue
# names, `perf record -F 99 -g` and bpftrace's `profile:hz:99 { @[kstack, ustack] = count(); }`,
# each launching the same CPU-bound program, against the program alone.
# Usage: bench/cpu.sh OUTDIR (default build)   (root)
#
# One run, BENCH_CPU_ROUNDS rounds (default 5); in each round every workload runs once alone and
# once under each profiler, the configurations' order rotated from round to round (so a drift of
# the machine's load does not always hit the same one). This is a noisy shared 2-core VM: only
# compare figures from one run; each cell is the median over the rounds of per-round figures.
#
# Workloads (BENCH_CPU_WORKLOADS, default "empty burn burn2 xz"):
#   empty  bench/cpuburn.c with one unit (~0.1 ms): what remains is each profiler's fixed cost,
#          its start-up, detach and report;
#   burn   bench/cpuburn.c, one thread, BENCH_CPU_UNITS units (default 60000, ~4 s of CPU),
#          a 15-frame-deep frame-pointer stack;
#   burn2  the same with two threads (each BENCH_CPU_UNITS units: ~8 s of CPU, ~4 s of wall);
#   xz     `xz -9 -T1` compressing a generated BENCH_CPU_XZ_MB-MB text file (default 6; ~5 s of
#          CPU here). Debian's xz has no frame pointers: its user stacks are 1-2 frames deep.
# Configurations: alone; perf (`perf record -F HZ -g -q -o FILE -- CMD`); bpftrace (`bpftrace -e
#   'profile:hz:HZ /pid == cpid/ { @[kstack, ustack] = count(); }' -c CMD`: the probe is
#   system-wide, the filter keeps the launched program's samples, i.e. every thread of it);
#   ebprof (`ebprof cpu -F HZ -o FILE -- CMD`, skipped with a note while `ebprof cpu --help`
#   fails) with its caches (kernel symbols, decompressed debug files; in a directory of this
#   run, filled by two untimed runs before the rounds: what every run pays after the first since
#   boot), ebprof-fp (the same with --unwind fp: no unwind tables, frame pointers only), and
#   ebprof-nocache (the same as ebprof with EBPROF_CACHE_DIR= : reads /proc/kallsyms and
#   inflates compressed DWARF every time; what the first run after a boot pays, less writing
#   the caches); with BENCH_CPU_EBPROF_BEFORE=PATH also ebprof-before, another ebprof binary (a
#   build before a change) run as ebprof is, with the same caches. BENCH_CPU_HZ (default 99)
#   sets the frequency of all of them.
#
# Measured per run:
#   - the workload's own CPU time (user, system) and wall time, by bench/cpuru_preload.c
#     preloaded into it (getrusage(RUSAGE_SELF) from its constructor to its destructor);
#   - the CPU time of the whole process tree (the profiler, the workload and anything else
#     either started), by bench/rusage.c (wait4) from the profiler's start to its exit, start-up
#     and report writing included; the profiler's own CPU time is that less the workload's
#     (less the same difference measured alone: ld.so and exit outside the preload's window);
#   - the profiler's steady-state CPU time: its CPU time while the workload ran (the preload
#     reads its parent's /proc/PID/task/*/sched at both ends);
#   - the samples each profiler recorded (perf report --stats; the sum of bpftrace's counts; the
#     ebprof report's total if it has one), for the cost per sample.
# The added CPU of a configuration = (its workload CPU - the workload alone's, same round) + the
# profiler's own CPU; shown in ms and as % of the workload alone's CPU time.
# Then, in separate runs that are not timed (kernel.bpf_stats_enabled=1 makes every BPF program
# run slower, so it is off in the timed rounds): bpf_stats of the perf_event programs bpftrace and
# ebprof load (`bpftool prog show`: run_cnt, run_time_ns, polled while they run).
#
# Writes the tables to stdout and OUTDIR/bench-cpu.md, raw values to OUTDIR/bench/cpu-raw.txt.
set -euo pipefail

out=${1:-build}
ROUNDS=${BENCH_CPU_ROUNDS:-5}
UNITS=${BENCH_CPU_UNITS:-60000}
XZ_MB=${BENCH_CPU_XZ_MB:-6}
HZ=${BENCH_CPU_HZ:-99}
WORKLOADS=${BENCH_CPU_WORKLOADS:-empty burn burn2 xz}
STATS=${BENCH_CPU_STATS:-1}
cd "$(dirname "$0")/.."

die() {
	printf 'bench-cpu: %s\n' "$*" >&2
	exit 1
}
note() { printf 'bench-cpu: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || die "must run as root (the profilers load BPF and open perf events); try: sudo make bench-cpu"
for v in "$ROUNDS" "$UNITS" "$XZ_MB" "$HZ"; do
	case "$v" in '' | *[!0-9]* | 0) die "BENCH_CPU_ROUNDS, BENCH_CPU_UNITS, BENCH_CPU_XZ_MB and BENCH_CPU_HZ must be positive integers" ;; esac
done
for w in $WORKLOADS; do
	case "$w" in empty | burn | burn2 | xz) ;; *) die "unknown workload '$w' in BENCH_CPU_WORKLOADS (known: empty burn burn2 xz)" ;; esac
done
command -v jq >/dev/null || die "jq is not installed (scripts/install-deps.sh installs it)"
[[ " $WORKLOADS " != *" xz "* ]] || command -v xz >/dev/null || die "xz is not installed (apt-get install xz-utils)"

# ---- helpers: the workload and the two measuring pieces ----
bin=$out/bench
mkdir -p "$bin"
build() { # COMPILER SRC OUT CFLAGS...
	local cc=$1 src=$2 dst=$3
	shift 3
	if [ ! -e "$dst" ] || [ "$src" -nt "$dst" ] || [ "$0" -nt "$dst" ]; then
		"$cc" "$@" "$src" -o "$dst" || die "cannot build $src"
	fi
}
# clang: GCC 12 drops the leaf's frame even with -mno-omit-leaf-frame-pointer (then the leaf's
# caller, burn_12, is missing from every frame-pointer stack)
build "${CLANG:-clang}" bench/cpuburn.c "$bin/cpuburn" -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -Wall
build gcc bench/cpuru_preload.c "$bin/cpuru.so" -O2 -fPIC -shared -Wall
build gcc bench/rusage.c "$bin/rusage" -O2 -g -Wall
cpuburn=$(cd "$bin" && pwd)/cpuburn
cpuru=$(cd "$bin" && pwd)/cpuru.so
rusage=$bin/rusage

tmp=$(mktemp -d)
stats_old=
cleanup() {
	[ -z "$stats_old" ] || sysctl -q -w kernel.bpf_stats_enabled="$stats_old" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
case $tmp in *' '*) die "the temporary directory '$tmp' has a space (bpftrace -c splits on spaces)" ;; esac

# ---- configurations ----
# "again" is the workload alone a second time in each round, measured as the profilers are: the
# noise floor of this method on this machine (its "added" should be 0).
configs=(alone again)
skipped=()
if command -v perf >/dev/null && perf record -q -F "$HZ" -g -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	configs+=(perf)
else
	skipped+=("perf: perf record does not work here (apt-get install linux-perf)")
fi
if command -v bpftrace >/dev/null; then
	configs+=(bpftrace)
else
	skipped+=("bpftrace: not installed (apt-get install bpftrace)")
fi
ebprof=$out/ebprof
EBPROF_OUT=${BENCH_CPU_EBPROF_OUT:-ebprof-cpu.json}
if [ -x "$ebprof" ] && "$ebprof" cpu --help >/dev/null 2>&1; then
	configs+=(ebprof ebprof-fp ebprof-nocache)
	# another build beside this one in the same run (a build before a change), as ebprof is run
	if [ -n "${BENCH_CPU_EBPROF_BEFORE:-}" ]; then
		[ -x "$BENCH_CPU_EBPROF_BEFORE" ] || die "BENCH_CPU_EBPROF_BEFORE: '$BENCH_CPU_EBPROF_BEFORE' is not an executable"
		configs+=(ebprof-before)
	fi
else
	skipped+=("ebprof: '$ebprof cpu --help' fails (no cpu mode in this build yet)")
fi
for s in "${skipped[@]}"; do note "skipped: $s"; done

# ---- workloads ----
if [[ " $WORKLOADS " == *" xz "* ]]; then
	# deterministic, compressible, not trivial: numbered records of random words and numbers
	awk -v bytes=$((XZ_MB * 1048576)) 'BEGIN {
		srand(42); n = split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega", w, " ")
		for (i = 0; total < bytes; i++) {
			line = sprintf("%d %s %s %.3f %s\n", i, w[int(rand() * n) + 1], w[int(rand() * n) + 1], rand() * 1000, w[int(rand() * n) + 1])
			printf "%s", line; total += length(line)
		}
	}' >"$tmp/xz.in"
	xz -9 -T1 -c "$tmp/xz.in" >"$tmp/xz.expect" || die "xz -9 -T1 fails on the generated input"
fi

wl_cmd() { # WORKLOAD: the command, one word per argument (no spaces in any)
	case $1 in
	empty) echo "$cpuburn 1" ;;
	burn) echo "$cpuburn $UNITS" ;;
	burn2) echo "$cpuburn -t 2 $UNITS" ;;
	xz) echo "xz -9 -T1 -k -f -S .bench $tmp/xz.in" ;; # writes xz.in.bench, not stdout
	esac
}
wl_check() { # WORKLOAD: did it do its work?
	case $1 in
	empty | burn | burn2) grep -q '^cpuburn: .* checksum ' "$tmp/wl.stdout" ;;
	xz) cmp -s "$tmp/xz.in.bench" "$tmp/xz.expect" ;;
	esac
}

# fail CONFIG WORKLOAD WHY: explain a failed run and stop
fail() {
	{
		echo # ends the round's progress line
		echo "bench-cpu: $1 failed on the $2 workload: $3"
		echo "bench-cpu: command: ${cmd[*]}"
		echo "bench-cpu: its last messages:"
		tail -n 20 "$tmp/err" | sed 's/^/    /'
		tail -n 5 "$tmp/wl.stdout" | sed 's/^/    (stdout) /'
	} >&2
	exit 1
}

# samples CONFIG: how many samples the profiler recorded in the last run ("?" if unknown)
samples() {
	case $1 in
	perf) perf report -i "$tmp/perf.data" --stats 2>/dev/null |
		awk '/SAMPLE events:/ { print $3; found = 1; exit } END { if (!found) print "?" }' ;;
	bpftrace) awk '/^\]: [0-9]+$/ { s += $2 } END { print s + 0 }' "$tmp/wl.stdout" ;;
	ebprof*) jq -r '.totals.samples // "?"' "$tmp/$EBPROF_OUT" 2>/dev/null || echo "?" ;;
	*) echo 0 ;;
	esac
}

# the command of CONFIG around the preloaded workload
inner=(/usr/bin/env LD_PRELOAD="$cpuru" BENCH_RU_OUT="$tmp/ru")
profiler_cmd() { # CONFIG WORKLOAD: sets cmd
	local -a w
	read -r -a w <<<"$(wl_cmd "$2")"
	case $1 in
	alone | again) cmd=("${inner[@]}" "${w[@]}") ;;
	perf) cmd=(perf record -q -F "$HZ" -g -o "$tmp/perf.data" -- "${inner[@]}" "${w[@]}") ;;
	bpftrace) cmd=(bpftrace -e "profile:hz:$HZ /pid == cpid/ { @[kstack, ustack] = count(); }"
		-c "${inner[*]} ${w[*]}") ;;
	ebprof) cmd=(env EBPROF_CACHE_DIR="$tmp/cache" "$ebprof" cpu -q -F "$HZ" -o "$tmp/$EBPROF_OUT" --
		"${inner[@]}" "${w[@]}") ;;
	ebprof-fp) cmd=(env EBPROF_CACHE_DIR="$tmp/cache" "$ebprof" cpu -q --unwind fp -F "$HZ"
		-o "$tmp/$EBPROF_OUT" -- "${inner[@]}" "${w[@]}") ;;
	ebprof-nocache) cmd=(env EBPROF_CACHE_DIR= "$ebprof" cpu -q -F "$HZ" -o "$tmp/$EBPROF_OUT" --
		"${inner[@]}" "${w[@]}") ;;
	ebprof-before) cmd=(env EBPROF_CACHE_DIR="$tmp/cache" "$BENCH_CPU_EBPROF_BEFORE" cpu -q -F "$HZ"
		-o "$tmp/$EBPROF_OUT" -- "${inner[@]}" "${w[@]}") ;;
	esac
}
want_parent() { # CONFIG: the comm of the workload's parent
	case $1 in alone | again) echo rusage ;; ebprof*) echo ebprof ;; *) echo "$1" ;; esac
}

# run_one ROUND CONFIG WORKLOAD: one timed run; appends a line to $tmp/data:
#   ROUND WORKLOAD CONFIG WL_USER WL_SYS WL_WALL TREE_CPU PARENT_CPU SAMPLES
run_one() {
	local r=$1 cfg=$2 wl=$3 rc=0 u s w p comm tree n
	rm -f "$tmp/ru" "$tmp/tree" "$tmp/perf.data" "$tmp/$EBPROF_OUT" "$tmp/xz.in.bench"
	profiler_cmd "$cfg" "$wl"
	"$rusage" "$tmp/tree" "${cmd[@]}" >"$tmp/wl.stdout" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "$cfg" "$wl" "exit status $rc"
	[ -s "$tmp/ru" ] || fail "$cfg" "$wl" "no figures from the preloaded workload"
	wl_check "$wl" || fail "$cfg" "$wl" "the workload's output is not what it should be"
	read -r u s w p comm <"$tmp/ru"
	[ "$comm" = "$(want_parent "$cfg")" ] || p="?" # not launched by the profiler itself
	tree=$(awk '{ printf "%.6f", $2 + $3 }' "$tmp/tree")
	n=$(samples "$cfg")
	# a profiler that recorded far fewer samples than HZ x the CPU time would look cheap for nothing
	case $cfg in alone | again) ;; *)
		[ "$wl" = empty ] || awk -v n="$n" -v c="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" -v hz="$HZ" \
			'BEGIN { exit !(n ~ /^[0-9]+$/ && n >= 0.5 * hz * c) }' ||
			fail "$cfg" "$wl" "it recorded $n samples in $u+$s s of CPU at $HZ Hz"
		;;
	esac
	case $cfg in ebprof*)
		jq -r --arg wl "$wl" '"\($wl) " + ([.drops[]?] | add // 0 | tostring) + " " +
			(.info.samples_lost // "0") + " " + ([.drops // {} | to_entries[] |
			select(.value > 0) | .key] | join(",") | if . == "" then "-" else . end)' \
			"$tmp/$EBPROF_OUT" >>"$tmp/drops"
		# did its report need kernel symbols? (without the cache, loading /proc/kallsyms is a
		# large part of its own CPU)
		printf '%s %s %s\n' "$wl/$cfg" "$(awk -v t="$tree" -v u="$u" -v s="$s" 'BEGIN { printf "%.6f", t - u - s }')" \
			"$(jq '[.sites[]?.frames[]? | select(.module == "[kernel.kallsyms]")] | length' "$tmp/$EBPROF_OUT")" >>"$tmp/kframes"
		;;
	esac
	echo "$r $wl $cfg $u $s $w $tree $p $n" >>"$tmp/data"
	printf '%s' " $cfg=$(awk -v u="$u" -v s="$s" -v t="$tree" 'BEGIN { printf "%.3f+%.3f", u + s, t - u - s }')"
}

note "rounds=$ROUNDS, ${HZ} Hz; workloads: $WORKLOADS (burn: $UNITS units a thread; xz: $XZ_MB MB); configurations: ${configs[*]}"
if [[ " ${configs[*]} " == *" ebprof "* ]]; then
	# fill ebprof's caches as any earlier run since boot would have (kernel frames: dd)
	env EBPROF_CACHE_DIR="$tmp/cache" "$ebprof" cpu -q -F 999 -o "$tmp/warm.json" -- \
		dd if=/dev/zero of=/dev/null bs=64 count=200000 status=none ||
		die "ebprof cpu fails on dd (the untimed run that fills its caches)"
	env EBPROF_CACHE_DIR="$tmp/cache" "$ebprof" cpu -q -F 999 -o "$tmp/warm.json" -- "$cpuburn" 2000 >/dev/null ||
		die "ebprof cpu fails on cpuburn (the untimed run that fills its caches)"
	note "ebprof's caches: $(cd "$tmp/cache" 2>/dev/null && find . -type f | sort | tr '\n' ' ')"
fi
: >"$tmp/data"
: >"$tmp/drops"
: >"$tmp/kframes"
nc=${#configs[@]}
for r in $(seq "$ROUNDS"); do
	for wl in $WORKLOADS; do
		printf 'bench-cpu: round %s/%s %s (workload+profiler CPU s):' "$r" "$ROUNDS" "$wl" >&2
		for k in $(seq 0 $((nc - 1))); do
			run_one "$r" "${configs[$(((k + r) % nc))]}" "$wl" >&2
		done
		echo >&2
	done
done

# ---- bpf_stats: cost per run of the BPF programs (separate, untimed runs) ----
: >"$tmp/stats"
bpf_cfgs=()
for c in bpftrace ebprof; do [[ " ${configs[*]} " != *" $c "* ]] || bpf_cfgs+=("$c"); done  # not ebprof-nocache: the same program
if [ "$STATS" = 1 ] && [ ${#bpf_cfgs[@]} -gt 0 ]; then
	if ! command -v bpftool >/dev/null; then
		note "bpftool is not installed: no bpf_stats"
	elif ! stats_old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) ||
		! sysctl -q -w kernel.bpf_stats_enabled=1; then
		stats_old=
		note "cannot set kernel.bpf_stats_enabled: no bpf_stats"
	else
		for wl in $WORKLOADS; do
			[ "$wl" != empty ] || continue
			for cfg in "${bpf_cfgs[@]}"; do
				bpftool prog show -j | jq -r '.[].id' | sort >"$tmp/ids.before"
				profiler_cmd "$cfg" "$wl"
				rm -f "$tmp/ru" "$tmp/$EBPROF_OUT" "$tmp/xz.in.bench" "$tmp/last.json"
				"${cmd[@]}" >"$tmp/wl.stdout" 2>"$tmp/err" &
				pid=$!
				# poll: the programs go away when the profiler exits; keep the last reading
				while kill -0 "$pid" 2>/dev/null; do
					bpftool prog show -j >"$tmp/now.json" 2>/dev/null &&
						jq -e --rawfile before "$tmp/ids.before" '[.[] | select(.type == "perf_event"
						and ((.id | tostring) as $i | ($before | split("\n") | index($i)) == null))] | select(length > 0)' \
							"$tmp/now.json" >"$tmp/cur.json" 2>/dev/null && mv "$tmp/cur.json" "$tmp/last.json"
					sleep 0.2
				done
				wait "$pid" || fail "$cfg (bpf_stats run)" "$wl" "exit status $?"
				if [ -s "$tmp/last.json" ]; then
					jq -r --arg wl "$wl" --arg cfg "$cfg" --arg n "$(samples "$cfg")" \
						'.[] | "\($wl) \($cfg) \(.name) \(.run_cnt // 0) \(.run_time_ns // 0) \($n)"' \
						"$tmp/last.json" >>"$tmp/stats"
				else
					note "$cfg on $wl: no perf_event program of its seen by bpftool"
				fi
			done
		done
		sysctl -q -w kernel.bpf_stats_enabled="$stats_old" || true
		stats_old=
	fi
fi

# ---- tables ----
# per round: base = the alone run's (tree - workload), the start/exit CPU outside the window
# per run: added = (workload - alone's workload, same round) + (tree - workload - base)
awk -v cfgs="${configs[*]}" -v wls="$WORKLOADS" -v hz="$HZ" -v units="$UNITS" -v xzmb="$XZ_MB" -v rounds="$ROUNDS" '
function med(key, n,   i, j, t, a) {
	n = cnt[key]; if (n == 0) return "?"
	for (i = 1; i <= n; i++) a[i] = val[key, i]
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function put(key, v) { val[key, ++cnt[key]] = v }
function ratio(a, b) { return (a == "?" || b == "?" || b <= 0) ? "?" : sprintf("x%.2f", a / b) }
{
	r = $1; wl = $2; c = $3
	cpu[r, wl, c] = $4 + $5; sys[r, wl, c] = $5; wall[r, wl, c] = $6; tree[r, wl, c] = $7
	par[r, wl, c] = $8; smp[r, wl, c] = $9
}
END {
	nc = split(cfgs, C, " "); nw = split(wls, W, " ")
	for (i = 1; i <= nw; i++) for (r = 1; r <= rounds; r++) {
		wl = W[i]; a = cpu[r, wl, "alone"]; base = tree[r, wl, "alone"] - a
		put(wl SUBSEP "alone" SUBSEP "base", base)
		for (k = 1; k <= nc; k++) {
			c = C[k]; key = wl SUBSEP c
			put(key SUBSEP "cpu", cpu[r, wl, c]); put(key SUBSEP "sys", sys[r, wl, c]); put(key SUBSEP "wall", wall[r, wl, c])
			if (!((key, "min") in mn) || cpu[r, wl, c] < mn[key, "min"]) mn[key, "min"] = cpu[r, wl, c]
			if (c == "alone") continue
			dw = cpu[r, wl, c] - a; own = tree[r, wl, c] - cpu[r, wl, c] - base
			put(key SUBSEP "dw", dw); put(key SUBSEP "own", own); put(key SUBSEP "add", dw + own)
			put(key SUBSEP "pct", 100 * (dw + own) / a)
			if (par[r, wl, c] != "?") { put(key SUBSEP "steady", par[r, wl, c]); put(key SUBSEP "sadd", dw + par[r, wl, c]); put(key SUBSEP "spct", 100 * (dw + par[r, wl, c]) / a) }
			if (smp[r, wl, c] != "?" && smp[r, wl, c] > 0) {
				put(key SUBSEP "n", smp[r, wl, c]); put(key SUBSEP "per", 1e6 * (dw + own) / smp[r, wl, c])
				if (par[r, wl, c] != "?") put(key SUBSEP "sper", 1e6 * (dw + par[r, wl, c]) / smp[r, wl, c])
			}
		}
	}
	print "Medians over " rounds " interleaved rounds, " hz " Hz. Workloads: empty = bench/cpuburn.c, one unit (each"
	print "profiler'"'"'s fixed cost: start-up, detach, report); burn = bench/cpuburn.c, " units " units, one thread;"
	print "burn2 = the same, two threads; xz = `xz -9 -T1` on a generated " xzmb " MB text file. All CPU"
	print "times are user + system. workload = the program'"'"'s own CPU time (and its change under the"
	print "profiler, same round); profiler = the profiler process tree'"'"'s CPU time from start to exit"
	print "(start-up and report included), steady = its CPU time while the workload ran; added ="
	print "workload change + profiler, in ms and as % of the workload'"'"'s CPU time alone; per sample ="
	print "added / samples recorded. The workload change is the median of the per-round differences"
	print "from alone; in brackets, the difference of the minimums over the rounds instead (other load"
	print "only ever adds CPU time). \"alone again\" is the workload alone a second time each round,"
	print "taken as a profiler: what the method reads when nothing is added."
	for (i = 1; i <= nw; i++) {
		wl = W[i]
		printf "\n### %s: alone %.3f s CPU (%.3f s sys), %.2f s wall\n\n", wl, med(wl SUBSEP "alone" SUBSEP "cpu"), med(wl SUBSEP "alone" SUBSEP "sys"), med(wl SUBSEP "alone" SUBSEP "wall")
		print "| profiler | workload change (of minimums) | profiler (steady) | added | added % | steady added % | samples | added per sample (steady) | added vs perf | vs bpftrace |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (k = 1; k <= nc; k++) {
			c = C[k]; if (c == "alone") continue
			key = wl SUBSEP c; st = med(key SUBSEP "steady"); sp = med(key SUBSEP "spct")
			pr = med(key SUBSEP "per"); sper = med(key SUBSEP "sper")
			tiny = med(wl SUBSEP "alone" SUBSEP "cpu") < 0.1 # the empty workload: no percentages
			pct = tiny ? "-" : sprintf("%+.2f%%", med(key SUBSEP "pct")); sp = tiny ? "-" : sp
			printf "| %s | %+.1f ms (%+.1f ms) | %.1f ms (%s) | %.1f ms | %s | %s | %s | %s | %s | %s |\n",
				c == "again" ? "none (alone again: the noise floor)" : c,
				1e3 * med(key SUBSEP "dw"), 1e3 * (mn[key, "min"] - mn[wl SUBSEP "alone", "min"]), 1e3 * med(key SUBSEP "own"), st == "?" ? "?" : sprintf("%.1f ms", 1e3 * st),
				1e3 * med(key SUBSEP "add"), pct, (sp == "?" || sp == "-") ? sp : sprintf("%+.2f%%", sp),
				c == "again" ? "-" : med(key SUBSEP "n"), (pr == "?" || tiny) ? "" : sprintf("%.0f us (%s)", pr, sper == "?" ? "?" : sprintf("%.0f us", sper)),
				c == "perf" || c == "again" ? "" : ratio(med(key SUBSEP "add"), med(wl SUBSEP "perf" SUBSEP "add")),
				c == "bpftrace" || c == "again" ? "" : ratio(med(key SUBSEP "add"), med(wl SUBSEP "bpftrace" SUBSEP "add"))
		}
		printf "\nstart/exit of the program outside the measured window (alone): %.1f ms\n", 1e3 * med(wl SUBSEP "alone" SUBSEP "base")
	}
}' "$tmp/data" >"$tmp/table"

{
	echo "## ebprof cpu overhead ($(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	cat "$tmp/table"
	if [ -s "$tmp/stats" ]; then
		echo
		echo "### BPF cost per program run (bpf_stats, separate untimed runs)"
		echo
		echo "| workload | profiler | program | runs | ns per run | samples recorded | BPF ns per recorded sample |"
		echo "|---|---|---|---:|---:|---:|---:|"
		awk '{ printf "| %s | %s | %s | %d | %.0f | %s | %s |\n", $1, $2, $3, $4, $4 ? $5 / $4 : 0, $6,
			($6 ~ /^[0-9]+$/ && $6 > 0) ? sprintf("%.0f", $5 / $6) : "?" }' "$tmp/stats"
		echo
		echo "bpftrace's profile probe is system-wide: its program runs on every CPU at $HZ Hz, idle or not,"
		echo "and its filter drops other processes' samples, so its runs outnumber its recorded samples."
	fi
	if [ -s "$tmp/drops" ]; then
		echo
		awk '{ d[$1] += $2; l[$1] += $3; if ($4 != "-") r[$1] = r[$1] " " $4 }
			END { printf "ebprof drops (every counter of its report'"'"'s drops: full tables, truncated stacks, ...) / samples lost, summed over the rounds:"
			for (w in d) printf " %s %d / %d%s;", w, d[w], l[w], r[w] ? " (" substr(r[w], 2) ")" : ""; print "" }' "$tmp/drops"
	fi
	if [ -s "$tmp/kframes" ]; then
		echo
		echo "ebprof's own CPU (tree less workload) by whether its report had kernel frames (without its"
		echo "cache it then reads /proc/kallsyms), median ms (runs):"
		awk 'function med(s,   n, a, i, j, t) { n = split(s, a, " "); if (!n) return "-"
				for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
				return sprintf("%.1f (%d)", 1e3 * ((n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), n) }
			{ w[$1] = 1; if ($3 > 0) k[$1] = k[$1] " " $2; else nk[$1] = nk[$1] " " $2 }
			END { for (x in w) printf "%s: with %s, without %s;", " " x, med(k[x]), med(nk[x]); print "" }' "$tmp/kframes"
	fi
	for s in "${skipped[@]}"; do
		echo
		echo "Not measured: $s."
	done
} | tee "$out/bench-cpu.md"

{
	echo "timed runs: ROUND WORKLOAD CONFIG WL_USER_S WL_SYS_S WL_WALL_S TREE_CPU_S PROFILER_STEADY_CPU_S SAMPLES"
	cat "$tmp/data"
	echo "bpf_stats runs: WORKLOAD PROFILER PROGRAM RUN_CNT RUN_TIME_NS SAMPLES"
	cat "$tmp/stats"
	echo "ebprof runs, in order: WORKLOAD OWN_CPU_S KERNEL_FRAMES_IN_REPORT"
	cat "$tmp/kframes"
} >"$bin/cpu-raw.txt"
note "written to $out/bench-cpu.md (raw values: $bin/cpu-raw.txt)"
