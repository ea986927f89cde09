#!/usr/bin/env bats
# Every allocator: tests/fixtures/cxxfixture.cpp (C++ operators in every variant and the malloc
# family, all calls and leaks known) under glibc and with jemalloc, tcmalloc and mimalloc
# preloaded. `cxxfixture 0` does nothing but start and exit: its counts are the run-time's own
# (libstdc++'s emergency pool, the allocator's start-up), which are subtracted from
# `cxxfixture 1`'s, so the difference is exactly what the fixture's work() called.

load helpers

LIBDIR=/usr/lib/x86_64-linux-gnu

wait_for_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	echo "timed out waiting for $1" >&2
	return 1
}

# Run the fixture (arg $2) with LD_PRELOAD=$1 (may be empty) under ebprof --leaks into $3.
run_fixture() {
	local pre=$1 arg=$2 out=$3
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --leaks -o "$out" -o "${out%.json}.txt" \
		-- "$FIX/${CXXFIX:-cxxfixture}" "$arg"
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
	jq -e --arg k "$kind" '.processes[0].allocator | .kind == $k and .objects[0].kind == $k
		and (.objects[0].functions | index("malloc") and index("free"))
		and ([.objects[].functions[]] | index("operator new") and index("operator delete[]"))' \
		"$T/work.json" >/dev/null
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

@test "tcmalloc and mimalloc, --sample-every 1: free and delete still told apart per name" {
	# sampled frees of the shared free/delete probe count their callers with their weight
	local pre
	for pre in "$LIBDIR/libtcmalloc_minimal.so.4" "$LIBDIR/libmimalloc.so.2"; do
		[ -r "$pre" ] || skip "$pre not installed (scripts/install-deps.sh installs it)"
		run env LD_PRELOAD="$pre" "$EBPROF" mem -q -o "$T/full.json" -- "$FIX/cxxfixture" 1
		[ "$status" -eq 0 ]
		run env LD_PRELOAD="$pre" "$EBPROF" mem -q --sample-every 1 -o "$T/smp.json" \
			-- "$FIX/cxxfixture" 1
		[ "$status" -eq 0 ]
		jq -e -n --slurpfile a "$T/full.json" --slurpfile b "$T/smp.json" '
			$a[0].processes[0].calls as $x | $b[0].processes[0].calls as $y
			| ["free", "operator delete", "operator delete[]"]
			| all(.[]; $x[.] == $y[.] and $x[.] > 0)'
	done
}

@test "C++ fixture with mimalloc preloaded: counts and leaks exact" {
	check_allocator "$LIBDIR/libmimalloc.so.2" mimalloc
}

@test "C++ fixture linked statically: the executable serves everything, counts exact" {
	CXXFIX=cxxfixture_static check_allocator "" static
	jqe '.processes[0].allocator.objects | length == 1' "$T/work.json"
}

@test "a std::bad_alloc thrown out of libstdc++'s operator new is caught, and counted as a failed new" {
	# a return probe on operator new would replace its return address and the unwinder
	# could not pass it: std::terminate (exit 134) instead of the program's catch
	run "$EBPROF" mem -q -o "$T/base.json" -- "$FIX/badalloc"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem -q -o "$T/bad.json" -- "$FIX/badalloc" 1
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"caught 3, null 1"* ]]
	jq -e -n --slurpfile a "$T/bad.json" --slurpfile b "$T/base.json" '
		$a[0].processes[0] as $x | $b[0].processes[0] as $y
		| ($x.calls["operator new"] - $y.calls["operator new"]) == 3
		and ($x.calls["operator new[]"] - $y.calls["operator new[]"]) == 1
		and ($x.failed - $y.failed) == 4'
}

@test "launch: a C program with C++ in a library waits for libstdc++, mapped after libc" {
	run "$EBPROF" mem -q -o "$T/o.json" -- "$FIX/cxxlate"
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | test("libstdc\\+\\+")' "$T/o.json"
	jqe '.processes[0].calls | .["operator new"] == 1 and .["operator new[]"] == 1
	     and .["operator delete[]"] == 1 and .["operator delete"] == 0 and .free == 0' "$T/o.json"
	jqe '[.sites[] | select([.frames[].function] | index("cxxlate_work"))
	      | [.frames[0].function, .alloc_bytes, .live_bytes]] | sort
	     == [["operator new", 8, 8], ["operator new[]", 16, 0]]' "$T/o.json"
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
	# a dynamically linked executable is no static allocator
	run "$EBPROF" mem -q --allocator static -- "$FIX/cxxfixture" 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"has no static allocator mapped (no object of that kind defines malloc)"* ]]
	run "$EBPROF" mem -q --allocator static -o "$T/s.json" -- "$FIX/memfixture_static"
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | startswith("static allocator in ")' "$T/s.json"
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

@test "--symbol-prefix pf_: a prefixed allocator's calls count under the plain names" {
	run "$EBPROF" mem -q --symbol-prefix pf_ -o "$T/o.json" -- "$FIX/prefixalloc"
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls | with_entries(select(.value > 0))
	     == {"malloc": 2, "calloc": 1, "realloc": 1, "free": 2}' "$T/o.json"
	jqe '.processes[0] | .live_count == 1 and .live_bytes == 40' "$T/o.json"
	jqe '.processes[0].allocator.objects[0].path | endswith("libprefixalloc.so")' "$T/o.json"
	jqe '[.sites[] | [.frames[0].function, .alloc_bytes, .live_bytes]] | sort
	     == [["calloc", 32, 0], ["malloc", 24, 0], ["malloc", 40, 40], ["realloc", 100, 0]]' \
		"$T/o.json"
}

@test "--lib names the allocator library: the same counts as detection" {
	pre=$LIBDIR/libmimalloc.so.2
	[ -r "$pre" ] || skip "libmimalloc2.0 not installed"
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --lib "$pre" -o "$T/o.json" \
		-- "$FIX/cxxfixture" 1
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | startswith("mimalloc allocator in ")' "$T/o.json"
	jqe '.processes[0].calls["operator new"] >= 5' "$T/o.json"
	# or by its file name alone
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q --lib libmimalloc.so.2.0 -o "$T/n.json" \
		-- "$FIX/cxxfixture" 1
	[ "$status" -eq 0 ]
	jqe '.processes[0].allocator.kind == "mimalloc"' "$T/n.json"
}

# redis-server (Debian's links libjemalloc.so.2) under the counting interposer, attached by PID
# while redis-benchmark loads it. The window is the same for both: the interposer writes its
# counts at a signal (COUNTALLOC_SNAP_SIGNAL), sent once ebprof is attached and again when the
# benchmark is done, before ebprof stops; only redis's idle timer (a handful of calls per
# 100 ms) runs in the gaps around the two signals. The interposer forwards every call to the
# next definition, jemalloc's, and --allocator jemalloc makes ebprof probe jemalloc itself
# (without it ebprof would probe the interposer, the first object defining malloc).
# alone: a TCP port picked at random; redis-benchmark's load
# bats test_tags=alone
@test "redis-server with jemalloc, attached by PID under load: counts within 0.1% of the interposer" {
	command -v redis-server >/dev/null || skip "redis-server not installed"
	command -v redis-benchmark >/dev/null || skip "redis-tools not installed"
	port=$((20000 + RANDOM % 20000))
	sig=40	# SIGRTMIN+6: redis leaves it alone
	COUNTALLOC_OUT="$T/ca" COUNTALLOC_SNAP_SIGNAL=$sig LD_PRELOAD="$FIX/countalloc.so" \
		redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
		--dir "$T" >"$T/redis.log" 2>&1 &
	rpid=$!
	BG_PIDS+=("$rpid")
	for ((i = 0; i < 100; i++)); do
		redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
		sleep 0.1
	done
	redis-cli -p "$port" ping | grep -q PONG

	"$EBPROF" mem -q -v --allocator jemalloc -p "$rpid" -d 600 -o "$T/out.json" \
		2>"$T/ebprof.log" &
	epid=$!
	BG_PIDS+=("$epid")
	wait_for "$T/ebprof.log" "tracing jemalloc allocator in .*libjemalloc" 20
	kill -"$sig" "$rpid"
	wait_for_file "$T/ca.$rpid.snap1"
	redis-benchmark -p "$port" -q -n 20000 -c 20 -t set,get,lpush,lpop,sadd,hset,mset \
		>"$T/bench.log" 2>&1
	kill -"$sig" "$rpid"
	wait_for_file "$T/ca.$rpid.snap2"
	kill -INT "$epid"
	wait "$epid"
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	wait_gone "$rpid"

	jq -n --slurpfile e "$T/out.json" --slurpfile a "$T/ca.$rpid.snap1" \
		--slurpfile b "$T/ca.$rpid.snap2" '
		def off(x; y): if y == 0 then (x != 0) else ((x - y) | fabs) / y > 0.001 end;
		$e[0].processes[0] as $p | ($b[0].calls | with_entries(.value -= $a[0].calls[.key])) as $c
		| ($b[0].alloc_count - $a[0].alloc_count) as $allocs
		| {calls: $c, ebprof: ($p.calls | with_entries(select(.value > 0))),
		   allocs: $allocs, ebprof_allocs: $p.alloc_count,
		   off: [($c | keys[] | select(off($p.calls[.]; $c[.]))),
			 (select(off($p.alloc_count; $allocs)) | "alloc_count")]}' > "$T/cmp.json"
	cat "$T/cmp.json"
	jqe '.allocs > 100000' "$T/cmp.json"
	jqe '.off == []' "$T/cmp.json"
	jqe '[.drops[]] | add == 0' "$T/out.json"
	jqe '.processes[0].note | startswith("jemalloc allocator in ")' "$T/out.json"
	assert_no_probes
}

@test "jemalloc's mallocx, rallocx, sdallocx and dallocx: calls, sites and live blocks exact" {
	pre=$LIBDIR/libjemalloc.so.2
	[ -r "$pre" ] || skip "libjemalloc2 not installed"
	run env LD_PRELOAD="$pre" "$EBPROF" mem -q -o "$T/o.json" -- "$FIX/jemallocx"
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls | .mallocx == 3 and .rallocx == 1 and .sdallocx == 1
	     and .dallocx == 1' "$T/o.json"
	# rallocx is a free of the old block and an allocation of the new one
	jqe '[.sites[] | select([.frames[].function] | index("jework"))
	      | [.frames[0].function, .alloc_bytes, .live_bytes]] | sort
	     == [["mallocx", 50, 0], ["mallocx", 64, 64], ["mallocx", 100, 0], ["rallocx", 200, 0]]' \
		"$T/o.json"
	# the process's frees are exactly those three (nothing else frees in this program)
	jqe '.processes[0] | .free_count == 3 and .free_bytes == 350 and .unknown_frees == 0' \
		"$T/o.json"
}
