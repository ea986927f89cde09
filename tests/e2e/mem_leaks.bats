#!/usr/bin/env bats
# Leak classes (--leaks): the reachability scan against valgrind's memcheck on the leak fixture
# and on real programs, per site on the fixture, attached processes scanned at the end and on
# SIGUSR1, suppressions and --fail-on-leak.

load helpers

VG_OPTS=(--leak-check=full --run-libc-freeres=no --run-cxx-freeres=no)

# valgrind's LEAK SUMMARY of a command as JSON: {definite: {count, bytes}, ...}
vg_summary() {
	valgrind "${VG_OPTS[@]}" "$@" 2>&1 >/dev/null | tr -d ',' | awk '
		/definitely lost:/ { d = $(NF-4) " " $(NF-1) }
		/indirectly lost:/ { i = $(NF-4) " " $(NF-1) }
		/possibly lost:/   { p = $(NF-4) " " $(NF-1) }
		/still reachable:/ { r = $(NF-4) " " $(NF-1) }
		END {
			split(d, a); split(i, b); split(p, c); split(r, e)
			printf "{\"definite\":{\"bytes\":%d,\"count\":%d},", a[1], a[2]
			printf "\"indirect\":{\"bytes\":%d,\"count\":%d},", b[1], b[2]
			printf "\"possible\":{\"bytes\":%d,\"count\":%d},", c[1], c[2]
			printf "\"reachable\":{\"bytes\":%d,\"count\":%d}}\n", e[1], e[2]
		}'
}

# ebprof's classes for the (only) process of a JSON report, in vg_summary's shape
eb_summary() {
	jq -c '.processes[0].leaks | {definite, indirect, possible, reachable}
	       | map_values({bytes, count})' "$1"
}

need_valgrind() {
	command -v valgrind >/dev/null ||
		skip "valgrind is not installed (scripts/install-deps.sh installs it)"
}

# Per fixture function: blocks and bytes of each class, from the sites whose first frame after
# the allocator is that function.
site_classes() {
	jq -c '[.sites[] | select(.leaks) | {fn: .frames[1].function, leaks}]
	       | group_by(.fn)
	       | map({key: .[0].fn, value: (reduce .[].leaks as $l ({};
			reduce ("definite", "indirect", "possible", "reachable") as $c (.;
				.[$c].count += $l[$c].count | .[$c].bytes += $l[$c].bytes))
			| map_values(select(.count > 0)))})
	       | from_entries' "$1"
}

@test "leaks: the fixture's classes match valgrind's memcheck exactly" {
	need_valgrind
	vg_summary "$FIX/leakfixture" > "$T/vg.json"
	cat "$T/vg.json"
	# the fixture's own design, so a valgrind change cannot pass silently
	jqe '.definite == {bytes: 428, count: 7} and .indirect == {bytes: 184, count: 4} and
	     .possible == {bytes: 272, count: 2} and .reachable == {bytes: 264, count: 8}' "$T/vg.json"
	run "$EBPROF" mem --leaks -o "$T/out.json" -o "$T/out.txt" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	eb_summary "$T/out.json" > "$T/eb.json"
	diff <(jq -S . "$T/vg.json") <(jq -S . "$T/eb.json")
	jqe '.processes[0].leaks | .at_exit and .threads == 1 and
	     .reachable_via_heuristic == {length64: {count: 1, bytes: 64}}' "$T/out.json"
	grep -q 'definitely lost: 428 bytes in 7 blocks' "$T/out.txt"
	grep -q 'length64           : 64 bytes in 1 block' "$T/out.txt"
	assert_no_probes
}

@test "leaks: a root in the program's own mapping, merged with a glibc mmapped chunk, counts" {
	need_valgrind
	vg_summary "$FIX/leakfixture" --mmap-root > "$T/vg.json"
	jqe '.reachable == {bytes: 300320, count: 10}' "$T/vg.json"
	run "$EBPROF" mem --leaks -o "$T/out.json" -- "$FIX/leakfixture" --mmap-root
	[ "$status" -eq 0 ]
	eb_summary "$T/out.json" > "$T/eb.json"
	diff <(jq -S . "$T/vg.json") <(jq -S . "$T/eb.json")
	site_classes "$T/out.json" > "$T/got.json"
	jqe '.mmap_big == {reachable: {count: 1, bytes: 300000}} and
	     .mmap_small == {reachable: {count: 1, bytes: 56}}' "$T/got.json"
}

@test "leaks: every fixture site has the classes its code gives it" {
	run "$EBPROF" mem --leaks -o "$T/out.json" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	site_classes "$T/out.json" > "$T/got.json"
	cat > "$T/want.json" <<-'EOF'
	{"lose_definite": {"definite": {"count": 3, "bytes": 300}},
	 "lose_zero": {"definite": {"count": 1, "bytes": 0}},
	 "lose_tree_head": {"definite": {"count": 1, "bytes": 64}},
	 "lose_tree_child": {"indirect": {"count": 3, "bytes": 144}},
	 "lose_cycle_node": {"definite": {"count": 1, "bytes": 40},
			     "indirect": {"count": 1, "bytes": 40}},
	 "possible_block": {"possible": {"count": 1, "bytes": 200}},
	 "possible_child": {"possible": {"count": 1, "bytes": 72}},
	 "reach_array": {"reachable": {"count": 5, "bytes": 160}},
	 "reach_holder": {"reachable": {"count": 1, "bytes": 16}},
	 "reach_inner": {"reachable": {"count": 1, "bytes": 24}},
	 "reach_length64": {"reachable": {"count": 1, "bytes": 64}},
	 "lose_last": {"definite": {"count": 1, "bytes": 24}},
	 "temp_free": {}}
	EOF
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# the classes are sample types too: pprof and flame graphs carry them
	jqe '[.sample_types[].type] | index("definite_space") != null' "$T/out.json"
	run "$EBPROF" mem --leaks --value definite_space -o "$T/lost.folded" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	[ "$(awk '{ s += $NF } END { print s }' "$T/lost.folded")" -eq 428 ]
	grep -q ';lose_definite;malloc 300$' "$T/lost.folded"
	run "$EBPROF" mem --value definite_space -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs --leaks"* ]]
}

@test "leaks: without heuristics the length64 block is only possibly lost" {
	run "$EBPROF" mem --leaks --leak-heuristics none -o "$T/out.json" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	jqe '.processes[0].leaks | .possible == {count: 3, bytes: 336} and
	     .reachable == {count: 7, bytes: 200} and .reachable_via_heuristic == {}' "$T/out.json"
	run "$EBPROF" mem --leaks --leak-heuristics length64,bogus -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid --leak-heuristics"* ]]
	# a scan must know every block: size filters would make blocks behind them look lost
	run "$EBPROF" mem --fail-on-leak --min-size 64 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--leaks cannot be combined with --min-size/--max-size"* ]]
}

# perl's heap is dense with interior pointers (a scalar's head points into an arena of bodies):
# every heuristic must then cost what the scan costs without it, i.e. read the process in large
# pieces, never a read per candidate pointer (7.6 million reads and 9 s stopped, once). strace
# counts the reads independently of ebprof's own count.
@test "leaks: heuristics read perl's heap in bulk, and only move possibly lost blocks to reachable" {
	command -v strace >/dev/null ||
		skip "strace is not installed (scripts/install-deps.sh installs it)"
	local prog='my %h; for my $i (1..200000) { $h{"key$i"} = [$i, "v" x ($i % 50)] }
		    delete $h{"key$_"} for 1..66666'
	export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0
	# both under strace: perl copies its environment, where the shell puts the command in $_;
	# and without address randomization, so that both runs leave the same words in memory (a
	# full run once had one 4080-byte arena of perl's come out of "possible" in one run only)
	for h in all none; do
		setarch -R strace -qq -e signal=none -e trace=process_vm_readv \
			-o "$T/strace-$h.txt" "$EBPROF" mem --leaks -q --leak-heuristics "$h" \
			-o "$T/$h.json" -- perl -e "$prog"
	done
	local classes='.processes[0].leaks | {definite, indirect, possible, reachable,
						  reachable_via_heuristic}'
	jq -cS "$classes" "$T/none.json" "$T/all.json"
	# a heuristic only ever finds a possibly lost block reachable (valgrind's rule): the lost
	# classes are the same, and what leaves "possible" is reachable (via the heuristic, which
	# "reachable" includes, or from a block it made reachable). So far none has matched here.
	# The two runs are two perl processes: now and then one of them frees one more of its
	# 4080-byte arenas before exiting (a fresh-clone CI run: 16,096 possibly lost blocks
	# against 16,095, the rest equal), so what is kept may differ by one such block.
	jq -e -n --slurpfile n "$T/none.json" --slurpfile a "$T/all.json" '
		def k: .processes[0].leaks;
		def kept(f): (k.possible | f) + (k.reachable | f);
		def near(a; b; d): (a - b) as $e | ($e <= d and $e >= -d);
		($n[0] | k) as $x | ($a[0] | k) as $y
		| $x.definite == $y.definite and $x.indirect == $y.indirect and
		  $y.possible.count <= $x.possible.count + 1 and
		  near($n[0] | kept(.count); $a[0] | kept(.count); 1) and
		  near($n[0] | kept(.bytes); $a[0] | kept(.bytes); 4096)'
	# tens of MB of possibly lost arenas (44 MB at 200,000 keys): the case is the one reported
	jqe '.processes[0].leaks | .possible.bytes > 32 * 1048576' "$T/all.json"
	local calls
	calls=$(grep -c '^process_vm_readv(' "$T/strace-all.txt")
	echo "process_vm_readv calls: $calls"
	jq -e --argjson calls "$calls" '.processes[0].leaks.read_calls == $calls' "$T/all.json"
	# reading up front takes one call per 1024 spans of blocks; allow 4 a MB read, and some
	# for the roots and the vtable pages
	jqe '.processes[0].leaks | .read_calls <= 100 + 4 * .scanned_bytes / 1048576' \
		"$T/all.json"
}

# Start the fixture waiting for SIGUSR1; attach ebprof with extra args; start the work and wait
# until it is done. $FXPID, $EBPID, $T/eb.log.
attach_fixture() {
	bg "$FIX/leakfixture" --wait-start --linger 60 > "$T/fx.log" 2>&1
	FXPID=$BG
	wait_for "$T/fx.log" '^[0-9]+$'
	bg "$EBPROF" mem -v -p "$FXPID" "$@" 2> "$T/eb.log"
	EBPID=$BG
	wait_for "$T/eb.log" 'tracing glibc allocator'
	kill -USR1 "$FXPID"
	wait_for "$T/fx.log" 'ready'
}

@test "leaks: an attached process is scanned when tracing stops, and runs on" {
	need_valgrind
	vg_summary "$FIX/leakfixture" > "$T/vg.json"
	attach_fixture --leaks -o "$T/out.json"
	kill -INT "$EBPID"
	wait "$EBPID"
	cat "$T/eb.log"
	kill -0 "$FXPID"			# still running, not stopped
	grep -q State:.*S /proc/$FXPID/status
	eb_summary "$T/out.json" > "$T/eb.json"
	diff <(jq -S . "$T/vg.json") <(jq -S . "$T/eb.json")
	jqe '.processes[0].leaks | (.at_exit | not) and .stopped_ns > 0' "$T/out.json"
	assert_no_probes
}

@test "leaks: every thread of an attached process is stopped; stacks count from their pointers" {
	bg "$FIX/leakfixture" --wait-start --linger 60 --threads > "$T/fx.log" 2>&1
	FXPID=$BG
	wait_for "$T/fx.log" '^[0-9]+$'
	bg "$EBPROF" mem -v -p "$FXPID" --leaks -o "$T/out.json" 2> "$T/eb.log"
	EBPID=$BG
	wait_for "$T/eb.log" 'tracing glibc allocator'
	kill -USR1 "$FXPID"
	wait_for "$T/fx.log" 'ready'
	kill -INT "$EBPID"
	wait "$EBPID"
	# the worker's held block is reachable from its live frame, the dropped one (a dead frame
	# below its stack pointer) is definitely lost, its DTV possibly lost (valgrind agrees)
	jqe '.processes[0].leaks | .threads == 2 and .threads_without_registers == 0 and
	     .definite == {count: 8, bytes: 940} and .indirect == {count: 4, bytes: 184} and
	     .possible == {count: 3, bytes: 544} and .reachable == {count: 9, bytes: 4360}' \
		"$T/out.json"
	site_classes "$T/out.json" > "$T/got.json"
	jqe '.thread_held == {reachable: {count: 1, bytes: 4096}} and
	     .thread_dropped == {definite: {count: 1, bytes: 512}}' "$T/got.json"
	grep -q State:.*S /proc/$FXPID/status
	[ "$(ls /proc/$FXPID/task | wc -l)" -eq 2 ]
}

# exit_group kills every other thread; their stacks stay mapped, so only each thread's final
# stack pointer tells its live frames from the dead ones. A thread whose exit stop the tracer
# handles before the leader's is gone when the leader's scan runs: its pointer must have been
# kept then. Which exit comes first varies from run to run: several runs.
@test "leaks: threads killed by exit_group count from their final stack pointers" {
	need_valgrind
	vg_summary "$FIX/threadexit" > "$T/vg.json"
	cat "$T/vg.json"
	jqe '.definite == {bytes: 25600, count: 200} and .reachable == {bytes: 12800, count: 200}' \
		"$T/vg.json"
	for i in 1 2 3 4 5; do
		run "$EBPROF" mem --leaks -o "$T/out.json" -- "$FIX/threadexit"
		[ "$status" -eq 0 ]
		eb_summary "$T/out.json" > "$T/eb.json"
		diff <(jq -S . "$T/vg.json") <(jq -S . "$T/eb.json")
		jqe '.processes[0].leaks | .at_exit and .threads == 201 and
		     .threads_without_registers == 0' "$T/out.json"
	done
	site_classes "$T/out.json" > "$T/got.json"
	jqe '.thread_kept == {reachable: {count: 200, bytes: 12800}} and
	     .thread_dropped == {definite: {count: 200, bytes: 25600}}' "$T/got.json"
}

@test "leaks: SIGUSR1 to ebprof scans the running process at once" {
	attach_fixture --leaks -o "$T/out.json"
	kill -USR1 "$EBPID"
	wait_for "$T/eb.log" "PID $FXPID scanned: definitely lost 428 B in 7 blocks, indirectly 184 B in 4, possibly 272 B in 2, still reachable 264 B in 8 \(stopped"
	kill -0 "$EBPID"			# still tracing
	# the scan let it run again: back in its sleep (it may still be on its way there)
	for ((i = 0; i < 100; i++)); do
		grep -q 'State:.*S' /proc/$FXPID/status && break
		sleep 0.05
	done
	grep -q 'State:.*S' /proc/$FXPID/status
	kill -INT "$EBPID"
	wait "$EBPID"
	jqe '.processes[0].leaks.definite == {count: 7, bytes: 428}' "$T/out.json"
}

@test "leaks: suppressions move sites out of the classes; --fail-on-leak exits 23 until then" {
	run "$EBPROF" mem --fail-on-leak -o "$T/out.json" -- "$FIX/leakfixture"
	[ "$status" -eq 23 ]
	[[ "$output" == *"definitely lost: 428 bytes in 7 blocks; exiting with status 23"* ]]
	jqe '.processes[0].leaks.definite.count == 7' "$T/out.json"

	cat > "$T/some.supp" <<-'EOF'
	# known leaks
	leak:lose_definite

	leak:^lose_tree*
	EOF
	run "$EBPROF" mem --fail-on-leak --suppressions "$T/some.supp" -o "$T/out.json" \
		-o "$T/out.txt" -- "$FIX/leakfixture"
	[ "$status" -eq 23 ]
	# 3 x 100 definite, the tree: 64 definite + 3 x 48 indirect
	jqe '.processes[0].leaks | .definite == {count: 3, bytes: 64} and
	     .indirect == {count: 1, bytes: 40} and .suppressed == {count: 7, bytes: 508}' \
		"$T/out.json"
	jqe '[.sites[] | select(.leaks.suppressed)] | length == 5' "$T/out.json"
	grep -q '     suppressed: 508 bytes in 7 blocks' "$T/out.txt"

	printf 'leak:lose_\nleak:leakfixture.c\n' > "$T/all.supp"
	run "$EBPROF" mem --fail-on-leak --suppressions "$T/all.supp" -o "$T/out.json" -- \
		"$FIX/leakfixture"
	[ "$status" -eq 0 ]
	jqe '.processes[0].leaks | .definite.count == 0 and .possible.count == 0' "$T/out.json"
}

@test "temporaries: heaptrack's rule by default, a time bound with --temp-threshold" {
	run "$EBPROF" mem -o "$T/rule.json" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem --temp-threshold 1s -o "$T/time.json" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	# temp_free's 10 blocks are temporaries under both rules; nothing else is freed
	for f in rule time; do
		jqe '[.sites[] | select(.frames[1].function == "temp_free") | .temporary_count]
		     | add == 10' "$T/$f.json"
		jqe '[.sites[].temporary_count] | add == 10' "$T/$f.json"
	done
	jqe '.notes | any(test("freed within 1000000000 ns"))' "$T/time.json"
	run "$EBPROF" mem --temp-threshold soon -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid --temp-threshold 'soon'"* ]]
}

@test "leaks: a malformed suppressions file is refused with its line" {
	printf 'leak:ok\nfun:valgrind_style\n' > "$T/bad.supp"
	run "$EBPROF" mem --suppressions "$T/bad.supp" -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.supp:2: expected 'leak:PATTERN'"* ]]
	run "$EBPROF" mem --suppressions "$T/missing.supp" -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot read suppressions file"* ]]
}

# A real program: outstanding blocks at exit exactly as the interposer counts them, and the
# classes within 1% of valgrind's (they differ only where memcheck knows memory was never
# written).
real_program() {
	local pid ca
	# stdout to /dev/null in every run, as vg_summary does: programs size buffers by it
	env COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem --leaks -q -o "$T/ca.json" -- "$@" > /dev/null
	pid=$(jq '.processes[0].pid' "$T/ca.json")
	ca="$T/ca.$pid"
	jq -c '{live_count, live_bytes}' "$ca"
	jq -c '.processes[0] | {live_count, live_bytes}' "$T/ca.json"
	diff <(jq -c '{live_count, live_bytes}' "$ca") \
	     <(jq -c '.processes[0] | {live_count, live_bytes}' "$T/ca.json")
	# every outstanding block is in exactly one class
	jq -e '.processes[0] | .live_count == ([.leaks | .definite, .indirect, .possible,
		.reachable | .count] | add)' "$T/ca.json"

	vg_summary "$@" > "$T/vg.json"
	"$EBPROF" mem --leaks -q -o "$T/out.json" -- "$@" > /dev/null
	eb_summary "$T/out.json" > "$T/eb.json"
	cat "$T/vg.json" "$T/eb.json"
	jq -e -n --slurpfile v "$T/vg.json" --slurpfile e "$T/eb.json" '
		[$v[0] | keys[] as $k | .[$k] | keys[] as $f
		 | (.[$f]) as $want | ($e[0][$k][$f]) as $got
		 | (($got - $want) | fabs) <= 0.01 * $want] | all'
}

@test "leaks: sort agrees with the interposer and valgrind" {
	need_valgrind
	seq 1 5000 | sort -R > "$T/in.txt"
	real_program sort "$T/in.txt"
}

@test "leaks: git status agrees with the interposer and valgrind" {
	need_valgrind
	command -v git >/dev/null || skip "git is not installed (scripts/install-deps.sh installs it)"
	git init -q "$T/repo"
	for i in 1 2 3 4 5; do echo "$i" > "$T/repo/f$i"; done
	git -C "$T/repo" add f1 f2
	git -C "$T/repo" -c user.email=t@example.com -c user.name=t commit -qm first
	echo more >> "$T/repo/f1"
	# old timestamps and one status first: later runs find a settled index and do the same
	# work (a fresh change makes git refresh and rewrite its index)
	touch -d @1600000000 "$T"/repo/f*
	git -C "$T/repo" status --short > /dev/null
	real_program git -C "$T/repo" status --short
}

@test "leaks: python3 -c pass agrees with the interposer and valgrind" {
	need_valgrind
	real_program /usr/bin/python3 -c pass
}

@test "leaks: the classes are pprof sample types Go's pprof reads; ebprof report keeps them" {
	local pprof=/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof
	[ -x "$pprof" ] || skip "Go's pprof is not installed (scripts/install-deps.sh installs it)"
	run "$EBPROF" mem --leaks -o "$T/x.pb.gz" -o "$T/x.json" -- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	# HOME for pprof's own settings, never the user's
	HOME="$T" "$pprof" -symbolize=none -raw "$T/x.pb.gz" > "$T/raw.txt"
	grep -q 'definite_objects/count definite_space/bytes indirect_objects/count indirect_space/bytes possible_objects/count possible_space/bytes reachable_objects/count reachable_space/bytes' "$T/raw.txt"
	top() {
		HOME="$T" "$pprof" -symbolize=none -top -sample_index="$1" "$T/x.pb.gz" 2>&1 |
			sed -n 's/^Showing nodes accounting for \([^,]*\), .*/\1/p'
	}
	# valgrind's numbers, as the JSON report has them
	[ "$(top definite_space)" = 428B ]
	[ "$(top definite_objects)" = 7 ]
	[ "$(top indirect_space)" = 184B ]
	[ "$(top possible_space)" = 272B ]
	[ "$(top reachable_objects)" = 8 ]
	HOME="$T" "$pprof" -symbolize=none -top -sample_index=definite_space "$T/x.pb.gz" |
		grep -E '^ +0 +0% +[0-9.]+% +300B [0-9.]+% +lose_definite$'
	# read back, every site has the classes of the direct run's JSON
	run "$EBPROF" report -o "$T/back.json" "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	diff <(jq -c '[.sites[] | {f: [.frames[].function], leaks}] | sort' "$T/x.json") \
	     <(jq -c '[.sites[] | {f: [.frames[].function], leaks}] | sort' "$T/back.json")
}
