#!/usr/bin/env bats
# ebprof stacks: exact event counts at tracepoints and user functions, on the openloop fixture
# (open_a opens N times, open_b 2N times, marker runs N times; each through its own frame).

load helpers

# The events of a site's stacks whose frames include FUNCTION, summed (jq over the JSON report).
events_through() {
	jq --arg f "$2" '[.sites[] | select(any(.frames[]; .function == $f)) | .events] | add // 0' "$1"
}

@test "stacks: syscalls:sys_enter_openat counts the fixture's openat calls exactly" {
	run "$EBPROF" stacks -e syscalls:sys_enter_openat -o "$T/out.json" -- "$FIX/openloop" 50
	[ "$status" -eq 0 ]
	[ "$(events_through "$T/out.json" open_a)" -eq 50 ]
	[ "$(events_through "$T/out.json" open_b)" -eq 100 ]
	# every stack ends (leaf) in the event's name, then the kernel's syscall path
	jqe '[.sites[] | select(.frames[0].function != "syscalls:sys_enter_openat")] | length == 0' \
		"$T/out.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "open_a"))
	      | select(any(.frames[]; .function == "do_syscall_64") and
		       any(.frames[]; .function == "main"))] | length > 0' "$T/out.json"
}

# A launched program's libraries are mapped by its loader after the exec stop's look at its
# mappings; the BPF side's note of their code (unwind_stale) has them read later, and a
# program that execs meanwhile (env before grep) had its libc frames in no look: its stacks
# ended in [truncated] at the leaf's caller (unwind_outside_code; 1 bench run in 9 on grep
# under env). EBPROF_TEST_UNWIND_NO_NOTES leaves the notes unanswered, as a busy collector
# does, so the run depends on the hold at the loader's hook alone.
@test "stacks: a launched program's libc frames are whole when it execs right after its events (held at its loader's hook)" {
	EBPROF_TEST_UNWIND_NO_NOTES=1 run "$EBPROF" stacks -q -e syscalls:sys_enter_openat \
		-o "$T/x.json" -- "$FIX/execopen" 3 /bin/true
	[ "$status" -eq 0 ]
	[ "$(events_through "$T/x.json" opens_then)" -eq 3 ]
	# the user frames of its one site, leaf first: libc's open to ld.so's... _start
	run jq -r '[.sites[] | select(any(.frames[]; .function == "opens_then"))
		    | [.frames[] | select((.kernel // false) == false and (.synthetic // false) == false)
		       | .function] | join(" ")] | join("|")' "$T/x.json"
	[ "$output" = "open opens_then main __libc_start_call_main __libc_start_main _start" ]
	jqe '.drops.unwind_outside_code == 0' "$T/x.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "[truncated]"))] | length == 0' "$T/x.json"
}

# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "stacks: a syscall event by the kernel's own name (sys_enter_newuname: uname(2)) counts as bpftrace does" {
	# the table of syscall numbers comes from this build's headers, which call it uname;
	# tracefs (and -l) call it newuname: refused before, its "did you mean" naming itself
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:syscalls:sys_enter_newuname /comm == "uname"/ { @n = count(); }'
	run "$EBPROF" stacks -q -e syscalls:sys_enter_newuname -o "$T/out.json" -- uname -r
	[ "$status" -eq 0 ]
	stop_bpftrace
	n=$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$T/bt.out")
	echo "ebprof $(jq '[.sites[].events] | add // 0' "$T/out.json"), bpftrace $n"
	[ "${n:-0}" -ge 1 ]
	jqe "[.sites[].events] | add == $n" "$T/out.json"
	jqe '[.sites[] | select(.frames[0].function != "syscalls:sys_enter_newuname")] | length == 0' \
		"$T/out.json"
}

# ebprof holds a launched tree's processes in ptrace stops at each fork, exec and exit (to
# follow the tree): their switches into those stops are ebprof's, not the program's. Before,
# sched_switch counted them, under ptrace_stop (13 of a run like this one's). The bound:
# bpftrace's count of the tree's switch-outs into a traced stop (prev_state TASK_TRACED),
# which also has the stops before a process is ebprof's target (a launched command's before
# its exec, a child's first), events ebprof counts for no process.
# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "stacks: sched_switch leaves out a launched tree's ptrace stops, which are ebprof's (at most bpftrace's count of them), and says how many" {
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:sched:sched_switch /args->prev_state & 8/ { @t[args->prev_pid] = count(); }'
	run "$EBPROF" stacks -q -e sched:sched_switch -o "$T/s.folded" -o "$T/s.json" -- \
		sh -c "/bin/true; /bin/true; sleep 0.1"
	[ "$status" -eq 0 ]
	stop_bpftrace
	! grep -q 'ptrace_stop' "$T/s.folded" || false
	# the tree's threads are its processes (single-threaded): bpftrace's by their pids
	held=0
	for p in $(jq '.processes[].pid' "$T/s.json"); do
		held=$((held + $(bt t "$p")))
	done
	n=$(jq -r .info.held_by_ebprof "$T/s.json")
	echo "held_by_ebprof $n, bpftrace $held"
	# each exec and exit of the three programs at least
	[ "$n" -ge 6 ]
	[ "$n" -le "$held" ]
	jqe '[.notes[] | select(test("events of the traced threads going into a ptrace stop of ebprof"))] | length == 1' "$T/s.json"
}

# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "stacks: 32-bit system calls (int \$0x80) are not the x86_64 call of their number, but said" {
	# compat32: 7 ia32 write(2)s (4: x86_64's stat), 10 getegid32 (202: futex), 3 ia32 futex
	# waits, 5 x86_64 writes; the kernel's syscall tracepoints skip 32-bit calls (bpftrace
	# counts no stat). Before: stat 7, futex 10 at entry and exit, under asm_int80_emulation
	need_ia32
	run "$EBPROF" stacks -q -e syscalls:sys_enter_stat -e syscalls:sys_enter_write \
		-e syscalls:sys_enter_futex -e syscalls:sys_exit_futex -o "$T/out.json" \
		-- "$FIX/compat32"
	[ "$status" -eq 0 ]
	[[ "$output" == *"compat32 write32 7 getegid32 10 futex32 3 write64 5"* ]]
	jq -c '.processes[0].calls, .info' "$T/out.json"
	jqe '.processes[0].calls | (.["syscalls:sys_enter_stat"] // 0) == 0 and
	     (.["syscalls:sys_enter_futex"] // 0) == 0 and
	     (.["syscalls:sys_exit_futex"] // 0) == 0' "$T/out.json"
	[ "$(events_through "$T/out.json" write64)" -eq 5 ]
	for f in write32 getegid32 futex32; do
		[ "$(events_through "$T/out.json" "$f")" -eq 0 ]
	done
	# counted apart, and said
	jqe '.info.compat_syscalls == "20"' "$T/out.json"
	jqe 'any(.notes[]; test("^20 32-bit system calls .* no syscalls: event counts them"))' \
		"$T/out.json"
	# at sys_exit only, each is counted once too
	run "$EBPROF" stacks -q -e syscalls:sys_exit_stat -o "$T/exit.json" -- "$FIX/compat32"
	[ "$status" -eq 0 ]
	jqe '.info.compat_syscalls == "20" and ([.sites[].events] | add // 0) == 0' "$T/exit.json"
}

# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "stacks: the whole process's openat count equals bpftrace's on the same run" {
	# ready once its probes are attached (BEGIN runs after them); stopped by SIGINT sent again
	# until it ends (a single one was lost twice in fresh-clone CI runs: helpers.bash)
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:syscalls:sys_enter_openat /comm == "openloop"/ { @[pid] = count(); }'
	run "$EBPROF" stacks -e syscalls:sys_enter_openat -o "$T/out.json" -- "$FIX/openloop" 20
	[ "$status" -eq 0 ]
	stop_bpftrace
	pid=$(jq '.processes[0].pid' "$T/out.json")
	want=$(sed -n "s/^@\[$pid\]: \([0-9]*\)$/\1/p" "$T/bt.out")
	got=$(jq '.processes[0].calls["syscalls:sys_enter_openat"]' "$T/out.json")
	total=$(jq '[.sites[].events] | add' "$T/out.json")
	echo "bpftrace $want, ebprof calls $got, sites $total"
	[ -n "$want" ]
	[ "$got" -eq "$want" ]
	[ "$total" -eq "$want" ]
	# the loader's and libc's own opens come on top of the fixture's 60
	[ "$want" -gt 60 ]
}

@test "stacks: a uprobe event (u:PATH:SYMBOL, by bare name and by path) counts exactly" {
	run "$EBPROF" stacks -e u:openloop:marker -e "u:$FIX/openloop:open_a" -o "$T/out.json" \
		-- "$FIX/openloop" 7
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls["u:openloop:marker"] == 7' "$T/out.json"
	[ "$(events_through "$T/out.json" "u:$FIX/openloop:open_a")" -eq 7 ]
	# at a function's entry the caller is still found (its return address at *sp)
	jqe '[.sites[] | select(.frames[0].function == "u:openloop:marker")
	      | [.frames[1].function, .frames[2].function]] == [["marker", "main"]]' "$T/out.json"
}

# alone: bpftrace's uprobes are machine-wide
# bats test_tags=alone
@test "stacks: u:PATH:SYMBOL takes a C++ name as written (with or without its parameters); bpftrace's spellings and offsets get a sentence" {
	# sym_cxx calls ebprof_test::Widget::frob(int, char const*) once; before, the spec was cut
	# at the last ':' ("cannot read sym_cxx:ebprof_test::Widget:")
	run "$EBPROF" stacks -q -e 'u:sym_cxx:ebprof_test::Widget::frob' \
		-e 'u:sym_cxx:ebprof_test::Widget::frob(int, char const*)' -o "$T/cx.json" \
		-- "$FIX/sym_cxx" < /dev/null
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls == {"u:sym_cxx:ebprof_test::Widget::frob": 1,
	     "u:sym_cxx:ebprof_test::Widget::frob(int, char const*)": 1}' "$T/cx.json"
	run "$EBPROF" stacks -e tracepoint:syscalls:sys_enter_write -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"is bpftrace's spelling: ebprof writes a tracepoint CATEGORY:NAME"* ]]
	run "$EBPROF" stacks -e uprobe:/bin/true:main -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"u:PATH:SYMBOL (u:libc:malloc)"* ]]
	run "$EBPROF" stacks -e u:sym_cxx:main+4 -- "$FIX/sym_cxx" < /dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"probes a function's entry, not an offset in it"* ]]
}

@test "stacks: u:PATH:SYMBOL probes every function of the name (two static step() in two files): 40 calls, not 30 or 10" {
	run "$EBPROF" stacks -q -e u:dupstatic:step -o "$T/d.json" -o "$T/d.folded" -- "$FIX/dupstatic"
	[ "$status" -eq 0 ]
	[[ "$output" == *"step a 30 b 10"* ]]
	jqe '.processes[0].calls["u:dupstatic:step"] == 40' "$T/d.json"
	# each under its own caller
	grep -q ';main;step;u:dupstatic:step 30$' "$T/d.folded"
	grep -q ';main;other_steps;step;u:dupstatic:step 10$' "$T/d.folded"
	jqe '[.notes[] | select(. == "event u:dupstatic:step: 40 hits in the traced processes, in the 2 functions of that name (each probed)")] | length == 1' "$T/d.json"
}

@test "stacks: a uprobe in a library (u:libc:close) counts every call with its caller" {
	run "$EBPROF" stacks -e u:libc:close -o "$T/out.folded" -- "$FIX/openloop" 4
	[ "$status" -eq 0 ]
	[ "$(grep ';open_a;' "$T/out.folded" | awk '{s += $NF} END {print s}')" -eq 4 ]
	[ "$(grep ';open_b;' "$T/out.folded" | awk '{s += $NF} END {print s}')" -eq 8 ]
}

# A local function of a stripped library is in no table of the library's own: its debug file
# by build-id (libc6-dbg, installed by scripts/install-deps.sh) names it, at the library's
# offsets; before, "no function ... (the object may be stripped)". glibc's
# __libc_start_call_main runs once in a program, calling main.
@test "stacks: a stripped library's local function is probed by its debug file's symbols (u:libc:__libc_start_call_main, once a program)" {
	local libc bid
	libc=$(ldd /bin/true | awk '$1 == "libc.so.6" {print $3}')
	bid=$(readelf -n "$libc" | awk '/Build ID:/ {print $3}')
	[ -f "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] ||
		skip "no debug file for $libc's build-id $bid under /usr/lib/debug (libc6-dbg)"
	readelf -sW "$libc" | awk '{print $8}' | grep -qx __libc_start_call_main &&
		skip "$libc has __libc_start_call_main in its own tables (not stripped)"
	run "$EBPROF" stacks -q -e u:libc:__libc_start_call_main -o "$T/s.folded" -o "$T/s.json" \
		-- /bin/true
	echo "$output"
	[ "$status" -eq 0 ]
	cat "$T/s.folded"
	# once, called by __libc_start_main, under the program
	[ "$(awk '{s += $NF} END {print s}' "$T/s.folded")" -eq 1 ]
	grep -q ';__libc_start_main;__libc_start_call_main;u:libc:__libc_start_call_main 1$' \
		"$T/s.folded"
	jqe '[.notes[] | select(. == "event u:libc:__libc_start_call_main: 1 hit in the traced processes")] | length == 1' "$T/s.json"
}

@test "stacks: u:LIB by bare name finds a library through RUNPATH and LD_LIBRARY_PATH; one never mapped is said, not a 0" {
	# prefixalloc calls pf_malloc twice and pf_free twice, in libprefixalloc.so found through
	# its RUNPATH ($ORIGIN): at the exec only the program and the loader are mapped (0 hits)
	run "$EBPROF" stacks -q -e u:libprefixalloc:pf_malloc -e u:libprefixalloc:pf_free \
		-o "$T/r.json" -- "$FIX/prefixalloc"
	[ "$status" -eq 0 ]
	jqe '[.notes[] | select(. == "event u:libprefixalloc:pf_malloc: 2 hits in the traced processes" or . == "event u:libprefixalloc:pf_free: 2 hits in the traced processes")] | length == 2' "$T/r.json"
	# a copy of the program elsewhere finds it through LD_LIBRARY_PATH
	cp "$FIX/prefixalloc" "$T/pa"
	LD_LIBRARY_PATH="$FIX" run "$EBPROF" stacks -q -e u:libprefixalloc:pf_malloc \
		-o "$T/l.json" -- "$T/pa"
	[ "$status" -eq 0 ]
	jqe '[.notes[] | select(. == "event u:libprefixalloc:pf_malloc: 2 hits in the traced processes")] | length == 1' "$T/l.json"
	# a library only dlopen'ed (by its path) is not found by its bare name: said, not 0 hits
	run "$EBPROF" stacks -q -e u:libdlburn:lib_burn -o "$T/d.json" -- \
		"$FIX/dlburn" "$FIX/libdlburn.so" 0.1
	[ "$status" -eq 0 ]
	[[ "$output" == *"event u:libdlburn:lib_burn: no traced process mapped or needed an object named 'libdlburn', so it was never probed"* ]]
	jqe '[.notes[] | select(startswith("event u:libdlburn:lib_burn: never probed"))] | length == 1' "$T/d.json"
	jqe '[.notes[] | select(test("lib_burn: 0 hits"))] | length == 0' "$T/d.json"
}

# A library upgraded under a running process: maps names the old file "(deleted)", and the
# path names the new file or none. The probe goes on the inode the process maps (0 hits on the
# system's libc, silently, before). The oracle: memfixture's own counts of malloc per site.
@test "stacks: u:libc:malloc -p on a process whose libc was deleted since it started counts its calls" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	start_deleted_libc_fixture 30
	"$EBPROF" stacks -v -e u:libc:malloc -p "$FXPID" -o "$T/out.folded" 2> "$T/eb.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/eb.log" 'u:libc:malloc: uprobe'
	grep -q "u:libc:malloc: uprobe /proc/$FXPID/map_files/" "$T/eb.log"
	kill -USR1 "$FXPID"			# start the work
	wait_for "$FXLOG" 'done' 60
	kill -USR1 "$FXPID"			# end the linger: it exits, ebprof follows
	wait "$eb"
	# the sites that call malloc only themselves (realloc(NULL, n) enters malloc too)
	jq -r '.sites | to_entries[] | select(.value.calls.malloc > 0 and .value.calls.realloc == 0
		and .value.calls.reallocarray == 0) | "\(.key) \(.value.calls.malloc)"' \
		"$T/truth.json" > "$T/want"
	[ "$(wc -l < "$T/want")" -ge 3 ]
	while read -r site n; do
		got=$(grep ";$site;malloc;u:libc:malloc " "$T/out.folded" |
			awk '{s += $NF} END {print s + 0}')
		echo "$site: memfixture $n, ebprof $got"
		[ "$got" -eq "$n" ]
	done < "$T/want"
}

@test "stacks: sched:sched_switch counts the switches of a sleeping process" {
	run "$EBPROF" stacks -e sched:sched_switch -o "$T/out.json" -- sleep 0.3
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls["sched:sched_switch"] >= 1' "$T/out.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "__schedule"))] | length > 0' \
		"$T/out.json"
}

# entryfault: 20 switches in a page fault at entryfault_load's first instruction (offcpu.bats
# says more): the leaf is where the thread was, not the function before it in the text
# alone: a second test's load preempts the fixture in entryfault_wait (a timer interrupt's
# switch there, its leaf entryfault_wait), which the check of its leaves refuses
# bats test_tags=alone
@test "stacks: sched:sched_switch in a page fault at a function's first instruction: that function is the leaf" {
	run "$EBPROF" stacks -e sched:sched_switch -o "$T/out.folded" -o "$T/out.json" -- \
		"$FIX/entryfault" 20 50
	[ "$status" -eq 0 ]
	entryfault_leaf "$T/out.folded" "$T/out.json" events
}

@test "stacks: an unknown event is a usage error that points to -l with close matches" {
	run "$EBPROF" stacks -e sched:sched_swich -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown event 'sched:sched_swich'"* ]]
	[[ "$output" == *"sched:sched_switch"* ]]
	[[ "$output" == *"ebprof stacks -l PATTERN"* ]]
	# a bare (BTF) name is matched against the names without their category (no suggestion
	# before: "sched_swich" was as far from "sched:sched_switch" as from anything)
	run "$EBPROF" stacks -e sched_swich -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown event 'sched_swich'"*"(did you mean sched:sched_switch"* ]]
	run "$EBPROF" stacks -e syscalls:sys_enter_nosuchcall -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"ebprof stacks -l"* ]]
	run "$EBPROF" stacks -e u:openloop:no_such_function -- "$FIX/openloop" 1
	[ "$status" -ne 0 ]
	[[ "$output" == *"no function 'no_such_function'"* ]]
	# a function's typo: the object's closest function
	run "$EBPROF" stacks -e u:libc:mallco -- "$FIX/openloop" 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"no function 'mallco' in "*"libc.so.6 (did you mean malloc?)"* ]]
	# an IFUNC (glibc's strlen, memcpy): its address is the resolver, run once at load
	# (before: 2 'hits' for 1,000 calls of strlen, 0 of memcpy, said nowhere)
	for f in strlen memcpy; do
		run "$EBPROF" stacks -e "u:libc:$f" -- "$FIX/openloop" 1
		[ "$status" -eq 2 ]
		[[ "$output" == *"'$f' in "*"libc.so.6 is an IFUNC: its address is the resolver"* ]]
	done
}

@test "stacks: -l PATTERN lists matching events without a target" {
	run "$EBPROF" stacks -l openat
	[ "$status" -eq 0 ]
	[[ "$output" == *"syscalls:sys_enter_openat"* ]]
	run "$EBPROF" stacks -l 'sched:sched_sw*'
	[ "$status" -eq 0 ]
	[[ "$output" == *"sched:sched_switch"* ]]
	[[ "$output" != *"syscalls:"* ]]
}

@test "stacks: too many events and no event are usage errors" {
	args=()
	for i in $(seq 1 65); do args+=(-e "u:openloop:f$i"); done
	run "$EBPROF" stacks "${args[@]}" -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"at most 64"* ]]
	run "$EBPROF" stacks -- true
	[ "$status" -eq 2 ]
}

@test "stacks: no probe is left behind" {
	run "$EBPROF" stacks -e sched:sched_switch -e syscalls:sys_enter_openat -e u:openloop:marker \
		-o "$T/out.json" -- "$FIX/openloop" 3
	[ "$status" -eq 0 ]
	assert_no_probes '^stacks_'
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "stacks: -a counts every process and kernel threads, ebprof excepted" {
	"$EBPROF" stacks -a -d 1 -e sched:sched_switch -o "$T/out.json" &
	self=$!
	wait "$self"
	jqe '.processes | length > 0' "$T/out.json"
	# (other ebprof runs on the machine are fair game: only this one's pid is excepted)
	jqe "[.processes[] | select(.pid == $self)] | length == 0" "$T/out.json"
	# a kernel thread (or the idle task) has a kernel stack and no user frames
	jqe '[.processes[] | select(.pid == 0 or (.comm | test("^(kworker|ksoftirq|rcu|migration)")))]
	     | length > 0' "$T/out.json"
}

# A launched shell's background job opens /dev/null as the shell, then execs: without -a its name
# stayed the shell's (the exec program was loaded only with -a), in every output, though its
# JSON cmdline said openloop; bpftrace sees the same process as sh once, then as openloop
# alone: bpftrace's oracle: machine-wide tracepoints
# bats test_tags=alone
@test "stacks: a launched shell's child that opens before its exec is named by its program" {
	start_bpftrace 'BEGIN { printf("ready\n"); }
		tracepoint:syscalls:sys_enter_openat /comm == "sh" || comm == "openloop"/
		{ @[pid, comm] = count(); }'
	run "$EBPROF" stacks -q -e syscalls:sys_enter_openat -o "$T/out.json" -o "$T/out.folded" \
		-o "$T/out.txt" -- sh -c "$FIX/openloop 10; $FIX/openloop 20 & wait; true"
	[ "$status" -eq 0 ]
	stop_bpftrace
	jq -c '.processes[] | {pid, comm, cmdline, calls}' "$T/out.json"
	# the background job: bpftrace saw its pid under both names
	bg=$(jq '.processes[] | select(.cmdline | endswith("openloop 20")) | .pid' "$T/out.json")
	[ -n "$bg" ]
	grep -q "^@\[$bg, sh\]: " "$T/bt.out"
	grep -q "^@\[$bg, openloop\]: " "$T/bt.out"
	# each process: its events exactly bpftrace's for its pid, under whatever name; its name the
	# program it ran last
	jqe '.processes | length == 3' "$T/out.json"
	for pid in $(jq '.processes[].pid' "$T/out.json"); do
		want=$(awk -v p="$pid" -F'[][, :]+' '$2 == p { n += $NF } END { print n + 0 }' \
			"$T/bt.out")
		got=$(jq ".processes[] | select(.pid == $pid)
			 | .calls[\"syscalls:sys_enter_openat\"]" "$T/out.json")
		sites=$(jq "[.sites[] | select(.pid == $pid) | .events] | add" "$T/out.json")
		folded=$(awk '{ n += $NF } END { print n + 0 }' \
			<(grep "^[^;]* ($pid);" "$T/out.folded"))
		comm=$(jq -r ".processes[] | select(.pid == $pid) | .comm" "$T/out.json")
		cmd=$(jq -r ".processes[] | select(.pid == $pid) | .cmdline" "$T/out.json")
		echo "pid $pid $comm: bpftrace $want, ebprof $got, sites $sites, folded $folded"
		[ "$want" -gt 0 ]
		[ "$got" -eq "$want" ]
		[ "$sites" -eq "$want" ]
		[ "$folded" -eq "$want" ]
		case "$cmd" in
		*"openloop 10" | *"openloop 20") want_comm=openloop ;;
		*) want_comm=sh ;;
		esac
		[ "$comm" = "$want_comm" ]
		# every folded stack of the process under its name
		! grep "^[^;]* ($pid);" "$T/out.folded" | grep -v "^$want_comm ($pid);" || false
	done
	grep -E '^  openloop +2 ' "$T/out.txt"
	grep -E '^  sh +1 ' "$T/out.txt"
}

# -a: a shell's child that opens its redirection before it execs was named by that first event,
# the shell's name (200 execs of wc counted as the script's: bpftrace counts 1); it takes its new
# program's name at the exec, and a new process's mappings are read when its note wakes ebprof
# (read each second, 99.6% of a shell loop's stacks were bare addresses)
# alone: -a: the whole machine
# bats test_tags=alone
@test "stacks -a: a process is named by the program it exec'd; the events of short ones symbolized" {
	# (each openloop calls marker 5,000 times after 15,000 openat calls: ~13 ms)
	printf '#!/bin/sh\nfor i in $(seq 40); do "%s" 5000 > /dev/null; done\n' "$FIX/openloop" \
		> "$T/redir.sh"
	chmod +x "$T/redir.sh"
	"$EBPROF" stacks -a -v -e sched:sched_process_exec -e syscalls:sys_enter_openat \
		-e "u:$FIX/openloop:marker" -d 120 --max-stacks 65536 \
		-o "$T/out.json" -o "$T/out.folded" 2> "$T/err" &
	e=$!
	wait_for "$T/err" 'sched:sched_process_exec: '
	sleep 0.5
	"$T/redir.sh"
	# ended when the script is done (a fixed -d cut it short on a loaded machine)
	sleep 0.5
	kill -INT "$e"
	wait "$e"
	# each openloop execs once: 40 execs under its name, one under the script's
	jqe '[.processes[] | select(.comm == "openloop") | .calls["sched:sched_process_exec"]]
	     | add == 40' "$T/out.json"
	jqe '[.processes[] | select(.comm == "redir.sh") | .calls["sched:sched_process_exec"]]
	     | add == 1' "$T/out.json"
	# the marker: a uprobe in the process's own code, named under main (one not named: the
	# process gone before its mappings were read, unwind_no_mappings)
	n=$(awk '/^openloop [(]/ && /u:.*openloop:marker/ { n += $NF } END { print n + 0 }' \
		"$T/out.folded")
	ok=$(awk '/^openloop [(]/ && /;main;.*u:.*openloop:marker/ { n += $NF } END { print n + 0 }' \
		"$T/out.folded")
	echo "marker events $n, named under main $ok"
	[ "$n" -eq 200000 ]
	[ "$ok" -ge 190000 ]
}

# -a over a while: ended processes keep their keys in the count table to the end, so a full
# table lost events, from the per-process counts too (a 14 s shell loop: 32% of its events);
# three quarters used, the counts are taken into the profile and counting goes on
# alone: -a: the whole machine
# bats test_tags=alone
@test "stacks -a: a count table filling up is taken into the profile: every event counted (--max-stacks 256)" {
	# stopped once the 300 are done (a fixed -d 5 waited for nothing, or cut them short)
	"$EBPROF" stacks -a -v --max-stacks 256 -e sched:sched_process_exec -d 120 \
		-o "$T/out.json" 2> "$T/err" &
	e=$!
	wait_for "$T/err" 'sched:sched_process_exec: '
	sleep 0.5
	for i in $(seq 300); do "$FIX/openloop" 1 > /dev/null; done
	kill -INT "$e"
	wait "$e"
	grep "count table filled" "$T/err"
	jqe '.drops.counts_full == 0' "$T/out.json"
	hits=$(jq -r '.notes[] | capture("sched:sched_process_exec: (?<n>[0-9]+) hits").n' \
		"$T/out.json")
	echo "hits $hits"
	[ "$hits" -ge 300 ]
	jq -e --argjson h "$hits" '[.processes[] | .calls["sched:sched_process_exec"] // 0] | add == $h' \
		"$T/out.json"
}

# The kernel gave a PID to another process during an -a run: stacks' rows are by tgid, and took
# the first program's name with nothing said (openloop's and openlb's markers under
# "openloop"). Said now, on the row (named openlb, the last program: a link to openloop, the
# same file probed) and in the run's notes; the row counts both programs' calls (2 + 3).
# alone: -a, and a PID given again (other processes must not take it)
# bats test_tags=alone
@test "stacks -a: a PID used again by another program is said, on its row and in a note" {
	ln -s "$FIX/openloop" "$T/openlb"
	pidreuse_under '^ebprof: u:.*: uprobe ' \
		stacks -a -v -q -e "u:$FIX/openloop:marker" -d 60 -o "$T/x.json" -o "$T/x.txt" :: \
		"$FIX/openloop" 2 -- "$T/openlb" 3
	echo "$PR_OUT"
	assert_pid_reused "$T/x.json" "$T/x.txt" openlb
	jq -e --argjson p "$PID" --arg e "u:$FIX/openloop:marker" \
		'.processes[] | select(.pid == $p) | .calls[$e] == 5' "$T/x.json"
}

@test "stacks: a launched tree: each program's events counted in its own process" {
	run "$EBPROF" stacks -e syscalls:sys_enter_openat -e u:openloop:marker -o "$T/out.json" \
		-- sh -c "'$FIX/openloop' 2; '$FIX/openloop' 3"
	[ "$status" -eq 0 ]
	jqe '[.processes[] | select(.comm == "openloop") | .calls["u:openloop:marker"]] | sort == [2, 3]' \
		"$T/out.json"
	[ "$(events_through "$T/out.json" open_a)" -eq 5 ]
	[ "$(events_through "$T/out.json" open_b)" -eq 10 ]
	# forkfixture execs twice in children: one posix_spawn'ed (a vfork: it shares its
	# parent's memory until its exec) and one forked. The vfork child is traced from its
	# birth: its execve is its own (it was traced from its exec on, its execve not counted)
	run "$EBPROF" stacks -q -e syscalls:sys_enter_execve -o "$T/x.folded" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	cat "$T/x.folded"
	[ "$(awk '{ s += $NF } END { print s + 0 }' "$T/x.folded")" -eq 2 ]
	grep -qE '^forkfixture \([0-9]+\);clone3;__spawni_child;execve;.*syscalls:sys_enter_execve 1$' \
		"$T/x.folded"
	grep -qE '^forkfixture \([0-9]+\);_start;.*;main;execve;.*syscalls:sys_enter_execve 1$' \
		"$T/x.folded"
}

@test "stacks: a launched shell's children count each uprobe hit once, not also by their fork's" {
	# each child of the shell gets its probes at its fork and again at its exec (libc by
	# another path to the same file); the fork's links close on the closer's threads, one
	# grace period (~115 ms) after another, and fired meanwhile: about one child in two
	# counted getppid or paced twice for a while
	run "$EBPROF" stacks -q -e "u:$FIX/callpace:paced" -e u:libc:getppid -o "$T/out.json" \
		-- sh -c "for i in 1 2 3 4 5 6 7 8; do '$FIX/callpace' 30 4; done"
	[ "$status" -eq 0 ]
	jq -c '[.processes[] | [.comm, .calls]]' "$T/out.json"
	jqe '[.processes[] | select(.comm == "callpace")] | length == 8' "$T/out.json"
	# the fixture's own count, in each of them
	jq -e --arg e "u:$FIX/callpace:paced" \
		'[.processes[] | select(.comm == "callpace") | .calls[$e]] | all(. == 30)' \
		"$T/out.json"
	jqe '[.processes[] | select(.comm == "callpace") | .calls["u:libc:getppid"]]
	     | all(. == 30)' "$T/out.json"
	[ "$(events_through "$T/out.json" paced)" -eq 240 ]
	# forkfixture's posix_spawn child (a vfork: it runs in its parent's memory until its exec)
	# and its forked child call execve once each; the parent's probes fired in the first too
	run "$EBPROF" stacks -q -e u:libc:execve -o "$T/fk.json" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	jq -c '[.processes[] | [.pid, .calls]]' "$T/fk.json"
	jqe '[.processes[] | .calls["u:libc:execve"] // 0] | sort == [0, 1, 1]
	     or sort == [1, 1]' "$T/fk.json"
}

@test "stacks: a process's exit path is its own: sched_process_exit once for each of a tree" {
	# it fires after the exit stop, where the session reads a process out
	run "$EBPROF" stacks -e sched:sched_process_exit -o "$T/out.json" -o "$T/out.folded" \
		-- sh -c "'$FIX/openloop' 1; '$FIX/openloop' 1"
	[ "$status" -eq 0 ]
	jqe '[.processes[] | .comm] | sort == ["openloop", "openloop", "sh"]' "$T/out.json"
	jqe '[.processes[] | .calls["sched:sched_process_exit"]] == [1, 1, 1]' "$T/out.json"
	grep -q 'do_exit_\[k\];sched:sched_process_exit 1$' "$T/out.folded"
}

# Another tool's program attached to the event's tracepoint while ebprof runs changes the
# kernel's path into ebprof's program (one callback is called directly, several through
# __traceiter_sys_enter): the raw kernel stacks differ, the displayed ones (the tracing frames
# left out) do not. They were two or three sites with parts of one stack's events (21 of 120
# runs beside other BPF tests); now one.
# alone: bpftrace's program on a machine-wide tracepoint
# bats test_tags=alone
@test "stacks: a program another tool attaches to the event's tracepoint mid-run leaves one site per displayed stack, with every event" {
	# the fixture's calls in thirds: the first and the last with ebprof's program alone on
	# the tracepoint, the middle one with bpftrace's beside it (the fixture waits at each
	# third's end for the test)
	mkfifo "$T/go"
	bg "$EBPROF" stacks -q -e syscalls:sys_enter_getppid -o "$T/x.json" -- \
		"$FIX/callpace" 300 1 "$T/go" > "$T/out"
	eb=$BG
	exec {go}> "$T/go"
	wait_for "$T/out" "^pause 1$" 60
	start_bpftrace "BEGIN { printf(\"ready\\n\"); } tracepoint:raw_syscalls:sys_enter { @n = count(); }"
	printf x >&"$go"
	wait_for "$T/out" "^pause 2$" 60
	stop_bpftrace
	printf x >&"$go"
	exec {go}>&-
	wait "$eb"
	# bpftrace saw the middle third's calls at least
	[ "$(sed -n 's/^@n: //p' "$T/bt.out")" -ge 100 ]
	jq -c '.sites[] | select(any(.frames[]; .function == "main")) | [.events, [.frames[].function]]' \
		"$T/x.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "main"))] | length == 1 and .[0].events == 300' \
		"$T/x.json"
}
