#!/usr/bin/env bash
# What following a process tree costs: real trees of short processes under `ebprof mem`, the
# whole run timed (start-up, every process's attach and end, the report), against the command
# alone. Usage: bench/trees.sh OUTDIR   (root; `make bench-trees`)
#   BENCH_RUNS     runs of each (default 5), interleaved; medians reported
#   BENCH_TREES    the workloads (default "bash120 true200 ls100 python")
#   BENCH_EBPROF_before=PATH  also time that binary (a build before a change), beside OUTDIR's
#   BENCH_TREE_OUT the report's name (default tree.txt; tree.json adds the JSON writer's cost)
#   BENCH_TREE_FLAGS  more flags for every ebprof run (e.g. "--max-stacks 65536", so that a
#                  build that kept every ended process's stacks drops none)
# Workloads:
#   bash120  bash running `bash -c x=1` 120 times (each child ~830 allocations, ~350 stacks;
#            the parent, a bash script, holds ~800 blocks meanwhile)
#   true200  sh running /bin/true 200 times (processes that allocate nearly nothing)
#   ls100    sh running `ls /` 100 times (each ~240 allocations, ~170 blocks left at its end)
#   python   `python3 -c pass`: through pyenv's shim where there is one (~40 bash and
#            coreutils processes, then python3 with ~50,000 allocations), else python3 alone
# Each binary's report is checked once a workload (an untimed run writing JSON): the tree's
# processes all reported; what its tables dropped (live, site, stack, process) is printed
# under the table, since a run that drops does less work (the unwinder's own drops, e.g.
# python's stacks deeper than 127 frames, are the same for every build and not printed).
# shellcheck disable=SC2016  # the workloads' commands are expanded by the shell that runs them
set -euo pipefail
out=${1:-build}
runs=${BENCH_RUNS:-5}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench/trees.sh: needs root (loads BPF)" >&2; exit 1; }
[ -x "$out/ebprof" ] || { echo "bench/trees.sh: no $out/ebprof (make first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$tmp/${BENCH_TREE_OUT:-tree.txt}

declare -A cmd min_procs
cmd[bash120]="bash -c 'for i in \$(seq 120); do bash -c x=1; done'"
min_procs[bash120]=122
cmd[true200]='i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done'
min_procs[true200]=201
cmd[ls100]='for i in $(seq 100); do ls / >/dev/null; done'
min_procs[ls100]=101
cmd[python]='python3 -c pass'
min_procs[python]=1

bins=("this=$out/ebprof")
[ -z "${BENCH_EBPROF_before:-}" ] || bins=("before=$BENCH_EBPROF_before" "${bins[@]}")

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

{
printf '| workload | untraced |'
for b in "${bins[@]}"; do printf ' %s |' "${b%%=*}"; done
printf '\n|---|---:|'
for b in "${bins[@]}"; do printf -- '---:|'; done
printf '\n'
for w in ${BENCH_TREES:-bash120 true200 ls100 python}; do
	[ -n "${cmd[$w]:-}" ] || { echo "bench/trees.sh: no workload $w" >&2; exit 2; }
	: > "$tmp/untraced"
	for b in "${bins[@]}"; do : > "$tmp/t.${b%%=*}"; done
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		sh -c "${cmd[$w]}" > /dev/null
		ms "$t0" >> "$tmp/untraced"
		for b in "${bins[@]}"; do
			t0=$(date +%s%N)
			# shellcheck disable=SC2086
			"${b#*=}" mem -q ${BENCH_TREE_FLAGS:-} -o "$report" -- sh -c "${cmd[$w]}" \
				> /dev/null 2> "$tmp/err" || {
				echo "bench/trees.sh: ${b%%=*} failed on $w:" >&2
				cat "$tmp/err" >&2
				exit 1
			}
			ms "$t0" >> "$tmp/t.${b%%=*}"
		done
	done
	for b in "${bins[@]}"; do
		# shellcheck disable=SC2086
		"${b#*=}" mem -q ${BENCH_TREE_FLAGS:-} -o "$tmp/check.json" -- sh -c "${cmd[$w]}" \
			> /dev/null 2>&1
		jq -e --argjson n "${min_procs[$w]}" '(.processes | length) >= $n' \
			"$tmp/check.json" > /dev/null || {
			echo "bench/trees.sh: $w: ${b%%=*} did not report the tree's processes" >&2
			exit 1
		}
		jq -r --arg w "$w" --arg b "${b%%=*}" '[.drops | to_entries[]
			| select((.key | test("^(live|site|stack|process)_table_full$|^stack_not_found$"))
				 and .value > 0) | "\(.key) \(.value)"] | select(length > 0)
			| "\($w), \($b): drops \(join(", "))"' "$tmp/check.json" >> "$tmp/drops"
	done
	printf '| %s | %s ms |' "$w" "$(median < "$tmp/untraced")"
	for b in "${bins[@]}"; do printf ' %s ms |' "$(median < "$tmp/t.${b%%=*}")"; done
	printf '\n'
done
[ ! -s "$tmp/drops" ] || { echo; sed 's/^/- /' "$tmp/drops"; }
} | tee "$out/bench-trees.md"
