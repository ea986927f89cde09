#!/usr/bin/env bats
# --mmap: the program's own mmap, munmap, mremap and brk, exact on a fixture whose every mapping
# is known (tests/fixtures/mmapfixture.c writes its own tally with --truth FILE), and a category
# apart: the malloc numbers are those of a run without --mmap.

load helpers

# Per fixture function, its mapping sites summed: [regions, bytes, live regions, live bytes].
# A site belongs to the first frame after the leaf that names one of the fixture's functions.
map_sites() {
	jq -c '[.sites[] | select(.category == "mmap")
		| {fn: ([.frames[1:][] | .function
			 | select(. as $f | ["do_whole", "do_head", "do_tail", "do_hole",
					    "span_reserve", "map_at", "remap_base", "move_dest",
					    "do_shared", "do_file", "big_mallocs", "__sbrk",
					    "remap_grow", "remap_shrink", "remap_move"]
				  | index($f))][0] // "(other)"),
		   leaf: .frames[0].function,
		   v: [.mmap_objects, .mmap_space, .mmap_inuse_objects, .mmap_inuse_space]}]
	       | group_by([.leaf, .fn])
	       | map({key: "\(.[0].leaf):\(.[0].fn)",
		      value: [(map(.v[0]) | add), (map(.v[1]) | add), (map(.v[2]) | add),
			      (map(.v[3]) | add)]})
	       | from_entries' "$1"
}

@test "--mmap: per-process mapping numbers equal the fixture's own tally" {
	run "$EBPROF" mem --mmap -o "$T/out.json" -- "$FIX/mmapfixture" --truth "$T/truth.json"
	[ "$status" -eq 0 ]
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0].mmap as $m | $t[0] as $t
		| {calls: [$m.calls, $t.calls],
		   mapped_count: [$m.mapped_count, $t.mapped_count],
		   mapped_bytes: [$m.mapped_bytes, $t.mapped_bytes],
		   unmapped_count: [$m.unmapped_count, $t.unmapped_count],
		   unmapped_bytes: [$m.unmapped_bytes, $t.unmapped_bytes],
		   live_count: [$m.live_count, $t.live_count],
		   live_bytes: [$m.live_bytes, $t.live_bytes],
		   peak_live_bytes: [$m.peak_live_bytes, $t.peak_live_bytes],
		   untracked: [$m.untracked, $t.untracked],
		   failed: [$m.failed, 0]}
		| to_entries | map(select(.value[0] != .value[1]))' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	jqe '.drops | add == 0' "$T/out.json"
	# the series of mapped bytes ends at the live mapped bytes
	jqe '.processes[0].mmap.live_bytes as $l
	     | [.series[] | select(.name == "mmap_live_bytes")][0].points[-1][1] == $l' "$T/out.json"
}

@test "--mmap: every mapping site exact: partial munmaps, MAP_FIXED, mremap, sbrk" {
	run "$EBPROF" mem --mmap -o "$T/out.json" -- "$FIX/mmapfixture" --truth "$T/truth.json"
	[ "$status" -eq 0 ]
	map_sites "$T/out.json" > "$T/got.json"
	P=$(jq .page "$T/truth.json")
	B=$(jq .brk_grow "$T/truth.json")
	# [regions mapped, bytes mapped, regions still mapped, bytes still mapped]; see the fixture.
	# glibc's mremap wrapper keeps a stack frame without a frame pointer: its caller is found by
	# the unwinder's tables (frame pointers alone missed it, and main's frame followed).
	jq -n --argjson P "$P" --argjson B "$B" '{
		"mmap:do_whole": [1, 4 * $P, 0, 0],
		"mmap:do_head": [1, 4 * $P, 1, 3 * $P],
		"mmap:do_tail": [1, 4 * $P, 1, 3 * $P],
		"mmap:do_hole": [1, 5 * $P, 2, 4 * $P],
		"mmap:span_reserve": [1, 6 * $P, 1, $P],
		"mmap:map_at": [2, 4 * $P, 1, $P],
		"mmap:remap_base": [1, 2 * $P, 0, 0],
		"mmap:move_dest": [1, $P, 0, 0],
		"mmap:do_shared": [1, 2 * $P, 1, 2 * $P],
		"mremap:remap_grow": [1, 4 * $P, 0, 0],
		"mremap:remap_shrink": [1, $P, 0, 0],
		"mremap:remap_move": [1, $P, 1, $P],
		"brk:__sbrk": [1, $B, 1, ($B - $P)]}' > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
}

@test "--mmap: 32-bit system calls (int \$0x80) are not the x86_64 mmap or brk of their number" {
	# compat32 brk: one mmap (its MAP_32BIT page), a 64 KiB sbrk, then 3 ia32 chdir(".") (12,
	# x86_64's brk) and 2 ia32 link(2)s that fail (9, mmap). Before: the chdirs' 0 was a brk to
	# 0, which let the heap go (live 0, brk 2 calls, untracked 2); the links 2 failed mmaps
	need_ia32
	run "$EBPROF" mem --mmap -q -o "$T/out.json" -- "$FIX/compat32" brk
	[ "$status" -eq 0 ]
	[[ "$output" == *"compat32 brk 65536 chdir32 3 link32 2"* ]]
	jq -c '.processes[0].mmap' "$T/out.json"
	jqe '.processes[0].mmap | .calls == {"mmap": 1, "mremap": 0, "brk": 1, "munmap": 0} and
	     .failed == 0 and .untracked == 0 and .unmapped_count == 0 and .live_count == 2 and
	     .live_bytes == 65536 + 4096' "$T/out.json"
}

@test "--mmap: the malloc numbers are those of a run without it (glibc's mmaps are malloc's)" {
	run "$EBPROF" mem --mmap -o "$T/with.json" -- "$FIX/mmapfixture" --truth "$T/truth.json"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem -o "$T/without.json" -- "$FIX/mmapfixture"
	[ "$status" -eq 0 ]
	pick='.processes[0] | {calls, alloc_count, alloc_bytes, free_count, free_bytes,
	      live_count, live_bytes, peak_live_bytes, max_request, unknown_frees, failed}'
	diff <(jq -S "$pick" "$T/without.json") <(jq -S "$pick" "$T/with.json")
	sites='[.sites[] | select(.category != "mmap")
	        | {f: [.frames[] | .function], alloc_count, alloc_bytes, live_count, live_bytes}]
	       | sort'
	diff <(jq -S "$sites" "$T/without.json") <(jq -S "$sites" "$T/with.json")
	# and they equal the fixture's: 3 mallocs of 1 MiB and a realloc, 2 frees
	jqe '.processes[0] | .calls.malloc == 3 and .calls.realloc == 1 and .calls.free == 2
	     and .alloc_bytes == 5242880' "$T/with.json"
	# no mapping site comes from inside malloc, realloc or free, nor from the file mapping
	jqe '[.sites[] | select(.category == "mmap") | .frames[].function
	      | select(. == "big_mallocs" or . == "do_file")] | length == 0' "$T/with.json"
	# mapping sites are 0 in every malloc type, malloc sites 0 in every mmap type
	jqe '[.sites[] | select(.category == "mmap") | .alloc_objects + .alloc_space + .inuse_space]
	     | add == 0' "$T/with.json"
	jqe '[.sites[] | select(.category == "malloc") | .mmap_objects + .mmap_space] | add == 0' \
		"$T/with.json"
	# without --mmap nothing of it shows
	jqe '(.processes[0] | has("mmap") | not) and ([.sites[] | has("category")] | any | not)
	     and ([.sample_types[].type | select(startswith("mmap"))] | length == 0)' \
		"$T/without.json"
}

@test "--mmap: attached by PID, mappings from before are never subtracted, the rest exact" {
	bg "$FIX/mmapfixture" --wait-start --truth "$T/truth.json" < /dev/null > "$T/fx.log" 2>&1
	fx=$BG
	wait_for "$T/fx.log" 'waiting'
	"$EBPROF" mem -v --mmap -p "$fx" -o "$T/out.json" 2> "$T/eb.log" &
	eb=$!
	BG_PIDS+=("$eb")
	wait_for "$T/eb.log" 'tracing glibc allocator'
	kill -USR1 "$fx"
	wait "$eb"
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0].mmap as $m | $t[0] as $t
		| [$m.calls == $t.calls, $m.mapped_bytes == $t.mapped_bytes,
		   $m.unmapped_bytes == $t.unmapped_bytes, $m.live_bytes == $t.live_bytes,
		   $m.live_count == $t.live_count, $m.peak_live_bytes == $t.peak_live_bytes,
		   $m.untracked == $t.untracked] | all' > "$T/ok.json"
	jq -c '.processes[0].mmap' "$T/out.json"
	cat "$T/truth.json"
	jqe '. == true' "$T/ok.json"
	jqe '[.drops[]] | add == 0' "$T/out.json"
}

@test "--mmap: the text report has the mappings apart, and mappings still mapped at exit" {
	run "$EBPROF" mem --mmap -o "$T/out.txt" -- "$FIX/mmapfixture"
	[ "$status" -eq 0 ]
	grep -q "mappings (mmap, mremap, brk: a category apart, not in the numbers above)" "$T/out.txt"
	grep -qE "calls: mmap 10, munmap 5, mremap 3, brk 2 \(failed 0, untracked 2\)" "$T/out.txt"
	grep -qE "^Top 11 mapping sites by bytes \(of 11; mmap, mremap, brk" "$T/out.txt" ||
		grep -qE "^Top 10 mapping sites by bytes \(of 1[0-9]; mmap, mremap, brk" "$T/out.txt"
	grep -qE "^Mappings still mapped at exit: 9 regions, .* \(69732 bytes\)" "$T/out.txt"
	grep -qE "^Top 2 allocation sites by bytes$" "$T/out.txt"
	# the allocation sections never list a mapping
	sed -n '/^Top 2 allocation sites/,/^Top .* mapping sites/p' "$T/out.txt" > "$T/alloc.txt"
	run grep -E "#0 (mmap|mremap|brk)$" "$T/alloc.txt"
	[ "$status" -eq 1 ]
}

@test "--mmap: the flame graph and pprof take the mmap sample types" {
	run "$EBPROF" mem --mmap --value mmap_inuse_space -o "$T/out.folded" -o "$T/out.pb.gz" \
		-- "$FIX/mmapfixture"
	[ "$status" -eq 0 ]
	# live mapped bytes by stack: 69732 in all
	total=$(awk '{s += $NF} END {print s}' "$T/out.folded")
	[ "$total" -eq 69732 ]
	run grep -c "malloc" "$T/out.folded"
	[ "$output" -eq 0 ]
}

@test "--mmap: no tracepoint left behind; bad input is a usage error" {
	run "$EBPROF" mem --mmap -o "$T/out.json" -- true
	[ "$status" -eq 0 ]
	assert_no_probes '^map_(enter|exit)$'
	run "$EBPROF" mem --value mmap_space -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--value mmap_space needs --mmap"* ]]
	run "$EBPROF" mem --mmap --max-regions 0 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid --max-regions '0'"* ]]
}

@test "--mmap: a full region table is a counted drop with a note; the numbers stay consistent" {
	run "$EBPROF" mem --mmap --max-regions 3 -o "$T/out.json" -- "$FIX/mmapfixture"
	[ "$status" -eq 0 ]
	jqe '.drops.region_table_full > 0' "$T/out.json"
	jqe '.notes | any(test("region table \\(--max-regions 3\\) was full"))' "$T/out.json"
	# what could not be tracked is released at once: mapped - unmapped = live = the sites' live
	jqe '.processes[0].mmap as $m | [.sites[] | select(.category == "mmap")] as $s
	     | $m.mapped_bytes - $m.unmapped_bytes == $m.live_bytes
	     and ($s | map(.mmap_inuse_space) | add) == $m.live_bytes
	     and ($s | map(.mmap_inuse_objects) | add) == $m.live_count
	     and $m.live_count <= 3' "$T/out.json"
	# every mmap is still counted (unmaps of what was never tracked are untracked)
	jqe '.processes[0].mmap.calls.mmap == 10' "$T/out.json"
}

# A mapping's stack is unwound as an allocation's (--unwind): by tables through code without
# frame pointers, where the kernel's frame-pointer walk stopped after a frame or two and said
# nothing (python3's arenas: mmap;_PyObject_ArenaMmap, as if that were the outermost frame).
# Its ends are said as every user stack's: [truncated] past 127 frames, counted.
@test "--mmap: mapping stacks are complete through code without frame pointers; past 127 frames they say so" {
	run "$EBPROF" mem -q --mmap -o "$T/d.json" -- "$FIX/deeprec" 50 5 mmap
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.category == "mmap")] | length == 1 and
	     (.[0] | .mmap_objects == 5 and ([.frames[].function] as $f
	      | $f[0:2] == ["mmap", "deeprec_leaf"] and ($f[2:52] | unique) == ["deeprec_level"] and
	        $f[52] == "main" and $f[-1] == "_start"))' "$T/d.json"
	run "$EBPROF" mem -q --mmap -o "$T/deep.json" -- "$FIX/deeprec" 200 5 mmap
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.category == "mmap")][0] | .mmap_objects == 5 and .frames[-1].function == "[truncated]" and (.frames | length) == 127' "$T/deep.json"
	jqe '.drops.unwind_too_deep == 5' "$T/deep.json"
	# by frame pointers the walk is ebprof's own too, its end at the limit said and counted
	run "$EBPROF" mem -q --mmap --unwind fp -o "$T/fp.json" -- "$FIX/deeprec" 200 5 mmap
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.category == "mmap")][0] | .frames[-1].function == "[truncated]" and (.frames | length) == 127' "$T/fp.json"
	jqe '.drops.unwind_fp_broken > 0' "$T/fp.json"
	run "$EBPROF" mem -q --mmap -o "$T/py.json" -- /usr/bin/python3 -c 'x = [str(i) * 3 for i in range(300000)]; print(len(x))'
	[ "$status" -eq 0 ]
	jq '[.sites[] | select(.category == "mmap") | {b: .mmap_space, f: [.frames[].function]}]' "$T/py.json" > "$T/py_sites.json"
	total=$(jq '[.[].b] | add // 0' "$T/py_sites.json")
	whole=$(jq '[.[] | select(.f[-1] == "_start") | .b] | add // 0' "$T/py_sites.json")
	echo "python3: $whole of $total mapped bytes in stacks down to _start"
	[ "$total" -gt 0 ]
	[ $((whole * 100)) -ge $((total * 90)) ]
}

# free has an entry probe only, so nothing marked a thread as inside it: a thread whose first
# allocator call is free (of a block another thread allocated) gets its own glibc arena there,
# a 128 MiB mmap that was counted as the program's (mmap;alloc_new_heap;...;free;freer), as were
# free's munmaps of large blocks (untracked). They are the allocator's now, as the mappings
# made inside malloc always were. The fixture's own page is mapped in a frame that spans the
# slot where an earlier free's return address still lies: that mmap is the program's (its stack
# has no free in it).
@test "--mmap: mappings made inside free (a thread's first free making glibc's arena) are the allocator's" {
	run "$EBPROF" mem --mmap -o "$T/out.json" -- "$FIX/threadfree" 3
	[ "$status" -eq 0 ]
	jq -c '.sites[] | select(.category == "mmap") | [.mmap_objects, .mmap_space, [.frames[].function]]' "$T/out.json"
	jq -c '.processes[0].mmap' "$T/out.json"
	# no mapping site is inside free; the program's own: the threads' stacks and one page
	jqe '[.sites[] | select(.category == "mmap") | select(any(.frames[]; .function == "free"))] == []' "$T/out.json"
	jqe '[.sites[] | select(.category == "mmap") | select(.frames[1].function == "own_page")]
	     | length == 1 and .[0].mmap_objects == 1 and .[0].mmap_space == 4096 and .[0].mmap_inuse_space == 0' "$T/out.json"
	jqe '[.sites[] | select(.category == "mmap") | .frames[1].function] - ["allocate_stack", "own_page"] == []' "$T/out.json"
	jqe '.processes[0].mmap as $m
	     | $m.calls.mmap == $m.mapped_count and $m.calls.munmap == 1 and $m.untracked == 0 and
	       $m.unmapped_bytes == 4096' "$T/out.json"
}
