#!/usr/bin/env bats
# Process trees: a launched command's children (fork, vfork, clone) and the programs they exec
# are traced, each reported on its own, compared with the LD_PRELOAD interposer in the same run.
# COUNTALLOC_CHILD=fresh makes the interposer count as ebprof does: a forked child from zero,
# and the image a process replaces by exec written to a file of its own (COUNTALLOC_OUT.PID.xN),
# so the files of a PID add up to ebprof's numbers for that PID.

load helpers

# Per process of ebprof's report, the interposer files of its PID summed; every process that
# wrote one is in the report and the reverse (ebprof's own file excepted); allocation counts,
# bytes, frees of known blocks (calls of free less unknown frees: glibc's own frees, and a
# forked child's frees of blocks it inherited) and per-function calls within 0.01%, per process
# and in total.
# SKIP: comms of processes that write no interposer file of their own (see forkfixture.c).
compare_tree() {
	local json=$1 skip=${2:-}
	for f in "$T"/ca.*; do
		jq -c --arg f "${f##*/}" '. + {file: $f}' "$f"
	done | jq -s '.' > "$T/ca.all"
	jq -n --slurpfile e "$json" --slurpfile c "$T/ca.all" --arg skip "$skip" '
		def off(a; b): if b == 0 then (a != 0) else ((a - b) | fabs) / b > 0.0001 end;
		def sum(xs): reduce xs as $x (0; . + $x);
		# cc1 carries libstdc++ statically: ebprof counts its operators by name, the
		# interposer sees the malloc and free inside them
		def mallocs(p): p.calls.malloc + (p.calls["operator new"] // 0)
				+ (p.calls["operator new[]"] // 0);
		def frees(p): p.calls.free + (p.calls["operator delete"] // 0)
				+ (p.calls["operator delete[]"] // 0);
		($e[0].processes | map(.pid)) as $pids
		| ($c[0] | map(select(.pid as $p | $pids | index($p)))) as $files
		| [($c[0][] | select((.pid as $p | $pids | index($p)) == null)
		    | select(.exe | test("/ebprof$") | not) | {missing_in_ebprof: .}),
		   ($e[0].processes[] | select(.comm as $n | $skip | split(",") | index($n) | not)
		    | . as $p
		    | ($files | map(select(.pid == $p.pid))) as $mine
		    | if ($mine | length) == 0 then {no_interposer_file: $p.pid, comm: $p.comm}
		      else
			(["alloc_count", "alloc_bytes", "free_count"][]
			 | . as $k | select(off($p[$k]; sum($mine[][$k])))
			 | {pid: $p.pid, comm: $p.comm, field: $k, ebprof: $p[$k],
			    interposer: sum($mine[][$k])}),
			(select(off(frees($p) - $p.unknown_frees;
				    sum($mine[].calls.free) - sum($mine[].unknown_frees)))
			 | {pid: $p.pid, comm: $p.comm, field: "free"}),
			($mine[0].calls | keys[] | select(. != "free") | . as $k
			 | select(off(if $k == "malloc" then mallocs($p) else $p.calls[$k] end;
				      sum($mine[].calls[$k])))
			 | {pid: $p.pid, comm: $p.comm, call: $k})
		      end),
		   ($e[0].processes | map(select(.comm as $n | $skip | split(",") | index($n) | not)))
		   as $ours
		   | (["alloc_count", "alloc_bytes", "free_count"][] | . as $k
		      | select(off(sum($ours[][$k]); sum($files[][$k])))
		      | {total: $k, ebprof: sum($ours[][$k]), interposer: sum($files[][$k])})]' \
		> "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	# no table was full; a stack the unwinder could not finish is said as such (the unwind_*
	# drops) and still counts its calls: here the interposer, preloaded (LD_PRELOAD is not
	# among the DT_NEEDED libraries whose tables are built at attach), until its table loads
	jq -c .drops "$json"
	jqe '.drops | to_entries | map(select(.key | startswith("unwind_") | not) | .value)
		| add == 0' "$json"
}

@test "make -j2 of a C project: every compiler process reported, counts agree with the interposer" {
	command -v cc >/dev/null || skip "no C compiler"
	cp -r "$BATS_TEST_DIRNAME/../fixtures/cproj" "$T/proj"
	cd "$T/proj"
	run env COUNTALLOC_CHILD=fresh COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem -q -o "$T/out.json" -o "$T/out.txt" -o "$T/out.html" -- make -j2
	[ "$status" -eq 0 ]
	[ -x "$T/proj/app" ]
	# the profile is ~90 MB (cc1's sites): its summary read once, not by each check (3.5 s a
	# read of the whole)
	json_summary "$T/out.json" > "$T/p.json"
	# the driver per compile and for the link, cc1 and as per file, collect2, ld, make
	jqe '[.processes[] | select(.comm == "cc1")] | length == 4' "$T/p.json"
	jqe '[.processes[] | select(.comm == "as")] | length == 4' "$T/p.json"
	jqe '[.processes[] | select(.comm == "cc")] | length == 5' "$T/p.json"
	jqe '[.processes[] | select(.comm == "collect2" or .comm == "ld" or .comm == "make")]
	     | length == 3' "$T/p.json"
	jqe '.processes | length == 16' "$T/p.json"
	jqe 'all(.processes[]; .alloc_count > 0 and .ppid > 0)' "$T/p.json"
	# parents: make of every driver, a driver of each cc1 and as, collect2 of ld
	jqe '(.processes | map({(.pid | tostring): .comm}) | add) as $c
	     | all(.processes[] | select(.comm == "cc1" or .comm == "as"); $c[.ppid | tostring] == "cc")
	       and all(.processes[] | select(.comm == "cc"); $c[.ppid | tostring] == "make")
	       and all(.processes[] | select(.comm == "ld"); $c[.ppid | tostring] == "collect2")' \
		"$T/p.json"
	jqe '.totals.processes == 16 and .totals.alloc_count == ([.processes[].alloc_count] | add)' \
		"$T/p.json"
	grep -qE '^  total +16 processes' "$T/out.txt"
	grep -q '<th class="num" data-sort="num">PPID</th>' "$T/out.html"
	grep -q '<tfoot><tr><td>Total</td><td>16 processes</td>' "$T/out.html"
	# cc1's unwind table (~480,000 rows) fits beside make's and the rest: the rows map of a
	# launched command is not sized by the command's own tables alone (it was, and cc1 was
	# walked by frame pointers: 90% of the run's stacks ended in [truncated])
	jqe '.drops.unwind_rows_full == 0' "$T/p.json"
	compare_tree "$T/p.json"
	assert_no_probes
}

@test "fork, clone, posix_spawn, fork+exec, a thread that forks: each process exactly, from its start" {
	run env COUNTALLOC_CHILD=fresh COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem -q -vv -o "$T/out.json" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	# six processes; the thread is its process's
	jqe '.processes | length == 6' "$T/out.json"
	top=$(jq '[.processes[] | select(.cmdline | test("exec-child") | not)
		   | select(.comm == "forkfixture")][0].pid' "$T/out.json")
	# fork without exec: from zero; the 6 inherited blocks it frees are unknown to it, 5 of
	# them blocks its parent holds as they were at the fork (5 x 1000 bytes); the sixth's
	# address the parent freed and allocated again after the fork: another block, not the
	# child's (the interposer, whose table of the parent's blocks at the fork is the child's,
	# counts all 6: the parent's later frees are not in it)
	jqe ".processes[] | select(.comm == \"forked\") | .ppid == $top and .alloc_count == 3
	     and .alloc_bytes == 900 and .calls.free == 6 and .unknown_frees == 6
	     and .inherited_frees == 5 and .inherited_bytes == 5000" "$T/out.json"
	forked=$(jq '.processes[] | select(.comm == "forked") | .pid' "$T/out.json")
	jqe '.unknown_frees == 6 and .inherited_frees == 6 and .inherited_bytes == 6000' \
		"$T/ca.$forked"
	# no other process freed a block it inherited
	jqe '[.processes[] | select(.comm != "forked") | .inherited_frees] | all(. == 0)' "$T/out.json"
	# clone() with no exit signal: a process of its own
	jqe ".processes[] | select(.comm == \"cloned\") | .ppid == $top and .alloc_count == 7
	     and .alloc_bytes == 490 and .free_count == 0" "$T/out.json"
	# forked by a thread that is not the main one
	jqe ".processes[] | select(.comm == \"threadfork\") | .ppid == $top and .alloc_count == 2
	     and .alloc_bytes == 100" "$T/out.json"
	# the fork + exec child was hooked at its fork: its new program is readied at the hook's
	# hold (modes/mem/ready.c), the posix_spawn child's (not hooked) at a breakpoint
	# (the fork + exec child's 2 blocks before its exec count: 6 calls to the other's 4)
	spawned=$(jq '[.processes[] | select(.cmdline | test("exec-child"))] | min_by(.alloc_count) | .pid' "$T/out.json")
	forkexec=$(jq '[.processes[] | select(.cmdline | test("exec-child"))] | max_by(.alloc_count) | .pid' "$T/out.json")
	grep -q "pid $spawned: allocator mapped, found at the loader's _dl_debug_state$" <<< "$output"
	grep -q "pid $forkexec: allocator mapped, found at the loader's _dl_debug_state (held there by the unwinder's hook)$" <<< "$output"
	# posix_spawn (vfork): traced from its exec; fork + exec: the 2 blocks before the exec too
	jqe "[.processes[] | select(.cmdline | test(\"exec-child\"))] | length == 2
	     and all(.[]; .ppid == $top and .free_count == 1 and .live_bytes == 1200)
	     and (map(.alloc_count) | sort == [4, 6])
	     and (map(.alloc_bytes) | sort == [1600, 1640])" "$T/out.json"
	# the fork's 2 blocks before its exec, named from the old image's mappings (at the exec's
	# stop the maps are the new program's: an address of the old one is unmapped there, and
	# was a bare address over nothing)
	jqe "[.sites[] | select(.alloc_count == 2 and .alloc_bytes == 40)
	      | [.frames[].function] | join(\";\")]
	     == [\"malloc;allocs;main;__libc_start_call_main;__libc_start_main;_start\"]" \
		"$T/out.json"
	# the parent: 10 x 1000, the thread's 4 x 100, 2 x 2000 (and what glibc allocates for
	# the thread, which the interposer sees too)
	jqe ".processes[] | select(.pid == $top) | .alloc_bytes >= 14400" "$T/out.json"
	compare_tree "$T/out.json" cloned
	assert_no_probes
}

# After `ebprof mem -vv -o $T/c.json -- env LD_PRELOAD=ctoralloc.so startfix alloc`: both
# images traced (env's and startfix's), the constructor's malloc(4242) at ctoralloc_inner and
# main's malloc(777) at startfix_inner each once, freed.
exec_startfix_exact() {
	grep -q "(env): tracing glibc allocator" <<<"$output"
	grep -q "(startfix): tracing glibc allocator" <<<"$output"
	site() { jq --arg f "$1" '[.sites[] | select(any(.frames[]; .function == $f))
		| [.alloc_count, .alloc_bytes, .temporary_count, .live_count]]' "$T/c.json"; }
	[ "$(site ctoralloc_inner | jq -c .)" = "[[1,4242,1,0]]" ]
	[ "$(site startfix_inner | jq -c .)" = "[[1,777,1,0]]" ]
}

@test "an exec: probes live before the first constructor, the loader's hook the stop (env, then startfix)" {
	# env execs startfix with ctoralloc.so preloaded: its constructor mallocs 4242 bytes
	# (ctoralloc_inner) before startfix's main mallocs 777 (startfix_inner); each image is
	# run to the loader's _dl_debug_state with its libraries mapped (RT_CONSISTENT), before
	# any constructor, instead of system call by system call: env's by a breakpoint, startfix's
	# by the unwinder's hold there (env was hooked at its load, and the hook's uprobe takes the
	# new image's int3)
	run "$EBPROF" mem -q -vv -o "$T/c.json" -- \
		env LD_PRELOAD="$FIX/ctoralloc.so" "$FIX/startfix" alloc
	[ "$status" -eq 0 ]
	pid=$(jq '.processes[0].pid' "$T/c.json")
	grep -q "pid $pid: allocator mapped, found at the loader's _dl_debug_state$" <<<"$output"
	grep -q "pid $pid: allocator mapped, found at the loader's _dl_debug_state (held there by the unwinder's hook)$" <<<"$output"
	exec_startfix_exact
	jqe '.processes | length == 1 and .[0].comm == "startfix"' "$T/c.json"
	assert_no_probes
}

# alone: bpftrace's uprobe is machine-wide
# bats test_tags=alone
@test "an exec with another tool's uprobe on the loader's hook: followed by system calls (its exec by the hold), still exact" {
	# bpftrace's uprobe puts an int3 on _dl_debug_state: the kernel would take a breakpoint
	# of ours there for its own, and the process would run past it unseen (untraced). env is
	# followed system call by system call; startfix, its exec, stops by the unwinder's hold (a
	# uprobe beside bpftrace's)
	start_bpftrace 'BEGIN { printf("ready\n"); }
		uprobe:/lib64/ld-linux-x86-64.so.2:_dl_debug_state { @hits = count(); }'
	run "$EBPROF" mem -q -vv -o "$T/c.json" -- \
		env LD_PRELOAD="$FIX/ctoralloc.so" "$FIX/startfix" alloc
	stop_bpftrace
	[ "$status" -eq 0 ]
	! grep -q "found at the loader's _dl_debug_state$" <<<"$output" || false
	[ "$(grep -c "found at the loader's _dl_debug_state (held there by the unwinder's hook)$" <<<"$output")" -eq 1 ]
	grep -q "^@hits: [1-9]" "$T/bt.out"
	# env's image too (run past a breakpoint the kernel took for its own, it was not)
	exec_startfix_exact
	assert_no_probes
}

@test "a process table of 4 slots (--max-procs 2): processes one after another share its slots, each exact" {
	# the table is open addressing by pid (abi/mem.h): 4 slots, every pid's window wraps
	# around them; the parent stays while each child comes and goes, so the children's
	# entries take and leave slots the others' homes are in
	run "$EBPROF" mem -q --max-procs 2 -o "$T/out.json" -- "$FIX/forkfixture"
	[ "$status" -eq 0 ]
	jqe '.processes | length == 6' "$T/out.json"
	jqe '.drops.process_table_full == 0' "$T/out.json"
	jqe '.processes[] | select(.comm == "forked") | .alloc_count == 3 and .alloc_bytes == 900
	     and .calls.free == 6 and .unknown_frees == 6 and .inherited_frees == 5' "$T/out.json"
	jqe '.processes[] | select(.comm == "cloned") | .alloc_count == 7 and .alloc_bytes == 490' \
		"$T/out.json"
	jqe '.processes[] | select(.comm == "threadfork") | .alloc_count == 2
	     and .alloc_bytes == 100' "$T/out.json"
	jqe '[.processes[] | select(.cmdline | test("exec-child"))] | length == 2
	     and all(.[]; .free_count == 1 and .live_bytes == 1200)
	     and (map(.alloc_bytes) | sort == [1600, 1640])' "$T/out.json"
	assert_no_probes
}

# Two scalefixture processes, one leaving 20,000 blocks and one 40, each exact, none dropped,
# and what the passes over the live table found (the sites' live blocks) is what each
# process's counts say.
big_and_small_exact() {
	jqe '[.processes[] | select(.comm == "scalefixture")] | length == 2
	     and (map([.live_count, .live_bytes]) | sort == [[40, 2784], [20000, 1520000]])' "$1"
	jqe '.drops.live_table_full == 0' "$1"
	jqe '. as $r | .processes | all(.pid as $p | .live_count
	     == ([$r.sites[] | select(.pid == $p) | .live_count] | add // 0))' "$1"
}

@test "processes one after another: each one's blocks exact, read from the pages that hold blocks only" {
	# a 65,536-slot table (1,024 pages of 64 slots): the first process leaves 20,000 blocks in
	# nearly every page, a third of them past their home slot (abi/mem.h: a page is marked by
	# the program that claims a slot in it); its end empties them, and the pages found empty
	# lose their marks, so the next process's end reads a few pages, not all 1,024
	run "$EBPROF" mem -vv --max-live 65536 -o "$T/out.json" -- \
		sh -c "'$FIX/scalefixture' live 20000; '$FIX/scalefixture' live 40"
	[ "$status" -eq 0 ]
	big_and_small_exact "$T/out.json"
	local big small
	big=$(jq '.processes[] | select(.comm == "scalefixture" and .live_count == 20000) | .pid' \
		"$T/out.json")
	small=$(jq '.processes[] | select(.comm == "scalefixture" and .live_count == 40) | .pid' \
		"$T/out.json")
	grep "PID $big: its live blocks read from" <<< "$output"
	grep -Eq "PID $big: its live blocks read from (9[0-9][0-9]|10[0-9][0-9]) of the live table's 1024 pages" <<< "$output"
	grep "PID $small: its live blocks read from" <<< "$output"
	n=$(grep -o "PID $small: its live blocks read from [0-9]*" <<< "$output" | grep -o '[0-9]*$')
	# its 40 blocks' pages, the shell's, and those its blocks freed since marked (~110)
	[ "$n" -le 256 ]
}

@test "a child's end reads the pages its set of pids marked, not those of its parent's blocks" {
	# the parent holds 20,000 blocks in nearly every page of a 1,024-page table while its
	# child ends with 40: the child's pass reads the pages its pid's set of marks has (abi/mem.h,
	# MEM_LIVE_MARK_SETS), not the parent's ~1,000, unless the two pids share a set
	run "$EBPROF" mem -vv --max-live 65536 -o "$T/out.json" -- \
		"$FIX/scalefixture" hold 20000 "$FIX/scalefixture" live 40
	[ "$status" -eq 0 ]
	big_and_small_exact "$T/out.json"
	local big small n
	big=$(jq '.processes[] | select(.live_count == 20000) | .pid' "$T/out.json")
	small=$(jq '.processes[] | select(.live_count == 40) | .pid' "$T/out.json")
	n=$(grep -o "PID $small: its live blocks read from [0-9]*" <<< "$output" | grep -o '[0-9]*$')
	[ -n "$n" ]
	if [ $((big % 16)) -eq $((small % 16)) ]; then
		[ "$n" -ge 900 ]	# one set: the parent's pages are the child's way too
	else
		[ "$n" -le 128 ]	# its 40 blocks' pages, and those its set marked before
	fi
}

@test "an ended process's stacks leave the stacks map: a tree of many fits --max-stacks" {
	# 20 ls of ~37 stacks each, 740 in all, in a 256-stack table: each process's stacks and
	# sites are forgotten at its end, so the table holds those of the processes that run (it
	# kept every ended process's stacks before: 3,344 allocations lost theirs)
	run "$EBPROF" mem --max-stacks 256 -o "$T/out.json" -- \
		sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ls / >/dev/null; done'
	[ "$status" -eq 0 ]
	jqe '.drops.stack_table_full == 0 and .drops.site_table_full == 0
	     and .drops.stack_not_found == 0' "$T/out.json"
	jqe '[.processes[] | select(.comm == "ls")] | length == 20' "$T/out.json"
	# every ls: the same sites, each with its callers (more than the allocator's frame)
	jqe '. as $r | [.processes[] | select(.comm == "ls") | .pid as $p
	     | [$r.sites[] | select(.pid == $p)]] | (map(length) | unique | length == 1)
	     and all(.[][]; (.frames | length) > 1)' "$T/out.json"
}

@test "a forked child's stacks are its own: forgotten at its end, its parent's stay whole" {
	# parent, child and parent again allocate through one call of hold_blocks: the same
	# addresses, but each process interns its stacks under its own hashes (mem.bpf.c,
	# intern_stack), so the child's end does not take the parent's stack with it
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/scalefixture" forked 1000
	[ "$status" -eq 0 ]
	jqe '.drops.stack_not_found == 0 and .drops.stack_table_full == 0' "$T/out.json"
	jqe '[.processes[] | select(.comm == "scalefixture") | .live_count] | sort == [1000, 2000]' \
		"$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "hold_blocks")
	      | [.alloc_count, .frames[2].function]] | sort == [[1000, "main"], [2000, "main"]]' \
		"$T/out.json"
}

# alone: a TCP port picked at random; curl's load
# bats test_tags=alone
@test "nginx master and worker under load: each reported, posix_memalign exact" {
	command -v nginx >/dev/null || skip "nginx not installed (scripts/install-deps.sh installs it)"
	command -v curl >/dev/null || skip "curl not installed"
	# the worker runs as www-data and writes its interposer file there
	chmod 711 "$T"
	mkdir -m 1777 "$T/ca.d"
	port=$((20000 + RANDOM % 20000))
	cat > "$T/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
user www-data;
pid $T/nginx.pid;
error_log $T/error.log;
events { worker_connections 64; }
http {
	access_log off;
	server {
		listen 127.0.0.1:$port;
		location / { return 200 "ok\n"; }
	}
}
CONF
	env COUNTALLOC_CHILD=fresh COUNTALLOC_OUT="$T/ca.d/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem -q -o "$T/out.json" -o "$T/out.txt" -- \
		nginx -p "$T" -c "$T/nginx.conf" -e "$T/error.log" > "$T/ebprof.log" 2>&1 &
	BG_PIDS+=("$!")
	ep=$!
	ok=0
	for ((i = 0; i < 100; i++)); do
		curl -sf "http://127.0.0.1:$port/" > /dev/null && { ok=1; break; }
		sleep 0.1
	done
	[ "$ok" -eq 1 ]
	urls=()
	for ((i = 0; i < 300; i++)); do urls+=("http://127.0.0.1:$port/r$i"); done
	curl -sf "${urls[@]}" > "$T/replies"
	[ "$(grep -c '^ok$' "$T/replies")" -eq 300 ]
	# SIGTERM to ebprof goes on to nginx, which stops its worker and exits; then the report
	kill -TERM "$ep"
	wait "$ep" || true
	cat "$T/ebprof.log"
	jqe '.processes | length == 2' "$T/out.json"
	master=$(jq '.processes[] | select(.cmdline | test("master process")) | .pid' "$T/out.json")
	jqe ".processes[] | select(.cmdline | test(\"worker process\")) | .ppid == $master" \
		"$T/out.json"
	# the worker served 300 requests: its pools come from posix_memalign
	jqe '.processes[] | select(.cmdline | test("worker process")) | .calls.posix_memalign > 600' \
		"$T/out.json"
	jqe '.processes[] | select(.cmdline | test("master process")) | .calls.posix_memalign > 0' \
		"$T/out.json"
	mv "$T"/ca.d/ca.* "$T/"
	compare_tree "$T/out.json"
	assert_no_probes
}

@test "own mount and PID namespaces with its own copy of libc: exact, namespace PIDs shown" {
	command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	"$FIX/memfixture" --truth > "$T/truth.json"
	# inside: a copy of libc bind-mounted over the original path, seen by that namespace only;
	# uprobes go on inodes, so only probes on the copy (reached through /proc/PID/root) count
	run "$EBPROF" mem -q -o "$T/out.json" -o "$T/out.txt" -- \
		unshare -m -p -f --mount-proc --propagation private sh -c "
			cp '$libc' '$T/libc.so.6' && mount --bind '$T/libc.so.6' '$libc' &&
			stat -L -c %i '$libc' > '$T/inode.in' && exec '$FIX/memfixture' > /dev/null"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/inode.in")" != "$(stat -L -c %i "$libc")" ]
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# (its process totals also hold the shell it was before its exec: the sites tell apart)
	# host PID and the PID inside: the shell that became memfixture is 1 there
	jqe '.processes[] | select(.comm == "memfixture") | .ns_pid == 1 and .pid != 1' "$T/out.json"
	jqe '.processes[] | select(.comm == "unshare") | has("ns_pid") | not' "$T/out.json"
	grep -qE '^ +[0-9]+/1 ' "$T/out.txt"
	grep -qE '^  pid [0-9]+ \(pid 1 in its namespace\)' "$T/out.txt"
	assert_no_probes
}

@test "attach --follow: the children of an attached process are traced; without it they are not" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	for follow in --follow ""; do
		rm -f "$T/go"
		bg sh -c "while [ ! -e '$T/go' ]; do sleep 0.05; done; '$FIX/memfixture' > /dev/null; exit 0"
		sh=$BG
		[ -z "$follow" ] || followed=$sh
		"$EBPROF" mem -v -p "$sh" $follow -o "$T/out$follow.json" 2> "$T/eb.log" &
		eb=$!
		BG_PIDS+=("$eb")
		wait_for "$T/eb.log" 'tracing glibc allocator'
		touch "$T/go"
		wait "$eb"
	done
	# followed: the shell, its sleeps and memfixture, whose sites are exact
	jqe '[.processes[] | select(.comm == "memfixture")] | length == 1' "$T/out--follow.json"
	jqe "all(.processes[] | select(.pid != $followed); .ppid == $followed)" "$T/out--follow.json"
	fixture_sites "$T/out--follow.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# not followed: the shell alone
	jqe '[.processes[].comm] == ["sh"]' "$T/out.json"
	assert_no_probes
}

@test "--follow needs -p" {
	run "$EBPROF" mem --follow -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--follow is for -p PID"* ]]
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "-a: every process using libc, with a warning about the cost; a fixture's sites exact" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	# stopped once the fixture is done (a fixed -d 4 waited for nothing, or cut it short)
	"$EBPROF" mem -a -d 120 -q -o "$T/out.json" -o "$T/out.csv" 2> "$T/eb.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/eb.log" 'tracing every process'
	"$FIX/memfixture" --linger 1 > /dev/null &
	fx=$!
	wait "$fx"
	kill -INT "$eb"
	wait "$eb"
	grep -q 'warning: -a: tracing every process that uses .* each of their malloc-family calls pays a uprobe trap' "$T/eb.log"
	# the machine's profile is large (every process's sites, 10-60 s of jq): its summary, and
	# the fixture's sites from the CSV report
	json_summary "$T/out.json" > "$T/sum.json"
	# ebprof itself is never among them
	jqe "[.processes[].pid] | index($eb) | not" "$T/sum.json"
	# (what its row says, for a failure: a CI run once had another name there)
	jq -c --argjson p "$fx" '.processes[] | select(.pid == $p) | del(.calls, .sizes)' \
		"$T/sum.json"
	jqe ".processes[] | select(.pid == $fx) | .comm == \"memfixture\"" "$T/sum.json"
	python3 "$BATS_TEST_DIRNAME/csv_sites.py" "$T/out.csv" "$fx" > "$T/mine.json"
	fixture_sites "$T/mine.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	# (for a failure: a loaded machine once had 2 of the fixture's calls under other stacks;
	# the run's unwinder drops and the fixture's stacks that are not whole say why)
	jq -c '.drops | with_entries(select(.key | startswith("unwind")))' "$T/sum.json"
	grep -F "$fx" "$T/out.csv" | grep -F -e '[truncated]' -e '[stack lost]' | head -5 || true
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

# A process first seen calling malloc before its exec (a shell's child: bash mallocs before it
# execs) is named by its new program and command line: -a has no exec stop, its process entry
# counts the exec (held_exec). It kept the shell's name and bats' command line, or read "?"
# when first seen after its end.
# alone: -a: the whole machine
# bats test_tags=alone
@test "-a: a process seen before its exec is named by its new program and command line" {
	mkfifo "$T/go"
	"$EBPROF" mem -a -vv -d 120 -q -o "$T/out.json" 2> "$T/eb.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/eb.log" 'tracing every process' 60
	# the subshell mallocs (it expands the fifo's name), then waits for the go to exec
	( read -r _ < "$T/go"; exec "$FIX/memfixture" --linger 1 ) > /dev/null &
	fx=$!
	BG_PIDS+=("$fx")
	wait_for "$T/eb.log" "PID $fx \\([^)]*\\): seen calling the allocator" 60
	echo go > "$T/go"
	wait "$fx"
	kill -INT "$eb"
	wait "$eb"
	json_summary "$T/out.json" | jq --argjson p "$fx" '.processes[] | select(.pid == $p)' \
		> "$T/fx.json"
	jq -c '{pid, comm, cmdline}' "$T/fx.json"
	jqe '.comm == "memfixture"' "$T/fx.json"
	jqe '.cmdline | endswith("memfixture --linger 1")' "$T/fx.json"
	assert_no_probes
}

# A process whose C library was deleted since it started (libc6 upgraded under it) maps
# another inode than the system's: -a probes it too (it was left out, silently).
# alone: -a: the whole machine
# bats test_tags=alone
@test "-a: a process whose C library was deleted since it started is traced too, its calls exact" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	start_deleted_libc_fixture 30
	"$EBPROF" mem -a -d 30 -q -o "$T/out.json" 2> "$T/eb.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/eb.log" 'tracing every process'
	kill -USR1 "$FXPID"			# start the work
	wait_for "$FXLOG" 'done' 60
	kill -USR1 "$FXPID"			# end the linger
	wait_gone "$FXPID"
	kill -INT "$eb"
	wait "$eb"
	# the machine's profile is large (every process's sites, ~20 s of jq): its summary alone
	json_summary "$T/out.json" | jq --argjson p "$FXPID" '.processes[] | select(.pid == $p)' \
		> "$T/fx.json"
	jqe '.comm == "memfixture"' "$T/fx.json"
	# its calls, not its sites: -a unwinds a process already running when it starts from
	# its first calls on, and may cut a few stacks short (drops unwind_*), deleted libc or not
	jq '.calls
		| del(.free, ."operator new", ."operator new[]", ."operator delete",
		      ."operator delete[]", .mallocx, .rallocx, .dallocx, .sdallocx)
		| .memalign += .aligned_alloc | del(.aligned_alloc)' \
		"$T/fx.json" > "$T/got.json"
	jqe '.glibc_extra.calloc == 2' "$T/truth.json"
	# glibc_extra's callocs; aligned_alloc and memalign are one function (one address) in
	# glibc, told apart only by their callers' stacks
	jq '.calls | del(.free) | .calloc += 2 | .memalign += .aligned_alloc | del(.aligned_alloc)' \
		"$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

# concurrent: its -a runs are usage errors: nothing is traced
# bats test_tags=concurrent
@test "-a refuses a command, -p and --leaks" {
	run "$EBPROF" mem -a -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"-a traces every process already"* ]]
	run "$EBPROF" mem -a -p 1
	[ "$status" -eq 2 ]
	run "$EBPROF" mem -a --leaks
	[ "$status" -eq 2 ]
	[[ "$output" == *"-a cannot be combined with --leaks"* ]]
}

@test "overlayfs: libc copied up into an overlay's upper layer is traced through it" {
	command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
	lib=$(dirname "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)")
	mkdir -p "$T/ovl"
	"$FIX/memfixture" --truth > "$T/truth.json"
	# The overlay hides the library directory in the namespace, its upper layer on a tmpfs of
	# its own. Appending a marker to libc copies it up whole (a write copies the data even
	# where metacopy would copy only the inode): the programs started after that map the
	# upper layer's file, another file on another filesystem than the host's libc, on every
	# machine. A shell started then records the size of the file it maps (through
	# /proc/PID/map_files), as memfixture will map it.
	run "$EBPROF" mem -q -o "$T/out.json" -- unshare -m --propagation private sh -c "
		mount -t tmpfs tmpfs '$T/ovl' && mkdir '$T/ovl/up' '$T/ovl/work' &&
		mount -t overlay overlay -o lowerdir=$lib,upperdir=$T/ovl/up,workdir=$T/ovl/work $lib &&
		printf EBPROF-UPPER >> $lib/libc.so.6 &&
		sh -c 'r=\$(grep -m1 \"/libc.so.6\$\" /proc/\$\$/maps | cut -d\" \" -f1) &&
			stat -L -c %s /proc/\$\$/map_files/\$r' > '$T/size.mapped' &&
		exec '$FIX/memfixture' > /dev/null"
	[ "$status" -eq 0 ]
	# the mapped libc is the upper layer's copy (with the marker), not the host's file
	[ "$(cat "$T/size.mapped")" -eq $(($(stat -L -c %s "$lib/libc.so.6") + 12)) ]
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

@test "a command that leaves a child running: traced until SIGTERM, reported, then let go" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	"$EBPROF" mem -q -o "$T/out.json" -- \
		sh -c "'$FIX/memfixture' --linger 60 > '$T/fx.log' 2>&1 & echo \$! > '$T/fx.pid'" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/fx.log" 'done' 30
	fx=$(cat "$T/fx.pid")
	BG_PIDS+=("$fx")
	# the shell is gone; ebprof goes on with its child until told to stop
	kill -0 "$eb"
	kill -TERM "$eb"
	wait "$eb"
	# the child was reported while it ran, and runs on untraced
	kill -0 "$fx"
	jqe ".processes[] | select(.pid == $fx) | .comm == \"memfixture\"" "$T/out.json"
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	grep -q TracerPid:.0 "/proc/$fx/status"
	assert_no_probes
}
