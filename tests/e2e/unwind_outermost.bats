#!/usr/bin/env bats
# Stacks that end at a thread's outermost frame where no call put it (sweep I, items 8 and 9):
# glibc's clone3, whose system call has no call frame information (the parent returns there
# inside pthread_create; the child starts there, its outermost frame), and Go's
# runtime.goexit (the return address newproc pushes, goexit + 1, follows a NOP, not a call).
# The oracle is gdb's bt on the same fixture (ASLR off on both sides): exactly its return
# addresses, no [truncated] (outermost_check.py).

load helpers

CHECK="$BATS_TEST_DIRNAME/outermost_check.py"
GO=/usr/lib/go-1.19/bin/go

# gdb_bt OUT STOP PROGRAM ARGS...: gdb's bt at the first stop of the gdb command STOP
gdb_bt() {
	local out=$1 stop=$2
	shift 2
	gdb -batch -nx -ex 'set startup-with-shell off' -ex 'set backtrace past-main on' \
		-ex "$stop" -ex run -ex bt -ex kill --args "$@" 2>/dev/null | grep '^#' > "$out"
	cat "$out"
}

@test "unwind outermost: thread churn, clone3's parent has gdb's stack and its child ends at clone3, whole" {
	# the parent in clone3's system call: clone3 <- __clone_internal <- create_thread <-
	# pthread_create <- main ...; a new thread: its outermost frame is clone3
	gdb_bt "$T/parent.txt" 'catch syscall clone3' "$FIX/churnfix" 1 1
	grep -q '^#0  clone3 ' "$T/parent.txt"
	grep -q ' in create_thread ' "$T/parent.txt"
	grep -q ' in main ' "$T/parent.txt"
	gdb_bt "$T/child.txt" 'break churn_work' "$FIX/churnfix" 1 1
	[ "$(tail -1 "$T/child.txt" | awk '{print $4}')" = clone3 ]
	# at clone3's exit both return after the system call: 50 rounds of 4 threads
	run setarch -R "$EBPROF" stacks -e syscalls:sys_exit_clone3 -q -o "$T/s.json" -- \
		"$FIX/churnfix" 50 4
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^threads 200$' <<< "$output"
	# the parents: gdb's stack; the children: clone3 alone, whole (its return address is
	# undefined)
	run python3 "$CHECK" "$T/s.json" "$T/parent.txt" clone3 alone
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^right [0-9]* (200 events or samples), alone [0-9]* (200), wrong 0$' <<< "$output"
	jqe '[.sites[].frames[] | select(.function == "[truncated]")] | length == 0' "$T/s.json"
	jqe '.drops.unwind_truncated == 0 and .drops.unwind_fp_broken == 0' "$T/s.json"
}

@test "unwind outermost: offcpu in thread churn: no stack through clone3 truncated" {
	run "$EBPROF" offcpu -q -o "$T/o.json" -- "$FIX/churnfix" 300 4
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^threads 1200$' <<< "$output"
	local c='[.sites[] | select(any(.frames[]; .function == "clone3"))]'
	jqe "$c | length > 0" "$T/o.json"
	jqe "$c | map(select(any(.frames[]; .function == \"[truncated]\"))) | length == 0" "$T/o.json"
}

@test "unwind outermost: Go, a goroutine's stack ends at runtime.goexit as gdb's, whole" {
	[ -x "$GO" ] || skip "Go is not installed ($GO: apt-get install golang-1.19-go)"
	# offline: a single file without a module, the cache under $T
	(cd "$BATS_TEST_DIRNAME/../fixtures/go" &&
		GOCACHE="$T/gocache" GOPATH="$T/gopath" GO111MODULE=off GOFLAGS= GOPROXY=off \
		CGO_ENABLED=0 "$GO" build -o "$T/gofix" gofix.go)
	gdb_bt "$T/go.txt" 'break main.hotLeaf' "$T/gofix" 1
	grep -q ' in runtime.main ' "$T/go.txt"
	grep -q ' in runtime.goexit ' "$T/go.txt"
	run "$EBPROF" cpu -F 999 -q -o "$T/c.json" -- "$T/gofix" 2
	echo "$output"
	[ "$status" -eq 0 ]
	run python3 "$CHECK" "$T/c.json" "$T/go.txt" main.hotLeaf
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^ok .*main.hotLeaf;main.hotMid;main.main;runtime.main;runtime.goexit' <<< "$output"
	# file:line of the callers as gdb's (Go writes no .debug_aranges)
	local f want got
	for f in main.hotMid main.main runtime.main runtime.goexit; do
		want=$(sed -n "s/^#[1-9] .* in $f (.*) at \(.*:[0-9]*\)\$/\1/p" "$T/go.txt")
		got=$(jq -r --arg f "$f" '[.sites[] | .frames | map(select(.kernel | not))
			| select(.[0].function == "main.hotLeaf") | .[]
			| select(.function == $f or .function == $f + ".abi0")
			| "\(.file):\(.line)"] | unique | join(" ")' "$T/c.json")
		echo "$f: gdb $want, ebprof $got"
		[ -n "$want" ]
		[ "$got" = "$want" ]
	done
}
