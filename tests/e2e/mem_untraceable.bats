#!/usr/bin/env bats
# Programs ebprof cannot trace (a stripped static binary, a Go program): a warning naming the
# reason, exit with the program's status, and the rest of a process tree traced as ever.

load helpers

GO=/usr/lib/go-1.19/bin/go

build_go() {
	[ -x "$GO" ] || skip "golang-1.19-go not installed (scripts/install-deps.sh installs it)"
	mkdir -p "$T/go"
	cat > "$T/go/hello.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	s := make([]string, 0)
	for i := 0; i < 1000; i++ {
		s = append(s, fmt.Sprint(i))
	}
	fmt.Println("hello from go", len(s))
	if len(os.Args) > 1 { // hello linger: for -p
		time.Sleep(30 * time.Second)
	}
}
GO
	(cd "$T/go" && CGO_ENABLED=0 GOCACHE="$T/gocache" GOPATH="$T/gopath" HOME="$T" \
		"$GO" build -o "$T/hello" hello.go)
}

@test "ldconfig -p (static-pie, stripped): a warning with the reason, exit 0, its output intact" {
	run "$EBPROF" mem -q -o "$T/out.json" -- ldconfig -p
	[ "$status" -eq 0 ]
	[[ "$output" == *"libs found in cache"* ]]
	[[ "$output" == *"warning: PID "*"(ldconfig) cannot be traced: it is statically linked and stripped"* ]]
	jqe '[.notes[] | select(test("ldconfig. was not traced: it is statically linked"))] | length == 1' \
		"$T/out.json"
	jqe '.drops.untraceable_process == 1' "$T/out.json"
	jqe '.processes | length == 0' "$T/out.json"
	assert_no_probes
}

# The loader run as a program (how a program is tried against another glibc: ld.so
# --library-path DIR ./prog) has no PT_INTERP but maps libc moments later: it was taken for a
# stripped static program and run untraced.
@test "the dynamic loader run as a program (ld.so ./prog) is traced, exactly" {
	local ldso
	ldso=$(readelf -p .interp "$FIX/memfixture" | sed -n 's/^ *\[ *[0-9]*\] *//p')
	[ -x "$ldso" ] || skip "no dynamic loader at '$ldso'"
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -q -o "$T/out.json" -- "$ldso" "$FIX/memfixture"
	[ "$status" -eq 0 ]
	[[ "$output" != *"cannot be traced"* ]]
	jqe '(.drops.untraceable_process // 0) == 0' "$T/out.json"
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

@test "a Go program: a warning that Go does not allocate through malloc, exit 0" {
	build_go
	run "$EBPROF" mem -q -o "$T/out.json" -- "$T/hello"
	[ "$status" -eq 0 ]
	[[ "$output" == *"hello from go 1000"* ]]
	[[ "$output" == *"(hello) cannot be traced: it is a Go program"* ]]
	jqe '[.notes[] | select(test("is a Go program"))] | length == 1' "$T/out.json"
	assert_no_probes
}

# -p said "no malloc implementation found in its mappings (No such file or directory)": no
# reason, and an errno that was not the cause
@test "mem -p of a Go program: refused with the reason a launched one is warned with" {
	build_go
	bg "$T/hello" linger > "$T/go.log"
	wait_for "$T/go.log" 'hello from go'
	run "$EBPROF" mem -p "$BG" -d 1
	[ "$status" -eq 1 ]
	echo "$output"
	[ "$output" = "ebprof: cannot attach to PID $BG: it is a Go program: Go's runtime allocates from its own heap, never through malloc" ]
	assert_no_probes
}

@test "in a tree, untraceable programs leave the others exact" {
	build_go
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -q -o "$T/out.json" -- \
		sh -c "ldconfig -p > /dev/null; '$T/hello' > /dev/null; '$FIX/memfixture' > /dev/null; exit 3"
	[ "$status" -eq 3 ]
	[[ "$output" == *"(ldconfig) cannot be traced"* ]]
	[[ "$output" == *"(hello) cannot be traced"* ]]
	jqe '.drops.untraceable_process == 2' "$T/out.json"
	jqe '[.processes[] | select(.comm == "memfixture")] | length == 1' "$T/out.json"
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

@test "go build with cgo: Go's own processes warned about, the C compilers it runs traced" {
	[ -x "$GO" ] || skip "golang-1.19-go not installed (scripts/install-deps.sh installs it)"
	command -v gcc >/dev/null || skip "no gcc"
	mkdir -p "$T/cgo"
	cat > "$T/cgo/main.go" <<'GO'
package main

/*
#include <stdlib.h>
static void *grab(void) { return malloc(1234); }
*/
import "C"
import "fmt"

func main() { fmt.Println(C.grab() != nil) }
GO
	# go runs its tools and gcc from any of its threads, through clone(CLONE_VFORK)
	cd "$T/cgo"
	run env GOCACHE="$T/gocache" GOPATH="$T/gopath" HOME="$T" \
		"$EBPROF" mem -q -o "$T/out.json" -- "$GO" build -o "$T/cgo/hello" main.go
	[ "$status" -eq 0 ]
	[ "$("$T/cgo/hello")" = "true" ]
	# the go command links libc (it is traced through it); its tools are static Go programs
	[[ "$output" == *"(compile) cannot be traced: it is a Go program"* ]]
	# the profile is large (cc1's sites): its processes read once
	jq '{processes}' "$T/out.json" > "$T/p.json"
	jqe '[.processes[] | select(.comm == "cc1")] | length >= 2' "$T/p.json"
	jqe '[.processes[] | select(.comm == "ld")] | length >= 1' "$T/p.json"
	jqe 'all(.processes[]; .alloc_count > 0 and .ppid > 0)' "$T/p.json"
	jqe '[.processes[].comm] | all(. != "compile" and . != "link" and . != "asm")' "$T/p.json"
	assert_no_probes
}

@test "processes over the process table are counted drops with their reason, in every output" {
	run "$EBPROF" mem -q --max-procs 1 -o "$T/out.json" -o "$T/out.txt" -o "$T/out.pb.gz" \
		-o "$T/out.html" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cannot trace PID"*"process table is full"*"--max-procs"* ]]
	# the parent is traced; forked, cloned, threadfork, and the two exec children are not
	jqe '.processes | length == 1' "$T/out.json"
	jqe '.drops.process_table_full == 5' "$T/out.json"
	jqe '[.notes[] | select(test("was not traced: the table of processes"))] | length >= 1' \
		"$T/out.json"
	grep -q 'Drops: process_table_full 5' "$T/out.txt"
	grep -q "'forked' was not traced" "$T/out.txt"
	grep -q 'process_table_full' "$T/out.html"
	"$EBPROF" report "$T/out.pb.gz" > "$T/back.txt"
	grep -q 'Drops: process_table_full 5' "$T/back.txt"
	assert_no_probes
}
