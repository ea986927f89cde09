#!/usr/bin/env bash
# `make demo`: profile the bundled demo program (demo/demo.c) with ebprof, print the text report
# and list the files written. Usage: scripts/demo.sh OUTDIR (the build directory, default build)
set -euo pipefail

out=${1:-build}
ebprof=$out/ebprof
demo=$out/demo/demo
dir=$out/demo

say() { printf 'demo: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	say "must run as root: ebprof loads BPF programs and attaches uprobes."
	say "run it again with sudo, e.g.: sudo make demo"
	exit 1
fi
for f in "$ebprof" "$demo"; do
	if [ ! -x "$f" ]; then
		say "$f is missing; build it first with: make $f"
		exit 1
	fi
done

files=("$dir/report.txt" "$dir/report.json" "$dir/profile.pb.gz" "$dir/flame.svg")
all=("${files[@]}" "$dir/everything.html" "$dir/everything.txt")
rm -f "${all[@]}"
errlog=$(mktemp)
trap 'rm -f "$errlog"' EXIT

run_ebprof() {
	local args=() f
	for f in "$@"; do
		args+=(-o "$f")
	done
	say "running: $ebprof mem ${args[*]} -- $demo"
	local rc=0
	"$ebprof" mem "${args[@]}" -- "$demo" 2>"$errlog" || rc=$?
	cat "$errlog" >&2
	return $rc
}

if ! run_ebprof "${files[@]}"; then
	say "ebprof failed (see its messages above); no report was written"
	exit 1
fi

if [ ! -s "$dir/report.txt" ]; then
	say "ebprof exited successfully but wrote no $dir/report.txt"
	exit 1
fi

echo
echo "=================== ebprof text report ($dir/report.txt) ==================="
cat "$dir/report.txt"
echo "============================================================================"
describe() {
	case "$1" in
	*everything.txt) echo "ebprof profile's text report: the findings above, then each mode's report" ;;
	*.txt) echo "the text report printed above: top allocation sites, leaks, per-process totals" ;;
	*.json) echo "the same profile as JSON (samples, stacks, per-process counters), for scripts; try: jq . $1" ;;
	*.pb.gz) echo "a gzipped pprof profile; open it with: go tool pprof -http=: $1 (or pprof -top)" ;;
	*.svg) echo "an interactive flame graph of allocated bytes by call stack (click to zoom, search); open it in a web browser" ;;
	*everything.html) echo "every mode at once (ebprof profile): findings, timeline, a tab per mode with its flame graphs; open it in a web browser" ;;
	esac
}
# the same program under every mode at once (ebprof profile): the findings first
say "running: $ebprof profile --leaks -q -o $dir/everything.html -o $dir/everything.txt -- $demo"
if "$ebprof" profile --leaks -q -o "$dir/everything.html" -o "$dir/everything.txt" -- "$demo" \
	>/dev/null; then
	echo
	echo "============ ebprof profile: findings ($dir/everything.txt, first lines) ============"
	sed -n '1,/^Processes/p' "$dir/everything.txt" | sed '$d'
	echo "============================================================================"
else
	say "ebprof profile failed (see its messages above)"
fi
echo
echo "Files written:"
for f in "${all[@]}"; do
	if [ -s "$f" ]; then
		printf '  %-28s %9s bytes  %s\n' "$f" "$(stat -c %s "$f")" "$(describe "$f")"
	else
		printf '  %-28s NOT WRITTEN (ebprof succeeded but left no file)\n' "$f"
	fi
done
