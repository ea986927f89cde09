#!/usr/bin/env bats
# Complete user stacks without frame pointers (the .eh_frame unwinder, --unwind): the qsortfix
# fixture, built -O2 -fomit-frame-pointer, whose comparator (called by glibc's qsort, which has
# no frame pointers either, from level3 <- level2 <- level1 <- main) allocates and spins. The
# oracle is gdb on the same fixture: its caller frames (return addresses, ASLR off on both
# sides) at the comparator's first call must be one of ebprof's stacks, frame by frame; and the
# fixture's own count of its mallocs.

load helpers

CHECK="$BATS_TEST_DIRNAME/unwind_check.py"

gdb_stack() {
	gdb -batch -nx -x "$BATS_TEST_DIRNAME/unwind_gdb.py" --args "$FIX/qsortfix" 1 0 2>/dev/null |
		grep '^PC ' > "$T/gdb.txt"
	cat "$T/gdb.txt"
	# cmp's callers: 6 msort levels for 64 elements, qsort_r, level3..1, main
	[ "$(wc -l < "$T/gdb.txt")" -eq 11 ]
}

@test "unwind: mem, every comparator malloc has gdb's complete stack" {
	gdb_stack
	run setarch -R "$EBPROF" mem -q -o "$T/m.json" -- "$FIX/qsortfix" 200 0
	[ "$status" -eq 0 ]
	mallocs=$(awk '/^mallocs/ { print $2 }' <<< "$output")
	[ "$mallocs" -gt 50000 ]
	run python3 "$CHECK" mem "$T/m.json" "$T/gdb.txt" "$mallocs"
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

@test "unwind: mem --alloc-only, the entry stacks are gdb's too" {
	gdb_stack
	run setarch -R "$EBPROF" mem --alloc-only -q -o "$T/m.json" -- "$FIX/qsortfix" 200 0
	[ "$status" -eq 0 ]
	mallocs=$(awk '/^mallocs/ { print $2 }' <<< "$output")
	run python3 "$CHECK" mem "$T/m.json" "$T/gdb.txt" "$mallocs"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "unwind: cpu, at least 90% of the samples have the complete stack down to the comparator" {
	run "$EBPROF" cpu -F 999 -q -o "$T/c.folded" -o "$T/c.json" -- "$FIX/qsortfix" 240 20000
	[ "$status" -eq 0 ]
	run python3 "$CHECK" cpu "$T/c.folded" 90
	echo "$output"
	[ "$status" -eq 0 ]
	# a stack that could not be finished says so, and is counted
	jqe '.drops | has("unwind_truncated")' "$T/c.json"
}

# qsortfix's cmp is called from libc's qsort, which keeps no frame pointer: a walk by frame
# pointers finds cmp, then libc's own value in %rbp, which is no frame. Such a stack says where
# it ends ([truncated] as its root, never cmp as if it were the outermost frame) and is counted,
# one per stack; so is one that went on into code without frame pointers.
@test "unwind: --unwind fp walks frame pointers only (the old, short stacks), and says they end early" {
	run "$EBPROF" mem -q --unwind fp -o "$T/m.folded" -o "$T/m.json" -- "$FIX/qsortfix" 20 0
	[ "$status" -eq 0 ]
	cat "$T/m.folded"
	grep -q '^qsortfix ([0-9]*);\[truncated\];cmp;malloc ' "$T/m.folded"
	run grep -c ';main;level1;' "$T/m.folded"
	[ "$output" -eq 0 ]
	jqe '.drops.unwind_fp_broken as $n | $n > 0 and ([.sites[] | select(.frames[-1].function == "[truncated]")] | length) == $n + .drops.unwind_outside_code' "$T/m.json"
	# 32 bytes' walk may end where libc's %rbp happened to be 0 (the chain's end by the ABI):
	# every other byte's stack says it is not whole
	total=$(awk '{ t += $NF } END { print t }' "$T/m.folded")
	cut=$(awk '/;\[truncated\];/ { t += $NF } END { print t + 0 }' "$T/m.folded")
	echo "$cut of $total bytes in stacks that say they end early"
	[ $((cut * 100)) -ge $((total * 99)) ]
}

# dlburn's library is open for a millisecond: no look at the mappings sees it (nothing reads
# them for a walk by frame pointers), so its return addresses are in no code the snapshots know;
# ld.so's code has no frame pointers, and walks through it read return addresses from data.
# Each stack so ended says [truncated] and is counted, one per site (the count is not fixed
# here: a look at the mappings could fall in the library's millisecond)
@test "unwind: --unwind fp, a return address outside any known code ends its stack, counted" {
	run "$EBPROF" mem -q --unwind fp -o "$T/d.json" -- "$FIX/dlburn" "$FIX/libdlburn.so" 0.001 alloc
	[ "$status" -eq 0 ]
	jqe '.drops | has("unwind_outside_code")' "$T/d.json"
	jqe '(.drops.unwind_outside_code + .drops.unwind_fp_broken) as $n | [.sites[] | select(any(.frames[]; .function == "[truncated]"))] | length == $n' "$T/d.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "[truncated]")) | .frames[-1].function == "[truncated]"] | all' "$T/d.json"
}

# dlburn LIB 0 alloc: lib_alloc runs microseconds after its library's dlopen, long before a tick
# could load the library's table. The thread is held at the loader's hook while the collector
# loads it (abi/unwind.h, UNWIND_HOLD_SIG), so its stacks are whole. Before: each ended at its
# first frame in the library ([malloc, ?, [truncated]]) and unwind_unmapped counted them.
@test "unwind: mem, code dlopen'ed just before it allocates is walked whole (held at the loader)" {
	full='[[3,["malloc","lib_alloc_inner","lib_alloc","run_lib","main","__libc_start_call_main","__libc_start_main","_start"]]]'
	run "$EBPROF" mem -v -q -o "$T/d.json" -- "$FIX/dlburn" "$FIX/libdlburn.so" 0 alloc
	[ "$status" -eq 0 ]
	grep -q "unwind: 1 processes hooked at their loader ([0-9.]* ms); [1-9][0-9]* threads held there" <<< "$output"
	jq -c '[.sites[] | select(.alloc_bytes == 999) | [.alloc_count, [.frames[] | .function]]]' "$T/d.json"
	[ "$(jq -c '[.sites[] | select(.alloc_bytes == 999) | [.alloc_count, [.frames[] | .function]]]' "$T/d.json")" = "$full" ]
	jqe '.drops.unwind_unmapped == 0' "$T/d.json"
	assert_no_probes
}

# An exec in place of a hooked process: the hook's uprobe is in the new program's loader too,
# where mem's readiness breakpoint would never be seen; readiness stops by the hold instead
# (modes/mem/ready.c), and the new program's dlopen'ed code is held as well
@test "unwind: mem, an exec in place is readied at the loader's hold; its dlopen'ed code whole" {
	full='[[3,["malloc","lib_alloc_inner","lib_alloc","run_lib","main","__libc_start_call_main","__libc_start_main","_start"]]]'
	run "$EBPROF" mem -vv -q -o "$T/d.json" -- sh -c "exec $FIX/dlburn $FIX/libdlburn.so 0 alloc"
	[ "$status" -eq 0 ]
	pid=$(jq '.processes[0].pid' "$T/d.json")
	grep -q "pid $pid: allocator mapped, found at the loader's _dl_debug_state (held there by the unwinder's hook)$" <<< "$output"
	jqe '[.processes[] | .comm] == ["dlburn"]' "$T/d.json"
	[ "$(jq -c '[.sites[] | select(.alloc_bytes == 999) | [.alloc_count, [.frames[] | .function]]]' "$T/d.json")" = "$full" ]
	jqe '.drops.unwind_unmapped == 0' "$T/d.json"
	assert_no_probes
}

# A real program: perl loads its XS modules (perl-base's POSIX, List::Util and Fcntl; Data::Dumper
# from libperl5.36, which the perl that install-deps.sh brings depends on) by dlopen and runs
# their boot_ functions at once. Every allocation's stack is whole:
# boot_POSIX's hundreds of sites reach _start. Before the hold: 158 stacks ended unmapped, 138
# sites in [truncated].
@test "unwind: mem, perl's XS modules (dlopen'ed at use) have whole stacks from their boot" {
	run "$EBPROF" mem -q -o "$T/p.json" -- perl -MPOSIX -MData::Dumper -MList::Util -MFcntl -e 1
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_unmapped == 0' "$T/p.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "[truncated]"))] | length == 0' "$T/p.json"
	jqe '[.sites[] | select(any(.frames[]; (.function // "") | test("^boot_POSIX$")))] as $b
	     | ($b | length) > 100 and ($b | all(.frames[-1].function == "_start"))' "$T/p.json"
}

# The hold's signal is the collector's: the program never sees it, and its own SIGURGs all
# reach it. python3 imports extension modules (dlopen: held each time) with a SIGURG handler
# that counts, and sends itself 5.
@test "unwind: a program's own SIGURG is delivered; the loader's holds are not seen" {
	run "$EBPROF" mem -v -q -o "$T/p.json" -- /usr/bin/python3 -c '
import os, signal
n = [0]
signal.signal(signal.SIGURG, lambda s, f: n.__setitem__(0, n[0] + 1))
import decimal, ctypes, sqlite3
for _ in range(5):
    os.kill(os.getpid(), signal.SIGURG)
import json, zlib
print("sigurg", n[0])'
	[ "$status" -eq 0 ]
	grep -q "^sigurg 5$" <<< "$output"
	grep -q "threads held there" <<< "$output"
	! grep -q "; 0 threads held there" <<< "$output" || false
	jqe '.drops.unwind_unmapped == 0' "$T/p.json"
}

@test "unwind: -v says which objects have tables and which are walked by frame pointers" {
	run "$EBPROF" mem -v -q -o "$T/m.folded" -- "$FIX/qsortfix" 2 0
	[ "$status" -eq 0 ]
	grep -q "unwind: .*/libc.so.6: [0-9]* rows from its .eh_frame" <<< "$output"
	grep -q "unwind: .*/qsortfix: [0-9]* rows from its .eh_frame" <<< "$output"
	grep -q "unwind: [0-9]* stacks complete, 0 truncated, 0 at the depth limit, 0 truncated at code mapped since" <<< "$output"
}

@test "unwind: a bad --unwind is a usage error" {
	run "$EBPROF" cpu --unwind frames -- true
	[ "$status" -eq 2 ]
	grep -q "invalid --unwind 'frames' (auto, dwarf or fp)" <<< "$output"
}

@test "unwind: a signal handler's mallocs unwind through the signal frame into the interrupted code" {
	run "$EBPROF" mem -q -o "$T/m.folded" -o "$T/m.json" -- "$FIX/sigfix" 300
	[ "$status" -eq 0 ]
	grep -q '^handler mallocs 300$' <<< "$output"
	cat "$T/m.folded"
	# gdb's: on_alarm, <signal handler called>, spin, work, main (and main's callers); every
	# one of the handler's 300 mallocs of 48 bytes
	grep -qx 'sigfix ([0-9]*);_start;__libc_start_main;__libc_start_call_main;main;work;spin;__restore_rt;on_alarm;malloc 14400' "$T/m.folded"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

# The share (percent) of the folded file's bytes whose stacks are complete: they run up to the
# program's entry (_start, named or not) through glibc's __libc_start_main
complete_share() {
	awk '{ n = $NF; t += n; if ($0 ~ /^[^;]*;[^;]*;__libc_start_main;__libc_start_call_main;/) c += n }
	     END { printf "%d\n", t ? 100 * c / t : 0 }' "$1"
}

@test "unwind: python3 (Debian's, no frame pointers) on a JSON round trip: >= 90% of the bytes in complete stacks" {
	cat > "$T/rt.py" <<'PY'
import json
for r in range(10):
    s = json.dumps([{"id": i, "name": "item%d" % i, "tags": ["a", str(i)], "n": {"x": i * 1.5}}
                    for i in range(2000)])
    assert len(json.loads(s)) == 2000
print("ok")
PY
	run "$EBPROF" mem -q -o "$T/m.folded" -- /usr/bin/python3 "$T/rt.py"
	[ "$status" -eq 0 ]
	share=$(complete_share "$T/m.folded")
	echo "complete: $share%"
	[ "$share" -ge 90 ]
	# frame pointers alone, for the record: the same run's stacks hardly ever get there
	run "$EBPROF" mem -q --unwind fp -o "$T/fp.folded" -- /usr/bin/python3 "$T/rt.py"
	echo "with --unwind fp: $(complete_share "$T/fp.folded")%"
}

@test "unwind: perl and sqlite3: >= 90% of the bytes in complete stacks" {
	run "$EBPROF" mem -q -o "$T/p.folded" -- perl -e 'my %h; $h{"k$_"} = [$_] for 1..100000; print scalar(keys %h), "\n"'
	[ "$status" -eq 0 ]
	share=$(complete_share "$T/p.folded")
	echo "perl complete: $share%"
	[ "$share" -ge 90 ]
	run "$EBPROF" mem -q -o "$T/s.folded" -- sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000) insert into t select x, hex(randomblob(20)) from c; select count(*) from t;"
	[ "$status" -eq 0 ]
	grep -qx 20000 <<< "$output"
	share=$(complete_share "$T/s.folded")
	echo "sqlite3 complete: $share%"
	[ "$share" -ge 90 ]
}

@test "unwind: C++ exceptions thrown through probed operator new are still caught" {
	run "$EBPROF" mem -q --unwind dwarf -o "$T/m.json" -- "$FIX/badalloc" 1
	[ "$status" -eq 0 ]
	grep -q 'caught 3, null 1' <<< "$output"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

@test "unwind: a process tree (fork, clone, posix_spawn's vfork, exec): every process's stacks complete" {
	run "$EBPROF" mem -q --unwind dwarf -o "$T/m.folded" -o "$T/m.json" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
	# each process's allocations in main's callees run up to the program's entry
	run awk '$0 ~ /;main;/ && $0 !~ /^[^;]*;[^;]*;__libc_start_main;__libc_start_call_main;main;/' "$T/m.folded"
	echo "$output"
	[ -z "$output" ]
	jqe '[.processes[].pid] | length >= 5' "$T/m.json"
}

# A launched program's first stacks: startfix (built -O2 -fomit-frame-pointer) allocates, sleeps
# or spins in startfix_inner <- startfix_outer <- main at once after its exec, in code whose
# callers (libc's __libc_start_call_main) are in a library mapped after the tables were loaded
# at the exec stop. Every stack through the fixture must be gdb's (startfix_gdb.py: return
# addresses, ASLR off on both sides) from its first fixture frame to _start, or a prefix of it
# ending in [truncated]: never a stack missing a frame.
STARTCHECK="$BATS_TEST_DIRNAME/startfix_check.py"

startfix_gdb() {
	gdb -batch -nx -x "$BATS_TEST_DIRNAME/startfix_gdb.py" --args "$FIX/startfix" "$1" \
		2>/dev/null | grep '^PC ' > "$T/gdb.txt"
	cat "$T/gdb.txt"
	# startfix_outer, main, __libc_start_call_main, __libc_start_main, _start
	[ "$(wc -l < "$T/gdb.txt")" -eq 5 ]
}

@test "unwind: mem, a launched program's first malloc has gdb's complete stack" {
	startfix_gdb alloc
	run setarch -R "$EBPROF" mem -q -o "$T/m.json" -- "$FIX/startfix" alloc
	[ "$status" -eq 0 ]
	run python3 "$STARTCHECK" "$T/m.json" "$T/gdb.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	# the one malloc(777), from startfix_inner
	jqe '[.sites[] | select(.frames[0].function == "malloc" and .frames[1].function == "startfix_inner") | .alloc_count] | add == 1' "$T/m.json"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
	jqe '.drops.unwind_unmapped == 0' "$T/m.json"
}

@test "unwind: offcpu, a launched program's first sleep has gdb's complete stack" {
	startfix_gdb sleep
	run setarch -R "$EBPROF" offcpu -q -o "$T/o.json" -- "$FIX/startfix" sleep
	[ "$status" -eq 0 ]
	run python3 "$STARTCHECK" "$T/o.json" "$T/gdb.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_unmapped == 0' "$T/o.json"
}

@test "unwind: cpu, a launched program's first samples have gdb's complete stack" {
	startfix_gdb spin
	run setarch -R "$EBPROF" cpu -q -F 999 -o "$T/c.json" -- "$FIX/startfix" spin
	[ "$status" -eq 0 ]
	run python3 "$STARTCHECK" "$T/c.json" "$T/gdb.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_unmapped == 0' "$T/c.json"
}

@test "unwind: -v counts the tables built for needed libraries before their mapping was seen" {
	run "$EBPROF" offcpu -v -q -o "$T/o.json" -- "$FIX/startfix" sleep
	[ "$status" -eq 0 ]
	grep -q "unwind: .*libc.so.6: [0-9]* rows from its .eh_frame" <<< "$output"
	grep -Eq "unwind: .*tables \([1-9][0-9]* of them for a library needed \(DT_NEEDED, LD_PRELOAD\) before its mapping was seen" <<< "$output"
	jqe '.drops | has("unwind_unmapped")' "$T/o.json"
	jqe '.drops | has("unwind_files_full")' "$T/o.json"
}

@test "unwind: cpu, a preloaded library's (LD_PRELOAD) first samples have complete stacks" {
	# ctoralloc.so's constructor spins before main: the process was loaded at its exec, when
	# the library was not mapped; its table is built then from the environment's LD_PRELOAD
	run "$EBPROF" cpu -q -F 999 -o "$T/c.json" -- \
		env CTORALLOC_SPIN=1 LD_PRELOAD="$FIX/ctoralloc.so" "$FIX/startfix" alloc
	[ "$status" -eq 0 ]
	jq -c '.sites[] | [.samples, [.frames[] | .function]] | select(.[1] | index("ctoralloc_inner"))' "$T/c.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "ctoralloc_inner")) | .samples] | add > 0' "$T/c.json"
	# each of those not truncated (below): the constructor's chain, then ld.so's (call_init,
	# _dl_init), to the end: _dl_start_user, as gdb's bt ends (a label without a type in
	# ld.so's .text)
	jqe '[.sites[] | [.frames[] | .function] | select(index("ctoralloc_inner")) | select(index("[truncated]") | not) | .[index("ctoralloc_inner"):] | .[0:4] == ["ctoralloc_inner", "ctoralloc_outer", "ctoralloc_ctor", "call_init"] and index("_dl_init") != null and .[-1] == "_dl_start_user"] | all' "$T/c.json"
	# truncated: only a stack that starts in libc under ctoralloc_inner (its first malloc's or
	# getenv's page faults), before any sample found ctoralloc.so's mapping: libc's is the one
	# mapping bpf_find_vma gives where interrupts are off, nothing kept has ctoralloc.so's yet
	# (unwind_vmas), and malloc's brk changes the address space between two such samples; at
	# most two of them (2 runs of 12 had one, a flake, when the test allowed none)
	jqe '[.sites[] | [.frames[] | select(.kernel | not)] as $u | select(any($u[]; .function == "ctoralloc_inner")) | select(any($u[]; .function == "[truncated]")) | select($u[-1].function == "[truncated]" and $u[-2].function == "ctoralloc_inner" and ([$u[0:-2][] | .module | endswith("/libc.so.6")] | all and length > 0) | not)] | length == 0' "$T/c.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "ctoralloc_inner")) | select(any(.frames[]; .function == "[truncated]")) | .samples] | add // 0 | . <= 2' "$T/c.json"
	# (not unwind_truncated: a sample in the middle of the exec or of the exit, its user stack
	# half unmapped, can end in [truncated] anywhere)
	jqe '.drops.unwind_unmapped == 0' "$T/c.json"
}

# preqsort.so's constructor sorts with glibc's qsort before main: each sample's stack crosses
# libc and the preloaded library, both mapped after the process's load at its exec, then ld.so's
# frames. Where interrupts are off bpf_find_vma finds one mapping per sample, so until the
# collector loads the process again each such stack ended in [truncated]
# (EBPROF_TEST_UNWIND_RELOAD_MS holds that reload back past the run, as a loaded machine does for
# a while: 152 of 154 sort samples truncated before unwind_vmas); with the mappings earlier
# samples found kept, the first sample at most is truncated and every other one is whole and
# right
@test "unwind: cpu, stacks across two files mapped since the load are whole before the reload" {
	EBPROF_TEST_UNWIND_RELOAD_MS=100000 run "$EBPROF" cpu -v -q -F 999 -o "$T/c.json" -- \
		env PREQSORT_ROUNDS=100000 LD_PRELOAD="$FIX/preqsort.so" "$FIX/startfix" alloc
	[ "$status" -eq 0 ]
	grep "stacks complete" <<< "$output"
	jq -c '[.sites[] | select(any(.frames[]; .function == "qsort_r" or .function == "preqsort_cmp")) | {t: any(.frames[]; .function == "[truncated]"), s: .samples}] | group_by(.t) | map({truncated: .[0].t, samples: (map(.s) | add)})' "$T/c.json"
	# the sort's samples: at least 100 (~230 at 999 Hz of its CPU time)
	jqe '[.sites[] | select(any(.frames[]; .function == "qsort_r" or .function == "preqsort_cmp")) | .samples] | add >= 100' "$T/c.json"
	# truncated: the first sample's (one mapping found), one more should the stack grow, and
	# one for each kept mapping the walk could not use because the address space changed since
	# (counted: a uprobe attached or detached anywhere on libc, by another tool or test, takes
	# every such process's mmap_lock for writing; none on a quiet machine)
	stale=$(grep -o "[0-9]* kept not used" <<< "$output" | grep -o "[0-9]*")
	jqe "[.sites[] | select(any(.frames[]; .function == \"qsort_r\" or .function == \"preqsort_cmp\")) | select(any(.frames[]; .function == \"[truncated]\")) | .samples] | add // 0 | . <= 2 + $stale" "$T/c.json"
	# every other one the fixture's chain under its kernel frames: the comparator or libc's
	# merge sort (and what it calls in libc), qsort_r, the constructor's chain, ld.so's
	# call_init to _dl_start_user
	jqe '[.sites[] | select(any(.frames[]; .function == "qsort_r" or .function == "preqsort_cmp")) | select(all(.frames[]; .function != "[truncated]")) | [.frames[] | select(.kernel | not)] as $f | ([$f[] | .function] | index("qsort_r")) as $q | $q != null and ([$f[$q:][] | .function] | .[0:4] == ["qsort_r", "preqsort_sort", "preqsort_ctor", "call_init"] and index("_dl_init") != null and .[-1] == "_dl_start_user") and ([$f[1:$q][] | .module | endswith("/libc.so.6")] | all) and ($f[0].function == "preqsort_cmp" or ($f[0].module | endswith("/libc.so.6")))] | all' "$T/c.json"
	# no reload came: the sort's mappings were found kept from an earlier sample
	kept=$(grep -o "([0-9]* mappings found kept" <<< "$output" | grep -o "[0-9]*")
	[ "$kept" -ge 100 ]
}

# The other side of keeping mappings: vmaswap runs a library's code (period_one), closes it and
# opens another at the same address (period_two), all walked by file (the reload held back; a
# first process preloads both, so that their tables are known). The two unwind differently at
# the same offsets (vmaswap_lib.c): the second's code walked by the first's table, a mapping
# kept from before the swap, would end its stacks wrong or truncated. The address space's
# mm_lock_seq moved at the munmap and the mmap, and nothing kept before is used: every sample
# in the library reaches its host's frames down to _start but the first of each period (one
# mapping found) or two.
@test "unwind: cpu, a mapping kept from an earlier stack is not used once another file is mapped at its address" {
	EBPROF_TEST_UNWIND_RELOAD_MS=100000 run "$EBPROF" cpu -v -q -F 499 -o "$T/x.json" -- \
		sh -c 'LD_PRELOAD="$1:$2" /bin/true; exec "$0" "$1" "$2" 1' "$FIX/vmaswap" \
		"$FIX/libvmaswap1.so" "$FIX/libvmaswap2.so"
	[ "$status" -eq 0 ]
	echo "$output"
	a1=$(sed -n 's/^period 1 plug_work //p' <<< "$output")
	a2=$(sed -n 's/^period 2 plug_work //p' <<< "$output")
	[ -n "$a1" ]
	[ -n "$a2" ]
	[ "$a1" = "$a2" ] || skip "the second dlopen mapped its library elsewhere: nothing to tell apart"
	# (the samples by their host frames: the two libraries' frames share addresses and names)
	jq -c '.sites[] | select(any(.frames[]; .function == "vmaswap_hot")) | [.samples, [.frames[] | select(.kernel | not) | .function]]' "$T/x.json" | sort | uniq -c | sort -rn | head -20
	# each period's samples whole: its library's two frames, burn, the period, main, _start
	for p in period_one period_two; do
		jqe "[.sites[] | [.frames[] | select(.kernel | not) | .function] as \$f | select(\$f | index(\"$p\")) | select(\$f[0:5] == [\"vmaswap_hot\", \"plug_work\", \"burn\", \"$p\", \"main\"] and \$f[-1] == \"_start\") | .samples] | add >= 100" "$T/x.json"
	done
	# the others in the libraries: truncated, the first sample of each period (the second's
	# first meets the first library's mapping kept, stale) and one more, and one for each kept
	# mapping not used because the address space changed (counted: see above); none complete
	# and wrong
	stale=$(grep -o "[0-9]* kept not used" <<< "$output" | grep -o "[0-9]*")
	jqe "[.sites[] | [.frames[] | select(.kernel | not) | .function] as \$f | select(\$f | index(\"vmaswap_hot\")) | select((\$f[0:4] == [\"vmaswap_hot\", \"plug_work\", \"burn\", \"period_one\"] or \$f[0:4] == [\"vmaswap_hot\", \"plug_work\", \"burn\", \"period_two\"]) and \$f[4] == \"main\" and \$f[-1] == \"_start\" | not) | .samples] | add // 0 | . <= 2 + $stale" "$T/x.json"
	jqe '[.sites[] | [.frames[] | select(.kernel | not) | .function] as $f | select($f | index("vmaswap_hot")) | select($f | index("[truncated]") | not) | select(($f[0:4] == ["vmaswap_hot", "plug_work", "burn", "period_one"] or $f[0:4] == ["vmaswap_hot", "plug_work", "burn", "period_two"]) and $f[4] == "main" and $f[-1] == "_start" | not)] | length == 0' "$T/x.json"
	kept=$(grep -o "([0-9]* mappings found kept" <<< "$output" | grep -o "[0-9]*")
	[ "$kept" -ge 200 ]
}

@test "unwind: the stack cache tells apart two callers of one call site with the same registers" {
	# samesite_leaf's malloc runs at the same ip, sp and bp whether samesite_a or samesite_b
	# called it (blocks of 64 calls each): a stack kept by call site alone would give one
	# block's caller to the next block's mallocs
	run "$EBPROF" mem -v -o "$T/m.json" -- "$FIX/samesite" 19200
	[ "$status" -eq 0 ]
	hits=$(grep -o "[0-9]* complete stacks from the stack cache" <<< "$output" | cut -d' ' -f1)
	echo "stack cache hits: $hits"
	[ "$hits" -gt 0 ]
	jqe '[.sites[] | select([.frames[0:3][] | .function] == ["malloc", "samesite_leaf", "samesite_a"]) | .alloc_count] | add == 12800' "$T/m.json"
	jqe '[.sites[] | select([.frames[0:3][] | .function] == ["malloc", "samesite_leaf", "samesite_b"]) | .alloc_count] | add == 6400' "$T/m.json"
	jqe '[.sites[] | select(.frames[1].function == "samesite_leaf") | .frames[-1].function] | unique == ["_start"]' "$T/m.json"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

# The share (percent) of the run's stacks (ebprof -v's unwinder line in $1) the stack cache gave
cache_share() {
	local all hits
	all=$(grep -o "unwind: [0-9]* stacks complete" <<< "$1" | grep -o "[0-9]*")
	hits=$(grep -o "[0-9]* complete stacks from the stack cache" <<< "$1" | cut -d' ' -f1)
	echo "stack cache: $hits of $all" >&2
	echo $((all ? 100 * hits / all : 0))
}

@test "unwind: the stack cache keeps two stacks from the same registers, taken in turn" {
	# samesite_b, samesite_a, samesite_a, samesite_b...: samesite_leaf's malloc alternates
	# between two stacks from the same ip, sp and bp; one entry per registers missed each
	# change (a third of the calls hit); both are kept in the set's two ways
	run "$EBPROF" mem -v -o "$T/m.json" -- "$FIX/samesite" 3000 1
	[ "$status" -eq 0 ]
	share=$(cache_share "$output")
	[ "$share" -ge 90 ]
	jqe '[.sites[] | select([.frames[0:3][] | .function] == ["malloc", "samesite_leaf", "samesite_a"]) | .alloc_count] | add == 2000' "$T/m.json"
	jqe '[.sites[] | select([.frames[0:3][] | .function] == ["malloc", "samesite_leaf", "samesite_b"]) | .alloc_count] | add == 1000' "$T/m.json"
	jqe '[.sites[] | select(.frames[1].function == "samesite_leaf") | .frames[-1].function] | unique == ["_start"]' "$T/m.json"
}

@test "unwind: the stack cache does not key on data code without frame pointers keeps in %rbp" {
	# samesite_data's malloc runs with other data in %rbp each call, saved on the stack like
	# any register; no frame's CFA is computed from it: one stack, from the cache after the
	# first walk (every call was a walk when %rbp was a key)
	run "$EBPROF" mem -v -o "$T/m.json" -- "$FIX/samesite" 3000 rbp
	[ "$status" -eq 0 ]
	share=$(cache_share "$output")
	[ "$share" -ge 90 ]
	jqe '[.sites[] | select([.frames[0:3][] | .function] == ["malloc", "samesite_data", "main"]) | .alloc_count] | add == 3000' "$T/m.json"
	jqe '[.sites[] | select(.frames[1].function == "samesite_data") | .frames[-1].function] | unique == ["_start"]' "$T/m.json"
}

@test "unwind: cpu, a frame whose CFA is in rbx (as ld.so's _dl_runtime_resolve's) unwinds where rbx is known; else its stack ends there, counted" {
	# rbxcfa_spin's CFA is rbx + 16 (its call frame information, hand-written like ld.so's)
	run "$EBPROF" cpu -q -F 999 -o "$T/c.json" -- "$FIX/rbxcfa"
	[ "$status" -eq 0 ]
	jq -c '.sites[] | [.samples, [.frames[] | .function]] | select(.[1] | index("rbxcfa_spin"))' "$T/c.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "rbxcfa_spin")) | .samples] | add > 0' "$T/c.json"
	jqe '[.sites[] | [.frames[] | .function] | select(index("rbxcfa_spin")) | .[index("rbxcfa_spin"):] == ["rbxcfa_spin", "rbxcfa_outer", "main", "__libc_start_call_main", "__libc_start_main", "_start"]] | all' "$T/c.json"
	# called from it: the callee's rows say it leaves rbx alone, rbx is the sample's there
	run "$EBPROF" cpu -v -q -F 999 -o "$T/d.json" -- "$FIX/rbxcfa" call
	[ "$status" -eq 0 ]
	jq -c '.sites[] | [.samples, [.frames[] | .function]] | select(.[1] | index("rbxcfa_callee"))' "$T/d.json"
	jqe '[.sites[] | select(any(.frames[]; .function == "rbxcfa_callee")) | .samples] | add > 0' "$T/d.json"
	jqe '[.sites[] | [.frames[] | .function] | select(index("rbxcfa_callee")) | .[index("rbxcfa_callee"):] == ["rbxcfa_callee", "rbxcfa_spin", "rbxcfa_outer", "main", "__libc_start_call_main", "__libc_start_main", "_start"]] | all' "$T/d.json"
	grep -q " 0 truncated at a frame above the first whose CFA is in rbx" <<< "$output"
	# rbxcfa_hide keeps the caller's rbx in r12 (.cfi_register): not followed, [truncated]
	# after rbxcfa_spin, counted
	run "$EBPROF" cpu -v -q -F 999 -o "$T/h.json" -- "$FIX/rbxcfa" hide
	[ "$status" -eq 0 ]
	jqe '[.sites[] | [.frames[] | .function] | select(index("rbxcfa_hide")) | .[index("rbxcfa_hide"):] == ["rbxcfa_hide", "rbxcfa_spin", "[truncated]"]] | all' "$T/h.json"
	n=$(jq '[.sites[] | select(any(.frames[]; .function == "rbxcfa_spin")) | .samples] | add' "$T/h.json")
	counted=$(grep -o "[0-9]* truncated at a frame above the first whose CFA is in rbx" <<< "$output" | cut -d' ' -f1)
	echo "samples through rbxcfa_spin: $n, counted: $counted"
	[ "$n" -gt 0 ]
	[ "$counted" -ge "$n" ]
	jqe '.drops.unwind_truncated >= '"$n" "$T/h.json"
}

# deeprec DEPTH N: N mallocs under DEPTH nested deeprec_level frames (built with frame pointers).
# A stack holds 127 return addresses: past that it ends in [truncated], which takes the place of
# the 127th, whichever way it was walked. One line of a folded profile: its deeprec_level frames
# and how it ends.
deep_site() {
	awk '/;deeprec_leaf;malloc / {
		c = $NF; sub(/ [0-9]+$/, ""); n = split($0, a, ";"); lv = 0
		for (i = 2; i <= n; i++) if (a[i] == "deeprec_level") lv++
		print lv, a[2], a[3], c }' "$1"
}

@test "unwind: a stack deeper than 127 frames ends in [truncated], by frame pointers and by tables, counted" {
	# by frame pointers, 124 levels: leaf, 124 levels, main fill 126; the 127th says the walk
	# goes on past the limit (before, 127 frames read as a whole stack, main's caller its root)
	run "$EBPROF" mem -q --unwind fp -o "$T/f124.folded" -- "$FIX/deeprec" 124 10
	[ "$status" -eq 0 ]
	run deep_site "$T/f124.folded"
	echo "$output"
	[ "$output" = "124 [truncated] main 400" ]
	# --alloc-only's walk at the allocating function's entry, the same
	run "$EBPROF" mem -q --alloc-only --unwind fp -o "$T/a124.folded" -- "$FIX/deeprec" 124 10
	[ "$status" -eq 0 ]
	run deep_site "$T/a124.folded"
	[ "$output" = "124 [truncated] main 400" ]
	run "$EBPROF" mem -q --unwind fp -o "$T/f.folded" -o "$T/f.json" -- "$FIX/deeprec" 200 10
	[ "$status" -eq 0 ]
	run deep_site "$T/f.folded"
	echo "$output"
	[ "$output" = "125 [truncated] deeprec_level 400" ]
	jqe '.drops.unwind_fp_broken as $n | $n > 0 and ([.sites[] | select(.frames[-1].function == "[truncated]")] | length) == $n + .drops.unwind_outside_code' "$T/f.json"
	# below the limit the walk reads every frame pointer up to main's caller (libc's, whose
	# own %rbp is no frame: [truncated] past it, as every --unwind fp stack of Debian's libc)
	run "$EBPROF" mem -q --unwind fp -o "$T/f100.folded" -- "$FIX/deeprec" 100 10
	[ "$status" -eq 0 ]
	run deep_site "$T/f100.folded"
	echo "$output"
	[ "$output" = "100 [truncated] __libc_start_call_main 400" ]
	# by tables: the same end, counted per allocation as unwind_too_deep; below it, whole
	run "$EBPROF" mem -q -o "$T/t.folded" -o "$T/t.json" -- "$FIX/deeprec" 200 10
	[ "$status" -eq 0 ]
	run deep_site "$T/t.folded"
	echo "$output"
	[ "$output" = "125 [truncated] deeprec_level 400" ]
	jqe '.drops.unwind_too_deep == 10' "$T/t.json"
	# the drops line sends the reader to the notes: one says what this drop left out (there
	# was none); stacks too, and its text report
	jqe '[.notes[] | select(test("^10 stacks were deeper than 127 frames: their outermost frames are left out"))] | length == 1' "$T/t.json"
	run "$EBPROF" stacks -e u:libc:malloc -q -o "$T/s.json" -o "$T/s.txt" -- "$FIX/deeprec" 200 10
	[ "$status" -eq 0 ]
	jqe '.drops.unwind_too_deep == 10' "$T/s.json"
	grep -q '^  - 10 stacks were deeper than 127 frames' "$T/s.txt"
	run "$EBPROF" mem -q -o "$T/t100.folded" -- "$FIX/deeprec" 100 10
	[ "$status" -eq 0 ]
	run deep_site "$T/t100.folded"
	echo "$output"
	[ "$output" = "100 _start __libc_start_main 400" ]
}

# The rows map full: the tables of objects no process maps any more are evicted for a new one.
# qsortexec_a, then qsortexec_b (two files without frame pointers, the same code: a shell runs
# one after the other, and waits: the ':' keeps it from exec'ing the last one in its place)
# under a rows map that holds the shell's objects (dash, libc, ld.so, the vDSO) and the bigger
# of the two tables, not both. Each object's rows are read from a first run's -v (the tables
# as this machine's libraries have them).
evict_rows() {
	run "$EBPROF" cpu -v -q -o "$T/cal.folded" -- sh -c "$FIX/qsortexec_a 1 0; $FIX/qsortexec_b 1 0; :"
	[ "$status" -eq 0 ]
	total=$(sed -n 's/.*ebprof: unwind: .*: \([0-9]*\) rows from its .*/\1/p' <<< "$output" |
		awk '{ s += $1 } END { print s }')
	a=$(sed -n 's/.*unwind: .*\/qsortexec_a: \([0-9]*\) rows from its .*/\1/p' <<< "$output")
	b=$(sed -n 's/.*unwind: .*\/qsortexec_b: \([0-9]*\) rows from its .*/\1/p' <<< "$output")
	echo "rows: $total in all, qsortexec_a $a, qsortexec_b $b"
	[ "$a" -gt 0 ]
	[ "$b" -gt 0 ]
	[ "$total" -gt $((a + b)) ]
}

@test "unwind: cpu, a table that does not fit takes the rows of a program gone (evicted): its stacks complete" {
	evict_rows
	small=$((a < b ? a : b))
	rows=$((total - small))
	run "$EBPROF" cpu -v -q -F 499 --unwind-rows "$rows" -o "$T/c.folded" -o "$T/c.json" -- \
		sh -c "$FIX/qsortexec_a 60 20000; $FIX/qsortexec_b 60 20000; :"
	[ "$status" -eq 0 ]
	log=$output
	grep -E "unwind: .*(qsortexec|evicted)" <<< "$log"
	# both programs' samples complete down to cmp: b's walked by its table, not by frame
	# pointers (which end every stack of it in [truncated] after the leaf)
	for p in a b; do
		grep "^qsortexec_$p " "$T/c.folded" > "$T/$p.folded"
		run python3 "$CHECK" cpu "$T/$p.folded" 90
		echo "qsortexec_$p: $output"
		[ "$status" -eq 0 ]
	done
	jqe '.drops.unwind_rows_full == 0' "$T/c.json"
	jqe '[.notes[] | select(test("--unwind-rows"))] | length == 0' "$T/c.json"
	# a's rows were b's: a alone evicted (the shell's objects are in use), said at -v
	grep -Eq "unwind: .*/qsortexec_a: evicted \(no process maps it.*\): its $a rows for .*/qsortexec_b's table" <<< "$log"
	grep -Eq "unwind: .*/qsortexec_b: $b rows from its .eh_frame" <<< "$log"
	grep -Eq "unwind: 1 tables evicted .*: $a rows" <<< "$log"
}

@test "unwind: cpu, a table that does not fit even with the rows of every object unused is walked by frame pointers, counted; nothing evicted in vain" {
	evict_rows
	[ "$a" -ne "$b" ]
	# the smaller one first: the bigger one does not fit in its rows and the tail's, and the
	# shell's objects, whose rows would hold it, are in use (the shell waits)
	if [ "$a" -lt "$b" ]; then first=a second=b big=$b; else first=b second=a big=$a; fi
	rows=$((total - big))
	run "$EBPROF" cpu -v -q -F 499 --unwind-rows "$rows" -o "$T/c.folded" -o "$T/c.json" -- \
		sh -c "$FIX/qsortexec_$first 10 20000; $FIX/qsortexec_$second 10 20000; :"
	[ "$status" -eq 0 ]
	grep -E "unwind: .*(qsortexec|evicted)" <<< "$output"
	grep -Eq "unwind: .*/qsortexec_$second: frame pointers \(the unwind rows map is full\)" <<< "$output"
	! grep -q "evicted" <<< "$output" || false
	jqe '.drops.unwind_rows_full == 1' "$T/c.json"
	note=$(jq -r '.notes[] | select(test("--unwind-rows"))' "$T/c.json")
	echo "$note"
	[[ "$note" == *"did not fit the rows map ($rows rows); raise --unwind-rows to $((rows + big)) or more"* ]]
}
