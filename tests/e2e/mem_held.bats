#!/usr/bin/env bats
# mem's held accounting (src/bpf/mem.bpf.c, "Held accounting"): each thread holds the site and
# process counts of up to HELD_WAYS allocation sites and as many free sites, and adds a site's
# when one it holds none of takes its way, every 512 calls, and at its exit. The heldways
# fixture cycles over K sites in two threads, with two sizes a site, temporaries and leaks;
# its truth is computed from its own rule (see tests/fixtures/heldways.c): every site's counts,
# bytes, size buckets, temporaries, live blocks and lifetimes must be exact whether its sites
# fit in the ways (K = 3) or take them from each other (K = 6, 8); --alloc-only's counts,
# held in the same ways, too.

load helpers

# the truth for K sites, N rounds a thread, T threads, against the report's fixture sites
# (ONLY_ALLOCS=1: the allocation counts, bytes and buckets alone, for --alloc-only)
held_exact() {
	local k=$1 n=$2 t=$3 json=$4
	jq -n --slurpfile e "$json" --argjson K "$k" --argjson N "$n" --argjson T "$t" \
		--argjson A "${ONLY_ALLOCS:-0}" '
		($N / $K) as $R
		| [range(0; $K) | . as $s
		   | {site: "heldways_site\($s)",
		      alloc_count: ($R * $T),
		      alloc_bytes: ($R / 2 * ($s + 1) * (16 + 1024) * $T),
		      live_count: (if $s == 1 then $N / (5 * $K) * $T else 0 end),
		      temporary_count: (if $s == 0 then $R * $T elif $s == $K - 1 then $T else 0 end),
		      buckets: [[16 * ($s + 1), $R / 2 * $T], [1024 * ($s + 1), $R / 2 * $T]]
		                | map({b: ((.[0] | log2 | floor)), count: .[1]}) | sort_by(.b)}] as $want
		| [$e[0].sites[]
		   | select(.frames[1].function // "" | startswith("heldways_site"))
		   | {site: .frames[1].function, alloc_count, alloc_bytes, live_count, temporary_count,
		      buckets: [.histogram[] | {b: (.min | log2 | floor), count}] | sort_by(.b),
		      freed: ([.lifetimes[].count] | add // 0)}]
		| group_by(.site)
		| map(if length == 1 then .[0] else error("site \(.[0].site) in \(length) stacks") end)
		| . as $got
		| (if $A == 1 then [] else $got | map(select(.freed != .alloc_count - .live_count))
		   end) as $bad
		| def only: if $A == 1 then {site, alloc_count, alloc_bytes, buckets} else . end;
		if ($bad | length) > 0
		  then error("lifetimes not one a freed block: \($bad)")
		  else ($got | map(del(.freed) | only) | sort_by(.site))
		       == ($want | map(only) | sort_by(.site)) end'
}

@test "held accounting: every site exact when the sites fit in the ways (3 sites, 2 threads)" {
	run "$EBPROF" mem -o "$T/out.json" -- "$FIX/heldways" 3 60000 2
	[ "$status" -eq 0 ]
	jqe '.drops | to_entries | map(select(.value != 0)) | length == 0' "$T/out.json"
	run held_exact 3 60000 2 "$T/out.json"
	echo "$output"
	[ "$output" = true ]
}

@test "held accounting: every site exact when more sites than ways take turns (6 and 8 sites)" {
	for k in 6 8; do
		run "$EBPROF" mem -o "$T/out$k.json" -- "$FIX/heldways" "$k" $((k * 10000)) 2
		[ "$status" -eq 0 ]
		run held_exact "$k" $((k * 10000)) 2 "$T/out$k.json"
		echo "K=$k: $output"
		[ "$output" = true ]
	done
	# by frame pointers too (the same accounting, other stacks)
	run "$EBPROF" mem --unwind fp -o "$T/fp.json" -- "$FIX/heldways" 6 60000 1
	[ "$status" -eq 0 ]
	run held_exact 6 60000 1 "$T/fp.json"
	echo "fp: $output"
	[ "$output" = true ]
}

@test "held accounting, --alloc-only: every site's counts, bytes and buckets exact (3 and 6 sites)" {
	# --alloc-only holds its counts in the same ways (mem_alloc_only.bpf.h, ao_flush)
	for k in 3 6; do
		run "$EBPROF" mem --alloc-only -o "$T/ao$k.json" -- "$FIX/heldways" "$k" $((k * 10000)) 2
		[ "$status" -eq 0 ]
		ONLY_ALLOCS=1 run held_exact "$k" $((k * 10000)) 2 "$T/ao$k.json"
		echo "K=$k: $output"
		[ "$output" = true ]
		jqe ".processes[0].alloc_count >= $((k * 20000))" "$T/ao$k.json"
	done
}
