#!/usr/bin/env bats
# Scale (issue 6 item 5): a 10-million-call run with zero drops at default map sizes, and
# 1,000,000 live allocations tracked exactly. Fixture: tests/fixtures/scalefixture.c.
# Run time: about 10 s and 4 s on the 2-CPU VM (the first is ~5 million traced malloc+free
# pairs on two threads at full speed, ~2 us of uprobe work each).

load helpers

@test "scale: 10 million calls on two threads at full speed, zero drops, every call counted" {
	run "$EBPROF" mem --quiet -o "$T/out.json" -- "$FIX/scalefixture" calls 10000000
	[ "$status" -eq 0 ]
	jqe '[.drops[]] | add == 0' "$T/out.json"
	# 5,000,000 mallocs and their frees, glibc's two thread DTV callocs; the only other frees
	# are glibc's of its thread caches at thread exit, which were never allocated under us
	jqe '.processes[0] | .calls.malloc == 5000000 and .calls.calloc == 2
	     and .calls.free - .unknown_frees == 5000000 and .free_count == 5000000
	     and .alloc_count == 5000002 and .live_count == 2' "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "thread_a")]
	     | length == 1 and .[0].alloc_count == 2500000 and .[0].alloc_bytes == 120000000
	       and .[0].live_count == 0' "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "thread_b")]
	     | length == 1 and .[0].alloc_count == 2500000 and .[0].alloc_bytes == 200000000
	       and .[0].live_count == 0' "$T/out.json"
}

@test "scale: 1,000,000 live allocations tracked exactly with --max-live raised" {
	run "$EBPROF" mem --quiet --max-live 3000000 -o "$T/out.json" -- "$FIX/scalefixture" live 1000000
	[ "$status" -eq 0 ]
	jqe '[.drops[]] | add == 0' "$T/out.json"
	# block i has 16 + 8 * (i % 16) bytes: 1e6 * 16 + 8 * 62500 * (0 + 1 + ... + 15)
	jqe '.processes[0] | .calls.malloc == 1000000 and .alloc_count == 1000000
	     and .live_count == 1000000 and .live_bytes == 76000000 and .free_count == 0' \
	     "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "hold_blocks")]
	     | length == 1 and .[0].live_count == 1000000 and .[0].live_bytes == 76000000
	       and .[0].outstanding.count == 1000000 and .[0].outstanding.bytes == 76000000
	       and ([.[0].histogram[].count] | add) == 1000000' "$T/out.json"
}
