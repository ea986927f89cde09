#!/usr/bin/env bats
# --trace: every counted call as a JSON line, checked call for call against the fixture's truth.

load helpers

# One pass over the trace: calls by function, by result and by (pid:stack, function); each
# stack line's functions, the stack lines written twice, and the end line (trace_summary.py).
trace_summary() {
	python3 "$BATS_TEST_DIRNAME/trace_summary.py" "$1"
}

# Per fixture site (a function named in the truth's sites, on the call's stack): the calls by
# function; aligned_alloc and memalign are one entry point in glibc 2.36, traced as one.
trace_sites() {
	jq -S --slurpfile truth "$2" '. as $s | $truth[0].sites | keys | map(. as $site | {key: $site,
		value: ([$s.by_stack | to_entries[] | select($s.stacks[.key] // [] | index($site))
			 | .value | to_entries[]] | group_by(.key)
			| map({key: .[0].key, value: (map(.value) | add)}) | from_entries)})
		| from_entries' "$1"
}

truth_trace_sites() {
	jq -S '.sites | map_values(.calls | .memalign += .aligned_alloc | del(.aligned_alloc)
		| with_entries(select(.value > 0)))' "$1"
}

@test "--trace: the fixture's calls per site and function equal the truth, frees included" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem --trace "$T/trace.jsonl" -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	trace_summary "$T/trace.jsonl" > "$T/sum.json"
	diff <(truth_trace_sites "$T/truth.json") <(trace_sites "$T/sum.json" "$T/truth.json")

	# whole process: the report's calls, aliases summed
	jq -n --slurpfile r "$T/out.json" --slurpfile s "$T/sum.json" '
		($r[0].processes[0].calls | .memalign += .aligned_alloc | del(.aligned_alloc)
		 | with_entries(select(.value > 0))) == $s[0].calls' | grep -qx true
	# the end line counts the call lines, and nothing was lost (in the trace and the report)
	jqe '([.calls[]] | add) as $n | .end.type == "end" and .end.calls == $n and
	     .end.dropped == 0' "$T/sum.json"
	jqe '.drops.trace_buffer_full == 0' "$T/out.json"
	# every (pid, stack) a call names has exactly one stack line, symbolized
	jqe '.dup == 0 and ([.by_stack | keys[] | select(endswith(":null") | not)] - (.stacks | keys))
	     == []' "$T/sum.json"
	jqe 'any(.stacks[][]; . == "churn")' "$T/sum.json"
	# results: the fixture's 10 failures; unknown frees (glibc's own at thread exit)
	jqe '.results.failed == 10 and .results.unknown > 0' "$T/sum.json"
}

@test "--trace: refused with sampling, and says why" {
	run "$EBPROF" mem --trace "$T/t.jsonl" --sample-every 10 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--trace records every call"* ]]
	run "$EBPROF" mem --trace /nonexistent/dir/t.jsonl -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot write the trace to /nonexistent/dir/t.jsonl"* ]]
}

@test "--trace: a forked child's frees of blocks its parent held at the fork are 'inherited', with their sizes" {
	run "$EBPROF" mem -q --trace "$T/trace.jsonl" -o "$T/out.json" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	forked=$(jq '.processes[] | select(.comm == "forked") | .pid' "$T/out.json")
	[ -n "$forked" ]
	# its frees by result and size
	jq -s -c --argjson p "$forked" 'map(select(.type == "call" and .pid == $p
		and .function == "free")) | group_by([.result, .size])
		| map({result: .[0].result, size: .[0].size, n: length})' "$T/trace.jsonl" > "$T/f.json"
	cat "$T/f.json"
	# 6 unknown frees: 5 of blocks of 1000 bytes its parent still holds as they were at the
	# fork, the sixth of an address the parent freed and allocated again since
	# (forkfixture.c)
	jqe 'map(select(.result == "inherited")) == [{result: "inherited", size: 1000, n: 5}]' \
		"$T/f.json"
	jqe 'map(select(.result == "unknown")) == [{result: "unknown", size: 0, n: 1}]' "$T/f.json"
	# the report's counts are the trace's
	jqe '.processes[] | select(.comm == "forked") | .unknown_frees == 6
	     and .inherited_frees == 5' "$T/out.json"
	# no other process has an inherited free
	[ "$(jq -s --argjson p "$forked" 'map(select(.type == "call" and .pid != $p
		and .result == "inherited")) | length' "$T/trace.jsonl")" -eq 0 ]
}

@test "--trace: a stack that ends early ends in [truncated], as in the profile" {
	# qsortfix's cmp is called from libc's qsort, which keeps no frame pointer: walked by
	# frame pointers, its stacks end at cmp, said
	run "$EBPROF" mem --unwind fp --trace "$T/trace.jsonl" -o "$T/out.folded" -- "$FIX/qsortfix" 20 0
	[ "$status" -eq 0 ]
	trace_summary "$T/trace.jsonl" > "$T/sum.json"
	jqe 'any(.stacks[]; . == ["cmp", "[truncated]"])' "$T/sum.json"
	grep -q ';\[truncated\];cmp;malloc ' "$T/out.folded"
}
