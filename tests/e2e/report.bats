#!/usr/bin/env bats
# Saved profiles: `ebprof report` renders a pprof written by `ebprof mem` with the numbers of the
# run itself, and `ebprof diff` compares two runs. Root only for the `ebprof mem` runs that make
# the profiles; report and diff need no privileges.

load helpers
bats_require_minimum_version 1.5.0

GO=/usr/lib/go-1.19/bin/go

# Per site (stack, pid, values) in a JSON report, sorted: what a pprof round trip keeps.
sites() {
	jq -S '[.sites[] | {pid, functions: [.frames[] | .function],
			    addresses: [.frames[] | .address],
			    alloc_objects, alloc_space, inuse_objects, inuse_space}] | sort' "$1"
}

@test "report: a saved profile gives the sites and totals of the run itself, in every format" {
	run "$EBPROF" mem -o "$T/a.pb.gz" -o "$T/x.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" report "$T/a.pb.gz" -o "$T/r.txt" -o "$T/r.json" -o "$T/r.pb.gz" -o "$T/r.svg" \
		-o "$T/r.folded"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# the same sites; a caller's address read back is its call's, the return address - 1 (what
	# the pprof file keeps, docs/JSON.md), its offset in its file the same
	diff <(sites "$T/x.json" | jq 'map(del(.addresses))') <(sites "$T/r.json" | jq 'map(del(.addresses))')
	python3 - "$T/x.json" "$T/r.json" <<'PY'
import json, sys
def key(s):
    return (s["pid"], tuple(f["function"] for f in s["frames"]), s["alloc_objects"], s["alloc_space"])
a = {key(s): s for s in json.load(open(sys.argv[1]))["sites"]}
b = {key(s): s for s in json.load(open(sys.argv[2]))["sites"]}
assert a.keys() == b.keys()
for k in a:
    for i, (x, y) in enumerate(zip(a[k]["frames"], b[k]["frames"])):
        dx, dy = int(x["address"], 16), int(y["address"], 16)
        assert dy == dx or (i > 0 and dy == dx - 1), (k, i, x["address"], y["address"])
        assert x.get("offset") == y.get("offset"), (k, i, x.get("offset"), y.get("offset"))
PY
	# the same totals, summed over the sites
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		[ "$(jq "[.sites[].$t] | add" "$T/x.json")" = "$(jq "[.sites[].$t] | add" "$T/r.json")" ]
	done
	jqe '.mode == "mem" and (.command | test("memfixture")) and .processes[0].comm == "memfixture"' \
		"$T/r.json"
	grep -q '^Top 10 allocation sites by bytes' "$T/r.txt"
	grep -q 'churn (.*memfixture.c:[0-9]*)' "$T/r.txt"
	# leaks are the inuse values: listed as outstanding
	sed -n '/^Outstanding/,$p' "$T/r.txt" | grep -q leak_big
	xmllint --noout "$T/r.svg"
	grep -q '>ebprof mem: alloc_space (bytes)<' "$T/r.svg"
	grep -q ';churn;malloc ' "$T/r.folded"
	# written again, the pprof is the same message
	cmp <(gzip -dc "$T/a.pb.gz") <(gzip -dc "$T/r.pb.gz")
}

# pprof has no place for the processes' statistics: a report of a saved profile had none
# (`totals.cpu_ns` missing). Those that are one sample type summed come back from the samples:
# every one the report has is the run's, and it has each of them.
@test "report: a saved profile's processes and totals carry the run's sums of its types (cpu, cpu --offcpu, offcpu, lock, mem)" {
	run "$EBPROF" cpu -q -o "$T/cpu.json" -o "$T/cpu.pb.gz" -- "$FIX/cpuburn" 1 2
	[ "$status" -eq 0 ]
	run "$EBPROF" cpu --offcpu -q -o "$T/wall.json" -o "$T/wall.pb.gz" -- "$FIX/offsleep" 5 20 10
	[ "$status" -eq 0 ]
	run "$EBPROF" offcpu -q -o "$T/offcpu.json" -o "$T/offcpu.pb.gz" -- "$FIX/offsleep" 5 20
	[ "$status" -eq 0 ]
	run "$EBPROF" lock -q -o "$T/lock.json" -o "$T/lock.pb.gz" -- "$FIX/mutexfix"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem -q -o "$T/mem.json" -o "$T/mem.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	for m in cpu:samples,cpu_ns wall:samples,cpu_ns,offcpu_ns,wall_ns offcpu:offcpu_ns,switches \
		 lock:contentions,delay_ns,timeouts,timeout_delay_ns \
		 mem:alloc_count,alloc_bytes,live_count,live_bytes; do
		f=${m%%:*}
		run "$EBPROF" report "$T/$f.pb.gz" -o "$T/$f.r.json"
		[ "$status" -eq 0 ]
		python3 - "$T/$f.json" "$T/$f.r.json" "${m#*:}" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
want = sys.argv[3].split(",")
for k in want:
    assert k in b["totals"], (k, b["totals"])
for k, v in b["totals"].items():
    assert a["totals"][k] == v, (k, a["totals"][k], v)
procs = {p["pid"]: p for p in a["processes"]}
for p in b["processes"]:
    for k in want:
        assert p[k] == procs[p["pid"]][k], (p["pid"], k, p[k], procs[p["pid"]][k])
PY
	done
}

@test "report: a sampled mem profile stays estimates: its sampling and period come back, the pprof the same" {
	for mode in "--sample-bytes 4096" "--sample-every 8" "--alloc-only"; do
		# shellcheck disable=SC2086
		run "$EBPROF" mem -q $mode -o "$T/s.pb.gz" -o "$T/s.txt" -- "$FIX/memfixture"
		[ "$status" -eq 0 ]
		run "$EBPROF" report "$T/s.pb.gz" -o "$T/r.pb.gz" -o "$T/r.txt" -o "$T/r.json"
		[ "$status" -eq 0 ]
		# before, --sample-bytes's period became 1 and every reloaded report lost its
		# 'Sampling:' line (the values' being estimates)
		cmp <(gzip -dc "$T/s.pb.gz") <(gzip -dc "$T/r.pb.gz")
		diff <(grep '^  Sampling:' "$T/s.txt") <(grep '^  Sampling:' "$T/r.txt")
		grep -q '^  Sampling:' "$T/r.txt"
		jqe '.sampling != null' "$T/r.json"
	done
}

@test "report, cpu: FORMAT:- writes that format to standard output, for a pipe into flamegraph.pl" {
	run "$EBPROF" mem -q -o "$T/a.pb.gz" -o "$T/a.folded" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	# before, '-o -' and '-o /dev/stdout' were refused (no extension) and there was no way
	# to name a format for a stream
	"$EBPROF" report "$T/a.pb.gz" -o folded:- > "$T/out.folded"
	cmp "$T/a.folded" "$T/out.folded"
	"$EBPROF" report "$T/a.pb.gz" -o folded:- |
		perl /usr/share/perl5/Devel/NYTProf/flamegraph.pl > "$T/flame.svg"
	xmllint --noout "$T/flame.svg"
	grep -q churn "$T/flame.svg"
	"$EBPROF" report "$T/a.pb.gz" -o json:/dev/stdout | jq -e '.mode == "mem"'
	# a recording mode: its folded stacks on stdout, the launched command's output apart
	"$EBPROF" cpu -q -F 499 -o folded:- -- dd if=/dev/zero of=/dev/null bs=64 \
		count=200000 status=none > "$T/cpu.folded"
	awk '{ s += $NF } END { exit !(s > 0) }' "$T/cpu.folded"
	grep -q '^dd (' "$T/cpu.folded"
	# a command that writes to that same standard output is warned about (cpuburn's own line
	# became a frame in flamegraph.pl's graph); a file, or text, is not
	"$EBPROF" cpu -q -o folded:- -- "$FIX/cpuburn" 0.1 > "$T/mixed.folded" 2> "$T/mixed.err"
	grep -q '^cpu_ms ' "$T/mixed.folded"
	grep -q "warning: the command writes to the standard output that 'folded:-' writes the report to" "$T/mixed.err"
	"$EBPROF" cpu -q -o "$T/f.folded" -- "$FIX/cpuburn" 0.1 > /dev/null 2> "$T/file.err"
	"$EBPROF" cpu -q -o - -- "$FIX/cpuburn" 0.1 > /dev/null 2> "$T/text.err"
	! grep -q 'warning: the command writes' "$T/file.err" "$T/text.err" || false
}

@test "report: Go's pprof reads what report writes, the same as the original" {
	[ -x "$GO" ] || skip "golang-1.19-go not installed (scripts/install-deps.sh installs it)"
	run "$EBPROF" mem -o "$T/a.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" report "$T/a.pb.gz" -o "$T/r.pb.gz"
	[ "$status" -eq 0 ]
	HOME=$T run "$GO" tool pprof -raw -symbolize=none "$T/r.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"alloc_space/bytes[dflt]"* ]]
	[[ "$output" == *churn* ]]
	diff <(HOME=$T "$GO" tool pprof -raw -symbolize=none "$T/a.pb.gz") \
	     <(HOME=$T "$GO" tool pprof -raw -symbolize=none "$T/r.pb.gz")
}

@test "report: text to stdout by default; --top, --sort, --value" {
	run "$EBPROF" mem -o "$T/a.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" report --top 3 --sort count "$T/a.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Top 3 allocation sites by count"* ]]
	run "$EBPROF" report "$T/a.pb.gz" --value inuse_space -o "$T/live.folded"
	[ "$status" -eq 0 ]
	grep -q leak_big "$T/live.folded"
	run ! grep -q ';churn;' "$T/live.folded"
}

@test "diff: one program run twice: no changes, a grey flame graph" {
	run "$EBPROF" mem -o "$T/a.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem -o "$T/b.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" diff "$T/a.pb.gz" "$T/b.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ebprof diff: alloc_space (bytes)"* ]]
	[[ "$output" == *" 0 grew, 0 shrank, 0 appeared, 0 vanished, "* ]]
	[[ "$output" == *"No changes: every stack has the same alloc_space in both profiles."* ]]
	run "$EBPROF" diff "$T/a.pb.gz" "$T/b.pb.gz" -o "$T/d.svg" -o "$T/d.json"
	[ "$status" -eq 0 ]
	xmllint --noout "$T/d.svg"
	grep -q 'delta 0 B (unchanged)' "$T/d.svg"
	# every frame grey (the legend has the other colours)
	sed -n '/^<g id="frames">$/,/^<\/g>$/p' "$T/d.svg" > "$T/frames.svg"
	fills=$(grep -o 'fill="#[0-9a-f]*"' "$T/frames.svg" | sort -u | grep -v '#e4e4e4')
	[ "$fills" = 'fill="#d8d8d8"' ]
	jqe '.mode == "diff" and (.sites | length > 10) and all(.sites[]; .delta == 0 and .base == .new)' \
		"$T/d.json"
	# a profile against itself, in any sample type
	run "$EBPROF" diff --value inuse_objects "$T/a.pb.gz" "$T/a.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ebprof diff: inuse_objects (count)"* ]]
}

# The modes' own frames carry the run's numbers: lock's futex by its address (ASLR), offcpu's
# waker by its pid (and --per-thread its thread's tid), --per-thread's thread by its tid. Before,
# every such stack of one program run twice vanished and appeared. A futex named by its symbol
# keeps it.
@test "diff: lock and offcpu --wakers --per-thread runs of one program line up" {
	for r in 1 2; do
		run "$EBPROF" lock -q -o "$T/l$r.pb.gz" -- "$FIX/mutexfix" 4 5000
		[ "$status" -eq 0 ]
		run "$EBPROF" offcpu --wakers --per-thread -q -o "$T/w$r.pb.gz" -- \
			"$FIX/pingpong" 2000
		[ "$status" -eq 0 ]
	done
	run "$EBPROF" diff "$T/l1.pb.gz" "$T/l2.pb.gz" --value contentions -o "$T/l.json" \
		-o "$T/l.txt"
	[ "$status" -eq 0 ]
	cat "$T/l.txt"
	# the contended mutex: one stack in both runs, named by its symbol
	jqe 'any(.sites[]; .frames[0].function == "mu in mutexfix (futex_wait)" and
		 .base > 20 and .new > 20)' "$T/l.json"
	jqe 'all(.sites[].frames[];
		 .function | test("^futex 0x|^0x[0-9a-f]+ | of [0-9]+ |of thread [0-9]") | not)' \
		"$T/l.json"
	grep -q ' \[mu in mutexfix (futex_wait)\]$' "$T/l.txt"
	run "$EBPROF" diff "$T/w1.pb.gz" "$T/w2.pb.gz" --value switches -o "$T/w.json" -o "$T/w.txt"
	[ "$status" -eq 0 ]
	cat "$T/w.txt"
	# the ping and pong threads woken by each other, each waker by its thread: in both runs
	jqe '[.sites[] | select((.frames[0].function | startswith("waker: ")) and .base > 200 and
				 .new > 200) | [.frames[0].function, .frames[-1].function]] | unique ==
	     [["waker: ping of pingpong", "pong"], ["waker: pong of pingpong", "ping"]]' "$T/w.json"
	jqe 'all(.sites[].frames[]; .function | test(" \\([0-9]+\\)$| \\[[0-9]+\\]") | not)' \
		"$T/w.json"
	grep -qE ' \[waker: p[io]ng of pingpong\]$' "$T/w.txt"
}

# Two runs of one program, its user locks each on a row of its own, by name: before, every
# futex was "futex (futex_wait)" in a diff, the global mutex's waits summed with the heap's and
# the stacks' (18 waits on one row).
@test "diff: lock runs of one program line its user locks up by name, a global's by its symbol" {
	for r in 1 2; do
		run "$EBPROF" lock -q --user-only -o "$T/n$r.pb.gz" -- "$FIX/locknamefix" "$T/shm"
		[ "$status" -eq 0 ]
		[[ "$output" == *done* ]]
	done
	run "$EBPROF" diff "$T/n1.pb.gz" "$T/n2.pb.gz" --value contentions -o "$T/n.json" \
		-o "$T/n.txt"
	[ "$status" -eq 0 ]
	cat "$T/n.txt"
	both() { jq --arg l "$1" '[.sites[] | select(.frames[0].function == $l)]
		| [(map(.base) | add), (map(.new) | add)]' "$T/n.json" | jq -c .; }
	[ "$(both "big_lock in locknamefix (futex_wait)")" = "[3,3]" ]
	[ "$(both "counters+0x10 in locknamefix (futex_wait)")" = "[2,2]" ]
	[ "$(both "futex in [heap] (futex_wait)")" = "[4,4]" ]
	[ "$(both "futex in [stack] (futex_wait)")" = "[2,2]" ]
	[ "$(both "futex $T/shm+0x40 (futex_wait)")" = "[5,5]" ]
	jqe '[.sites[] | select(.frames[0].function == "futex (futex_wait)")] | length == 0' \
		"$T/n.json"
}

@test "diff: memfixture against demo: a table of what changed and a differential flame graph" {
	[ -x "$OUT/demo/demo" ] || skip "build/demo/demo not built (make build/demo/demo)"
	run "$EBPROF" mem -o "$T/a.pb.gz" -o "$T/a.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run "$EBPROF" mem -o "$T/demo.pb.gz" -o "$T/demo.json" -- "$OUT/demo/demo"
	[ "$status" -eq 0 ]
	run "$EBPROF" diff "$T/a.pb.gz" "$T/demo.pb.gz" --top 5 -o "$T/d.txt" -o "$T/d.svg"
	[ "$status" -eq 0 ]
	cat "$T/d.txt"
	# the totals are those of the two runs
	base=$(jq '[.sites[].alloc_space] | add' "$T/a.json")
	new=$(jq '[.sites[].alloc_space] | add' "$T/demo.json")
	grep -q "^  Total: .*($base bytes) -> .*($new bytes)\$" "$T/d.txt"
	grep -q "^  Change:    .*(+\\?$((new - base)) bytes)" "$T/d.txt"
	grep -q '^Top 5 changes by size (of [0-9]*)$' "$T/d.txt"
	# memfixture's biggest site is gone, demo's are new
	grep -qE '^ +-[0-9.]+ MiB +-100\.0% .* churn <- ' "$T/d.txt"
	grep -qE '^ +\+[0-9.]+ [KM]iB +new .*handle_request' "$T/d.txt"
	[ "$(grep -cE '^ +[-+][0-9]' "$T/d.txt")" -eq 5 ]
	xmllint --noout "$T/d.svg"
	grep -q '>ebprof diff: alloc_space (bytes)<' "$T/d.svg"
	grep -q 'fill="#d7301f"' "$T/d.svg"	# appeared
	grep -q 'fill="#2c6fcf"' "$T/d.svg"	# vanished
	grep -q '<title>churn' "$T/d.svg"
}

# kmem and mem both have alloc_space, the kernel's bytes in one and a program's in the other:
# diff compared them by default, as if one program had freed the kernel's allocations
@test "diff: profiles of two modes are compared only by a type named with --value" {
	"$EBPROF" kmem -q -o "$T/k.pb.gz" -- true > /dev/null
	"$EBPROF" mem -q -o "$T/m.pb.gz" -- "$FIX/memfixture" > /dev/null
	run -1 "$EBPROF" diff "$T/k.pb.gz" "$T/m.pb.gz"
	[ "$output" = "ebprof: cannot compare '$T/k.pb.gz', a kmem profile, with '$T/m.pb.gz', a \
mem profile: alloc_space is not one measure in two modes; give --value alloc_space to compare \
them anyway" ]
	run -0 "$EBPROF" diff --value alloc_space "$T/k.pb.gz" "$T/m.pb.gz"
	[[ "$output" == *"ebprof diff: alloc_space (bytes)"* ]]
	[[ "$output" == *"base $T/k.pb.gz: kmem profile"* ]]
	# one mode, the default type as ever
	run -0 "$EBPROF" diff "$T/m.pb.gz" "$T/m.pb.gz"
	[[ "$output" == *"No changes"* ]]
}

@test "report and diff: a missing or non-pprof file is exit 1 with a sentence" {
	run "$EBPROF" report "$T/nope.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot read '$T/nope.pb.gz': No such file or directory"* ]]
	printf 'just text\n' > "$T/notes.txt"
	run "$EBPROF" report "$T/notes.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"'$T/notes.txt' is not a valid pprof profile: "* ]]
	gzip -c "$T/notes.txt" > "$T/notes.pb.gz"
	run "$EBPROF" report "$T/notes.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not a valid pprof profile"* ]]
	head -c 100 "$FIX/memfixture" > "$T/cut.pb.gz"
	run "$EBPROF" report "$T/cut.pb.gz"
	[ "$status" -eq 1 ]
	run "$EBPROF" diff "$T/notes.txt" "$T/nope.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"is not a valid pprof profile"* ]]
	# a full disk says so, in every format (it said "Input/output error")
	"$EBPROF" cpu -q -o "$T/c.pb.gz" -- "$FIX/cpuburn" 0.2 > /dev/null
	for f in txt json folded svg html csv; do
		run sh -c '"$0" report "$1" -o "$2:-" > /dev/full' "$EBPROF" "$T/c.pb.gz" "$f"
		echo "$f: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"cannot write '$f:-': No space left on device"* ]]
	done
	run sh -c '"$0" report "$1" > /dev/full' "$EBPROF" "$T/c.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot write the report to standard output: No space left on device"* ]]
}

@test "report and diff: usage errors are exit 2" {
	run -2 "$EBPROF" report
	[[ "$output" == *"no profile given"* ]]
	run -2 "$EBPROF" report --bogus x.pb.gz
	run -2 "$EBPROF" report x.pb.gz y.pb.gz
	[[ "$output" == *"use ebprof diff"* ]]
	run -2 "$EBPROF" report x.pb.gz -o out.unknown
	[[ "$output" == *"cannot tell the format of 'out.unknown'"* ]]
	run -2 "$EBPROF" report --top -1 x.pb.gz
	run -2 "$EBPROF" diff only-one.pb.gz
	[[ "$output" == *"give two profiles"* ]]
	run -2 "$EBPROF" diff a b c
	run "$EBPROF" mem -o "$T/a.pb.gz" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run -2 "$EBPROF" report "$T/a.pb.gz" --value cpu
	[[ "$output" == *"has no sample type 'cpu'; it has: alloc_objects, alloc_space, inuse_objects, inuse_space"* ]]
	run -2 "$EBPROF" diff --value cpu "$T/a.pb.gz" "$T/a.pb.gz"
	[[ "$output" == *"has no sample type 'cpu'"* ]]
	# destinations are checked before anything is read, as the recording modes' are
	mkdir "$T/dir.svg"
	run -2 "$EBPROF" report "$T/a.pb.gz" -o "$T/dir.svg"
	[[ "$output" == *"cannot write the report to '$T/dir.svg': it is a directory"* ]]
	run -2 "$EBPROF" diff "$T/a.pb.gz" "$T/a.pb.gz" -o "$T/nodir/d.svg"
	[[ "$output" == *"directory '$T/nodir' does not exist"* ]]
	run -0 "$EBPROF" report --help
	[[ "$output" == *"Examples:"* ]]
	run -0 "$EBPROF" diff --help
	[[ "$output" == *"Examples:"* ]]
}

# the command line as a shell reads it back: words with blanks or quotes quoted, a newline
# (python3 -c's program) in $'...', on one line; before, its words were joined by blanks
# ("sh -c exit 0 x it's") and a newline broke the report's header
@test "report: the launched command is shown as bash reads it back, on one line, in every output" {
	run "$EBPROF" offcpu -q -o "$T/o.txt" -o "$T/o.json" -o "$T/o.pb.gz" -- \
		sh -c 'exit 0
' x "it's" ''
	[ "$status" -eq 0 ]
	line=$(sed -n 's/^  Command:   //p' "$T/o.txt")
	echo "$line"
	[ -n "$line" ]
	[ "$(grep -c '^  Kernel:' "$T/o.txt")" -eq 1 ]
	eval "set -- $line"
	[ $# -eq 6 ]
	[ "$1" = sh ]
	[ "$2" = -c ]
	[ "$3" = "exit 0
" ]
	[ "$4" = x ]
	[ "$5" = "it's" ]
	[ -z "$6" ]
	[ "$(jq -r .command "$T/o.json")" = "$line" ]
	run "$EBPROF" report "$T/o.pb.gz" -o "$T/r.txt"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/^  Command:   //p' "$T/r.txt")" = "$line" ]
}
