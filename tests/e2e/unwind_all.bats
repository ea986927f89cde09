#!/usr/bin/env bats
# -a unwinds by tables too (issue 14): the qsortfix fixture (built -O2 -fomit-frame-pointer,
# main -> level1 -> level2 -> level3 -> libc's qsort_r -> msort... -> cmp, which spins), running
# before ebprof starts, is loaded when the BPF side first meets it. unwind_check.py's "pids"
# check: the fixture's samples have the complete stack down to cmp, and none of its stacks is
# wrong (a frame missing or added: a frame-pointer walk through libc skips qsort_r's frames); a
# stack met before the process's tables were loaded is a right prefix of it ending in
# [truncated]. The exec and PID tests: one PID runs qsortexec_a, then qsortexec_b (the same code
# at the same addresses but for level3's frame size: other rules there), by an exec or as a new
# process (the PID used again), with and without ASLR: an entry loaded for one program must
# never be used for the next (without the check, b is never loaded: a's entry covers it all).

load helpers

# alone, every test: -a, the whole machine
# bats file_tags=alone

CHECK="$BATS_TEST_DIRNAME/unwind_check.py"

# the samples before the process's first load are [truncated] (a right prefix), those after it
# complete: the share of complete ones depends on when its load came (every process met at the
# start is loaded at 10 ms a tick, in turn): 8 s leave it 1.6 s
@test "unwind -a: cpu, a running program without frame pointers: >= 80% of its samples complete, none wrong" {
	bg "$FIX/qsortfix" 1000000000 20000
	run "$EBPROF" cpu -a -q -F 499 -d 8 -o "$T/c.folded" -o "$T/c.json"
	[ "$status" -eq 0 ]
	run python3 "$CHECK" pids "$T/c.folded" "$BG" 80
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '.drops | has("unwind_procs_full")' "$T/c.json"
	jqe '.drops | has("unwind_loads_skipped")' "$T/c.json"
}

# a process started during the run is loaded at its first stack (the BPF side's ask wakes
# ebprof), not two ticks later: until then a sample's walk finds one file's mapping (bpf_find_vma,
# once where interrupts are off) and ends at the second, below __libc_start_call_main; a 0.6 s
# process had about half its samples so (the 0.27 s a compiler's cc1 lost at each start)
@test "unwind -a: cpu, a program started during the run: >= 80% of its samples complete, none wrong" {
	# stopped once the program is done (a fixed -d 5 waited for nothing, or cut it short)
	"$EBPROF" cpu -a -v -F 499 -d 120 -o "$T/c.folded" -o "$T/c.json" 2>"$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	"$FIX/qsortfix" 40 20000 >/dev/null &
	q=$!
	wait "$q"
	kill -INT "$e"
	wait "$e"
	run python3 "$CHECK" pids "$T/c.folded" "$q" 80
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE "[1-9][0-9]* processes loaded when their stacks were met" "$T/err"
}

# offcpu's and stacks' weights: a wait (or switch) before the first load can weigh anything, so
# only some complete stacks are asked for
@test "unwind -a: offcpu, a program preempted on a shared CPU: none of its stacks wrong" {
	# two spinning processes on one CPU: each is preempted by the other, in cmp mostly
	bg taskset -c 0 "$FIX/qsortfix" 1000000000 20000
	q=$BG
	bg taskset -c 0 "$FIX/cpuburn" 60
	run "$EBPROF" offcpu -a -q -d 3 -o "$T/o.folded"
	[ "$status" -eq 0 ]
	run python3 "$CHECK" pids "$T/o.folded" "$q" 1
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "unwind -a: stacks on sched_switch, a running program: none of its stacks wrong" {
	bg taskset -c 0 "$FIX/qsortfix" 1000000000 20000
	q=$BG
	bg taskset -c 0 "$FIX/cpuburn" 60
	run "$EBPROF" stacks -e sched:sched_switch -a -q -d 3 -o "$T/s.folded"
	[ "$status" -eq 0 ]
	run python3 "$CHECK" pids "$T/s.folded" "$q" 1
	echo "$output"
	[ "$status" -eq 0 ]
}

# One process, two programs: qsortexec_a spins until a SIGUSR1, sent once ebprof has loaded it,
# then execs qsortexec_b (the same functions at the same addresses, other unwind rules in level3,
# another end of the text), which spins on. Without ASLR ($1: setarch -R) both map at the same
# addresses: a's entry, if used for b, would cover all of b's code with a's rules. The report
# names every sample of the process with b's symbols, right for a's addresses too.
exec_test() {
	"$@" "$EBPROF" cpu -a -v -q -F 499 -d 60 -o "$T/c.folded" > "$T/out" 2> "$T/log" &
	e=$!
	BG_PIDS+=("$e")
	bg "$@" "$FIX/qsortexec_a" 0 20000 1 "$FIX/qsortexec_b" 1000000000
	q=$BG
	wait_for "$T/log" "unwind: .*qsortexec_a: [0-9]+ rows" 30
	kill -USR1 "$q"
	wait_for "$T/log" "unwind: .*qsortexec_b: [0-9]+ rows" 30
	sleep 1
	kill -INT "$e"
	wait "$e"
	cat "$T/log"
	# the process changed programs while traced, and a's entry was not used for b
	grep -Eq "unwind: .* stacks of a process without its tables \([1-9][0-9]* of them with another program's" "$T/log"
	# (how many are complete depends on when each load came: a is loaded in turn)
	run python3 "$CHECK" pids "$T/c.folded" "$q" 1
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^qsortexec_b ($q);" "$T/c.folded"
}

@test "unwind -a: a process that execs another program: none of its stacks wrong" {
	exec_test
}

@test "unwind -a: the same without ASLR (the same addresses, other rules): none of its stacks wrong" {
	exec_test setarch -R
}

# A PID used again: pidreuse runs qsortexec_a, and once it has exited starts qsortexec_b as a new
# process with the same PID (clone3's set_tid), both without ASLR: the same addresses, other
# rules, another start time. a's entry (if not forgotten yet) must not be used for b.
@test "unwind -a: a PID used again by another program (no ASLR): none of its stacks wrong" {
	setarch -R "$EBPROF" cpu -a -v -q -F 499 -d 60 -o "$T/c.folded" > "$T/out" 2> "$T/log" &
	e=$!
	BG_PIDS+=("$e")
	bg setarch -R "$FIX/pidreuse" "$FIX/qsortexec_a" 0 20000 -- \
		"$FIX/qsortexec_b" 1000000000 20000 > "$T/pr" 2>&1
	wait_for "$T/pr" "^a [0-9]+"
	q=$(awk '/^a / { print $2 }' "$T/pr")
	BG_PIDS+=("$q")
	wait_for "$T/log" "unwind: .*qsortexec_a: [0-9]+ rows" 30
	kill -USR1 "$q"
	wait_for "$T/pr" "^b [0-9]+|clone3"
	if grep -q clone3 "$T/pr"; then
		kill -INT "$e"
		skip "PID $q was taken by another process before it could be used again"
	fi
	grep -q "^b $q\$" "$T/pr"
	wait_for "$T/log" "unwind: .*qsortexec_b: [0-9]+ rows" 30
	sleep 1
	kill -INT "$e"
	wait "$e"
	run python3 "$CHECK" pids "$T/c.folded" "$q" 1
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^qsortexec_b ($q);" "$T/c.folded"
}
