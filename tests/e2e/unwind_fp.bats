#!/usr/bin/env bats
# Code without unwind tables walked by frame pointers (sweep J, item 5): a JIT's leaf in an
# anonymous executable mapping, and a program built without call frame information, whose
# leaves keep no frame pointer. The oracle is the fixtures' own structure (fp_check.py): every
# stack is the whole chain or ends in [truncated] over a right part of it; never a caller left
# out (the record at %rbp taken for the leaf's own), and never %rbp 0 taken for the outermost
# frame of a stack that is not whole.

load helpers

CHECK="$BATS_TEST_DIRNAME/fp_check.py"
LIBC='_start;__libc_start_main;__libc_start_call_main;main'

@test "unwind fp: a JIT leaf that sets up no frame, callers with frame pointers: call_jit is its caller" {
	run "$EBPROF" cpu -q -F 999 -o "$T/c.folded" -- "$FIX/jitleaf" 8
	[ "$status" -eq 0 ]
	run python3 "$CHECK" "$T/c.folded" '[anon]' "$LIBC;call_jit;[anon]"
	echo "$output"
	[ "$status" -eq 0 ]
	# the return address at [rsp] follows call_jit's call: whole, not [truncated]
	read -r _ whole _ trunc _ <<< "$output"
	[ "$whole" -ge 200 ]
	[ "$trunc" -le $((whole / 20)) ]
}

@test "unwind fp: a JIT leaf under code without frame pointers, %rbp 0: not the outermost frame" {
	run "$EBPROF" cpu -q -F 999 -o "$T/c.folded" -o "$T/c.json" -- "$FIX/jitleaf_nofp" 8
	[ "$status" -eq 0 ]
	run python3 "$CHECK" "$T/c.folded" '[anon]' "$LIBC;call_jit;[anon]"
	echo "$output"
	[ "$status" -eq 0 ]
	read -r _ whole _ trunc _ <<< "$output"
	[ "$whole" -ge 200 ]
	[ "$trunc" -le $((whole / 20)) ]
}

@test "unwind fp: a program without call frame information, a leaf without a frame: its caller kept" {
	run "$EBPROF" cpu -q -F 999 -o "$T/c.folded" -- "$FIX/nocfi" 200000000
	[ "$status" -eq 0 ]
	run python3 "$CHECK" "$T/c.folded" leaf_x "$LIBC;top;mid_a;leaf_x" "$LIBC;top;mid_b;leaf_x"
	echo "$output"
	[ "$status" -eq 0 ]
	read -r _ whole _ trunc _ <<< "$output"
	[ "$whole" -ge 200 ]
	[ "$trunc" -le $((whole / 20)) ]
	# both callers seen
	grep -q ';mid_a;leaf_x' "$T/c.folded"
	grep -q ';mid_b;leaf_x' "$T/c.folded"
}

@test "unwind fp: a JIT leaf with a frame of its own and locals: the record at %rbp is its own" {
	for p in jitleaf jitleaf_nofp; do
		run "$EBPROF" cpu -q -F 999 -o "$T/$p.folded" -- "$FIX/$p" 8 frame
		[ "$status" -eq 0 ]
		run python3 "$CHECK" "$T/$p.folded" '[anon]' "$LIBC;call_jit;[anon]"
		echo "$p: $output"
		[ "$status" -eq 0 ]
		read -r _ whole _ trunc _ <<< "$output"
		[ "$whole" -ge 200 ]
		[ "$trunc" -le $((whole / 20)) ]
	done
}
