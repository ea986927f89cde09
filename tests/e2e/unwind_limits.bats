#!/usr/bin/env bats
# The unwinder's limits, hit with real processes (issue 14), lowered by their options: the
# per-process table (--unwind-procs: a process left out is the unwind_procs_full drop, walked by
# file), -a's queue of processes waiting to be loaded (--unwind-queue: a process met while it
# is full is never loaded, the unwind_loads_skipped drop) and the rows map (--unwind-rows: an
# object whose table does not fit is walked by frame pointers, the unwind_rows_full drop). Three programs built from the same
# source without frame pointers (qsortfix, qsortexec_a, qsortexec_b: main -> level1 -> level2 ->
# level3 -> libc's qsort_r -> msort... -> cmp, which spins), distinct files, run before ebprof
# starts. Each drop must be counted in every output, and no stack may be wrong
# (unwind_check.py's "pids": complete from _start, or a right part of the chain under
# [truncated]).

load helpers

CHECK="$BATS_TEST_DIRNAME/unwind_check.py"

spinners() {
	bg "$FIX/qsortfix" 1000000000 20000
	P1=$BG
	bg "$FIX/qsortexec_a" 1000000000 20000
	P2=$BG
	bg "$FIX/qsortexec_b" 1000000000 20000
	P3=$BG
}

# The number of processes among PIDS (spaces) whose samples in FOLDED through the spinner's own
# code (a frame main, level1-3 or cmp) all end in [truncated]: what a process without its file's
# table cannot walk. A sample with no such frame (in the kernel before a new process first
# returns to user mode, or in the loader's start-up, whose table is ld.so's) is not one of them.
all_truncated() {
	awk -v pids="$2" '
		BEGIN { n = split(pids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		{
			if (!match($0, /^[^;]* \([0-9]+\);/)) next
			head = substr($0, 1, RLENGTH - 1)
			sub(/.*\(/, "", head); sub(/\)$/, "", head)
			if (!(head in want)) next
			stack = $0
			sub(/ [0-9]+$/, "", stack)
			nf = split(stack, f, ";")
			own = 0
			for (i = 2; i <= nf; i++) if (f[i] ~ /^(main|level[123]|cmp)$/) own = 1
			if (!own) next
			c = $NF
			total[head] += c
			if (index($0, "[truncated]")) trunc[head] += c
		}
		END {
			k = 0
			for (p in total) if (total[p] > 0 && trunc[p] == total[p]) k++
			print k
		}' "$1"
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "unwind limits: cpu -a --unwind-procs 1: the processes left out are counted (unwind_procs_full), walked by file, whole but for their first stacks" {
	spinners
	run "$EBPROF" cpu -a --unwind-procs 1 -v -q -F 499 -d 3 \
		-o "$T/c.folded" -o "$T/c.json" -o "$T/c.txt"
	[ "$status" -eq 0 ]
	grep -E "unwind" <<< "$output"
	# one entry, for the first process loaded: at least two of the three are left out
	jqe '.drops.unwind_procs_full >= 2' "$T/c.json"
	n=$(jq '.drops.unwind_procs_full' "$T/c.json")
	grep -Eq "unwind_procs_full:? +$n\b" "$T/c.txt"
	grep -Eq "walked by file alone \(the unwind process map is full\)" <<< "$output"
	# by file, a perf event's walk finds one file's mapping (bpf_find_vma once per run with
	# interrupts off), and every stack of a spinner left out crosses from its program into
	# libc (cmp <- msort): each ended there in [truncated] (the loaded spinner alone complete,
	# a third of the samples) until the mappings found were kept for the next stacks
	# (unwind_vmas): now only the first ones, and those after the address space changed,
	# end so (86.8% complete in a run under other engineers' builds); none wrong
	run python3 "$CHECK" pids "$T/c.folded" "$P1,$P2,$P3" 50
	echo "$output"
	[ "$status" -eq 0 ]
	k=$(all_truncated "$T/c.folded" "$P1 $P2 $P3")
	echo "spinners whose every stack ends in [truncated]: $k"
	[ "$k" -eq 0 ]
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "unwind limits: cpu -a --unwind-queue 1: the processes met while it is full are counted (unwind_loads_skipped), never loaded, their stacks end in [truncated]" {
	"$EBPROF" cpu -a --unwind-queue 1 -v -q -F 499 -d 4 \
		-o "$T/c.folded" -o "$T/c.json" -o "$T/c.txt" 2> "$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	# a process is loaded as soon as its ask is read: for asks to wait, ebprof is stopped
	# while the spinners start and are sampled (every ~6 ms each); at its next read the one
	# place takes the first ask, the spinners' others are skipped
	kill -STOP "$e"
	spinners
	sleep 0.2
	kill -CONT "$e"
	wait "$e"
	grep -E "unwind" "$T/err"
	jqe '.drops.unwind_loads_skipped >= 2' "$T/c.json"
	n=$(jq '.drops.unwind_loads_skipped' "$T/c.json")
	grep -Eq "unwind_loads_skipped:? +$n\b" "$T/c.txt"
	run python3 "$CHECK" pids "$T/c.folded" "$P1,$P2,$P3" 0
	echo "$output"
	[ "$status" -eq 0 ]
	# a process never loaded has no table for its own file (each spinner is another file):
	# every one of its stacks ends in [truncated] at its first frame there. At least one
	# spinner is so: which asks share the read after the stop, and which one takes the
	# place, is the machine's timing (two of three in most runs)
	k=$(all_truncated "$T/c.folded" "$P1 $P2 $P3")
	echo "spinners whose every stack ends in [truncated]: $k"
	[ "$k" -ge 1 ]
}

# The rows map (--unwind-rows) too small for libc's table: the objects left out are counted and
# walked by frame pointers (qsortfix has none: its stacks end early, said), and a note names the
# option with a size that holds them all, which the next run takes
@test "unwind limits: mem --unwind-rows 4096: the objects left out are counted (unwind_rows_full), a note names the size that fits" {
	run "$EBPROF" mem -q --unwind-rows 4096 -o "$T/small.json" -o "$T/small.txt" -- \
		"$FIX/qsortfix" 20 0
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_rows_full >= 1' "$T/small.json"
	grep -q 'Drops: .*unwind_rows_full' "$T/small.txt"
	note=$(jq -r '.notes[] | select(test("--unwind-rows"))' "$T/small.json")
	echo "$note"
	[[ "$note" == *"did not fit the rows map (4096 rows); raise --unwind-rows to "* ]]
	rows=$(sed -n 's/.*raise --unwind-rows to \([0-9]*\) or more.*/\1/p' <<< "$note")
	[ "$rows" -gt 4096 ]
	run "$EBPROF" mem -q --unwind-rows "$rows" -o "$T/fit.json" -- "$FIX/qsortfix" 20 0
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_rows_full == 0' "$T/fit.json"
	jqe '[.notes[] | select(test("--unwind-rows"))] | length == 0' "$T/fit.json"
	# and the stacks are complete again: cmp's allocations from main, through libc's qsort_r
	jqe '[.sites[] | [.frames[].function] | select(index("cmp")) | index("main") != null] | all' \
		"$T/fit.json"
}

@test "unwind limits: --unwind-procs, --unwind-queue and --unwind-rows out of range are usage errors" {
	run "$EBPROF" cpu --unwind-procs 0 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--unwind-procs takes a number of processes from 1 to"* ]]
	run "$EBPROF" cpu --unwind-queue 1025 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--unwind-queue takes a number of processes from 1 to 1024"* ]]
	run "$EBPROF" mem --unwind-rows 100 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--unwind-rows takes a number of rows from 4096 to 67108864"* ]]
}
