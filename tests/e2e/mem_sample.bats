#!/usr/bin/env bats
# Sampled tracking (--sample-bytes, --sample-every) and --alloc-only.
#
# The sampled tests are statistical, with the math stated so that they cannot fail by chance in
# practice. Byte sampling with mean interval N samples an allocation of s bytes with
# probability p = 1 - exp(-s/N), independently of every other allocation (disjoint stretches of
# a Poisson process), and weighs it 1/p. So each estimate is a sum of independent terms with
#   Var(count estimate) = sum (1-p)/p = sum 1/(exp(s/N)-1) <= N * sum(1/s)
#   Var(byte estimate)  = sum s^2 (1-p)/p                  <= N * sum(s)
# (because e^x - 1 >= x). The tests compute these bounds from the exact sizes (the fixture's
# --truth, or the size histogram of an exact run: 1/s <= 1/bucket minimum) and first assert that
# 5% of the true value is at least 6 standard deviations; the sums are of hundreds of thousands
# of independent bounded terms, so the estimate is close to normal and a 6-sigma miss has a
# probability of about 2e-9. Then the estimate must be within 5%.

load helpers
bats_require_minimum_version 1.5.0

SQL="create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x<200000) insert into t select x, printf('%08d-row', x) from c; select count(*) from t;"

# within EST TRUE SIGMA: 5% >= 6 sigma (the test is sound), and |EST - TRUE| <= 5% of TRUE.
within() {
	/usr/bin/python3 - "$@" <<'EOF'
import sys
est, true, sigma = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
tol = 0.05 * true
if 6 * sigma > tol:
    sys.exit(f"unsound test: 6 sigma = {6 * sigma:.0f} > 5% of {true:.0f}")
if abs(est - true) > tol:
    sys.exit(f"estimate {est:.0f} is more than 5% from {true:.0f} (sigma {sigma:.0f})")
print(f"ok: {est:.0f} vs {true:.0f} ({(est - true) / true * 100:+.3f}%, sigma {sigma / true * 100:.3f}%)")
EOF
}

@test "--sample-bytes: fixture totals, live values and sites within 5% of the truth" {
	N=2048
	"$FIX/samplefixture" --truth > "$T/truth.json"
	run "$EBPROF" mem --sample-bytes $N -o "$T/out.json" -o "$T/out.txt" -- "$FIX/samplefixture"
	[ "$status" -eq 0 ]
	p='.processes[0]'
	t() { jq -r "$1" "$T/truth.json"; }
	e() { jq -r "$1" "$T/out.json"; }
	s() { /usr/bin/python3 -c "import math, sys; print(math.sqrt($N * float(sys.argv[1])))" "$1"; }
	within "$(e "$p.alloc_count")" "$(t .alloc_count)" "$(s "$(t .alloc_inv_size)")"
	within "$(e "$p.alloc_bytes")" "$(t .alloc_bytes)" "$(s "$(t .alloc_bytes)")"
	# everything but the kept blocks is freed: frees are estimates of the same kind
	freed_inv=$(/usr/bin/python3 -c "print($(t .alloc_inv_size) - $(t .live_inv_size))")
	within "$(e "$p.free_count")" "$(( $(t .alloc_count) - $(t .live_count) ))" "$(s "$freed_inv")"
	within "$(e "$p.free_bytes")" "$(( $(t .alloc_bytes) - $(t .live_bytes) ))" \
		"$(s "$(( $(t .alloc_bytes) - $(t .live_bytes) ))")"
	# only sampled blocks are live, weighted: live values estimate what was kept
	within "$(e "$p.live_count")" "$(t .live_count)" "$(s "$(t .live_inv_size)")"
	within "$(e "$p.live_bytes")" "$(t .live_bytes)" "$(s "$(t .live_bytes)")"
	# the two big sites, by function
	for f in churn keep; do
		cnt=$(e "[.sites[] | select(any(.frames[]; .function == \"$f\")) | .alloc_count] | add")
		byt=$(e "[.sites[] | select(any(.frames[]; .function == \"$f\")) | .alloc_bytes] | add")
		within "$cnt" "$(t ".sites.$f.alloc_count")" "$(s "$(t ".sites.$f.inv_size")")"
		within "$byt" "$(t ".sites.$f.alloc_bytes")" "$(s "$(t ".sites.$f.alloc_bytes")")"
	done
	# every sampled block of the other sites was freed (deterministic, whatever was sampled)
	jqe '[.sites[] | select(all(.frames[]; .function != "keep")) | .live_count] | add == 0' \
		"$T/out.json"
	# frees of unsampled blocks are not unknown frees; nothing dropped
	jqe "$p.unknown_frees == 0" "$T/out.json"
	jqe '[.drops[]] | add == 0' "$T/out.json"
	# the reports say these are estimates, and at what rate
	jqe ".sampling == {mode: \"bytes\", period: $N, estimated: true}" "$T/out.json"
	jqe '[.notes[] | select(test("sampled tracking \\(--sample-bytes 2048\\)"))] | length == 1' \
		"$T/out.json"
	grep -q "Sampling:  one allocation per $N bytes on average: counts and bytes are ESTIMATES" \
		"$T/out.txt"
}

@test "--sample-every 1: the sampled code path weighs every call 1 and equals the truth exactly" {
	# every allocation sampled with weight 1: the sampled paths (countdown, weights, frees
	# through the live table only, realloc's old block) must reproduce full tracking's numbers
	"$FIX/memfixture" --truth > "$T/truth.json"
	run "$EBPROF" mem --sample-every 1 -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	fixture_sites "$T/out.json" "$T/truth.json" > "$T/got.json"
	truth_sites "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0] as $p | $t[0] as $t | $t.glibc_extra as $x
		| {free: [$p.calls.free, $t.calls.free],
		   failed: [$p.failed, $t.failed],
		   alloc_count: [$p.alloc_count, $t.alloc_count + $x.calloc],
		   free_count: [$p.free_count, $t.free_count],
		   free_bytes: [$p.free_bytes, $t.free_bytes],
		   live_count: [$p.live_count, $t.live_count + $x.live_count],
		   unknown_frees: [$p.unknown_frees, 0]}
		| to_entries | map(select(.value[0] != .value[1]))' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
}

@test "--sample-every: fixture totals within 5% of the truth" {
	# Every 13th allocation of the thread from a random phase. Not independent draws but
	# systematic sampling: 13 is prime to the fixture's cycles of 14 and 4 sizes, so each
	# stretch of the cycle is sampled evenly and the error is a few samples' weight (13 x at
	# most 30000 bytes per phase), far below 5%, whatever the phase.
	"$FIX/samplefixture" --truth > "$T/truth.json"
	run "$EBPROF" mem --sample-every 13 -o "$T/out.json" -- "$FIX/samplefixture"
	[ "$status" -eq 0 ]
	for k in alloc_count alloc_bytes live_count live_bytes; do
		within "$(jq ".processes[0].$k" "$T/out.json")" "$(jq ".$k" "$T/truth.json")" 0
	done
	jqe '.sampling == {mode: "every", period: 13, estimated: true}' "$T/out.json"
	jqe '.processes[0].unknown_frees == 0' "$T/out.json"
}

@test "--sample-bytes: sqlite3 totals within 5% of an exact run" {
	N=256
	run "$EBPROF" mem -o "$T/exact.json" -- sqlite3 :memory: "$SQL"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem --sample-bytes $N -o "$T/out.json" -- sqlite3 :memory: "$SQL"
	[ "$status" -eq 0 ]
	[[ "$output" == *200000* ]]
	# bounds from the exact run's size histograms: sum(1/s) <= sum(count / bucket minimum)
	inv=$(jq '[.sites[].histogram[] | .count / ([.min, 1] | max)] | add' "$T/exact.json")
	sd() { /usr/bin/python3 -c "import math, sys; print(math.sqrt($N * float(sys.argv[1])))" "$1"; }
	x() { jq ".processes[0].$1" "$T/exact.json"; }
	g() { jq ".processes[0].$1" "$T/out.json"; }
	within "$(g alloc_count)" "$(x alloc_count)" "$(sd "$inv")"
	within "$(g alloc_bytes)" "$(x alloc_bytes)" "$(sd "$(x alloc_bytes)")"
	# sqlite frees all but ~16 blocks: the free estimates obey the same bounds
	within "$(g free_count)" "$(x free_count)" "$(sd "$inv")"
	within "$(g free_bytes)" "$(x free_bytes)" "$(sd "$(x alloc_bytes)")"
}

@test "--sample-bytes: folded stacks, pprof and JSON carry the same estimates" {
	run "$EBPROF" mem --sample-bytes 4096 -o "$T/out.json" -o "$T/out.folded" \
		-o "$T/out.pb.gz" -- "$FIX/samplefixture"
	[ "$status" -eq 0 ]
	json=$(jq '[.sites[].alloc_bytes] | add' "$T/out.json")
	folded=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$T/out.folded")
	[ "$json" -eq "$folded" ]
	# pprof: the same totals back through ebprof report
	run "$EBPROF" report "$T/out.pb.gz" -o "$T/back.json"
	[ "$status" -eq 0 ]
	[ "$(jq '[.sites[].alloc_bytes] | add' "$T/back.json")" -eq "$json" ]
	jqe '[.notes[] | select(test("sampled tracking"))] | length == 1' "$T/back.json"
}

# memfixture's truth against an --alloc-only report ($T/out.json, $T/out.txt): per fixture
# function, calls and requested bytes, each stack starting at the direct caller; per process
# calls.
check_alloc_only_truth() {
	"$FIX/memfixture" --truth > "$T/truth.json"
	# per fixture function: calls (every allocating call, realloc(p, 0) included) and the
	# bytes they asked for; do_failures' impossible requests count as failed calls instead
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		($t[0].sites | keys) as $names
		| [$e[0].sites[]
		   | {fn: ([.frames[1:][] | .function | select(. as $f | $names | index($f))][0]),
		      direct: .frames[1].function, alloc_count, alloc_bytes}
		   | select(.fn != null and .fn != "do_failures")]
		| group_by(.fn)
		| map({key: .[0].fn, value: {calls: (map(.alloc_count) | add),
		                             bytes: (map(.alloc_bytes) | add),
		                             direct: (map(.direct == .fn) | all)}})
		| from_entries' > "$T/got.json"
	jq '.sites | with_entries(select(.key != "do_failures" and .key != "do_free_null")
		| .value |= {calls: ([.calls | to_entries[] | select(.key != "free") | .value] | add),
		             bytes: .alloc_bytes, direct: true})' "$T/truth.json" > "$T/want.json"
	diff <(jq -S . "$T/want.json") <(jq -S . "$T/got.json")
	# per-function calls equal the truth plus glibc's own thread DTV callocs; no free probe
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0].calls as $p | $t[0].calls as $c
		| [$c | keys[] | select(. != "free" and . != "calloc") | select($p[.] != $c[.])]
		  + (if $p.calloc != $c.calloc + $t[0].glibc_extra.calloc then ["calloc"] else [] end)
		  + (if $p.free != 0 then ["free"] else [] end)' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	# churn's size histogram, every request known (memfixture's churn_size): the size changes
	# from call to call, and the thread's held run of equal sizes is added at each change
	jq -n --slurpfile e "$T/out.json" '
		def lg: if . < 2 then 0 else ((. / 2 | floor) | lg) + 1 end;
		([range(0; 100000) | 16 + ((. * 2654435761) % 4081) | lg]
		 | group_by(.) | map({min: pow(2; .[0]), count: length})) as $want
		| [$e[0].sites[] | select(.frames[1].function == "churn") | .histogram[]
		   | {min, count}] as $got
		| if $got == $want then true else ($got, $want | halt_error) end' >/dev/null
	# no live values in this mode, and the reports say what it is
	jqe '[.sample_types[].type] == ["alloc_objects", "alloc_space"]' "$T/out.json"
	jqe '.sampling == {mode: "alloc-only", estimated: false}' "$T/out.json"
	grep -q "Sampling:  alloc-only" "$T/out.txt"
	jqe '[.drops[]] | add == 0' "$T/out.json"
}

@test "--alloc-only: exact calls and requested bytes per fixture site, direct caller in every stack" {
	run "$EBPROF" mem --alloc-only -o "$T/out.json" -o "$T/out.txt" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	check_alloc_only_truth
}

# The hot path keeps a thread's counts at its current site in the thread's state; they reach
# the maps when the thread allocates elsewhere, every 512 calls, at exec or exit, or when ebprof
# stops. Counts that are not multiples of 512 at one site, in threads that exit, and in a
# process still running when ebprof stops, must all arrive.
@test "--alloc-only: exact when ebprof stops before the program (held counts read at the end)" {
	# memfixture works for well under a second, then sleeps: its threads' last counts are
	# still held when ebprof stops at 2 s and reports (then waits for it to end)
	run "$EBPROF" mem --alloc-only -d 2 -o "$T/out.json" -o "$T/out.txt" -- \
		"$FIX/memfixture" --linger 3.5
	[ "$status" -eq 0 ]
	# the report was written at the stop (2 s), before the fixture's sleep ended (3.5 s and more)
	jqe '.duration_ns < 3400000000' "$T/out.json"
	check_alloc_only_truth
}

@test "--alloc-only: exact in threads that exit, at one site each (100,001 calls a thread)" {
	run "$EBPROF" mem --alloc-only --quiet -o "$T/out.json" -- "$FIX/scalefixture" calls 400004
	[ "$status" -eq 0 ]
	# thread:size:its histogram bucket's lower bound
	for f in thread_a:48:32 thread_b:80:64; do
		IFS=: read -r fn sz lo <<<"$f"
		jq -e --arg fn "$fn" --argjson sz "$sz" --argjson lo "$lo" '
			[.sites[] | select(any(.frames[]; .function == $fn))] as $s
			| ($s | map(.alloc_count) | add) == 100001
			  and ($s | map(.alloc_bytes) | add) == 100001 * $sz
			  and ([$s[].histogram[]] | map({min, count}))
			      == [{min: $lo, count: 100001}]' "$T/out.json"
	done
}

# A thread allocating at one return address again reuses its last stack when that stack ended
# at its caller's frame (no further frame record to read) and all it was made of is the same:
# shortstack's two callers differ only in that frame's return address. Their %rbp is 0 in code
# without a table: the walk cannot tell their callers, and says so ([truncated]; it took them
# for the outermost frames before).
@test "--alloc-only: two callers ending the frame chain keep their own sites" {
	run "$EBPROF" mem --alloc-only --quiet -o "$T/out.json" -- "$FIX/shortstack" 1000
	[ "$status" -eq 0 ]
	for f in via_a:48 via_b:80; do
		jq -e --arg fn "${f%:*}" --argjson sz "${f#*:}" '
			[.sites[] | select(.frames[2].function == $fn)] as $s
			| ($s | length) == 1
			  and ($s[0].frames | map(.function)) == ["malloc", "alloc_in", $fn, "[truncated]"]
			  and $s[0].alloc_count == 1000 and $s[0].alloc_bytes == 1000 * $sz' "$T/out.json"
	done
}

# concurrent: its -a runs are usage errors: nothing is traced
# bats test_tags=concurrent
@test "sampling and alloc-only: incompatible options are refused with a sentence" {
	for bad in "--sample-bytes 0" "--sample-bytes abc" "--sample-every 0" \
		   "--sample-bytes 2000000000"; do
		run "$EBPROF" mem $bad -- /bin/true
		[ "$status" -eq 2 ]
		[[ "$output" == *"invalid --sample-"*"a whole number from 1 to 1073741824"* ]]
	done
	run "$EBPROF" mem --sample-bytes 512 --sample-every 3 -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"give only one of --sample-bytes, --sample-every and --alloc-only"* ]]
	run "$EBPROF" mem --alloc-only --sample-every 3 -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"give only one of"* ]]
	run "$EBPROF" mem --sample-bytes 512 --leaks -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--leaks cannot be combined with --sample-bytes/--sample-every"* ]]
	# without return probes, malloc's own mmaps cannot be told from the program's
	run "$EBPROF" mem --alloc-only --mmap -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--alloc-only cannot be combined with --mmap"* ]]
	run "$EBPROF" mem --alloc-only -a -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--alloc-only cannot be combined with -a"* ]]
	run "$EBPROF" mem --mmap -a -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"-a cannot be combined with --mmap"* ]]
	for bad in "--leaks" "--fail-on-leak"; do
		run "$EBPROF" mem --alloc-only $bad -- /bin/true
		[ "$status" -eq 2 ]
		[[ "$output" == *"--alloc-only sees no frees, so it cannot find leaks"* ]]
	done
	for bad in "--temp-threshold 1ms" "--min-age 1s"; do
		run "$EBPROF" mem --alloc-only $bad -- /bin/true
		[ "$status" -eq 2 ]
		[[ "$output" == *"--temp-threshold and --min-age mean nothing there"* ]]
	done
	run "$EBPROF" mem --alloc-only --min-size 10 -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--min-size/--max-size cannot be combined with it"* ]]
	run "$EBPROF" mem --alloc-only --value inuse_space -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$output" == *"--alloc-only has only alloc_space and alloc_objects to weigh by"* ]]
}

@test "--alloc-only: exact next to another tracer's return probes (hijacked return addresses)" {
	# A uretprobe replaces the return address on the stack with its trampoline; glibc's
	# reallocarray and realloc(NULL, n) tail-call realloc and malloc, whose entry then sees the
	# trampoline at *sp. The kernel's record of the original must be used, or those inner calls
	# count twice. A full-mode ebprof on the same process puts such return probes there.
	"$FIX/memfixture" --truth > "$T/truth.json"
	bg "$FIX/memfixture" --wait-start --linger 30 < /dev/null > "$T/fx.log" 2>&1
	fx=$BG
	wait_for "$T/fx.log" 'waiting'
	"$EBPROF" mem -v -p "$fx" -o "$T/full.json" 2> "$T/full.log" &
	BG_PIDS+=($!)
	full=$!
	wait_for "$T/full.log" 'tracing glibc allocator'
	"$EBPROF" mem -v --alloc-only -p "$fx" -o "$T/out.json" 2> "$T/ao.log" &
	BG_PIDS+=($!)
	ao=$!
	wait_for "$T/ao.log" 'tracing glibc allocator'
	kill -USR1 "$fx"
	wait_for "$T/fx.log" 'done' 30
	kill -USR1 "$fx"
	wait "$ao"
	wait "$full"
	jq -n --slurpfile e "$T/out.json" --slurpfile t "$T/truth.json" '
		$e[0].processes[0].calls as $p | $t[0].calls as $c
		| [$c | keys[] | select(. != "free" and . != "calloc") | select($p[.] != $c[.])]
		  + (if $p.calloc != $c.calloc + $t[0].glibc_extra.calloc then ["calloc"] else [] end)' \
		> "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
}
