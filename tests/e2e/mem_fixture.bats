#!/usr/bin/env bats
# Exactness: a fixture whose every allocation is known, launched under ebprof.

load helpers

@test "launch: every fixture site's counts, bytes and leaks equal the truth" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# each freed block's lifetime is in its site (threads hold them, then add them at a change
	# of site, every 512, at their exit)
	jqe '[.sites[] | select(([.lifetimes[].count] | add // 0) != .alloc_count - .live_count)]
	     | length == 0' "$T/out.json"
}

@test "launch: per-function calls and process totals equal the truth plus glibc's own" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0] as $p | $t[0] as $t | $t.glibc_extra as $x | $t.calls as $c
		| {malloc: [$p.calls.malloc, $c.malloc],
		   calloc: [$p.calls.calloc, $c.calloc + $x.calloc],
		   realloc: [$p.calls.realloc, $c.realloc],
		   reallocarray: [$p.calls.reallocarray, $c.reallocarray],
		   memalign: [$p.calls.memalign, $c.memalign],
		   aligned_alloc: [$p.calls.aligned_alloc, $c.aligned_alloc],
		   posix_memalign: [$p.calls.posix_memalign, $c.posix_memalign],
		   valloc: [$p.calls.valloc, $c.valloc],
		   pvalloc: [$p.calls.pvalloc, $c.pvalloc],
		   free_known: [$p.calls.free - $p.unknown_frees, $c.free],
		   failed: [$p.failed, $t.failed],
		   alloc_count: [$p.alloc_count, $t.alloc_count + $x.calloc],
		   free_count: [$p.free_count, $t.free_count],
		   free_bytes: [$p.free_bytes, $t.free_bytes],
		   live_count: [$p.live_count, $t.live_count + $x.live_count],
		   max_request: [$p.max_request, 100000]}
		| to_entries | map(select(.value[0] != .value[1]))' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	# glibc's own: exactly the thread DTVs, one calloc per thread, still live
	jqe '[.sites[] | select(any(.frames[]; .function == "allocate_dtv"))]
	     | (map(.alloc_count) | add) == 2 and (map(.live_count) | add) == 2' "$T/out.json"
	# one entry point in glibc, told apart by what each caller called
	jqe '.processes[0].note | test("aligned_alloc=memalign: calls told apart")' "$T/out.json"
}

@test "launch: matches the LD_PRELOAD interposer call for call" {
	COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" "$FIX/memfixture" > /dev/null
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	ca=$(ls "$T"/ca.* | head -1)
	jq -n --slurpfile e "$T/out.json" --slurpfile c "$ca" '
		$e[0].processes[0] as $p | $c[0] as $c
		| [($c.calls | keys[] | select(. != "free") | select($p.calls[.] != $c.calls[.])),
		   (if $p.calls.free - $p.unknown_frees != $c.calls.free then "free" else empty end),
		   (["alloc_count", "free_count", "free_bytes", "live_count", "failed"][]
		    | select($p[.] != $c[.]))]' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
}

@test "launch: zero drops, and the report names every leaking function" {
	run "$EBPROF" mem --top 50 -o "$T/out.txt" -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	jqe '[.drops[]] | add == 0' "$T/out.json"
	for f in leak_small leak_medium leak_big leak_calloc leak_realloc leak_aligned thread_leak; do
		jqe "[.sites[] | select(.live_count > 0) | .frames[].function] | index(\"$f\")" \
			"$T/out.json"
		sed -n '/^Outstanding/,$p' "$T/out.txt" | grep -q "$f"
	done
	grep -q 'Drops: none' "$T/out.txt"
}

@test "launch: file:line and the leaf allocator frame are right" {
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.frames[1].function == "leak_calloc")][0]
	     | .frames[0].function == "calloc" and (.frames[0].module | test("libc.so"))
	       and (.frames[1].file | test("memfixture.c$")) and .frames[1].line > 0' "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "leak_aligned")][0].frames[0].function
	     == "posix_memalign"' "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "do_aligned_alloc")] | length > 0 and
	     all(.frames[0].function == "aligned_alloc")' "$T/out.json"
	jqe '[.sites[] | select(.frames[1].function == "do_memalign")] | length > 0 and
	     all(.frames[0].function == "memalign")' "$T/out.json"
}

@test "launch: exit status, stdin and stdout pass through" {
	run "$EBPROF" mem -o "$T/a.json" -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	run "$EBPROF" mem -o "$T/b.json" -- sh -c 'kill -9 $$'
	[ "$status" -eq 137 ]
	[ -s "$T/b.json" ]
	out=$(echo hello | "$EBPROF" mem -o "$T/c.json" -- cat)
	[ "$out" = "hello" ]
	jqe '.processes[0].comm == "cat"' "$T/c.json"
}

@test "launch: nothing ebprof does before exec is counted" {
	COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" /bin/true
	run "$EBPROF" mem -o "$T/out.json" -- /bin/true
	[ "$status" -eq 0 ]
	ca=$(ls "$T"/ca.* | head -1)
	jq -n --slurpfile e "$T/out.json" --slurpfile c "$ca" \
		'$e[0].processes[0].alloc_count == $c[0].alloc_count' | grep -qx true
}

@test "launch: the largest request's size, time and exact stack in JSON, text and HTML" {
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	# leak_big's 100000-byte malloc is the fixture's largest request (the failures are larger
	# but fail: they are no request that was served)
	jqe '.processes[0] as $p | $p.largest_request.bytes == 100000 and
	     $p.largest_request.bytes == $p.max_request and $p.largest_request.t_ns > 0' "$T/out.json"
	jqe '.processes[0].largest_request.site as $s | .sites[$s].frames[0:4] | map(.function)
	     == ["malloc", "leak_big", "run_workload", "main"]' "$T/out.json"
	run "$EBPROF" mem -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	grep -A2 "largest request 97.7 KiB (100000 bytes) at" <<< "$output" > "$T/largest.txt"
	cat "$T/largest.txt"
	grep -q '#0 malloc ' "$T/largest.txt"
	grep -q '#1 leak_big (.*memfixture.c:[0-9]*)' "$T/largest.txt"
	run "$EBPROF" mem -o "$T/out.html" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	grep -q 'Largest request 97.7 KiB (100000 bytes)' "$T/out.html"
	grep -o 'class="largest-stack".*</div>' "$T/out.html" | grep -q '<code>leak_big</code>'
}

@test "launch: --alloc-only keeps the largest request's site, without its time" {
	run "$EBPROF" mem --alloc-only -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	jqe '.processes[0].largest_request | .bytes == 100000 and .t_ns == null' "$T/out.json"
	jqe '.processes[0].largest_request.site as $s
	     | any(.sites[$s].frames[]; .function == "leak_big")' "$T/out.json"
}

@test "launch: text report by default, with summary, sites and histograms" {
	run "$EBPROF" mem -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Processes"* ]]
	[[ "$output" == *"churn"* ]]
	[[ "$output" == *"Outstanding allocations"* ]]
	[[ "$output" == *"#"* ]]
}

@test "launch: --min-size/--max-size track only that range, and the report says so" {
	run "$EBPROF" mem --min-size 99999 --max-size 100000 -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	# leak_big is the fixture's one 100000-byte block
	jqe '[.sites[] | select(any(.frames[]; .function == "leak_big"))] | length == 1' "$T/out.json"
	jqe '[.sites[].histogram[] | select(.min < 65536)] | length == 0' "$T/out.json"
	jqe '.processes[0].max_request <= 100000 and .processes[0].max_request >= 99999' "$T/out.json"
	jqe '.notes | any(test("--min-size"))' "$T/out.json"
	# calls are still all counted
	jqe '.processes[0].calls.malloc == 110018' "$T/out.json"
}

@test "launch: --sort count and --top shape the text report" {
	run "$EBPROF" mem --sort count --top 1 -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Top 1 allocation site by count"* ]]
	# the most frequent site is churn's malloc (100,000 calls)
	sed -n '/^Top 1/,/^Outstanding/p' <<< "$output" | grep -q churn
}

# its functions have no symbols, but FDEs (strip keeps .eh_frame): each frame is named after the
# FDE holding it, "stripped!sub_HEX", HEX the function's address in the full file's symbol table
# (nm -S), its offset inside that function; before, every frame was "stripped+0xOFFSET"
@test "launch: a stripped binary is counted exactly; its frames are named by their call frame ranges" {
	cp "$FIX/memfixture" "$T/stripped"
	strip --strip-all "$T/stripped"
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -o "$T/out.txt" -- "$T/stripped"
	[ "$status" -eq 0 ]
	jqe '.processes[0].calls.malloc == 110018 and .processes[0].live_count == 20' "$T/out.json"
	# frames in the stripped executable: named after their function's start, never dropped
	jq -r '.sites[].frames[] | select(.module // "" | endswith("/stripped")) |
	       "\(.offset) \(.function) \(.cfi_named)"' "$T/out.json" | sort -u > "$T/frames"
	cat "$T/frames"
	[ "$(wc -l < "$T/frames")" -ge 3 ]
	# the full file's functions: start and end, in decimal
	nm -S --defined-only "$FIX/memfixture" | while read -r a sz t _; do
		[[ "$t" == [tT] ]] && echo "$((16#$a)) $((16#$a + 16#$sz))"
	done > "$T/nm"
	while read -r off fn cfi; do
		[ "$cfi" = true ]
		[[ "$fn" == stripped!sub_* ]]
		start=$((16#${fn#stripped!sub_}))
		# the full file's function at that address holds the frame's offset
		awk -v s="$start" -v o="$((off))" '$1 == s && o >= $1 && o < $2 { f = 1 }
			END { exit !f }' "$T/nm"
	done < "$T/frames"
	grep -q 'stripped!sub_' "$T/out.txt"
	! grep -q 'stripped+0x' "$T/out.txt" || false
	# a stack's frame names its module once: in the name, not again after it
	grep -E '^ +#[0-9]+ stripped!sub_[0-9a-f]+$' "$T/out.txt"
	! grep -q 'stripped!sub_[0-9a-f]* \[stripped\]' "$T/out.txt" || false
}

@test "launch: temporaries and lifetimes per site are exact on the fixture" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -o "$T/out.txt" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	# churn, do_calloc and thread_churn free each block before allocating the next: all of
	# their allocations are temporaries; the leaks are none
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		def site($f): [$e[0].sites[] | select(.frames[1].function == $f)];
		{churn: [(site("churn") | map(.temporary_count) | add), $t[0].sites.churn.alloc_count],
		 do_calloc: [(site("do_calloc") | map(.temporary_count) | add),
			     $t[0].sites.do_calloc.alloc_count],
		 thread_churn: [(site("thread_churn") | map(.temporary_count) | add),
				$t[0].sites.thread_churn.alloc_count],
		 leak_small: [(site("leak_small") | map(.temporary_count) | add), 0]}
		| to_entries | map(select(.value[0] != .value[1]))' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	# every free of a tracked block has a lifetime
	jqe '([.sites[].lifetimes[].count] | add) == .processes[0].free_count' "$T/out.json"
	grep -q 'temporary: 100000 of 100000 allocations (100.0%)' "$T/out.txt"
	grep -q 'lifetimes:' "$T/out.txt"
}

@test "launch: a command that execs another program (env VAR=1 prog) is traced across exec" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -- env FOO=1 "$FIX/memfixture"
	[ "$status" -eq 0 ]
	# one process, named by its last program; env's blocks went with its image at exec
	jqe '.processes | length == 1 and .[0].comm == "memfixture"' "$T/out.json"
	jqe '.processes[0].live_count == 20' "$T/out.json"
	jqe '[.sites[] | .outstanding.count // 0] | add == 20' "$T/out.json"
	jqe '.notes | any(test("ran a new program"))' "$T/out.json"
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	assert_no_probes
}

@test "launch: a statically linked program: exact sites, no garbage frames" {
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/memfixture_static"
	[ "$status" -eq 0 ]
	jqe '.processes[0].note | test("^static allocator")' "$T/out.json"
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# the fixture's stacks end in the outermost frame, _start, whose call frame information
	# says so; nothing after it (frame-pointer walks of static binaries used to pick up a
	# bogus return address from the start-up code)
	jqe '[.sites[] | select(.frames[1].function == "leak_small") | .frames[-3:] | map(.function)]
	     | all(. == ["__libc_start_call_main", "__libc_start_main", "_start"])' "$T/out.json"
}

# dlburn LIB SECS alloc: 3 x malloc(333) in libdlburn.so's lib_alloc_inner <- lib_alloc, called
# by run_lib after SECS of CPU in the library, which it then dlcloses (gone by the end). Held
# 1.5 s, the library is in a snapshot of the mappings (read every second): its frames are
# named. Opened and closed between two (0.01 s): said ([truncated] after the bare address of
# the frame in it), never the stack without its frames (run_lib read as malloc's caller's
# caller: what the report said when only the last snapshot named frames).
@test "launch: blocks allocated in a library dlclosed before the end: named, or said unnamed" {
	site999() {
		jq -c '[.sites[] | select(.alloc_bytes == 999)
			| [.alloc_count, [.frames[] | .function]]]' "$1"
	}
	full='[[3,["malloc","lib_alloc_inner","lib_alloc","run_lib","main","__libc_start_call_main","__libc_start_main","_start"]]]'
	run "$EBPROF" mem -q -o "$T/held.json" -- "$FIX/dlburn" "$FIX/libdlburn.so" 1.5 alloc
	[ "$status" -eq 0 ]
	site999 "$T/held.json"
	[ "$(site999 "$T/held.json")" = "$full" ]
	run "$EBPROF" mem -q -o "$T/brief.json" -- "$FIX/dlburn" "$FIX/libdlburn.so" 0.01 alloc
	[ "$status" -eq 0 ]
	site999 "$T/brief.json"
	[ "$(site999 "$T/brief.json")" = "$full" ] ||
		[ "$(site999 "$T/brief.json")" = '[[3,["malloc",null,"[truncated]"]]]' ]
	assert_no_probes
}
