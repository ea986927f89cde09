#!/usr/bin/env bats
# Probe placement end to end: ebprof says where each probe went, and the counts of the functions
# whose probes are not at their entry (glibc's free, memalign/aligned_alloc, posix_memalign,
# valloc, pvalloc, with their return probes on the same point) equal the LD_PRELOAD
# interposer's, call for call.
load helpers

@test "placement: -v names each probe point and its reason" {
	run "$EBPROF" mem -v -q -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	echo "$output" | grep 'probed at'
	echo "$output" | grep -q 'malloc probed at entry: push r12 is emulated'
	echo "$output" | grep -q 'free probed at +0x3: test rdi, rdi is single-stepped; je '
	echo "$output" | grep -q 'memalign probed at +0x7: .* is single-stepped; je '
	echo "$output" | grep -q 'posix_memalign probed at +0x7: .* is single-stepped; push r12'
	echo "$output" | grep -q 'reallocarray probed at entry: .* writes %rdx, an argument'
}

@test "placement: counts at moved probes equal the interposer's, call for call" {
	COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" "$FIX/memfixture" > /dev/null
	run "$EBPROF" mem -v -q -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	moved=$(echo "$output" | sed -n 's/.*: \([a-z_]*\) probed at +0x.*/\1/p' | sort -u)
	echo "moved: $moved"
	[ -n "$moved" ]
	ca=$(ls "$T"/ca.* | head -1)
	for f in $moved; do
		want=$(jq ".calls.$f" "$ca")
		got=$(jq ".processes[0].calls.$f" "$T/out.json")
		[ "$f" != free ] || got=$(jq '.processes[0] | .calls.free - .unknown_frees' "$T/out.json")
		echo "$f: ebprof $got, interposer $want"
		[ "$want" -gt 0 ]
		[ "$got" = "$want" ]
	done
}
