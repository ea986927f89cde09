#!/usr/bin/env bats
# Real programs: ebprof's counts against the LD_PRELOAD counting interposer in the same process.
# The interposer cannot see calls glibc makes to itself without the PLT (e.g. the frees of
# thread-exit cache shutdown), which ebprof sees as frees of unknown pointers; so frees are
# compared as frees of known blocks.

load helpers

SQL="create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x<200000) insert into t select x, printf('%08d-row', x) from c; select count(*) from t;"

# Compare ebprof's JSON for the traced process with the interposer's file for the same PID.
# Every per-function call count and the allocation count within 0.01%.
compare_with_interposer() {
	local json=$1 pid ca
	pid=$(jq '.processes[0].pid' "$json")
	ca="$T/ca.$pid"
	[ -s "$ca" ] || { echo "no interposer output for PID $pid" >&2; ls "$T" >&2; return 1; }
	jq -n --slurpfile e "$json" --slurpfile c "$ca" '
		def off(a; b): if b == 0 then (a != 0) else ((a - b) | fabs) / b > 0.0001 end;
		$e[0].processes[0] as $p | $c[0] as $c
		| [($c.calls | keys[] | select(. != "free")
		    | select(off($p.calls[.]; $c.calls[.])) | {fn: ., ebprof: $p.calls[.], interposer: $c.calls[.]}),
		   (select(off($p.calls.free - $p.unknown_frees; $c.calls.free)) | "free"),
		   (["alloc_count", "alloc_bytes", "free_count", "live_count", "failed"][]
		    | select(off($p[.]; $c[.])) | {field: ., ebprof: $p[.], interposer: $c[.]})]' > "$T/diff.json"
	cat "$T/diff.json"
	jqe 'length == 0' "$T/diff.json"
	jqe '[.drops[]] | add == 0' "$json"
}

@test "sqlite3 building a 200,000-row table: counts agree with the interposer" {
	run env COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem -o "$T/out.json" -- sqlite3 :memory: "$SQL"
	[ "$status" -eq 0 ]
	[[ "$output" == *200000* ]]
	jqe '.processes[0].alloc_count > 200000' "$T/out.json"
	compare_with_interposer "$T/out.json"
	# without the interposer in between, stacks reach into libsqlite3 (stripped and built
	# without frame pointers: its frames are module+offset)
	run "$EBPROF" mem -o "$T/plain.json" -- sqlite3 :memory: "$SQL"
	[ "$status" -eq 0 ]
	jqe '[.sites[].frames[] | select(.module // "" | test("libsqlite3"))] | length > 0' \
		"$T/plain.json"
}

@test "jq over a large JSON file: counts agree with the interposer, jq's answer is right" {
	bash "$BATS_TEST_DIRNAME/../../scripts/gen-json.sh" "$T/big.json" 20000
	filter=$(bash "$BATS_TEST_DIRNAME/../../scripts/gen-json.sh" --filter)
	expect=$(bash "$BATS_TEST_DIRNAME/../../scripts/gen-json.sh" --expect 20000)
	run env COUNTALLOC_OUT="$T/ca" LD_PRELOAD="$FIX/countalloc.so" \
		"$EBPROF" mem -o "$T/out.json" -o "$T/out.pb.gz" -- jq -c "$filter" "$T/big.json"
	[ "$status" -eq 0 ]
	[ "$output" = "$expect" ]
	jqe '.processes[0].alloc_count > 400000' "$T/out.json"
	compare_with_interposer "$T/out.json"
}

@test "pprof of a real run loads in Go's pprof tool with every sample type" {
	go=/usr/lib/go-1.19/bin/go
	[ -x "$go" ] || skip "golang-1.19-go not installed (scripts/install-deps.sh installs it)"
	run "$EBPROF" mem -o "$T/out.pb.gz" -o "$T/out.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		HOME=$T run "$go" tool pprof -symbolize=none -sample_index=$t -top "$T/out.pb.gz"
		[ "$status" -eq 0 ]
		[[ "$output" == *churn* ]] || [[ "$t" == inuse* ]]
	done
	HOME=$T run "$go" tool pprof -symbolize=none -sample_index=inuse_space -top "$T/out.pb.gz"
	[[ "$output" == *leak_big* ]]
	HOME=$T run "$go" tool pprof -raw -symbolize=none "$T/out.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid:"* ]]
	[[ "$output" == *"alloc_objects/count"* ]]
}
