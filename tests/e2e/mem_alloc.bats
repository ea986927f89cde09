#!/usr/bin/env bats
# Every allocator: tests/fixtures/cxxfixture.cpp (C++ operators in every variant and the malloc
# family, all calls and leaks known) under glibc and with jemalloc, tcmalloc and mimalloc
# preloaded. `cxxfixture 0` does nothing but start and exit: its counts are the run-time's own
# (libstdc++'s emergency pool, the allocator's start-up), which are subtracted from
# `cxxfixture 1`'s, so the difference is exactly what the fixture's work() called.

load helpers

LIBDIR=/usr/lib/x86_64-linux-gnu

# Run the fixture (arg $2) with LD_PRELOAD=$1 (may be empty) under ebprof --leaks into $3.
run_fixture() {
	local pre=$1 arg=$2 out=$3
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --leaks -o "$out" -o "${out%.json}.txt" \
		-- "$FIX/cxxfixture" "$arg"
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
}

# The whole check for one allocator: $1 = preloaded library or "", $2 = expected kind.
check_allocator() {
	local pre=$1 kind=$2
	if [ -n "$pre" ] && [ ! -r "$pre" ]; then
		skip "$pre not installed (scripts/install-deps.sh installs it)"
	fi
	run_fixture "$pre" 0 "$T/base.json"
	run_fixture "$pre" 1 "$T/work.json"

	# which allocator, in which objects
	jq -e --arg k "$kind" '.processes[0].note | startswith($k + " allocator in ")' \
		"$T/work.json" >/dev/null
	grep -q "note: $kind allocator in" "$T/work.txt"
	jqe '[.drops[]] | add == 0' "$T/work.json"

	# calls by name, exactly what work() called: every variant under its operator's name
	jq -n --slurpfile b "$T/base.json" --slurpfile w "$T/work.json" '
		$w[0].processes[0].calls as $w | $b[0].processes[0].calls as $b
		| $w | with_entries(.value -= $b[.key]) | with_entries(select(.value != 0))' \
		> "$T/calls.json"
	cat "$T/calls.json"
	jqe '. == {"malloc": 3, "calloc": 1, "free": 2, "operator new": 5, "operator new[]": 4,
		   "operator delete": 4, "operator delete[]": 3}' "$T/calls.json"

	# the blocks left: 4 more than the run-time's own, 604 bytes
	jq -n --slurpfile b "$T/base.json" --slurpfile w "$T/work.json" '
		$w[0].processes[0] as $w | $b[0].processes[0] as $b
		| {live_count: ($w.live_count - $b.live_count), live_bytes: ($w.live_bytes - $b.live_bytes),
		   unknown_frees: ($w.unknown_frees - $b.unknown_frees)}' > "$T/live.json"
	cat "$T/live.json"
	jqe '. == {"live_count": 4, "live_bytes": 604, "unknown_frees": 0}' "$T/live.json"

	# the sites under work(): each allocation at its own site, its leaf the name called
	jq '[.sites[] | select([.frames[].function] | index("work()"))
	     | {f: .frames[0].function, b: .alloc_bytes, n: .alloc_count, live: .live_bytes,
	        class: ([.leaks | to_entries[] | select(.value.count? > 0) | .key] | join(","))}]
	    | sort_by(.f, .b)' "$T/work.json" > "$T/sites.json"
	cat "$T/sites.json"
	jqe '[.[] | .n] | all(. == 1)' "$T/sites.json"
	jqe '[.[] | [.f, .b, .live, .class]] == [
		["calloc", 80, 0, ""],
		["malloc", 24, 0, ""], ["malloc", 56, 56, "definite"], ["malloc", 300, 300, "reachable"],
		["operator new", 32, 0, ""], ["operator new", 40, 0, ""], ["operator new", 40, 0, ""],
		["operator new", 48, 48, "definite"], ["operator new", 64, 0, ""],
		["operator new[]", 50, 0, ""], ["operator new[]", 100, 0, ""],
		["operator new[]", 128, 0, ""], ["operator new[]", 200, 200, "reachable"]]' \
		"$T/sites.json"
	assert_no_probes
}

@test "C++ fixture under glibc: libc for malloc, libstdc++ for the operators, counts exact" {
	check_allocator "" glibc
	jqe '.processes[0].note | test("libstdc\\+\\+")' "$T/work.json"
}

@test "C++ fixture with jemalloc preloaded: counts and leaks exact" {
	check_allocator "$LIBDIR/libjemalloc.so.2" jemalloc
	jqe '.processes[0].note | test("libjemalloc.so.2")' "$T/work.json"
}

@test "C++ fixture with tcmalloc preloaded: free and delete share an address, told apart" {
	check_allocator "$LIBDIR/libtcmalloc_minimal.so.4" tcmalloc
	jqe '.processes[0].note | test("operator delete=free")' "$T/work.json"
}

@test "C++ fixture with mimalloc preloaded: counts and leaks exact" {
	check_allocator "$LIBDIR/libmimalloc.so.2" mimalloc
}

@test "--allocator glibc overrides a preloaded jemalloc; a missing allocator is an error" {
	pre=$LIBDIR/libjemalloc.so.2
	[ -r "$pre" ] || skip "libjemalloc2 not installed"
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --allocator glibc -o "$T/o.json" \
		-- "$FIX/cxxfixture" 1
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | startswith("glibc allocator in ")' "$T/o.json"
	# libc's malloc is not what the program calls: jemalloc serves it
	jqe '.processes[0].calls.malloc == 0' "$T/o.json"

	run "$EBPROF" mem -q --allocator tcmalloc -- "$FIX/cxxfixture" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"--allocator tcmalloc: PID "*" has no tcmalloc allocator mapped"* ]]
	assert_no_probes
}

@test "--allocator, --lib and --symbol-prefix: bad values are clear usage errors" {
	run "$EBPROF" mem --allocator ptmalloc -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown allocator 'ptmalloc': use glibc, jemalloc, tcmalloc, mimalloc or static"* ]]
	run "$EBPROF" mem --lib /nonexistent/libfoo.so -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--lib /nonexistent/libfoo.so: no such readable file"* ]]
	run "$EBPROF" mem -q --lib "$LIBDIR/libz.so.1" -- "$FIX/cxxfixture" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"no such object is mapped in PID"* ]]
	run "$EBPROF" mem -q --symbol-prefix je_ -- "$FIX/cxxfixture" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"has no je_malloc and its free in its mappings"* ]]
}

@test "--lib names the allocator library: the same counts as detection" {
	pre=$LIBDIR/libmimalloc.so.2
	[ -r "$pre" ] || skip "libmimalloc2.0 not installed"
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --lib "$pre" -o "$T/o.json" \
		-- "$FIX/cxxfixture" 1
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | startswith("mimalloc allocator in ")' "$T/o.json"
	jqe '.processes[0].calls["operator new"] >= 5' "$T/o.json"
}
