#!/usr/bin/env bash
# What --mmap costs: its sys_enter/sys_exit programs run for every system call of every process.
# Measures, alternating runs in one go (this VM is noisy: compare within one run), the ns per
# getppid(2) of an UNRELATED process (not traced) and the ns per mmap+munmap pair of the same
# untraced process, with no ebprof, with ebprof tracing another process without --mmap, and with
# --mmap. Usage: bench/mmap-cost.sh OUTDIR [ROUNDS]   (root)
set -euo pipefail
out=${1:-build}
rounds=${2:-5}
ebprof=$out/ebprof
loop=$out/bench/sysloop
mkdir -p "$out/bench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$loop" "$(dirname "$0")/sysloop.c"
N=2000000
M=200000

# one measurement of both loops under "$@" (a tracer of a sleeping process, or nothing)
measure() {
	local pid=
	if [ $# -gt 0 ]; then
		"$@" -q -d 60 -o "$tmp/out.json" -- sleep 60 >/dev/null 2>&1 &
		pid=$!
		sleep 1.5	# probes live
		kill -0 "$pid" || { echo "ebprof did not start" >&2; exit 1; }
	fi
	echo "$("$loop" getppid $N) $("$loop" mmap $M)"
	if [ -n "$pid" ]; then
		# SIGTERM: a background job of a script ignores SIGINT
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
}

declare -A g m
traced=
plain=
for r in $(seq "$rounds"); do
	# the traced process's own mmap+munmap pairs, counted as mappings
	plain+="$("$loop" mmap $M) "
	traced+="$("$ebprof" mem --mmap -q -o "$tmp/out.json" -- "$loop" mmap $M) "
	for mode in none mem mmap; do
		case $mode in
		none) v=$(measure) ;;
		mem) v=$(measure "$ebprof" mem) ;;
		mmap) v=$(measure "$ebprof" mem --mmap) ;;
		esac
		g[$mode]+="${v% *} "
		m[$mode]+="${v#* } "
	done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-28s %14s %22s\n' "an unrelated process" "getppid ns" "mmap+munmap ns"
for mode in none mem mmap; do
	case $mode in
	none) name="no ebprof" ;;
	mem) name="ebprof mem (another pid)" ;;
	mmap) name="ebprof mem --mmap (another)" ;;
	esac
	printf '%-28s %14s %22s\n' "$name" "$(echo "${g[$mode]}" | median)" \
		"$(echo "${m[$mode]}" | median)"
done
printf '\n%-28s %37s\n' "the traced process itself" "mmap+munmap ns"
printf '%-28s %37s\n' "untraced" "$(echo "$plain" | median)"
printf '%-28s %37s\n' "ebprof mem --mmap -- loop" "$(echo "$traced" | median)"
