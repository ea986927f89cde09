#!/usr/bin/env bats
# Growth trends, --min-age and peaks, on a fixture whose every block is known
# (tests/fixtures/growfixture.c). Only what the fixture fixes exactly is compared exactly; times
# are checked for their order, never for their length.

load helpers

# The site whose first frame after the allocator leaf is function $1.
site() {
	echo "[.sites[] | select(.frames[1].function == \"$1\")][0]"
}

@test "growth: the leak ranks first and grows, the cache is a plateau; exact outstanding counts" {
	"$FIX/growfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem -o "$T/out.json" -o "$T/out.txt" -- "$FIX/growfixture"
	[ "$status" -eq 0 ]
	# a 4 s run: snapshots about every second, so trends were fitted
	jqe '.processes[0].growth_window | .snapshots >= 3 and .from_ns < .to_ns' "$T/out.json"
	# ranked by growth rate, the leak comes first and is growing
	jqe '[.sites[] | select(.growth.max_bytes > 0)] | sort_by(-.growth.bytes_per_sec)
	     | .[0].frames[1].function == "leak_step" and .[0].growth.trend == "growing"
	       and .[0].growth.bytes_per_sec > 0' "$T/out.json"
	# everything the leak made is live at the end, the most it ever held
	jqe "$(site leak_step).growth | .last_bytes == 409600 and .max_bytes == 409600
	     and .first_bytes < .last_bytes" "$T/out.json"
	# the cache grew once and held still: plateau, not growing
	jqe "$(site cache_fill).growth | .trend == \"plateau\" and .bytes_per_sec == 0
	     and .first_bytes == 8192000 and .last_bytes == 8192000 and .max_bytes == 8192000" \
		"$T/out.json"
	# the malloc/free loop holds nothing at the end and never trends
	jqe "$(site temp_churn).growth | .trend == \"flat\" and .last_bytes == 0" "$T/out.json"
	# exact outstanding blocks per site, as the fixture's constants say
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		def site($f): [$e[0].sites[] | select(.frames[1].function == $f)][0];
		$t[0] as $t
		| {cache: [site("cache_fill").outstanding, {count: $t.cache.count,
			   bytes: ($t.cache.count * $t.cache.size)}],
		   leak: [site("leak_step").outstanding, {count: $t.leak.count,
			  bytes: ($t.leak.count * $t.leak.size)}],
		   temp: [site("temp_churn").outstanding, null],
		   temp_allocs: [site("temp_churn").alloc_count, $t.temp.count]}
		| map_values([(.[0] | if type == "object" then {count, bytes} else . end), .[1]])
		| to_entries | map(select(.value[0] != .value[1]))' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	# the text report ranks the same way, in a section of its own
	sed -n '/^Growth of live bytes per site/,/^Drops/p' "$T/out.txt" > "$T/growth.txt"
	grep -A1 '^#1 ' "$T/growth.txt" | grep -q 'leak_step'
	grep -E '^#[0-9]+ +0 B/s plateau: 8192000 -> 8192000 bytes \(max 8192000\)' "$T/growth.txt"
	grep -q 'snapshots of the sites: ' "$T/out.txt"
}

@test "growth: a run too short for snapshots has no trends and no growth section" {
	run "$EBPROF" mem -o "$T/out.json" -o "$T/out.txt" -- /bin/true
	[ "$status" -eq 0 ]
	jqe '[.sites[] | select(.growth)] | length == 0' "$T/out.json"
	jqe '.processes[0].growth_window.snapshots == 1 and .processes[0].growth_window.from_ns == null' \
		"$T/out.json"
	! grep -q '^Growth' "$T/out.txt"
}

@test "--min-age: only blocks at least that old are outstanding; live totals count all" {
	run "$EBPROF" mem --min-age 1s -o "$T/out.json" -o "$T/out.txt" -- "$FIX/growfixture" --min-age
	[ "$status" -eq 0 ]
	jqe '.min_age_ns == 1000000000' "$T/out.json"
	# 7 blocks of 100 B made 2 s before the end; 5 of 200 B right before it
	jqe "$(site old_alloc) | .outstanding.count == 7 and .outstanding.bytes == 700
	     and .live_count == 7 and .live_bytes == 700 and .outstanding.min_age_ns >= 1000000000" \
		"$T/out.json"
	jqe "$(site young_alloc) | .outstanding == null and .live_count == 5 and .live_bytes == 1000
	     and .inuse_objects == 5" "$T/out.json"
	jqe '.processes[0].live_count == 12' "$T/out.json"
	jqe '.notes | any(test("younger than 1.00 s at the end are not listed \\(--min-age\\)"))' \
		"$T/out.json"
	grep -q '^Outstanding allocations at exit (at least 1.00 s old): 7 objects, 700 B (700 bytes) at 1 site$' \
		"$T/out.txt"
	! sed -n '/^Outstanding/,/^Growth\|^Drops/p' "$T/out.txt" | grep -q young_alloc || false
	# without it, both are leak candidates
	run "$EBPROF" mem -o "$T/all.json" -- "$FIX/growfixture" --min-age
	[ "$status" -eq 0 ]
	jqe "$(site young_alloc).outstanding.count == 5 and $(site old_alloc).outstanding.count == 7
	     and .min_age_ns == 0" "$T/all.json"
}

@test "--min-age: durations with units are taken, anything else is a usage error" {
	for d in 500ms 30s 2m 1.5 0; do
		run "$EBPROF" mem --min-age "$d" -o "$T/d.json" -- /bin/true
		[ "$status" -eq 0 ]
	done
	run "$EBPROF" mem --min-age 5x -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid --min-age '5x' (a duration: 500ms, 30s, 2m, or seconds)"* ]]
}

@test "peak: exact bytes, its time before the snapshot that saw it, and the site that held it" {
	run "$EBPROF" mem -o "$T/out.json" -o "$T/out.txt" -o "$T/out.html" -- "$FIX/growfixture" --peak
	[ "$status" -eq 0 ]
	# 1000 blocks of 8192 B held together, then all freed: the peak is exactly theirs
	jqe '.processes[0] | .peak_live_bytes == 8192000 and .peak.bytes == 8192000
	     and .live_bytes == 0' "$T/out.json"
	# last raised by the last of those blocks, which a snapshot during the hold then saw
	jqe '.duration_ns as $d | .processes[0].peak | .t_ns > 0 and .t_ns <= .snapshot_t_ns
	     and .snapshot_t_ns <= $d' "$T/out.json"
	# that snapshot holds the whole peak, all of it at peak_alloc
	jqe '. as $r | .processes[0].peak | .snapshot_bytes == 8192000 and (.sites | length) == 1
	     and .sites[0].bytes == 8192000
	     and $r.sites[.sites[0].site].frames[1].function == "peak_alloc"' "$T/out.json"
	grep -qE '^    peak 7\.8 MiB \(8192000 bytes\) at [0-9.]+ m?s$' "$T/out.txt"
	grep -qE '^    at peak: the snapshot at [0-9.]+ m?s holds 7\.8 MiB \(8192000 bytes\), 100\.0% of the peak:$' \
		"$T/out.txt"
	grep -qE '^ +7\.8 MiB  peak_alloc \(growfixture\.c:[0-9]+\)$' "$T/out.txt"
	grep -q '"peaks":\[{"pid":' "$T/out.html"
}
