#!/usr/bin/env bats
# -a and a process that forks children without exec (sweep J, item 6): a child's first
# samples come before its own tables are loaded (it is asked for at its first stack), and a
# walk by file alone ends at its second file: most of a short child's samples ended in
# [truncated] below main. It has its parent's code mappings, and is walked with its parent's
# entry until its own loads (unwind_borrowable). The oracle is the fixture's structure
# (fp_check.py): child_work's stacks are _start .. main, child_work, or end in [truncated].

load helpers

# alone, every test: -a, the whole machine
# bats file_tags=alone

CHECK="$BATS_TEST_DIRNAME/fp_check.py"
CHAIN='_start;__libc_start_main;__libc_start_call_main;main;child_work'

@test "unwind fork: cpu -a, short children forked without exec have whole stacks from their first sample" {
	# the fixture's tables in the cache first (a first run builds them, seconds under load)
	run "$EBPROF" cpu -q -o "$T/w.folded" -- "$FIX/forkwork" 1 1000 0
	[ "$status" -eq 0 ]
	# stopped once the fixture is done (a fixed -d 8 waited for nothing, or cut it short)
	"$EBPROF" cpu -a -v -F 499 -d 120 -o "$T/c.folded" -o "$T/c.json" 2>"$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	# the parent works 5 ms, naps 2 s (its tables are loaded at its first stack), then 100
	# children of 5 ms each, one after the other: a sample or two each, the first before its load
	"$FIX/forkwork" 100 5000000 2000
	kill -INT "$e"
	wait "$e"
	run python3 "$CHECK" "$T/c.folded" child_work "$CHAIN"
	echo "$output"
	[ "$status" -eq 0 ]
	read -r _ whole _ trunc _ <<< "$output"
	[ "$whole" -ge 100 ]
	[ "$trunc" -le $((whole / 50)) ]
	# -v counts them
	grep -E 'unwind: .*stacks complete' "$T/err"
	grep -Eq "; [1-9][0-9]* a child's forked without exec, walked with its parent's" "$T/err"
}
