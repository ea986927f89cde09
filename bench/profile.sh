#!/usr/bin/env bash
# What `ebprof profile` costs beside its modes alone (`make bench-profile`): the issue's rule
# is that a combined run costs the sum of its modes, no mode paying for another. A real program
# that computes, allocates and writes: sqlite3 building a BENCH_PROFILE_ROWS-row table (default
# 200,000) in a database file under /var/tmp, committed in 20 transactions (each commit an
# fsync). Its own run time and CPU time are measured inside it (bench/timeit_preload.c), so
# ebprof's start-up, symbolization and report never enter the figures.
#
# Configurations, BENCH_PROFILE_ROUNDS rounds each (default 5), interleaved:
#   none      the program alone
#   cpu       ebprof cpu (99 Hz)
#   io        ebprof io
#   offcpu    ebprof offcpu
#   lock      ebprof lock
#   mem       ebprof mem --sample-bytes 524288 (what profile runs by default)
#   profile   ebprof profile (cpu, io, offcpu, lock and mem, the same settings)
# Per configuration the median wall and CPU time; the time each adds to `none`; and the ratio
# of profile's added time to the sum of the five modes' added times (1.0: exactly the sum).
# Usage: bench/profile.sh OUTDIR (default build)   (root)
# Writes the table to stdout and OUTDIR/bench-profile.md, raw values to
# OUTDIR/bench/profile-raw.txt.
set -euo pipefail

out=${1:-build}
ROWS=${BENCH_PROFILE_ROWS:-200000}
ROUNDS=${BENCH_PROFILE_ROUNDS:-5}
cd "$(dirname "$0")/.."

die() {
	printf 'bench-profile: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (loads BPF programs)"
[ -x "$out/ebprof" ] || die "$out/ebprof is not built: make"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed (scripts/install-deps.sh installs it)"
bin=$out/bench
mkdir -p "$bin"
if [ ! -f "$bin/timeit.so" ] || [ bench/timeit_preload.c -nt "$bin/timeit.so" ]; then
	gcc -O2 -fPIC -shared -Wall bench/timeit_preload.c -o "$bin/timeit.so" ||
		die "cannot build bench/timeit_preload.c"
fi
timeit=$(cd "$bin" && pwd)/timeit.so
ebprof=$(cd "$out" && pwd)/ebprof
work=$(mktemp -d /var/tmp/ebprof-bench-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
raw=$bin/profile-raw.txt
: >"$raw"

# 20 transactions of ROWS/20 rows: random text, an index, a query at the end
per=$((ROWS / 20))
{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v TEXT);"
	echo "CREATE INDEX tk ON t(k);"
	for ((i = 0; i < 20; i++)); do
		echo "BEGIN;"
		echo "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $per)"
		echo "  INSERT INTO t(k, v) SELECT hex(randomblob(16)), hex(randomblob(64)) FROM c;"
		echo "COMMIT;"
	done
	echo "SELECT count(*), count(DISTINCT substr(k, 1, 4)) FROM t;"
} >"$work/load.sql"
cat >"$work/run.sh" <<EOS
#!/bin/sh
rm -f "$work/db" "$work/db-journal"
exec env LD_PRELOAD=$timeit BENCH_TIME_OUT="\$1" sqlite3 "$work/db" <"$work/load.sql" >"$work/out"
EOS
chmod +x "$work/run.sh"

# one run of configuration $1: "WALL_NS CPU_NS" of the program
run() {
	local t=$work/t
	rm -f "$t"
	case "$1" in
	none) "$work/run.sh" "$t" ;;
	cpu) "$ebprof" cpu -q -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	io) "$ebprof" io -q -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	offcpu) "$ebprof" offcpu -q -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	lock) "$ebprof" lock -q -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	mem) "$ebprof" mem -q --sample-bytes 524288 -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	profile) "$ebprof" profile -q -o "$work/r.pb.gz" -- "$work/run.sh" "$t" ;;
	esac >/dev/null 2>"$work/err" || { cat "$work/err" >&2; die "configuration $1 failed"; }
	[ -s "$t" ] || die "configuration $1: the program wrote no time"
	read -r rows _ <"$work/out" || true
	cat "$t"
}

CONFIGS="none cpu io offcpu lock mem profile"
for ((r = 1; r <= ROUNDS; r++)); do
	for c in $CONFIGS; do
		printf '%s %s\n' "$c" "$(run "$c")" >>"$raw"
	done
	printf 'bench-profile: round %d of %d\n' "$r" "$ROUNDS" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A wall cpu
for c in $CONFIGS; do
	wall[$c]=$(awk -v c="$c" '$1 == c { print $2 }' "$raw" | median)
	cpu[$c]=$(awk -v c="$c" '$1 == c { print $3 }' "$raw" | median)
done

{
	printf '# ebprof profile beside its modes (bench/profile.sh)\n\n'
	printf 'sqlite3: %d rows in 20 transactions into a file under /var/tmp; %d rounds, medians;\n' "$ROWS" "$ROUNDS"
	printf 'times measured inside the program (bench/timeit_preload.c).\n\n'
	printf '| configuration | wall (ms) | CPU (ms) | wall added (ms) | CPU added (ms) |\n'
	printf '|---------------|----------:|---------:|----------------:|---------------:|\n'
	for c in $CONFIGS; do
		awk -v c="$c" -v w="${wall[$c]}" -v u="${cpu[$c]}" -v w0="${wall[none]}" -v u0="${cpu[none]}" \
			'BEGIN { printf "| %-13s | %9.1f | %8.1f | %15.1f | %14.1f |\n", c, w / 1e6, u / 1e6, (w - w0) / 1e6, (u - u0) / 1e6 }'
	done
	sum_w=0 sum_u=0
	for c in cpu io offcpu lock mem; do
		sum_w=$((sum_w + ${wall[$c]%.*} - ${wall[none]%.*}))
		sum_u=$((sum_u + ${cpu[$c]%.*} - ${cpu[none]%.*}))
	done
	awk -v p="${wall[profile]}" -v n="${wall[none]}" -v s="$sum_w" \
		-v pu="${cpu[profile]}" -v nu="${cpu[none]}" -v su="$sum_u" 'BEGIN {
		rw = 0; if (s > 0) rw = (p - n) / s
		ru = 0; if (su > 0) ru = (pu - nu) / su
		printf "\nprofile added / sum of the modes added: wall %.2f (%.1f ms / %.1f ms), CPU %.2f (%.1f ms / %.1f ms)\n",
			rw, (p - n) / 1e6, s / 1e6, ru, (pu - nu) / 1e6, su / 1e6
	}'
} | tee "$out/bench-profile.md"
