#!/usr/bin/env bats
# User stacks in glibc's hand-written context switches (issue 14), by the .eh_frame unwinder:
# ctxfix's makecontext/swapcontext coroutines (each coroutine's stack ends at __start_context,
# the return address makecontext pushes) and jmpfix's setjmp/longjmp loop, both built -O2
# -fomit-frame-pointer. The oracle is gdb on the same fixture (chains_gdb.py: the return
# addresses of the callers at a breakpoint, ASLR off on both sides): every stack through the
# fixture is exactly gdb's from its first fixture frame on, or a prefix of it ending in
# [truncated] (chains_check.py), never another; and the fixtures' own counts of their mallocs.

load helpers

CHECK="$BATS_TEST_DIRNAME/chains_check.py"

chains() {
	local breaks=$1 n=$2
	shift 2
	CHAIN_BREAKS=$breaks gdb -batch -nx -x "$BATS_TEST_DIRNAME/chains_gdb.py" --args "$@" \
		2>/dev/null | grep -E '^(CHAIN|PC) ' > "$T/gdb.txt"
	cat "$T/gdb.txt"
	[ "$(grep -c '^CHAIN ' "$T/gdb.txt")" -eq "$n" ]
}

# co_leaf's callers in coroutine A (co_a_work, co_a) and B (co_b_work, co_b), then
# __start_context (gdb: no name); ctx_run's (main's side)
ctx_chains() {
	chains "co_leaf:2,ctx_run" 3 "$FIX/ctxfix" 3 10
	grep -q '^PC .* co_a$' "$T/gdb.txt"
	grep -q '^PC .* co_b$' "$T/gdb.txt"
	[ "$(grep -c '^PC .* None$' "$T/gdb.txt")" -eq 2 ]
}

@test "unwind ctx: mem, each coroutine's mallocs have gdb's stack, ending at __start_context" {
	ctx_chains
	run setarch -R "$EBPROF" mem -v -q -o "$T/m.json" -- "$FIX/ctxfix" 300 1000
	[ "$status" -eq 0 ]
	grep -q '^rounds 300 mallocs 600$' <<< "$output"
	grep -q "unwind: [0-9]* stacks complete, 0 truncated" <<< "$output"
	run python3 "$CHECK" "$T/m.json" "$T/gdb.txt" ctxfix
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select([.frames[] | .function] == ["malloc", "co_leaf", "co_a_work", "co_a"]) | .alloc_count] | add == 300' "$T/m.json"
	jqe '[.sites[] | select([.frames[] | .function] == ["malloc", "co_leaf", "co_b_work", "co_b"]) | .alloc_count] | add == 300' "$T/m.json"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

@test "unwind ctx: cpu -F 999, every coroutine sample has gdb's stack or ends in [truncated]" {
	ctx_chains
	run setarch -R "$EBPROF" cpu -F 999 -v -q -o "$T/c.json" -- "$FIX/ctxfix" 5000 100000
	[ "$status" -eq 0 ]
	grep -o "unwind: [0-9]* stacks complete, [0-9]* truncated" <<< "$output"
	run python3 "$CHECK" "$T/c.json" "$T/gdb.txt" ctxfix
	echo "$output"
	[ "$status" -eq 0 ]
	# both coroutines' leaves, complete
	grep -q '^ok .* co_leaf;co_a_work;co_a$' <<< "$output"
	grep -q '^ok .* co_leaf;co_b_work;co_b$' <<< "$output"
}

@test "unwind ctx: offcpu, a coroutine blocked in nanosleep has gdb's stack" {
	ctx_chains
	run setarch -R "$EBPROF" offcpu -q -o "$T/o.json" -- "$FIX/ctxfix" 100 1000 sleep
	[ "$status" -eq 0 ]
	grep -q '^rounds 100 mallocs 200$' <<< "$output"
	run python3 "$CHECK" "$T/o.json" "$T/gdb.txt" ctxfix
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^ok .*nanosleep.*;co_leaf;co_b_work;co_b$' <<< "$output"
}

# jmp_leaf's callers: jmp_deep, jmp_loop (setjmp's caller, where longjmp returns), jmp_mid,
# jmp_outer, main, to _start
jmp_chains() {
	chains "jmp_leaf" 1 "$FIX/jmpfix" 3 10
	[ "$(wc -l < "$T/gdb.txt")" -eq 9 ]
}

@test "unwind ctx: mem, a setjmp/longjmp loop's mallocs have gdb's complete stack" {
	jmp_chains
	run setarch -R "$EBPROF" mem -q -o "$T/m.json" -- "$FIX/jmpfix" 2000 0
	[ "$status" -eq 0 ]
	grep -q '^rounds 2000 mallocs 2000$' <<< "$output"
	run python3 "$CHECK" "$T/m.json" "$T/gdb.txt" jmpfix
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.frames[1].function == "jmp_leaf" and .frames[-1].function == "_start") | .alloc_count] | add == 2000' "$T/m.json"
	jqe '.drops.unwind_truncated == 0' "$T/m.json"
}

@test "unwind ctx: cpu -F 999 in a setjmp/longjmp loop: every stack gdb's or [truncated] (longjmp's register restores)" {
	jmp_chains
	run setarch -R "$EBPROF" cpu -F 999 -v -q -o "$T/c.json" -- "$FIX/jmpfix" 30000000 0
	[ "$status" -eq 0 ]
	grep -o "unwind: [0-9]* stacks complete, [0-9]* truncated" <<< "$output"
	run python3 "$CHECK" "$T/c.json" "$T/gdb.txt" jmpfix
	echo "$output"
	[ "$status" -eq 0 ]
	# samples in glibc's longjmp, on the way out of jmp_leaf, complete
	grep -q '^ok .*;__longjmp_chk;jmp_leaf;jmp_deep;jmp_loop;jmp_mid;jmp_outer;main;' <<< "$output"
	# where __longjmp restores the target's registers (rows the unwinder does not
	# implement): [truncated] (checked above when it has fixture frames), for the record
	jq -r '.sites[] | [.frames[] | .function] | select(index("[truncated]")) | join(";")' "$T/c.json"
}

@test "unwind ctx: cpu -F 999 in ld.so's lazy binding: the callees of _dl_runtime_resolve (CFA in rbx) have gdb's complete stack" {
	# lz_f100's callers: lz_run (the library's, where its PLT calls are bound), lazy_loop,
	# main, to _start
	chains "lz_f100" 1 "$FIX/lazyfix" 2
	grep -q '^PC .* lz_run$' "$T/gdb.txt"
	run setarch -R "$EBPROF" cpu -F 999 -v -q -o "$T/c.json" -- "$FIX/lazyfix" 5000
	[ "$status" -eq 0 ]
	grep -o "unwind: [0-9]* stacks complete, [0-9]* truncated" <<< "$output"
	# rbx: the sample's, or where _dl_fixup and the lookup below saved it
	grep -q " 0 truncated at a frame above the first whose CFA is in rbx" <<< "$output"
	run python3 "$CHECK" "$T/c.json" "$T/gdb.txt" liblazyfix.so
	echo "$output"
	[ "$status" -eq 0 ]
	grep -Eq '^ok .*[ ;]_dl_fixup;_dl_runtime_resolve[a-z_]*;lz_run;lazy_loop;main;__libc_start_call_main;__libc_start_main;_start$' <<< "$output"
}

# vfork_inner's callers: vfork_outer, main, to _start. glibc's __vfork keeps its return address
# in rdi across its system call (DW_CFA_register): a stack taken there goes on only by that
# rule, with the task's registers as it entered the kernel; before, every one ended at __vfork
# in [truncated]
vfork_chains() {
	chains "vfork_inner" 1 "$FIX/vforkfix" 1 1
	[ "$(grep -c '^PC ' "$T/gdb.txt")" -eq 5 ]
	grep -q '^PC .* vfork_outer$' "$T/gdb.txt"
}

@test "unwind ctx: stacks at each vfork and offcpu in the parent's wait go through __vfork (its return address in rdi) to gdb's complete stack" {
	vfork_chains
	run setarch -R "$EBPROF" stacks -e sched:sched_process_fork -q -o "$T/s.json" -- \
		"$FIX/vforkfix" 20 1
	[ "$status" -eq 0 ]
	grep -q '^vforks 20$' <<< "$output"
	run python3 "$CHECK" "$T/s.json" "$T/gdb.txt" vforkfix
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select([.frames[] | .function] | index(["__vfork", "vfork_inner",
	      "vfork_outer", "main"])) | select(.frames[-1].function == "_start") | .events]
	     | add == 20' "$T/s.json"
	jqe '.drops.unwind_truncated == 0' "$T/s.json"
	# the parent blocked in the system call until its child exits, 10 times 50 ms
	run setarch -R "$EBPROF" offcpu -q -o "$T/o.json" -- "$FIX/vforkfix" 10 50
	[ "$status" -eq 0 ]
	grep -q '^vforks 10$' <<< "$output"
	run python3 "$CHECK" "$T/o.json" "$T/gdb.txt" vforkfix
	echo "$output"
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select([.frames[] | .function] | index(["__vfork", "vfork_inner",
	      "vfork_outer", "main"])) | select(.frames[-1].function == "_start")]
	     | (map(.switches) | add) == 10 and (map(.offcpu) | add) >= 500000000' "$T/o.json"
}
