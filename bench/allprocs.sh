#!/usr/bin/env bash
# What -a costs on a machine that starts many short processes, and what it gets of them: a
# storm of short processes (each round `sleep 0.001`, then `echo x | cat`) under nothing,
# `ebprof cpu -a`, `ebprof offcpu -a` and `perf record -a -g -F 99` (the anchor), in rounds
# whose order rotates. Usage: bench/allprocs.sh OUTDIR   (root; `make bench-allprocs`)
#   BENCH_RUNS     rounds (default 3); medians reported
#   BENCH_STORM_N  the storm's rounds (default 600: ~1,800 processes)
#   BENCH_EBPROF_before=PATH  also that binary's cpu -a and offcpu -a (a build before a change)
# For each configuration: the storm's wall time (the shell that runs it, timed around it), the
# profiler's own CPU time (user + system of its process from wait4, bench/rusage.c, while it
# profiles the whole machine for the storm and a second on each side), and for ebprof the
# processes its unwinder loaded when their stacks were met (-v), the stacks of the storm's
# programs (sleep, cat) that are complete (no [truncated]), and those whose frames all have
# names (no bare address).
set -euo pipefail
out=${1:-build}
runs=${BENCH_RUNS:-3}
n=${BENCH_STORM_N:-600}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench/allprocs.sh: needs root (loads BPF)" >&2; exit 1; }
[ -x "$out/ebprof" ] || { echo "bench/allprocs.sh: no $out/ebprof (make first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/rusage" bench/rusage.c

confs="alone ebprof-cpu ebprof-offcpu perf"
[ -n "${BENCH_EBPROF_before:-}" ] && confs="$confs before-cpu before-offcpu"
have_perf=1
command -v perf >/dev/null || { have_perf=0; echo "(no perf: its row is left out)"; }

storm() {
	local s e
	s=$(date +%s.%N)
	for ((i = 0; i < n; i++)); do sleep 0.001; echo x | cat >/dev/null; done
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}

# one run of configuration $1: "WALL CPU LOADS COMPLETE% NAMED%" into $tmp/$1.$2
one() {
	local conf=$1 r=$2 bin mode wall res=$tmp/ru prof=$tmp/p
	case $conf in
	alone)
		echo "$(storm) - - - -" >"$tmp/$conf.$r"
		return ;;
	perf)
		[ "$have_perf" -eq 1 ] || return 0
		"$tmp/rusage" "$res" perf record -q -a -g -F 99 -o "$tmp/perf.data" -- \
			sleep 1000 >/dev/null 2>&1 &
		;;
	*-cpu|*-offcpu)
		bin=$out/ebprof
		[ "${conf%%-*}" = before ] && bin=$BENCH_EBPROF_before
		mode=${conf#*-}
		"$tmp/rusage" "$res" "$bin" "$mode" -a -v -o "$prof.folded" 2>"$prof.err" &
		;;
	esac
	local tracer=$!
	sleep 1.5
	wall=$(storm)
	sleep 1
	# the profiler is rusage's child: SIGINT ends it (perf's own sleep with it)
	pkill -INT -P "$tracer" || true
	wait "$tracer" || true
	read -r _ u s _ <"$res"
	if [ "$conf" = perf ]; then
		echo "$wall $(echo "$u + $s" | bc) - - -" >"$tmp/$conf.$r"
		rm -f "$tmp/perf.data"
		return
	fi
	local loads stacks
	loads=$(grep -o '[0-9]* processes loaded when their stacks were met' "$prof.err" |
		awk '{ print $1 }')
	# the storm's programs' stacks: complete, and every frame named
	stacks=$(awk '/^(sleep|cat) \(/ { n += $NF; if (!/\[truncated\]/) c += $NF;
			if ($0 !~ /;0x[0-9a-f]+(;| [0-9]+$)/) s += $NF }
		END { if (n) printf "%.1f %.1f", 100 * c / n, 100 * s / n; else print "- -" }' \
		"$prof.folded")
	echo "$wall $(echo "$u + $s" | bc) ${loads:--} $stacks" >"$tmp/$conf.$r"
}

for ((r = 0; r < runs; r++)); do
	set -- $confs
	# rotate the order each round
	for ((k = 0; k < r % $#; k++)); do set -- "${@:2}" "$1"; done
	for conf in "$@"; do one "$conf" "$r"; done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else print v[int((NR + 1) / 2)] }'; }
printf "%-14s %12s %14s %8s %10s %8s\n" configuration "storm (s)" "profiler CPU" loads complete named
for conf in $confs; do
	ls "$tmp/$conf".* >/dev/null 2>&1 || continue
	row=""
	for col in 1 2 3 4 5; do
		v=$(cat "$tmp/$conf".* | awk -v c="$col" '$c != "-" { print $c }' | median)
		row="$row $v"
	done
	read -r w c l k m <<<"$row"
	[ "$c" = - ] || c=$(printf "%.2f s" "$c")
	[ "$k" = - ] || k="$k%"
	[ "$m" = - ] || m="$m%"
	printf "%-14s %12.3f %14s %8s %10s %8s\n" "$conf" "$w" "$c" "$l" "$k" "$m"
done
echo "($runs rounds of $n storm rounds; medians; complete and named: of the samples of sleep and cat)"
