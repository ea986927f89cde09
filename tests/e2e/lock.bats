#!/usr/bin/env bats
# ebprof lock end to end: 4 threads fighting over one pthread mutex (tests/fixtures/mutexfix.c)
# against bpftrace timing the same futex waits of the same run; 4 threads mapping and unmapping
# memory in parallel (tests/fixtures/mmaplockfix.c), contending on their process's mmap_lock,
# against bpftrace counting lock:contention_begin for it; 64 futexes met a few at a time
# (tests/fixtures/manylocks.c), more than --max-locks holds; every output format, -p, -a, bad input
# (a kernel without the lock tracepoints among it), and nothing left attached afterwards.

load helpers

PPROF=/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof

# alone: bpftrace counts every mutexfix's waits (another test's too)
# bats test_tags=alone
@test "lock: 4 threads on one pthread mutex: waits and wait time through contend() agree with bpftrace on the same run" {
	start_bpftrace "$MUTEX_BT"
	run "$EBPROF" lock -q -o "$T/x.json" -o "$T/x.txt" -- "$FIX/mutexfix" 4 20000
	[ "$status" -eq 0 ]
	stop_bpftrace
	mu=$(echo "$output" | sed -n 's/^mutex \(0x[0-9a-f]*\)$/\1/p')
	[ -n "$mu" ]
	[[ "$output" == *"done 80000"* ]]
	# the mutex's futex: its waits, their total wait, and the calls that did not wait
	jq -c --arg a "$mu" '.groups[] | select(.labels.address == $a) | del(.histograms)' "$T/x.json"
	[ "$(bt n "$mu")" -gt 0 ]
	g() { jq --arg a "$mu" ".groups[] | select(.labels.address == \$a) | .$1" "$T/x.json"; }
	# named by its symbol (a static in .bss)
	[ "$(g labels.lock)" = '"mu in mutexfix"' ]
	within "$(g contentions)" "$(bt n "$mu")" 10
	within "$(g delay_ns)" "$(bt t "$mu")" 10
	within "$(g nowait)" "$(bt nowait "$mu")" 10
	# waits that timed out (none here: every lock is taken in the end) are bpftrace's -110s
	within "$(g timeouts)" "$(bt to "$mu")" 10
	jq -e --arg a "$mu" '.groups[] | select(.labels.address == $a)
		| .labels.class == "futex_wait" and (.histograms[0].buckets | map(.count) | add)
		  == .contentions and .delay_max_ns <= .delay_ns' "$T/x.json" >/dev/null
	# the same waits by stack: under the futex's leaf, through contend() (the mutex's only
	# user, which calls pthread_mutex_lock itself: found below its frame, libc keeping no frame
	# pointer), and the same numbers
	leaf="mu in mutexfix (futex_wait)"
	sites() { jq --arg l "$leaf" "[.sites[] | select(.frames[0].function == \$l
		and any(.frames[]; .function == \"contend\")) | .$1] | add // 0" "$T/x.json"; }
	within "$(sites contentions)" "$(bt n "$mu")" 10
	within "$(sites delay)" "$(bt t "$mu")" 10
	jq -e --arg l "$leaf" '[.sites[] | select(.frames[0].function == $l)
		| any(.frames[]; .function == "contend") and any(.frames[]; .function == "worker")]
		| all' "$T/x.json" >/dev/null
	# every futex wait bpftrace saw, joins included, is in the report
	all_bt=$(sed -n 's/^@n\[[^]]*\]: \([0-9]*\)$/\1/p' "$T/bt.out" | awk '{ s += $1 } END { print s }')
	within "$(jq '.info.futex_waits | tonumber' "$T/x.json")" "$all_bt" 10
	# the text report: the lock table, then the histograms, then the stacks
	grep -qE "^  mu in mutexfix +futex_wait +mutexfix\[[0-9]+\] +$mu +[0-9]+ " "$T/x.txt"
	awk '/^By lock, class, process and address: wait( \(the top [0-9]+ of [0-9]+\))?$/ { a = NR }
		/^Histograms( \(the top [0-9]+ of [0-9]+\))?$/ { b = NR }
		/^Top .* stacks? by delay/ { c = NR } END { exit !(a && a < b && b < c) }' "$T/x.txt"
	# the calls that returned EAGAIN (nowait, checked against bpftrace above: how many is a
	# race of the threads, 0 in some runs) are said, as a count or as none
	grep -qE "[0-9]+ calls? returned EAGAIN at once|would be counted apart, as NO WAIT: none did" \
		"$T/x.txt"
}

# The words between a contend_*frame function's frame pointer and the return address of its
# call to pthread_mutex_lock (its pushes after %rbp's, its locals, the return address), by
# objdump; and that worker calls it: the fixture's call chain, worker -> FN ->
# pthread_mutex_lock, checked in its code.
frame_words() {
	local dis body pushes locals
	dis=$(objdump -d --no-show-raw-insn "$FIX/mutexfix")
	echo "$dis" | awk '/^[0-9a-f]+ <worker>:/,/^$/' | grep -q "call .*<$1>" || return 1
	body=$(echo "$dis" | awk "/^[0-9a-f]+ <$1>:/,/^\$/")
	echo "$body" | grep -q 'call .*<pthread_mutex_lock@plt>' || return 1
	pushes=$(echo "$body" | sed -n '/mov *%rsp,%rbp/,/call/p' | grep -c 'push ') || true
	locals=$(echo "$body" | sed -n 's/.*sub *\$0x\([0-9a-f]*\),%rsp.*/\1/p' | head -1)
	[ -n "$locals" ] || return 1
	echo $(((pushes * 8 + 0x$locals) / 8 + 1))
}

# Every stack of the mutex's waits in $T/x.json goes from libc's __lll_lock_wait to $1, then
# worker(), or ends there in [truncated] (the search could not tell: bpf_find_vma refused while
# another thread maps, pthread_create's stacks), each such wait counted as
# direct_caller_unknown; and some are whole.
caller_found() {
	jq -e --arg f "$1" '[.sites[] | select(.frames[0].function == "mu in mutexfix (futex_wait)")
		| {n: .contentions, f: [.frames[].function]}] as $s
		| ($s | all(.f | (index($f) as $c | $c != null and .[$c + 1] == "worker"
			and .[$c - 1] == "__lll_lock_wait")
			or (.[-1] == "[truncated]" and .[-2] == "__lll_lock_wait")))
		and ([$s[] | select(.f | index($f) != null) | .n] | add // 0) > 0
		and ([$s[] | select(.f[-1] == "[truncated]") | .n] | add // 0)
			<= (.drops.direct_caller_unknown | tonumber)' "$T/x.json" >/dev/null
}

# By frame pointers alone (--unwind fp, or code without tables), the walk goes from the wait in
# libc (no frame pointers) to the first function that keeps one, past the function that called
# into libc: direct_caller (lock.bpf.c) finds that one's return address below %rbp and puts it
# back. By tables, the other tests' default, the caller is there anyway: this is the test of
# the search (without it: futex_wait, __lll_lock_wait, worker). A wait whose search could not
# tell (bpf_find_vma refused: it only tries the mmap_lock, which pthread_create takes to map a
# stack) ends in [truncated] after libc, counted: before, it was __lll_lock_wait, worker,
# without contend (this test failed so once on a busy machine, 1 in 7,077 waits).
@test "lock --unwind fp: the function that called into libc is found below the frame pointer: contend() between libc's wait and worker()" {
	run "$EBPROF" lock -q --unwind fp -o "$T/x.json" -- "$FIX/mutexfix" 4 5000
	[ "$status" -eq 0 ]
	[[ "$output" == *"done 20000"* ]]
	jq -c '.sites[] | select(.frames[0].function == "mu in mutexfix (futex_wait)")
		| [.contentions, [.frames[].function]]' "$T/x.json"
	jq -c '.drops' "$T/x.json"
	caller_found contend
}

# The search for the function that called into libc reads 16 words below %rbp first, then on,
# 64 at most: mutexfix bigframe's contend_bigframe() keeps 40 words of locals between its saved
# %rbp and its call's return address. Before, the search stopped at 16 words, and every such
# stack was futex_wait, __lll_lock_wait, worker: contend_bigframe missing, shown whole.
@test "lock --unwind fp: a caller whose frame keeps more than 16 words of locals is found: contend_bigframe() between libc's wait and worker(), as objdump has the calls" {
	w=$(frame_words contend_bigframe)
	echo "return address $w words below %rbp"
	[ "$w" -gt 16 ]
	[ "$w" -le 64 ]
	run "$EBPROF" lock -q --user-only --unwind fp -o "$T/x.json" -- "$FIX/mutexfix" 4 5000 bigframe
	[ "$status" -eq 0 ]
	[[ "$output" == *"done 20000"* ]]
	jq -c '.sites[] | [.contentions, [.frames[].function]]' "$T/x.json"
	jq -c '.drops' "$T/x.json"
	caller_found contend_bigframe
}

# When the search cannot find the function that called into libc, the stack must not join
# libc to that function's caller as if it were whole: mutexfix hugeframe's contend_hugeframe()
# keeps 100 words of locals between its saved %rbp and its call's return address, further than
# the 64 words searched. Before, every such stack was futex_wait, __lll_lock_wait, worker.
@test "lock --unwind fp: a caller not found below %rbp (a frame larger than the search) ends the stack in [truncated] after libc, never libc joined to its caller's caller" {
	w=$(frame_words contend_hugeframe)
	echo "return address $w words below %rbp"
	[ "$w" -gt 64 ]
	run "$EBPROF" lock -q --user-only --unwind fp -o "$T/x.json" -o "$T/x.folded" -- \
		"$FIX/mutexfix" 4 5000 hugeframe
	[ "$status" -eq 0 ]
	[[ "$output" == *"done 20000"* ]]
	jq -c '.sites[] | [.contentions, [.frames[].function]]' "$T/x.json"
	jq -c '.drops' "$T/x.json"
	mu='[.sites[] | select(.frames[0].function == "mu in mutexfix (futex_wait)")]'
	jqe "$mu | length > 0" "$T/x.json"
	# worker only ever under contend_hugeframe, its callee by objdump
	jqe "$mu | all([.frames[].function] | index(\"worker\") as \$w
		| \$w == null or .[\$w - 1] == \"contend_hugeframe\")" "$T/x.json"
	# each stack whole (down to clone3) or said to end, [truncated]
	jqe "$mu | all([.frames[].function] | .[-1] == \"[truncated]\" or index(\"clone3\") != null)" \
		"$T/x.json"
	# the ones that end so are counted, each wait, by their reason
	jqe "($mu | map(select(.frames[-1].function == \"[truncated]\") | .contentions) | add // 0)
		as \$n | \$n > 0 and (.drops.direct_caller_unknown | tonumber) >= \$n" "$T/x.json"
	jqe '.drops.unwind_fp_broken > 0' "$T/x.json"
	# and the folded output (root first) says it too: never worker;__lll_lock_wait
	grep -q ';\[truncated\];__lll_lock_wait;' "$T/x.folded"
	! grep -q ';worker;__lll_lock_wait;' "$T/x.folded" || false
}

# By frame pointers alone, a live %rbp of 0 is code that never set up a frame (a thread starts
# with 0; mutexfix_nofp's own code never writes %rbp), not the outermost frame: nothing under
# the wait is known. Before, such a stack was futex_wait and __lll_lock_wait alone, shown whole
# (no [truncated], no drop), the mutex's whole delay on two libc frames.
@test "lock --unwind fp: a wait in code without frame pointers (%rbp 0) ends in [truncated], never shown whole" {
	run "$EBPROF" lock -q --user-only --unwind fp -o "$T/x.json" -- "$FIX/mutexfix_nofp" 4 2000
	[ "$status" -eq 0 ]
	[[ "$output" == *"done 8000"* ]]
	jq -c '.sites[] | [.contentions, [.frames[].function]]' "$T/x.json"
	jqe '[.sites[] | select(.frames[0].function == "mu in mutexfix_nofp (futex_wait)")]
		| length > 0' "$T/x.json"
	# every stack is whole (down to the thread's clone3 or the program's _start) or says so
	jqe '[.sites[] | [.frames[].function] | .[-1] == "[truncated]" or index("clone3") != null
		or index("_start") != null] | all' "$T/x.json"
	jqe '.drops.unwind_fp_broken > 0' "$T/x.json"
}

@test "lock: futex semantics: EAGAIN is no wait, timed-out waits are timeouts (not contentions) of at least their timeout, FUTEX_WAKE is none, each kind by its command" {
	run "$EBPROF" lock -q --user-only -o "$T/x.json" -- "$FIX/futexfix"
	[ "$status" -eq 0 ]
	[[ "$output" == *"done"* ]]
	a=$(echo "$output" | sed -n 's/^a //p')
	b=$(echo "$output" | sed -n 's/^b //p')
	c=$(echo "$output" | sed -n 's/^c //p')
	jq -c '.groups[] | del(.histograms)' "$T/x.json"
	grp() { jq --arg a "$1" "[.groups[] | select(.labels.address == \$a)]" "$T/x.json"; }
	# the fixture's three globals, by name
	[ "$(grp "$a" | jq -r '.[0].labels.lock')" = "a in futexfix" ]
	[ "$(grp "$c" | jq -r '.[0].labels.lock')" = "c in futexfix" ]
	# a: 100 calls that found another value (no wait, no delay), 10 waits of 2 ms each that
	# timed out: nobody woke them, so no contention (before: 10 contentions), their time apart
	[ "$(grp "$a" | jq -c 'map([.labels.class, .contentions, .nowait, .timeouts])')" = '[["futex_wait",0,100,10]]' ]
	[ "$(grp "$a" | jq '.[0].timeout_delay_ns >= 10 * 2000000 and .[0].delay_ns == 0')" = true ]
	[ "$(grp "$b" | jq -c 'map([.labels.class, .contentions, .nowait, .timeouts])')" = '[["futex_wait_bitset",0,0,3]]' ]
	[ "$(grp "$b" | jq '.[0].timeout_delay_ns >= 3 * 2000000 and .[0].delay_ns == 0')" = true ]
	[ "$(grp "$c" | jq -c 'map([.labels.class, .contentions, .nowait, .timeouts])')" = '[["futex_waitv",0,0,5]]' ]
	[ "$(grp "$c" | jq '.[0].timeout_delay_ns >= 5 * 2000000 and .[0].delay_ns == 0')" = true ]
	# nothing else: the wakes are no waits; the fixture's 18 timeouts, each once
	jqe '.info.futex_waits == "0" and .info.futex_nowait == "100" and .info.futex_timeouts == "18"' "$T/x.json"
	jqe '([.sites[].contentions] | add) == 0 and ([.sites[].timeouts] | add) == 18' "$T/x.json"
	jqe '([.sites[].timeout_delay] | add) == ([.groups[].timeout_delay_ns] | add)' "$T/x.json"
	jqe '[.sites[] | any(.frames[]; .function == "main")] | all' "$T/x.json"
	# the fixture's function that called libc's syscall() (which keeps no frame pointer),
	# found by its return address below main's frame
	jqe '[.sites[] | any(.frames[]; .function == "futex" or .function == "waitv")] | all' \
		"$T/x.json"
	# the wait histograms are the contentions': empty
	jqe '[.groups[].histograms[0].buckets[]] | length == 0' "$T/x.json"
}

@test "lock: 32-bit futex calls (int \$0x80) are futex waits by the ia32 table; its getegid32 (x86_64's futex number) is none" {
	# compat32: 10 getegid32 (202), 3 ia32 futex(2) waits (240) that time out after 20 ms.
	# Before: 10 futex contentions of a few us, and the 3 waits unseen
	need_ia32
	run "$EBPROF" lock -q --user-only -o "$T/x.json" -- "$FIX/compat32"
	[ "$status" -eq 0 ]
	[[ "$output" == *"compat32 write32 7 getegid32 10 futex32 3 write64 5"* ]]
	jq -c '.info, [.groups[] | del(.histograms)]' "$T/x.json"
	jqe '.info.futex_waits == "0" and .info.futex_nowait == "0" and
	     .info.futex_timeouts == "3"' "$T/x.json"
	jqe '[.groups[] | [.labels.class, .contentions, .timeouts]] == [["futex_wait", 0, 3]]' \
		"$T/x.json"
	jqe '.groups[0].timeout_delay_ns >= 3 * 20000000' "$T/x.json"
	jqe '[.sites[] | select(.timeouts > 0) | any(.frames[]; .function == "futex32")] | all' \
		"$T/x.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "getegid32"))] | length == 0' "$T/x.json"
}

@test "lock: a futex wait that signals interrupt is one wait, timed or not, of the fixture's own length" {
	# lockintr's waiter waits ~600 ms on a mutex while it gets SIGUSR1 (SA_RESTART; its
	# handler calls FUTEX_WAKE on another word) and SIGWINCH (no handler) three times each.
	# Before: 7 contentions; a timed wait 4 and only ~250 ms (its continuation in
	# restart_syscall(2) was not watched); then 4, the handler's FUTEX_WAKE ending the wait it
	# interrupted.
	for how in untimed timed; do
		run "$EBPROF" lock -q -o "$T/x.json" -- "$FIX/lockintr" "$how"
		[ "$status" -eq 0 ]
		waited=$(echo "$output" | awk '/^waited_ns/ { print $2 }')
		[ "$waited" -gt 500000000 ]
		# its futex waits (a signal's delivery may also contend a kernel spinlock, the
		# siglock, under the same stack: a lock of its own)
		w() { jq "[.sites[] | select(.frames[0].function | test(\" \\\\(futex[a-z_]*\\\\)$\"))
			| select(any(.frames[]; .function == \"wait_here\")) | .$1]
			| add // 0" "$T/x.json"; }
		echo "$how: $(w contentions) waits, $(w delay) ns; the fixture waited $waited ns"
		[ "$(w contentions)" -eq 1 ]
		within "$(w delay)" "$waited" 5
	done
}

@test "lock: a thread killed in its futex wait: its wait counts up to the kill, in its process, and the next thread given its tid starts afresh" {
	# tidreuse kills a thread 100 ms into a futex wait (its process A exits), then makes a
	# process B with that thread's tid (clone3's set_tid) whose first futex call is a
	# FUTEX_WAKE (one round in two) or a wait on the same address, woken 50 ms into it.
	# Before: the dead thread's record (keyed by tid alone, kept as interrupted) was ended by
	# the wake's return, a contention of the dead thread's length charged to B, or continued
	# by B's wait, from the dead thread's start; A had no wait (sweep K: 77% of a 2-minute
	# lock -a's wait time was of this kind).
	run "$EBPROF" lock -q --user-only -o "$T/x.json" -- "$FIX/tidreuse" 6
	[ "$status" -ne 3 ] || skip "a killed thread's tid was taken by another process first"
	[ "$status" -eq 0 ]
	echo "$output"
	jq -c '.processes[] | {pid, contentions, delay_ns}' "$T/x.json"
	jq -c '.info' "$T/x.json"
	[ "$(jq '.totals.contentions' "$T/x.json")" -eq 12 ]
	within "$(jq '.totals.delay_ns' "$T/x.json")" \
		"$(echo "$output" | awk '/^waits 12 / { print $4 }')" 5
	# each process: its one wait, of the length the fixture measured
	while read -r _ i who pid _ ns; do
		p() { jq ".processes[] | select(.pid == $pid) | .$1" "$T/x.json"; }
		echo "round $i: $who $pid: $(p contentions) waits, $(p delay_ns) ns; it waited $ns ns"
		[ "$(p contentions)" -eq 1 ]
		if [ "$who" = a ]; then
			# a killed thread's wait ends at its exit, which follows the fixture's kill
			# by the dying thread's scheduling latency (8 ms once, on a loaded machine)
			[ "$(p delay_ns)" -ge $((ns * 95 / 100)) ]
			[ "$(p delay_ns)" -le $((ns + 20000000)) ]
		else
			within "$(p delay_ns)" "$ns" 5
		fi
	done < <(echo "$output" | grep '^round ')
	# the 6 killed waits, said
	[ "$(jq -r '.info.futex_waits_exited' "$T/x.json")" -eq 6 ]
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "lock -a: a thread killed in its futex wait has its wait counted in its process, its frames named: the process's mappings were read while it ran" {
	# -a: a process is announced (its mappings read) at its first futex wait, not only at a
	# wait's end: tidreuse's killed waits are counted at their thread's exit, when the
	# process's mappings are gone (before: bare addresses, unwind_no_mappings). A new
	# process's first stacks under -a may end [truncated] in libc (its unwind tables are
	# loaded once it is announced, after that first wait began).
	bg "$EBPROF" lock -a -v --user-only -d 60 -o "$T/x.json" 2> "$T/err"
	wait_for "$T/err" '^ebprof: tracepoints: '
	run "$FIX/tidreuse" 4
	kill -INT "$BG"
	wait "$BG"
	[ "$status" -ne 3 ] || skip "a killed thread's tid was taken by another process first"
	[ "$status" -eq 0 ]
	echo "$output"
	while read -r _ i _ pid _ ns; do
		s() { jq --argjson p "$pid" "[.sites[] | select(.pid == \$p) | $1] | add // 0" "$T/x.json"; }
		echo "round $i: a $pid: $(s .contentions) waits, $(s .delay) ns; it waited $ns ns"
		jq -c --argjson p "$pid" '.sites[] | select(.pid == $p) | [.frames[].function]' "$T/x.json"
		[ "$(s .contentions)" -eq 1 ]
		within "$(s .delay)" "$ns" 5
		# below the futex's leaf, its user frames: named, none a bare address
		[ "$(s '[.frames[1:][] | select(.function == null)] | length')" -eq 0 ]
		[ "$(s '[.frames[1:][] | select(.function != null)] | length')" -gt 0 ]
	done < <(echo "$output" | grep '^round [0-9]* a ')
}

# The kernel gave a PID to another process during an -a run: lock's rows are by tgid, so they
# summed the two programs under one name with nothing said. Said now, on the row and in the
# run's notes; the row has both programs' waits: futexfix's 18 timed-out waits, twice (its
# copy named futexb).
# alone: -a: the whole machine
# bats test_tags=alone
@test "lock -a: a PID used again by another program is said, on its row and in a note" {
	cp "$FIX/futexfix" "$T/futexb"
	pidreuse_under '^ebprof: tracepoints: ' \
		lock -a -v -q --user-only -d 60 --top 0 -o "$T/x.json" -o "$T/x.txt" :: \
		"$FIX/futexfix" -- "$T/futexb"
	assert_pid_reused "$T/x.json" "$T/x.txt" futexb
	jq -e --argjson p "$PID" '.processes[] | select(.pid == $p) | .timeouts == 36' "$T/x.json"
}

@test "lock: a full stack table (--max-stacks 1) costs stacks, not totals: each of two futexfix runs has its 18 timed-out waits in its row, their wait time the locks' own" {
	run "$EBPROF" lock -q --user-only --max-stacks 1 -o "$T/x.json" -o "$T/x.txt" -o "$T/x.html" \
		-- sh -c "'$FIX/futexfix'; '$FIX/futexfix'"
	[ "$status" -eq 0 ]
	jq -c '.processes[] | {pid, comm, contentions, delay_ns, timeouts, timeout_delay_ns}' "$T/x.json"
	jq -c '{drops: .drops | with_entries(select(.value > 0)), totals}' "$T/x.json"
	# the table was full: stacks were lost (before, the processes' rows with them: one
	# futexfix with a few of its waits, the other none)
	jqe '[.sites[].timeouts] | add // 0 | . < 36' "$T/x.json"
	[ "$(jq '[.processes[] | select(.comm == "futexfix")] | length' "$T/x.json")" -eq 2 ]
	for pid in $(jq '.processes[] | select(.comm == "futexfix") | .pid' "$T/x.json"); do
		r() { jq --argjson p "$pid" ".processes[] | select(.pid == \$p) | .$1" "$T/x.json"; }
		# the fixture's own count: 10 + 3 + 5 waits that time out after 2 ms each
		[ "$(r timeouts)" -eq 18 ]
		[ "$(r contentions)" -eq 0 ]
		[ "$(r timeout_delay_ns)" -ge 36000000 ]
		[ "$(r delay_ns)" -eq 0 ]
		# the same wait time as its futexes' rows in the lock table (the per-lock table, which
		# does not depend on the stack table), to the nanosecond
		locks=$(jq --arg w "futexfix[$pid]" '[.groups[] | select(.labels.process == $w)
			| .timeout_delay_ns] | add' "$T/x.json")
		echo "futexfix $pid: $(r timeouts) timeouts, $(r timeout_delay_ns) ns; its locks $locks ns"
		[ "$(r timeout_delay_ns)" -eq "$locks" ]
		grep -qE "^ +$pid +futexfix +0 +0 ns +18 " "$T/x.txt"
		grep -q "<td class=\"num\" data-v=\"$pid\">$pid</td><td>futexfix</td><td class=\"num zero\" data-v=\"0\">0</td><td class=\"num zero\" data-v=\"0\">0</td><td class=\"num\" data-v=\"18\">18</td>" "$T/x.html"
	done
	# stacks were dropped by count (the table was full); no process's totals
	jqe '.drops.count_table_full > 0 and .drops.process_totals_full == 0' "$T/x.json"
	jqe '.totals.timeouts == 36 and .totals.contentions == 0 and .info.futex_timeouts == "36"' "$T/x.json"
	grep -qE "^  Totals: +contentions 0, delay 0 ns \(0 nanoseconds\), timeouts 36," "$T/x.txt"
	grep -q "in the locks' and the processes' numbers but not in any stack's" "$T/x.txt"
}

# -a over a while: the processes that ended kept their keys in the per-stack table to the end,
# so a full table lost the stacks of those met last; the table is now taken into the profile
# as it fills, and the stacks map emptied but for the waits going on
# alone: -a: the whole machine
# bats test_tags=alone
@test "lock -a: a per-stack table filling up is taken into the profile: every futexfix's 18 timeouts in its stacks (--max-stacks 64)" {
	bg "$EBPROF" lock -a -v --user-only --max-stacks 64 -d 120 -o "$T/x.json" 2> "$T/err"
	wait_for "$T/err" '^ebprof: tracepoints:' 20
	for i in $(seq 40); do "$FIX/futexfix" > /dev/null; done
	kill -INT "$BG"
	wait "$BG"
	grep "count table filled" "$T/err"
	jqe '.drops.count_table_full == 0 and .drops.process_totals_full == 0' "$T/x.json"
	[ "$(jq '[.processes[] | select(.comm == "futexfix")] | length' "$T/x.json")" -eq 40 ]
	# each one's 10 + 3 + 5 timed-out waits, in its stacks as in its row
	for pid in $(jq '.processes[] | select(.comm == "futexfix") | .pid' "$T/x.json"); do
		s=$(jq --argjson p "$pid" '[.sites[] | select(.pid == $p) | .timeouts] | add // 0' \
			"$T/x.json")
		r=$(jq --argjson p "$pid" '.processes[] | select(.pid == $p) | .timeouts' "$T/x.json")
		[ "$s" -eq 18 ] && [ "$r" -eq 18 ] || { echo "futexfix $pid: $s in stacks, $r in its row"; false; }
	done
	! grep -q 'stack lost' "$T/x.json" || false
}

@test "lock: 64 futexes met 40 ms apart at --max-locks 32: each in the summary, its 2 waits" {
	run "$EBPROF" lock -v --user-only --max-locks 32 -o "$T/x.json" -- "$FIX/manylocks" 64 2 40
	[ "$status" -eq 0 ]
	[[ "$output" == *"done 128"* ]]
	read -r base stride n < <(echo "$output" |
		sed -n 's/^futexes \(0x[0-9a-f]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p')
	[ "$n" -eq 64 ]
	# the per-lock table was taken out as it filled (the fixture's 64 do not fit in 32)
	[[ "$output" == *"count table filled"* ]]
	jqe '.drops.lock_table_full == 0' "$T/x.json"
	jq -r '.groups[] | .labels.address + " " + .labels.class + " \(.contentions) \(.nowait)"
		+ " \(.timeouts)"' "$T/x.json" > "$T/locks"
	for i in $(seq 0 $((n - 1))); do
		printf '0x%x futex_wait 2 0 0\n' $((base + i * stride))
	done > "$T/want"
	# each futex of the fixture once, with its 2 woken waits (the fixture's own count): one
	# row a lock, its numbers summed over the spills
	[ "$(grep -c -x -F -f "$T/want" "$T/locks")" -eq 64 ] || {
		grep -v -x -F -f "$T/locks" "$T/want" | head; false; }
	# named by its symbol, as gdb has it, whichever take read it
	jq -r '.groups[] | .labels.address + "\t" + .labels.lock' "$T/x.json" > "$T/names"
	for i in $(seq 0 $((n - 1))); do
		off=$((i * stride))
		printf '0x%x\tfutexes%s in manylocks\n' $((base + off)) \
			"$([ "$off" -eq 0 ] || printf '+0x%x' "$off")"
	done > "$T/want_names"
	[ "$(grep -c -x -F -f "$T/want_names" "$T/names")" -eq 64 ]
	# the same waits under their leaves in the stacks
	cut -f 2 "$T/want_names" | sed 's/$/ (futex_wait)/' > "$T/leaves"
	jq -r '.sites[] | "\(.frames[0].function)\t\(.contentions)"' "$T/x.json" > "$T/sites"
	[ "$(awk -F '\t' 'NR == FNR { w[$0] = 1; next } ($1 in w) { n += $2 } END { print n + 0 }' \
		"$T/leaves" "$T/sites")" -eq 128 ]
}

# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "lock: threads mapping and unmapping in parallel: kernel contentions within 5% of bpftrace's lock:contention_begin, on their mmap_lock" {
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:lock:contention_begin /comm == "mmaplockfix"/ { @b[0] = count(); }
		tracepoint:lock:contention_end /comm == "mmaplockfix"/ { @e[0] = count(); }'
	run "$EBPROF" lock -q --kernel-only -o "$T/x.json" -o "$T/x.txt" -- "$FIX/mmaplockfix" 4 20000
	[ "$status" -eq 0 ]
	stop_bpftrace
	[[ "$output" == *"done"* ]]
	pid=$(jq '[.processes[] | select(.comm == "mmaplockfix") | .pid][0]' "$T/x.json")
	got=$(jq '.info.kernel_contentions | tonumber' "$T/x.json")
	[ "$(bt b 0)" -gt 100 ]
	within "$got" "$(bt b 0)" 5
	# and by stack: the process's samples hold every one
	within "$(jq --argjson p "$pid" '[.sites[] | select(.pid == $p) | .contentions] | add' \
		"$T/x.json")" "$(bt b 0)" 5
	# its mmap_lock, named by what it is, taken for writing by munmap and mmap
	jq -e --arg l "mmap_lock of $pid" '[.groups[] | select(.labels.lock == $l)
		| .labels.class] | index("rwsem:W") != null' "$T/x.json" >/dev/null
	jq -e --arg l "mmap_lock of $pid (rwsem:W)" '[.sites[] | select(.frames[0].function == $l)
		| select(any(.frames[]; .function == "__vm_munmap" or .function == "vm_mmap_pgoff"))
		| select(any(.frames[]; .function == "worker"))] | length > 0' "$T/x.json" >/dev/null
	# the tracing machinery's frames are left out: the first kernel frame is the lock's slow
	# path (a contention inside a BPF program, bpftrace's for one, has its frames further up)
	jqe '[.sites[] | .frames[1] | select(.kernel) | .function
		| test("^(bpf_|__bpf_trace|bpf_trace_run)")] | any | not' "$T/x.json"
	grep -qE "^  mmap_lock of $pid +rwsem:W +mmaplockfix\[$pid\] +0x[0-9a-f]+ +[0-9]+ " "$T/x.txt"
}

@test "lock: every output format is written, and go tool pprof reads it as a contention profile" {
	run "$EBPROF" lock -q -o "$T/x.txt" -o "$T/x.json" -o "$T/x.pb.gz" -o "$T/x.folded" \
		-o "$T/x.svg" -o "$T/x.html" -o "$T/x.speedscope.json" -o "$T/x.csv" \
		-- "$FIX/mutexfix" 4 5000
	[ "$status" -eq 0 ]
	for f in x.txt x.json x.pb.gz x.folded x.svg x.html x.speedscope.json x.csv; do
		[ -s "$T/$f" ] || { echo "$f is empty" >&2; false; }
	done
	grep -q "(futex_wait) " "$T/x.folded"
	grep -q "futex_wait" "$T/x.svg"
	grep -q "futex_wait" "$T/x.html"
	jq -e . "$T/x.speedscope.json" >/dev/null
	jqe '.sample_types | map(.type) == ["contentions", "delay", "timeouts", "timeout_delay"]' "$T/x.json"
	jqe '.sample_types | map(.unit) == ["count", "nanoseconds", "count", "nanoseconds"]' "$T/x.json"
	jqe '.default_sample_type == "delay"' "$T/x.json"
	jqe '.groups | length > 0' "$T/x.json"
	if [ ! -x "$PPROF" ]; then
		skip "go tool pprof not installed ($PPROF): apt-get install golang-1.19-go"
	fi
	run "$PPROF" -symbolize=none -raw "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "contentions/count delay/nanoseconds"
	run "$PPROF" -symbolize=none -sample_index=contentions -top "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "futex_wait"
	run "$EBPROF" report "$T/x.pb.gz" -o "$T/y.folded"
	[ "$status" -eq 0 ]
	diff "$T/x.folded" "$T/y.folded"
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "lock: -p traces a running process's waits; -a sees it among every process, ebprof excepted" {
	bg "$FIX/mutexfix" 4 2000000 > "$T/fix.out"
	fix=$BG
	wait_for "$T/fix.out" "^mutex "
	run "$EBPROF" lock -q -p "$fix" -d 1 -o "$T/p.json"
	[ "$status" -eq 0 ]
	jq -e --argjson p "$fix" '[.sites[] | select(.pid == $p
		and (.frames[0].function | endswith("(futex_wait)"))) | .contentions] | add > 0' "$T/p.json" >/dev/null
	jq -e --argjson p "$fix" '[.processes[].pid] == [$p]' "$T/p.json" >/dev/null
	"$EBPROF" lock -q -a -d 1 -o "$T/a.json" &
	ebp=$!
	BG_PIDS+=("$ebp")
	wait "$ebp"
	jq -e --argjson p "$fix" '[.sites[] | select(.pid == $p) | .contentions] | add > 0' "$T/a.json" >/dev/null
	jq -e --argjson e "$ebp" '[.processes[] | select(.pid == $e)] | length == 0' "$T/a.json" \
		>/dev/null
	jqe '.drops | has("process_notes_lost")' "$T/a.json"
	kill "$fix"
}

# a run whose futex calls never returned EAGAIN does not say "0 calls returned EAGAIN"
@test "lock: no EAGAIN return is said as none, not as 0 calls" {
	run "$EBPROF" lock -q -o "$T/s.txt" -- sleep 0.2
	[ "$status" -eq 0 ]
	! grep -q " 0 calls returned EAGAIN" "$T/s.txt" || false
	grep -q "would be counted apart, as NO WAIT: none did" "$T/s.txt"
}

@test "lock: bad input is a usage error or a clear failure; a kernel without the lock tracepoints is said" {
	run "$EBPROF" lock --kernel-only --user-only -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kernel-only and --user-only exclude each other"* ]]
	run "$EBPROF" lock --max-stacks 0 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--max-stacks takes a number of stacks from 1 to"* ]]
	run "$EBPROF" lock --max-locks lots -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--max-locks takes a number of locks from 1 to"* ]]
	run "$EBPROF" lock --value bytes -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"contentions, delay"* ]]
	run "$EBPROF" lock -p 4194304 -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"no such process"* ]]
	run "$EBPROF" lock --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--kernel-only"* ]]
	# as on a kernel before 5.19: kernel locks asked for are a failure that says why...
	EBPROF_TEST_NO_LOCK_TRACEPOINTS=1 run "$EBPROF" lock --kernel-only -o "$T/k.json" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"this kernel has no lock:contention_begin and contention_end tracepoints (Linux 5.19 added them): kernel lock contention cannot be traced here"* ]]
	[ ! -e "$T/k.json" ]
	# ...and by default futex waits are traced alone, said on stderr and in the report
	EBPROF_TEST_NO_LOCK_TRACEPOINTS=1 run "$EBPROF" lock -o "$T/u.json" -- "$FIX/mutexfix" 4 2000
	[ "$status" -eq 0 ]
	[[ "$output" == *"only futex waits are traced, kernel locks are not"* ]]
	jqe '.info.tracepoints | startswith("sys_enter")' "$T/u.json"
	jqe '.info.futex_waits | tonumber > 0' "$T/u.json"
	jqe '[.notes[] | select(contains("kernel locks were not traced"))] | length == 1' "$T/u.json"
	assert_no_probes '^(lock_begin|lock_end|futex_enter|futex_exit)$'
}

# alone: -a: the whole machine; it waits for a futex_exit program by name
# bats test_tags=alone
@test "lock: nothing is left attached after Ctrl-C" {
	"$EBPROF" lock -q -a -o "$T/x.json" 2>"$T/err" &
	ebp=$!
	BG_PIDS+=("$ebp")
	for _ in $(seq 100); do
		[ -n "$(bpftool prog show name futex_exit 2>/dev/null)" ] && break
		sleep 0.1
	done
	sleep 0.3
	kill -INT "$ebp"
	wait "$ebp"
	[ -s "$T/x.json" ]
	assert_no_probes '^(lock_begin|lock_end|futex_enter|futex_exit)$'
}

@test "lock: a PI mutex's waits are futex_lock_pi, counted once (no rtmutex contention is reported for them)" {
	run "$EBPROF" lock -q -o "$T/pi.json" -- "$FIX/mutexfix" 4 3000 pi
	[ "$status" -eq 0 ]
	mu=$(sed -n 's/^mutex //p' <<< "$output")
	jq -r '.groups[] | "\(.labels.lock) \(.labels.class) \(.contentions)"' "$T/pi.json"
	jq -e --arg mu "$mu" '[.groups[] | select(.labels.address == $mu)]
		| length == 1 and .[0].labels.class == "futex_lock_pi" and .[0].contentions > 0' \
		"$T/pi.json"
	jqe '[.groups[] | select(.labels.class == "rtmutex")] | length == 0' "$T/pi.json"
	# the note said a PI futex's wait was also its rtmutex's: counted twice, it is not
	jqe '[.notes[] | select(test("rtmutex"))] | length == 0' "$T/pi.json"
}

@test "lock: a deadlock is two waits going on when tracing stops, each counted up to the stop under its stack" {
	# the two threads wait from the start, forever; tracing stops after 1 s, the fixture exits
	# at 3 s. They were "contentions 0, delay 0" (a note said 2 waits were in no number)
	run "$EBPROF" lock -q -d 1 -o "$T/x.json" -o "$T/x.txt" -- "$FIX/deadlock" 3
	[ "$status" -eq 0 ]
	a=$(sed -n 's/^a //p' <<< "$output")
	b=$(sed -n 's/^b //p' <<< "$output")
	jq -r '.groups[] | "\(.labels.lock) \(.labels.class) \(.contentions) \(.delay_ns)"' "$T/x.json"
	# one wait on each mutex, as long as the run (at most), none ended
	for m in "$a" "$b"; do
		jq -e --arg a "$m" '[.groups[] | select(.labels.address == $a)] | length == 1
			and .[0].contentions == 1 and .[0].delay_ns > 0' "$T/x.json"
	done
	jqe '[.groups[] | select(.labels.class | startswith("futex")) | .delay_ns] | all(. <= 1500000000)' "$T/x.json"
	# under the stacks where they began: b's wait in second_b under first_a, a's the other way
	jqe '[.sites[] | select(any(.frames[]; .function == "second_b") and any(.frames[]; .function == "first_a"))] | length == 1' "$T/x.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "second_a") and any(.frames[]; .function == "first_b"))] | length == 1' "$T/x.json"
	jqe '[.notes[] | select(startswith("2 waits were going on when tracing stopped: each counts up to the stop"))] | length == 1' "$T/x.json"
	jqe '.info.waiting_at_end == "2"' "$T/x.json"
}


@test "lock -p of a process deadlocked before the attach: its two waits count from the start to the stop, on their mutexes" {
	# before, nothing: the waits began before the attach, and no futex call was seen
	bg "$FIX/deadlock" 30 > "$T/dl.out"
	wait_for "$T/dl.out" '^b '
	sleep 0.2
	a=$(sed -n 's/^a //p' "$T/dl.out")
	b=$(sed -n 's/^b //p' "$T/dl.out")
	run "$EBPROF" lock -q -p "$BG" -d 1 -o "$T/x.json" -o "$T/x.txt"
	[ "$status" -eq 0 ]
	cat "$T/x.txt"
	dur=$(jq .duration_ns "$T/x.json")
	# one wait on each mutex (named by its symbol), from the run's start to its end exactly
	for m in "$a" "$b"; do
		jq -e --arg a "$m" --argjson d "$dur" '[.groups[] | select(.labels.address == $a)]
			| length == 1 and .[0].contentions == 1 and .[0].delay_ns == $d' "$T/x.json"
	done
	jqe '[.groups[] | .labels.lock] | sort == ["a in deadlock", "b in deadlock"]' "$T/x.json"
	# their user stacks were not seen: said, never another stack
	jqe '[.sites[] | select(.contentions > 0)] | length == 2 and
	     all(.[]; any(.frames[]; .function == "[user stack not seen]"))' "$T/x.json"
	jqe '.info.begun_before_start == "2" and .info.waiting_at_end == "2"' "$T/x.json"
	jqe '[.notes[] | select(startswith("2 futex waits were already going on when tracing started"))] | length == 1' "$T/x.json"
}

@test "lock -p: a futex wait begun before the attach that ends while tracing has its user stack, read at its return" {
	# before, [user stack not seen]: the stack was taken at a wait's entry only, and the task
	# iterator that finds a wait going on cannot read another task's user stack
	mkfifo "$T/in"
	exec 7<>"$T/in"
	# (not bg: a command put in the background there reads /dev/null)
	"$FIX/lockbegun" <&7 > "$T/lb.out" &
	BG=$!
	BG_PIDS+=("$BG")
	wait_for "$T/lb.out" '^waiting '
	tid=$(sed -n 's/^waiting //p' "$T/lb.out")
	held=$(sed -n 's/^held //p' "$T/lb.out")
	# the waiter is asleep in its futex call before ebprof starts
	for _ in $(seq 200); do
		[ "$(cut -d' ' -f1 "/proc/$BG/task/$tid/syscall")" = 202 ] && break
		sleep 0.05
	done
	[ "$(cut -d' ' -f1 "/proc/$BG/task/$tid/syscall")" = 202 ]
	"$EBPROF" lock -v -q --user-only -p "$BG" -o "$T/x.json" -o "$T/x.txt" 2> "$T/err" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/err" "tracing PID $BG's futex waits" 30
	echo go >&7
	wait "$eb"
	exec 7>&-
	grep -q '^done' "$T/lb.out"
	cat "$T/x.txt"
	jqe '.info.begun_before_start == "1"' "$T/x.json"
	jq -c '.sites[] | [.contentions, [.frames[].function]]' "$T/x.json"
	# its one wait, on the mutex, under the function that waited, called from the thread
	jq -e --arg a "$held" '[.groups[] | select(.labels.address == $a)]
		| length == 1 and .[0].contentions == 1 and .[0].labels.lock == "held in lockbegun"' \
		"$T/x.json" >/dev/null
	jqe '[.sites[] | select(.frames[0].function == "held in lockbegun (futex_wait)")]
		| length == 1 and .[0].contentions == 1
		  and ([.[0].frames[].function] | index("wait_here") as $w
		       | $w != null and .[$w + 1] == "waiter")' "$T/x.json"
	jqe '[.sites[] | .frames[] | select(.function == "[user stack not seen]")] | length == 0' "$T/x.json"
}

@test "lock -p: a 32-bit futex wait going on before the attach is seen on its futex (ia32 numbers, ebx)" {
	need_ia32
	bg "$FIX/compat32" wait > "$T/w.out"
	wait_for "$T/w.out" '^waiting '
	sleep 0.2
	addr=$(sed -n 's/^waiting //p' "$T/w.out")
	run "$EBPROF" lock -q -p "$BG" -d 1 -o "$T/x.json"
	[ "$status" -eq 0 ]
	jq -c '[.groups[] | {lock: .labels.lock, address: .labels.address, contentions}]' "$T/x.json"
	jq -e --arg a "$addr" '[.groups[] | select(.labels.address == $a)] | length == 1
		and .[0].contentions == 1' "$T/x.json"
	jqe '.info.begun_before_start == "1"' "$T/x.json"
}

# A user lock named by where it lives, each against an independent oracle: gdb's `info symbol`
# on the program's file (at the address less the program's load address, from its maps) for
# the globals, the process's maps for the rest. Before, each was "futex 0xADDR" alone.
@test "lock: user locks are named by where they live: globals by symbol (sym+off in an object) as gdb has them, the heap, main's stack, a thread's stack and its thread, a file's shared mapping at its offset" {
	mkfifo "$T/in"
	"$EBPROF" lock -q --user-only -d 2 -o "$T/x.json" -o "$T/x.txt" -- \
		"$FIX/locknamefix" "$T/shm" hold < "$T/in" > "$T/out" 2>&1 &
	ebp=$!
	BG_PIDS+=("$ebp")
	# the fixture's stdin open until the report is written: its end lets the fixture go
	bg sleep 60 > "$T/in"
	hold=$BG
	wait_for "$T/out" "^done$"
	v() { sed -n "s/^$1 //p" "$T/out"; }
	pid=$(v pid)
	cp "/proc/$pid/maps" "$T/maps"
	# the report is written at the end of -d 2, the fixture (and its holder thread) still there
	wait_for "$T/x.txt" "^Top " 20
	kill "$hold"
	wait "$ebp"
	jq -r '.groups[] | "\(.labels.lock) | \(.labels.address) \(.labels.class) \(.contentions)"' \
		"$T/x.json"
	name() { jq -r --arg a "$1" '.groups[] | select(.labels.address == $a) | .labels.lock' \
		"$T/x.json"; }
	waits() { jq --arg a "$1" '.groups[] | select(.labels.address == $a) | .contentions' \
		"$T/x.json"; }
	base=$(awk -v f="$FIX/locknamefix" '$6 == f && $3 == "00000000" { split($1, r, "-");
		print r[1]; exit }' "$T/maps")
	[ -n "$base" ]
	# gdb: "big_lock in section .bss", "counters + 16 in section .data"
	for g in big_lock counters; do
		a=$(v "$g")
		sym=$(gdb -batch -ex "info symbol $(printf '0x%x' $((a - 0x$base)))" \
			"$FIX/locknamefix" | sed -n 's/ in section .*//p' |
			awk '{ if ($2 == "+") printf "%s+0x%x\n", $1, $3; else print $1 }')
		echo "$g $a: gdb says $sym, ebprof $(name "$a")"
		[ -n "$sym" ]
		[ "$(name "$a")" = "$sym in locknamefix" ]
	done
	[ "$(name "$(v counters)")" = "counters+0x10 in locknamefix" ]
	# the rest against the maps: which mapping holds the address
	in_map() {
		local range perms off dev ino path
		while read -r range perms off dev ino path; do
			if (($1 >= 0x${range%-*} && $1 < 0x${range#*-})); then
				[ "$path" = "$2" ] && echo y || echo "$range $perms $path"
				return
			fi
		done < "$T/maps"
	}
	[ "$(in_map "$(v heap)" "[heap]")" = y ]
	[ "$(name "$(v heap)")" = "futex $(v heap) in [heap]" ]
	[ "$(in_map "$(v local)" "[stack]")" = y ]
	[ "$(name "$(v local)")" = "futex $(v local) in [stack]" ]
	[ "$(in_map "$(v thread)" "")" = y ]
	[ "$(name "$(v thread)")" = "futex $(v thread) in [stack] of thread $(v holder)" ]
	[ "$(in_map "$(v shared)" "$T/shm")" = y ]
	v_shared_page=$(printf '%x' $(($(v shared) - 0x40)))
	# a shared mapping of the file from its start: the futex at its offset 0x40
	grep -E "^${v_shared_page}-[0-9a-f]+ rw-s 00000000 .* $T/shm\$" "$T/maps"
	[ "$(name "$(v shared)")" = "futex $T/shm+0x40" ]
	# each contended as often as the fixture made it
	[ "$(waits "$(v big_lock)")" -eq 3 ]
	[ "$(waits "$(v counters)")" -eq 2 ]
	[ "$(waits "$(v heap)")" -eq 4 ]
	[ "$(waits "$(v local)")" -eq 2 ]
	[ "$(waits "$(v thread)")" -eq 2 ]
	[ "$(waits "$(v shared)")" -eq 5 ]
	# the stacks' leaves and the text table name them the same
	jqe '[.sites[] | select(.frames[0].function == "big_lock in locknamefix (futex_wait)")
		| select(any(.frames[]; .function == "contend")) | .contentions] | add == 3' "$T/x.json"
	grep -qE "^  big_lock in locknamefix +futex_wait +locknamefix\[$pid\] +$(v big_lock) +3 " \
		"$T/x.txt"
}
