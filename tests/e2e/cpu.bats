#!/usr/bin/env bats
# ebprof cpu end to end: the CLI on the cpuburn fixture (a known 3:1 split of CPU time between
# burn_heavy and burn_light), on dd (kernel time under its user frames), every output format,
# bad input, and nothing left attached afterwards. No timing asserts: counts are compared with
# the fixture's own CPU time, which it prints.

load helpers

PPROF=/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof

# Sum of the folded file's values on lines whose leaf frame is $2 (all lines when empty).
folded_sum() {
	awk -v leaf="$2" '{
		v = $NF; $NF = ""; sub(/ $/, "");
		n = split($0, f, ";");
		if (leaf == "" || f[n] == leaf) s += v
	} END { print s + 0 }' "$1"
}

# No cpu_sample program is loaded any more (its perf event links and events are gone with it).
assert_no_cpu_probes() {
	assert_no_probes '^cpu_sample$'
}

@test "cpu: the 3:1 split of cpuburn within 5 points, every sample weighs the period" {
	run "$EBPROF" cpu -q -F 499 -o "$T/x.folded" -o "$T/x.json" -- "$FIX/cpuburn" 1.5
	[ "$status" -eq 0 ]
	heavy=$(folded_sum "$T/x.folded" burn_heavy)
	light=$(folded_sum "$T/x.folded" burn_light)
	echo "heavy $heavy light $light"
	[ $((heavy + light)) -gt 300 ]
	# heavy's share in percent, between 70 and 80
	share=$((100 * heavy / (heavy + light)))
	[ "$share" -ge 70 ]
	[ "$share" -le 80 ]
	# the callers are there: the frame-pointer walk reached main
	grep -q ';main;burn;burn_heavy ' "$T/x.folded"
	jqe '.sample_types | map(.type) == ["samples", "cpu"]' "$T/x.json"
	jqe '[.sites[] | .cpu == .samples * 2004008] | all' "$T/x.json"
}

@test "cpu: the sample count is within 5% of the rate times the command's CPU time" {
	"$EBPROF" cpu -q -F 499 -o "$T/x.folded" -o "$T/x.json" -- "$FIX/cpuburn" 1.5 > "$T/out"
	cpu_ms=$(awk '/^cpu_ms/ { print $2 }' "$T/out")
	total=$(folded_sum "$T/x.folded")
	expect=$((cpu_ms * 499 / 1000))
	echo "samples $total, expected $expect (cpu_ms $cpu_ms)"
	[ "$cpu_ms" -gt 1000 ]
	[ $((total * 100)) -ge $((expect * 95)) ]
	[ $((total * 100)) -le $((expect * 105)) ]
	# the run's facts say the same
	jq -e --arg n "$total" '.info | .rate == "499 Hz" and .samples == $n and .samples_lost == "0"' \
		"$T/x.json" >/dev/null
}

# --max-stacks 2: the count table refuses about a third of the samples (count_table_full, their
# stacks lost, and said so). A process's row is still every sample of it: the kernel keeps each
# process's total apart, counted before the stack-keyed count (a tester's 1.01 s process showed
# 616 ms, 61% of it, and two processes' shares were skewed: 8% against 18%). Two cpuburns, 0.9 s
# and 0.3 s of CPU, one after the other: each one's samples are its own CPU time (getrusage) at
# the rate, within 5% as above; the totals are the stacks kept plus the samples refused, exactly
# (a spill takes a generation of the tables no program counts into any more: before, a sample
# counted on another CPU while a spill took its key was lost, and this allowed 2).
# alone: 150 samples of a 0.3 s process within 5%: a second test's load time-slices its CPU,
# and the periodic samples then miss it by more (157 of 149, a run two at a time)
# bats test_tags=alone
@test "cpu: each process's samples are exact when the count table refuses samples (--max-stacks 2)" {
	steal0=$(awk '/^cpu / { print $9 }' /proc/stat)
	"$EBPROF" cpu -q -F 499 --max-stacks 2 -o "$T/x.json" -o "$T/x.folded" -o "$T/x.txt" -- \
		sh -c "'$FIX/cpuburn' 0.9 > '$T/a'; '$FIX/cpuburn' 0.3 > '$T/b'"
	# a virtual machine's stolen time: the hypervisor ran another guest while the process was
	# the CPU's task; the cpu-clock timer counts it, getrusage leaves it out (on this VM 100-270
	# ms a run, both CPUs: 0.3 s of cpuburn had 184 samples for 150 then), so it may add as many
	# samples, at most, over the bound
	steal_ms=$((($(awk '/^cpu / { print $9 }' /proc/stat) - steal0) * 1000 / $(getconf CLK_TCK)))
	refused=$(jq '.drops.count_table_full' "$T/x.json")
	total=$(jq '.info.samples | tonumber' "$T/x.json")
	kept=$(folded_sum "$T/x.folded")
	echo "samples $total, in stacks $kept, refused $refused"
	# the count table did refuse; its note says where those samples went
	[ "$refused" -gt 20 ]
	jq -e --arg n "$refused" 'any(.notes[]; startswith("\($n) samples are in no stack: the count table (--max-stacks 2) was full; they count in their processes'"'"' totals"))' "$T/x.json" >/dev/null
	jqe '.drops.process_totals_full == 0 and (.info.samples_lost | tonumber) == .drops.count_table_full' "$T/x.json"
	# the processes' rows sum to the run's samples, which are those kept plus those refused
	jq -e --argjson n "$total" '[.processes[].samples] | add == $n' "$T/x.json" >/dev/null
	[ $((kept + refused)) -eq "$total" ]
	for f in a:0.9 b:0.3; do
		cpu_ms=$(awk '/^cpu_ms/ { print $2 }' "$T/${f%%:*}")
		n=$(jq --arg c "cpuburn ${f#*:}" '[.processes[] | select(.cmdline | endswith($c))] |
			if length == 1 then .[0].samples else -1 end' "$T/x.json")
		ns=$(jq --arg c "cpuburn ${f#*:}" '.processes[] | select(.cmdline | endswith($c)) | .cpu_ns' "$T/x.json")
		expect=$((cpu_ms * 499 / 1000))
		echo "cpuburn ${f#*:}: samples $n, expected $expect (cpu_ms $cpu_ms, steal $steal_ms ms)"
		[ $((n * 100)) -ge $((expect * 95)) ]
		[ $((n * 100)) -le $((expect * 105 + steal_ms * 499 / 10)) ]
		[ "$ns" -eq $((n * 2004008)) ]
		# its row in the text report says the same
		grep -qE "^ +[0-9]+ +cpuburn +$n " "$T/x.txt"
	done
}

@test "cpu: dd's kernel frames sit under its user frames in most samples; --top's default" {
	# reads of 1 MiB: the kernel's zeroing of each is most of dd's time (with reads of 64
	# bytes dd's own code was about half, and the check below failed on a slow run: 139 of
	# 281 samples)
	run "$EBPROF" cpu -q -F 499 -o "$T/x.folded" -o "$T/x.txt" -- \
		dd if=/dev/zero of=/dev/null bs=1M count=20000 status=none
	[ "$status" -eq 0 ]
	# --top's default, as --help says: ten rows a table (dd's stacks go through more
	# functions than that; the text report was whole before)
	grep -q '^Top 10 functions by total samples (of [0-9]*)$' "$T/x.txt"
	rows=$(awk '/^Top 10 functions by total samples/ { t = 1; getline; next }
		t && NF == 0 { exit } t { n++ } END { print n + 0 }' "$T/x.txt")
	[ "$rows" -eq 10 ]
	total=$(folded_sum "$T/x.folded")
	# process root, then at least one user frame, then kernel frames (marked _[k])
	mixed=$(awk '{ v = $NF; $NF = ""; n = split($0, f, ";");
		if (n > 2 && f[2] !~ /_\[k\]$/ && f[n] ~ /_\[k\]/) s += v } END { print s + 0 }' \
		"$T/x.folded")
	echo "dd: $mixed of $total samples with kernel frames under user frames"
	[ "$total" -gt 50 ]
	[ $((mixed * 2)) -gt "$total" ]
	# never a user frame under a kernel frame
	! awk '{ $NF = ""; n = split($0, f, ";"); k = 0;
		for (i = 2; i <= n; i++) { if (f[i] ~ /_\[k\] *$/) k = 1; else if (k) exit 0 }
	} END { exit 1 }' "$T/x.folded" || false
}

@test "cpu: kernel symbols come from a private cache after the first run, naming the same" {
	export EBPROF_CACHE_DIR="$T/cache"
	for i in 1 2; do
		run "$EBPROF" cpu -vv -F 499 -o "$T/x$i.folded" -- \
			dd if=/dev/zero of=/dev/null bs=64 count=500000 status=none
		[ "$status" -eq 0 ]
		echo "$output" | grep 'kernel symbols from' >"$T/from$i"
	done
	grep -qx 'ebprof: kernel symbols from /proc/kallsyms' "$T/from1"
	grep -qx "ebprof: kernel symbols from $T/cache/kallsyms" "$T/from2"
	[ "$(stat -c %a "$T/cache")" = 700 ]
	[ "$(stat -c %a "$T/cache/kallsyms")" = 600 ]
	# every kernel frame of both runs is named, with a name /proc/kallsyms has
	awk '{ print $3 }' /proc/kallsyms | sort -u >"$T/names"
	for i in 1 2; do
		tr ';' '\n' <"$T/x$i.folded" | sed -n 's/_\[k\]\( [0-9]*\)\{0,1\}$//p' | sort -u >"$T/k$i"
		[ -s "$T/k$i" ]
		! grep -q '^0x' "$T/k$i" || false
		[ -z "$(comm -23 "$T/k$i" "$T/names")" ] || { comm -23 "$T/k$i" "$T/names"; false; }
	done
	# a cache that cannot be written is only not used
	EBPROF_CACHE_DIR=/proc/ebprof-no-such-dir run "$EBPROF" cpu -q -F 499 -o "$T/x3.folded" -- \
		dd if=/dev/zero of=/dev/null bs=64 count=100000 status=none
	[ "$status" -eq 0 ]
	grep -q '_\[k\]' "$T/x3.folded"
}

# Two runs at once (tests/run-e2e.sh runs tests two at a time with one cache; a user can run two)
# fill an empty cache together: each writes whole files under temporary names and renames them
# into place, so both name their frames, no temporary file is left, and a third run reads the
# kernel's symbols from the cache.
@test "cpu: two runs filling an empty cache at once both name their frames; the cache is whole after" {
	export EBPROF_CACHE_DIR="$T/cache"
	for i in 1 2; do
		"$EBPROF" cpu -q -F 499 -o "$T/x$i.folded" -- \
			dd if=/dev/zero of=/dev/null bs=64 count=500000 status=none &
		pids[i]=$!
		BG_PIDS+=("$!")
	done
	wait "${pids[1]}"
	wait "${pids[2]}"
	for i in 1 2; do
		grep -q '^dd ([0-9]*);.*_\[k\]' "$T/x$i.folded"
		! grep -q '0x[0-9a-f]*_\[k\]' "$T/x$i.folded" || false
	done
	find "$T/cache" -type f | sort
	[ -s "$T/cache/kallsyms" ]
	# mkstemp's names: NAME.XXXXXX
	! find "$T/cache" -type f | grep -E '\.[A-Za-z0-9]{6}$' || false
	run "$EBPROF" cpu -vv -F 499 -o "$T/x3.folded" -- \
		dd if=/dev/zero of=/dev/null bs=64 count=100000 status=none
	[ "$status" -eq 0 ]
	[[ "$output" == *"ebprof: kernel symbols from $T/cache/kallsyms"* ]]
}

@test "cpu: every output format is written, and go tool pprof reads the profile" {
	run "$EBPROF" cpu -q -o "$T/x.txt" -o "$T/x.json" -o "$T/x.pb.gz" -o "$T/x.folded" \
		-o "$T/x.svg" -o "$T/x.html" -o "$T/x.speedscope.json" -o "$T/x.csv" \
		-- "$FIX/cpuburn" 0.5
	[ "$status" -eq 0 ]
	for f in x.txt x.json x.pb.gz x.folded x.svg x.html x.speedscope.json x.csv; do
		[ -s "$T/$f" ] || { echo "$f is empty" >&2; false; }
	done
	grep -q burn_heavy "$T/x.txt"
	grep -q burn_heavy "$T/x.svg"
	jq -e . "$T/x.speedscope.json" >/dev/null
	if [ ! -x "$PPROF" ]; then
		skip "go tool pprof not installed ($PPROF): apt-get install golang-1.19-go"
	fi
	run "$PPROF" -symbolize=none -top "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'Type: samples'
	echo "$output" | grep -q burn_heavy
	run "$PPROF" -symbolize=none -sample_index=cpu -top "$T/x.pb.gz"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q burn_heavy
}

@test "cpu: --per-thread puts a 'name [tid]' frame under the process" {
	run "$EBPROF" cpu -q --per-thread -F 499 -o "$T/x.folded" -- "$FIX/cpuburn" 0.4 2
	[ "$status" -eq 0 ]
	grep -qE '^cpuburn \([0-9]+\);burn-1 \[[0-9]+\];' "$T/x.folded"
	grep -qE '^cpuburn \([0-9]+\);burn-2 \[[0-9]+\];' "$T/x.folded"
	# every line has the thread frame
	! grep -vE '^[^;]+;[^;]+ \[[0-9]+\]' "$T/x.folded"
}

# A thread renamed between two phases (pthread_setname_np): each phase's samples under the name
# the thread had then, as perf's comm at the sample. Before, both were under its last name (the
# name read from /proc at the report).
@test "cpu --per-thread: a thread that renamed itself has each phase's samples under the name it had then" {
	run "$EBPROF" cpu -q --per-thread -F 499 -o "$T/x.folded" -- "$FIX/renamefix" cpu 300
	[ "$status" -eq 0 ]
	grep -E ';phase[12][; ]' "$T/x.folded" | cut -d';' -f1,2 | sort | uniq -c
	grep -qE '^renamefix \([0-9]+\);phase-a \[[0-9]+\];.*;phase1;run [0-9]+$' "$T/x.folded"
	grep -qE '^renamefix \([0-9]+\);phase-b \[[0-9]+\];.*;phase2;run [0-9]+$' "$T/x.folded"
	! grep -qE ';phase-b \[[0-9]+\];.*;phase1;' "$T/x.folded" || false
	! grep -qE ';phase-a \[[0-9]+\];.*;phase2;' "$T/x.folded" || false
	# one thread: the same tid under both names
	[ "$(grep -oE ';phase-[ab] \[[0-9]+\]' "$T/x.folded" | sed 's/.*\[//' | sort -u | wc -l)" -eq 1 ]
	# a thread never renamed has one name and no more keys (cpuburn's threads: one name each)
	run "$EBPROF" cpu -q --per-thread -F 499 -o "$T/b.folded" -- "$FIX/cpuburn" 0.2 2
	[ "$status" -eq 0 ]
	[ "$(grep -oE '^[^;]+;[^;]+\]' "$T/b.folded" | sort -u | wc -l)" -le 3 ]
}

# The names --per-thread keeps (bpf/lib/tname.bpf.h, a table of --max-stacks entries) were never
# emptied: once full, a thread's name was not kept (thread_names_full) and the report named it
# as it was at the end, '?' when gone. Now each spill takes the names out with the counts (a
# name is kept at a count's first, so the table never holds more names than the count table
# counts). 40 threads one after another, each named nt-I and on the CPU for 20 ms of its own
# time (about 20 samples at 999 Hz, several stacks), against a table of 16: the count table
# spills over and over (it is full too at times: count_table_full, the samples lost, maybe a
# thread's all), and every thread with samples is under its own name; before, thread_names_full
# and '?'.
@test "cpu --per-thread: the thread names are taken out with the counts at each spill: over more threads than the table holds, none lost, each thread under its own name" {
	run "$EBPROF" cpu -v --per-thread -F 999 --max-stacks 16 -o "$T/x.json" -o "$T/x.folded" \
		-- "$FIX/napthreads" spin 40
	[ "$status" -eq 0 ]
	n=$(jq .drops.thread_names_full "$T/x.json")
	spills=$(grep -c 'taken into the profile' <<< "$output" || true)
	echo "thread_names_full $n, spills $spills"
	[ "$n" -eq 0 ]
	[ "$spills" -ge 2 ]
	cut -d';' -f2 "$T/x.folded" | grep -E '^nt-[0-9]+ \[[0-9]+\]$' | sort -u > "$T/named"
	! cut -d';' -f2 "$T/x.folded" | grep -qE '^\? \[' || false
	# each under its own name (the fixture's "thread I TID"), more than the table holds
	while read -r name tid; do
		grep -qx "thread ${name#nt-} ${tid//[][]/}" <<< "$output"
	done < "$T/named"
	echo "threads named: $(wc -l < "$T/named")"
	[ "$(wc -l < "$T/named")" -gt 16 ]
}

# cpu --offcpu runs offcpu's collector, whose table of threads off-CPU at once, full, is the
# drop thread_table_full with a note saying to raise --max-threads: an option cpu did not take
# (a usage error), so the note named nothing the user could do. cpu takes it now, with
# --offcpu. Three threads burning on two CPUs are preempted, and main waits in pthread_join
# all along: more threads off-CPU at once than a table of 1 holds.
@test "cpu --offcpu: a full table of threads off-CPU is a counted drop; its note names --max-threads, which cpu takes" {
	run "$EBPROF" cpu --help
	[ "$status" -eq 0 ]
	[[ $output == *"--max-threads N    with --offcpu: threads off-CPU at once"* ]]
	run "$EBPROF" cpu -q --offcpu --max-threads 1 -o "$T/x.json" -o "$T/x.txt" -- \
		"$FIX/cpuburn" 0.3 3
	[ "$status" -eq 0 ]
	n=$(jq .drops.thread_table_full "$T/x.json")
	echo "thread_table_full $n"
	[ "$n" -gt 0 ]
	grep -qE "thread_table_full $n\b" "$T/x.txt"
	jq -e --arg n "$n" 'any(.notes[]; . == "\($n) off-CPU \(if $n == "1" then "interval was" else "intervals were" end) not measured: the table of threads off-CPU at once (--max-threads 1) was full; raise --max-threads")' \
		"$T/x.json" >/dev/null
	# it sizes offcpu's table: without --offcpu there is none
	run "$EBPROF" cpu --max-threads 4 -- true
	[ "$status" -eq 2 ]
	[[ $output == *"--max-threads goes with --offcpu"* ]]
	run "$EBPROF" cpu --offcpu --max-threads 0 -- true
	[ "$status" -eq 2 ]
	[[ $output == *"--max-threads takes a number of threads from 1 to"* ]]
}

@test "cpu: -p of a process that exits mid-run keeps its samples, symbolized" {
	bg "$FIX/cpuburn" 1
	run "$EBPROF" cpu -q -F 499 -p "$BG" -d 10 -o "$T/x.folded"
	[ "$status" -eq 0 ]
	[ "$(folded_sum "$T/x.folded" burn_heavy)" -gt 100 ]
	assert_no_cpu_probes
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "cpu: -a sees other processes; --idle adds the idle task; --cpu limits the CPUs" {
	bg "$FIX/cpuburn" 3
	run "$EBPROF" cpu -q -a -d 500ms -o "$T/x.folded" -o "$T/x.json"
	[ "$status" -eq 0 ]
	grep -q "^cpuburn ($BG);.*burn_heavy" "$T/x.folded"
	! grep -q '^idle (0)' "$T/x.folded" || false
	jqe '.drops | has("process_notes_lost")' "$T/x.json"
	run "$EBPROF" cpu -q -a --idle --cpu 0 -d 500ms -o "$T/y.folded" -o "$T/y.json"
	[ "$status" -eq 0 ]
	jqe '.info.cpus == "0"' "$T/y.json"
	# the sampling window is its own fact, not a second "duration" beside the run's
	jqe '(.info.sampled_for | test("^[0-9.]+ s$")) and (.info | has("duration") | not)' "$T/y.json"
	assert_no_cpu_probes
}

# -a: a process that lives 40 ms is symbolized: the note of its first sample wakes ebprof, which
# reads its mappings at once (read at the next tick, most were gone: bare addresses), and
# loads its unwind tables (complete stacks)
# alone: -a: the whole machine
# bats test_tags=alone
@test "cpu: -a symbolizes a process that lives 40 ms" {
	# stopped once they are done (its 5 s -d waited 4 s more for nothing)
	"$EBPROF" cpu -a -v -F 999 -d 60 -o "$T/a.folded" 2>"$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	for i in 1 2 3 4 5 6; do "$FIX/cpuburn" 0.04 >/dev/null; done
	kill -INT "$e"
	wait "$e"
	# of the cpuburn processes' samples in user mode (a [k] leaf: the kernel's exec and exit)
	awk '/^cpuburn \(/ && !/_\[k\] [0-9]+$/ { n += $NF; if (/burn_(heavy|light)/) ok += $NF }
	     END { print ok + 0, n + 0; exit !(n >= 60 && ok >= 0.9 * n) }' "$T/a.folded"
}

# -a: a process that execs is named by its new program and its frames named: it kept the name
# of its first sample (a script that exec'd python3 was the script) and the snapshot taken then
# (python3's 106 samples were bare addresses)
# alone: -a: the whole machine
# bats test_tags=alone
@test "cpu -a: a script that execs a program: the process is that program, its frames named" {
	# stopped once the script is done (its 6 s -d waited 5 s more for nothing)
	"$EBPROF" cpu -a -v -F 499 -d 60 -o "$T/a.folded" -o "$T/a.json" 2>"$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	bash -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; exec "$0" 0.5' \
		"$FIX/cpuburn" >/dev/null &
	x=$!
	wait "$x"
	kill -INT "$e"
	wait "$e"
	jq -e --argjson p "$x" '[.processes[] | select(.pid == $p) | .comm] == ["cpuburn"]' \
		"$T/a.json"
	# its samples after the exec: in cpuburn's code, named
	awk -v p="($x)" 'index($0, p) && /burn_(heavy|light)/ { n += $NF; if ($0 !~ /;0x[0-9a-f]+( |;)/) ok += $NF }
		END { print ok + 0, n + 0; exit !(n >= 50 && ok >= 0.95 * n) }' "$T/a.folded"
}

# -a over minutes: the processes that ended keep their keys in the count table to the end, so a
# full table lost the samples of those met last (a 3-minute run of builds: 40% of its samples,
# one command's share 34% -> 19%); a full table is now emptied into the profile at the next tick
# alone: -a: the whole machine
# bats test_tags=alone
@test "cpu -a: a full count table is taken into the profile and counting goes on (--max-stacks 256)" {
	# ended when the 60 are done (a fixed -d cut the loop short on a loaded machine)
	"$EBPROF" cpu -a -v -F 999 --max-stacks 256 -d 120 -o "$T/s.json" 2> "$T/err" &
	e=$!
	wait_for "$T/err" '^ebprof: sampling '
	for i in $(seq 60); do "$FIX/cpuburn" 0.02 > /dev/null; done
	kill -INT "$e"
	wait "$e"
	grep "count table filled" "$T/err"
	# every sample counted but those of the tick the table was full for, a few percent
	jqe '(.info.samples_lost | tonumber) * 20 < (.info.samples | tonumber)' "$T/s.json"
	jqe '[.processes[] | select(.comm == "cpuburn")] | length >= 50' "$T/s.json"
}

# a PID the kernel gives to a second traced process is said once for them all, with the first
# few: a note each flooded a report (26,901 notes over a tree of 120,000 short processes)
@test "cpu: PIDs used twice in a launched tree are one note with their count" {
	run "$EBPROF" cpu -q -o "$T/r.json" -- sh -c "for i in 1 2 3; do '$FIX/pidreuse' /bin/true -- /bin/true || exit \$?; done"
	[ "$status" -ne 3 ] || skip "a PID was taken by another process meanwhile"
	[ "$status" -eq 0 ]
	jqe '[.notes[] | select(test("used by two processes"))] | length == 1' "$T/r.json"
	jqe '[.notes[] | select(test("^3 PIDs were used by two processes during the run \\(the kernel recycled them: [0-9]+, [0-9]+, [0-9]+\\)"))] | length == 1' "$T/r.json"
}

# A PID traced again as another program at the same addresses: spinname (spin_outer ->
# spin_work, 0.3 s of CPU), then, once it has exited, spinname_other at its PID (pidreuse:
# clone3's set_tid), whose other_spin_outer and other_spin_work sit where spinname's functions
# do (built without PIE; nm says so). Each one's samples are named by its own mappings: the
# earlier process's counts are read out before the new one is traced, and the new one starts a
# snapshot history of its own. Before, the new one kept the earlier one's snapshots, and both
# programs' frames there were [ambiguous: spinname or spinname_other] (~390 samples a run).
@test "cpu: a PID used again by a program at the same addresses: each one's frames named by its own mappings" {
	# the oracle: the same addresses, other names
	a=$(nm "$FIX/spinname" | awk '$3 == "spin_work" || $3 == "spin_outer" { print $1 }' | sort)
	b=$(nm "$FIX/spinname_other" | awk '$3 == "other_spin_work" || $3 == "other_spin_outer" { print $1 }' | sort)
	[ "$(echo "$a" | wc -l)" -eq 2 ]
	[ "$a" = "$b" ]
	run "$EBPROF" cpu -q -F 999 -o "$T/x.folded" -o "$T/x.json" -- \
		"$FIX/pidreuse" "$FIX/spinname" 300 -- "$FIX/spinname_other" 300
	[ "$status" -ne 3 ] || skip "the PID was taken by another process meanwhile"
	[ "$status" -eq 0 ]
	pid=$(awk '$1 == "a" { print $2 }' <<< "$output")
	grep -q "^b $pid\$" <<< "$output"
	grep " ($pid);" "$T/x.folded" > "$T/pid.folded"
	# none named from the other program's mappings, none from both
	run grep -F '[ambiguous' "$T/pid.folded"
	[ "$status" -eq 1 ]
	run grep -E ';spin_outer;other_|;other_spin_outer;spin_work' "$T/pid.folded"
	[ "$status" -eq 1 ]
	# each one's samples, by its own names
	grep -qE ';main;spin_outer;spin_work( |;)' "$T/pid.folded"
	grep -qE ';main;other_spin_outer;other_spin_work( |;)' "$T/pid.folded"
	jqe '[.notes[] | select(test("^PID [0-9]+ was used by two processes"))] | length == 1' "$T/x.json"
}

# The kernel gave a PID to another process during an -a run: cpu's rows are by tgid, so they
# summed the two programs under the name of the last with nothing said. Said now, on the row
# and in the run's notes (cpuburn, then its copy burnb, 0.2 s of CPU each).
# alone: -a: the whole machine
# bats test_tags=alone
@test "cpu -a: a PID used again by another program is said, on its row and in a note" {
	cp "$FIX/cpuburn" "$T/burnb"
	pidreuse_under '^ebprof: sampling ' \
		cpu -a -v -q -F 499 -d 60 --top 0 -o "$T/x.json" -o "$T/x.txt" :: \
		"$FIX/cpuburn" 0.2 -- "$T/burnb" 0.2
	assert_pid_reused "$T/x.json" "$T/x.txt" burnb
}

@test "cpu: a process's exit path is its CPU time: exit_mmap unmapping 300 MiB is sampled" {
	# _exit with the memory still mapped: the kernel unmaps it after the exit stop, where the
	# session reads the process out
	run "$EBPROF" cpu -q -F 999 -o "$T/x.folded" -- \
		perl -MPOSIX -e '$x = "a" x (300 << 20); POSIX::_exit(0)'
	[ "$status" -eq 0 ]
	exiting=$(grep '^perl ([0-9]*);.*do_exit_\[k\].*exit_mmap_\[k\]' "$T/x.folded" |
		awk '{ s += $NF } END { print s + 0 }')
	echo "exit_mmap samples: $exiting"
	[ "$exiting" -gt 0 ]
}

@test "cpu: a library unloaded before the end keeps its frames; its time is never the caller's" {
	# dlburn burns 0.5 s in libdlburn.so's lib_burn, dlcloses it, burns 0.5 s in main_burn
	run "$EBPROF" cpu -q -F 499 -o "$T/x.folded" -- "$FIX/dlburn" "$FIX/libdlburn.so" 0.5
	[ "$status" -eq 0 ]
	lib=$(folded_sum "$T/x.folded" lib_burn)
	main=$(folded_sum "$T/x.folded" main_burn)
	caller=$(folded_sum "$T/x.folded" run_lib)
	echo "lib_burn $lib main_burn $main run_lib's own $caller"
	[ "$main" -gt 100 ]
	# the same CPU time in each, within 20%
	[ "$lib" -gt $((main * 8 / 10)) ]
	[ "$lib" -lt $((main * 12 / 10)) ]
	grep -q ';run_lib;lib_burn ' "$T/x.folded"
	[ "$caller" -le $((main / 50)) ]
	# opened and closed between two snapshots: named when the unwinder read the mappings at
	# its first stack in the library's code (unwinder__on_maps: 3 runs of 3 here, 0 before),
	# else bare addresses under run_lib; never run_lib's own time (timing: not asserted)
	run "$EBPROF" cpu -q -F 999 -o "$T/y.folded" -- "$FIX/dlburn" "$FIX/libdlburn.so" 0.03
	[ "$status" -eq 0 ]
	main=$(folded_sum "$T/y.folded" main_burn)
	caller=$(folded_sum "$T/y.folded" run_lib)
	echo "short: main_burn $main run_lib's own $caller"
	[ "$caller" -le 2 ]
}

# A plugin closed, replaced (a new file at its path, as an upgrade makes it) and opened again at
# the same address. The kernel counts bare addresses without time, and the newest snapshot named
# them all: the first file's samples said replug_v2_hot, the second file's function (494 of
# 494). The truth is in the host's frames: period_one ran the first file, period_two the second.
# Those counted before ebprof saw the new file are either file's ([ambiguous]); it reads them out
# then, and names those after from the new file.
@test "cpu: a library replaced and reopened at its address: never named from the other file" {
	cp "$FIX/libreplug1.so" "$T/plug.so"
	run "$EBPROF" cpu -q -F 499 -o "$T/x.folded" -o "$T/x.json" -- \
		"$FIX/replug" "$T/plug.so" "$FIX/libreplug2.so" 1
	[ "$status" -eq 0 ]
	echo "$output"
	a1=$(sed -n 's/^period 1 plug_work //p' <<< "$output")
	a2=$(sed -n 's/^period 2 plug_work //p' <<< "$output")
	[ -n "$a1" ]
	[ -n "$a2" ]
	[ "$a1" = "$a2" ] || skip "the second dlopen mapped the plugin elsewhere: no ambiguity"
	grep -F ';period_one;' "$T/x.folded" > "$T/one" || true
	grep -F ';period_two;' "$T/x.folded" > "$T/two" || true
	cat "$T/one" "$T/two"
	one=$(folded_sum "$T/one")
	echo "period_one $one samples, period_two $(folded_sum "$T/two")"
	[ "$one" -gt 200 ]
	# never the other file's function: said to be either
	! grep -q replug_v2_hot "$T/one" || false
	! grep -q replug_v1_hot "$T/two" || false
	# plug_work is plug_work in both files (named); their hot functions differ (ambiguous)
	grep -qF ';period_one;burn;plug_work;[ambiguous: plug.so, replaced]' "$T/one"
	# the second file's, past the read-out (a tick at most after its first samples): named
	two=$(folded_sum "$T/two")
	grep -F ';period_two;burn;plug_work;replug_v2_hot' "$T/two" > "$T/named" || true
	named=$(folded_sum "$T/named")
	echo "period_two: $named of $two named replug_v2_hot"
	[ "$named" -gt $((two / 2)) ]
	jqe '.drops.unwind_ambiguous_code > 0' "$T/x.json"
	jqe '[.notes[] | select(test("named from neither.*unwind_ambiguous_code"))] | length == 1' \
		"$T/x.json"
}

@test "cpu: time in the vDSO is named by the image's own symbols, at the right offsets" {
	# the fixture writes its [vdso] mapping's bytes to vdso.so; readelf is the oracle of what
	# each offset in it is
	run "$EBPROF" cpu -q -F 499 -o "$T/x.json" -o "$T/x.folded" -- "$FIX/vdsoclock" 20000000 \
		"$T/vdso.so"
	[ "$status" -eq 0 ]
	# (mawk has no strtonum: offsets are compared as decimal)
	readelf -Ws "$T/vdso.so" | awk '$4 == "FUNC" { sub(/@.*/, "", $8); print $8, $2, $3 }' |
		while read -r name value size; do
			echo "$name $((16#$value)) $((size))"
		done > "$T/syms"
	grep -q '^__vdso_clock_gettime ' "$T/syms"
	jq -r '.sites[] | .frames[] | select(.module == "[vdso]") |
		"\(.function) \(.offset)"' "$T/x.json" | while read -r name off; do
			echo "$name $((off))"
		done > "$T/frames"
	sort "$T/frames" | uniq -c
	[ -s "$T/frames" ]
	# every [vdso] frame has a name, and its offset lies in that function's symbol
	awk 'NR == FNR { lo[$1] = $2; hi[$1] = $2 + $3; next }
		{ if (!($1 in lo) || $2 < lo[$1] || $2 >= hi[$1]) bad++ }
		END { exit bad > 0 }' "$T/syms" "$T/frames"
	# glibc's clock_gettime calls the vDSO's; no frame is left as an offset in [vdso]
	grep -q ';read_clock;clock_gettime;__vdso_clock_gettime' "$T/x.folded"
	! grep -q 'vdso\]+0x' "$T/x.folded"
}

# a private mount namespace with our root but another file mounted at a path (a container's bind
# mount, a service's private /usr): its frames were named from the file at that path in ours,
# with names and lines that looked right (nap, from offsleep, for cpuburn's burn_heavy)
@test "cpu -p: a process whose own mount namespace binds another program at a path is named from its file, not ours" {
	cp "$FIX/offsleep" "$T/prog"
	bg unshare --mount --propagation private sh -c \
		"mount --bind '$FIX/cpuburn' '$T/prog' && exec '$T/prog' 4" > /dev/null
	pid=$BG
	for i in $(seq 50); do
		[ "$(readlink /proc/$pid/exe 2>/dev/null)" = "$T/prog" ] && break
		sleep 0.05
	done
	run "$EBPROF" cpu -q -p "$pid" -d 1 -o "$T/x.folded"
	[ "$status" -eq 0 ]
	cat "$T/x.folded"
	grep -q ';burn_heavy ' "$T/x.folded"
	! grep -qE ';(nap|sleep_loop)(;| )' "$T/x.folded" || false
}

# A root for a container: cpuburn_bid stripped as /usr/local/bin/prog, the dynamic loader and libc
# it needs, and its debug file where $1 says (beside: prog.debug beside it, named by its
# .gnu_debuglink; dotdebug: in .debug/ beside it; buildid: /usr/lib/debug/.build-id/xx/yyy.debug).
make_debug_root() {
	local R=$T/root bin=$T/root/usr/local/bin bid
	mkdir -p "$bin/.debug" "$R/lib64" "$R/lib/x86_64-linux-gnu" "$R/oldroot"
	cp /lib64/ld-linux-x86-64.so.2 "$R/lib64/"
	cp /lib/x86_64-linux-gnu/libc.so.6 "$R/lib/x86_64-linux-gnu/"
	cp "$FIX/cpuburn_bid" "$bin/prog"
	objcopy --only-keep-debug "$bin/prog" "$T/prog.debug"
	strip --strip-all "$bin/prog"
	bid=$(readelf -n "$FIX/cpuburn_bid" | sed -n 's/.*Build ID: //p')
	case $1 in
	beside) cp "$T/prog.debug" "$bin/prog.debug" ;;
	dotdebug) cp "$T/prog.debug" "$bin/.debug/prog.debug" ;;
	buildid)
		mkdir -p "$R/usr/lib/debug/.build-id/${bid:0:2}"
		cp "$T/prog.debug" "$R/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ;;
	esac
	# the link names the file by its name only; in buildid it finds nothing
	[ "$1" = buildid ] || (cd "$T" && objcopy --add-gnu-debuglink=prog.debug "$bin/prog")
	# nothing of it outside the root: ours has no such build-id's file
	[ ! -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ]
}

# Separate debug information inside a container (its own root by pivot_root): libdw looked for it
# through /proc/PID/root at the first lookup, after the launched process was released and its
# root gone, and every frame of the program was an offset (prog+0x120c) in each layout
@test "cpu: a container's stripped program is named from its debug file there, after it exits" {
	command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
	command -v pivot_root >/dev/null || skip "pivot_root not installed (util-linux)"
	for layout in beside dotdebug buildid; do
		rm -rf "$T/root"
		make_debug_root "$layout"
		run "$EBPROF" cpu -q -o "$T/x.folded" -o "$T/x.json" -- \
			unshare --mount --pid --fork --propagation private sh -c \
			'mount --bind "$0" "$0" && cd "$0" && pivot_root . oldroot &&
			 exec /usr/local/bin/prog 1' "$T/root"
		[ "$status" -eq 0 ]
		echo "$layout:"
		grep '^prog ' "$T/x.folded"
		grep -q '^prog ([0-9]*);.*;main;burn;burn_heavy [0-9]' "$T/x.folded"
		! grep -q 'prog+0x' "$T/x.folded" || false
		# each named frame of the program as addr2line names its offset in the full file
		jq -r '[.sites[].frames[] | select(.module == "/usr/local/bin/prog" and
			(.inlined | not) and .line != null)] | unique[] |
			"\(.offset) \(.function) \(.file):\(.line)"' "$T/x.json" > "$T/frames"
		[ "$(wc -l < "$T/frames")" -ge 4 ]
		while read -r off fn fl; do
			want=$(addr2line -f -i -e "$FIX/cpuburn_bid" "$off" | tail -2 |
				sed 's/ (discriminator [0-9]*)//' | paste -sd' ')
			echo "$off $fn $fl / addr2line: $want"
			[ "${want%% *}" = "$fn" ]
			[[ "${want#* }" == */"$fl" ]]
		done < "$T/frames"
	done
}

# one build-id, two files: a binary and its stripped copy (strip keeps the build-id). The first
# file met made the build-id's one module, so with the stripped copy first the full binary's
# frames were offsets too (full+0x1170), its .symtab and DWARF never read
@test "cpu -p: a binary and its stripped copy (one build-id) are both named, in either order" {
	cp "$FIX/cpuburn_bid" "$T/full"
	cp "$FIX/cpuburn_bid" "$T/stripped"
	strip --strip-all "$T/stripped"
	# the oracle: the same build-id, the names in the full file only
	bid=$(readelf -n "$T/full" | grep 'Build ID')
	[ -n "$bid" ]
	[ "$bid" = "$(readelf -n "$T/stripped" | grep 'Build ID')" ]
	nm "$T/full" | grep -q ' T burn_heavy$'
	! nm "$T/stripped" 2>/dev/null | grep -q burn_heavy || false
	bg "$T/stripped" 6
	a=$BG
	bg "$T/full" 6
	b=$BG
	sleep 0.3
	for order in "$a,$b" "$b,$a"; do
		run "$EBPROF" cpu -q -p "$order" -d 1 -o "$T/x.folded"
		[ "$status" -eq 0 ]
		echo "-p $order:"
		cat "$T/x.folded"
		grep -q "^full ($b);.*;burn_heavy [0-9]" "$T/x.folded"
		grep -q "^stripped ($a);.*;burn_heavy [0-9]" "$T/x.folded"
		! grep -qE '(full|stripped)\+0x' "$T/x.folded" || false
	done
}

# A stripped program keeps its call frame information (.eh_frame): code no symbol covers is named
# after the FDE holding it, "stripped!sub_HEX", HEX the function's ELF address, which the full
# file's symbol table (nm) has. burn_heavy's loop is sampled at several addresses, one function;
# before, each address was a frame of its own (stripped+0x11a4, stripped+0x11a8, ...), none with
# burn_heavy's share, and so was the cpu finding's subject
@test "cpu: a stripped program's function is one frame, named after its call frame range" {
	cp "$FIX/cpuburn_bid" "$T/stripped"
	strip --strip-all "$T/stripped"
	! nm "$T/stripped" 2>/dev/null | grep -q burn_heavy || false
	readelf -S "$T/stripped" | grep -q ' .eh_frame '
	# the oracle: burn_heavy's address and size in the full file, its FDE the same range
	read -r a size <<< "$(nm -S "$FIX/cpuburn_bid" | awk '$4 == "burn_heavy" { print $1, $2 }')"
	heavy=$(printf '%x' $((16#$a)))
	end=$((16#$a + 16#$size))
	readelf -wf "$T/stripped" | grep -q "pc=0*$heavy\.\.0*$(printf '%x' $end)\$"
	name="stripped!sub_$heavy"
	run "$EBPROF" cpu -q -F 499 -o "$T/x.folded" -o "$T/x.json" -o "$T/x.pb.gz" -- \
		"$T/stripped" 1
	[ "$status" -eq 0 ]
	cat "$T/x.folded"
	# every leaf sample in burn_heavy's range is that one function, from several addresses
	jq -r --arg m "$T/stripped" '.sites[] | .frames[0] | select(.module == $m) |
		"\(.offset) \(.function) \(.cfi_named)"' "$T/x.json" | sort -u > "$T/leaves"
	cat "$T/leaves"
	in=0
	while read -r off fn cfi; do
		o=$((off))
		if [ "$o" -ge $((16#$a)) ] && [ "$o" -lt "$end" ]; then
			[ "$fn" = "$name" ]
			[ "$cfi" = true ]
			in=$((in + 1))
		else
			[ "$fn" != "$name" ]
		fi
	done < "$T/leaves"
	[ "$in" -ge 2 ]
	# one frame in the folded stacks: its samples together, about 3/4 of all
	heavy_n=$(folded_sum "$T/x.folded" "$name")
	all=$(folded_sum "$T/x.folded")
	echo "$name: $heavy_n of $all"
	[ $((100 * heavy_n / all)) -ge 60 ]
	! grep -q "stripped+0x" "$T/x.folded" || false
	# pprof keeps each address (go's pprof shows a system name only when it differs: none),
	# and read back the function is said to be named so
	if [ -x "$PPROF" ]; then
		"$PPROF" -symbolize=none -raw "$T/x.pb.gz" > "$T/raw" 2>&1
		[ "$(grep -cE "^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ $name :0 s=0\$" "$T/raw")" -ge 2 ]
	fi
	"$EBPROF" report -o "$T/back.json" "$T/x.pb.gz"
	jq -e --arg f "$name" '[.sites[].frames[] | select(.function == $f)] | length > 0 and
	     all(.cfi_named == true)' "$T/back.json" >/dev/null
}

@test "cpu: bad input is a usage error or a clear failure" {
	run "$EBPROF" cpu -F 0 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"-F takes a sampling rate"* ]]
	run "$EBPROF" cpu -F 1000000 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"perf_event_max_sample_rate"* ]]
	run "$EBPROF" cpu -F abc -- true
	[ "$status" -eq 2 ]
	run "$EBPROF" cpu --cpu 0-x -- true
	[ "$status" -eq 2 ]
	run "$EBPROF" cpu --cpu 1000 -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"not online"* ]]
	run "$EBPROF" cpu --idle -- true
	[ "$status" -eq 2 ]
	run "$EBPROF" cpu -p 4194304 -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"no such process"* ]]
	# a thread that is not its process's, and a zombie: both gave an empty report and exit 0
	bg "$FIX/cpuburn" 5 2
	burn=$BG
	for i in $(seq 50); do [ "$(ls /proc/$burn/task | wc -l)" -ge 3 ] && break; sleep 0.1; done
	tid=$(ls /proc/$burn/task | grep -vx "$burn" | head -1)
	run "$EBPROF" cpu -p "$tid" -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot attach to PID $tid: it is a thread of process $burn (cpuburn); give -p $burn"* ]]
	bg sh -c 'sleep 0.1 & exec sleep 10'
	for i in $(seq 50); do
		z=$(ps -o pid=,stat= --ppid "$BG" | awk '$2 ~ /^Z/ { print $1 }')
		[ -z "$z" ] || break
		sleep 0.1
	done
	run "$EBPROF" cpu -p "$z" -d 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"(a zombie): nothing is left to trace"* ]]
	assert_no_cpu_probes
}

@test "cpu: a SIGTERM after a Ctrl-C the command ignored ends both, every time" {
	# the command ignores SIGINT and has threads; SIGTERM goes to it and to ebprof at once.
	# ebprof stopped at its second signal while the command's threads died traced: one whose
	# exit it had not waited for stayed a zombie only ebprof could reap, the command's leader
	# could not be reaped before it, and ebprof waited for the command forever (3 runs in 8)
	for i in 1 2 3 4 5 6; do
		"$EBPROF" cpu -q -o "$T/x$i.folded" -- sh -c 'trap "" INT; exec "$0" 30 2' \
			"$FIX/cpuburn" > /dev/null 2>&1 &
		ebp=$!
		BG_PIDS+=("$ebp")
		for _ in $(seq 50); do
			c=$(pgrep -P "$ebp" cpuburn) && [ -n "$c" ] && break
			sleep 0.1
		done
		[ -n "$c" ]
		sleep 0.3
		kill -INT "$ebp"
		sleep 0.3
		kill -TERM "$c" "$ebp"
		for _ in $(seq 200); do
			kill -0 "$ebp" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$ebp" 2>/dev/null; then
			echo "run $i: ebprof still waits 20 s after the SIGTERM"
			grep -E 'State' "/proc/$c/status" || true
			false
		fi
		run wait "$ebp"
		# the command's status: killed by SIGTERM
		[ "$status" -eq 143 ]
		! kill -0 "$c" 2>/dev/null || false
		[ -s "$T/x$i.folded" ]
	done
	assert_no_cpu_probes
}

# alone: it waits for a cpu_sample program by name: another test's would do
# bats test_tags=alone
@test "cpu: nothing is left attached after Ctrl-C" {
	bg "$FIX/cpuburn" 20
	"$EBPROF" cpu -q -p "$BG" -o "$T/x.folded" 2>"$T/err" &
	ebp=$!
	# the program is loaded and attached
	for _ in $(seq 50); do
		bpftool prog show name cpu_sample >/dev/null 2>&1 &&
			[ -n "$(bpftool prog show name cpu_sample)" ] && break
		sleep 0.1
	done
	[ -n "$(bpftool prog show name cpu_sample)" ]
	sleep 0.3
	kill -INT "$ebp"
	wait "$ebp"
	[ -s "$T/x.folded" ]
	assert_no_cpu_probes
}

# ebprof keeps a file open per object it symbolizes: under systemd's default soft limit (1024)
# an agent on a build machine would have run out (543 open after 2 minutes of -a); it raises
# its own soft limit to the hard one, and a launched command still gets the limit it had
@test "cpu: ebprof raises its open-file limit to the hard one; a launched command keeps the caller's" {
	hard=$(ulimit -Hn)
	[ "$hard" != unlimited ] && [ "$hard" -gt 1024 ] || skip "hard open-file limit $hard: nothing to raise"
	run bash -c "ulimit -Sn 1024; '$EBPROF' cpu -q -o txt:/dev/null -- sh -c 'ulimit -n'"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1024 ]
	bg sleep 30
	bash -c "ulimit -Sn 1024; exec '$EBPROF' cpu -v -q -d 3 -o txt:/dev/null -p $BG" 2> "$T/err" &
	e=$!
	BG_PIDS+=("$e")
	wait_for "$T/err" "sampling"
	soft=$(awk '/^Max open files/ { print $4 }' "/proc/$e/limits")
	echo "ebprof's soft limit $soft, hard $hard"
	[ "$soft" = "$hard" ]
	wait "$e"
}

# Sixteen programs, each a file of its own (copies of cpuburn without a build-id), run one after
# another under a budget of 4 open object files: every copy's frames are named, at most 4 of
# the copies are open in ebprof at any time (read from the command itself, ebprof's child, once
# all have run), none is lost, and ebprof holds no socket (libdw made a debuginfod client, a
# curl handle and its socket pair, for each file without local debug information: the vDSO).
# Before, every file ever symbolized stayed open until the end (sweep K: cpu -a 19 -> 369
# descriptors in 150 s, 207 of them sockets in offcpu -a). (ls may find a descriptor ebprof
# closes as it lists them, and fail: the command's status is not the test's.)
@test "cpu: the files it symbolizes stay within EBPROF_MAX_OPEN_OBJECTS, named alike when reopened" {
	for i in $(seq 16); do cp "$FIX/cpuburn_nobid" "$T/b$i"; done
	EBPROF_MAX_OPEN_OBJECTS=4 run "$EBPROF" cpu -v -F 499 -o "$T/x.folded" -o "$T/x.json" -- \
		sh -c 'for i in $(seq 16); do "$0/b$i" 0.1 > /dev/null; done
		       ls -l /proc/$PPID/fd > "$0/fds" 2> /dev/null; exit 0' "$T"
	echo "$output" | grep -v '^ebprof: \(tracepoints\|attached\|sampling\)' | tail -5
	[ "$status" -eq 0 ]
	echo "$output" | grep 'symbolizer:' || true
	echo "ebprof's files of the copies, then sockets, after all ran:"
	grep -c "$T/b" "$T/fds" || true
	grep -c 'socket:' "$T/fds" || true
	[ "$(grep -c "$T/b" "$T/fds")" -le 4 ]
	! grep -q 'socket:' "$T/fds" || false
	# each copy's samples, named through its own file (16 files, 4 open at once)
	for i in $(seq 16); do
		grep -q "^b$i ([0-9]*);.*;main;burn;burn_heavy [0-9]" "$T/x.folded"
	done
	! grep -qE ';b[0-9]+\+0x' "$T/x.folded" || false
	jqe '.drops.symbol_file_gone == 0' "$T/x.json"
	echo "$output" | grep -qE 'at most [1-4] open at once \(limit 4\)'
	echo "$output" | grep -qE 'symbolizer: [0-9]+ object files opened \([1-9][0-9]* again'
	# a limit that is no number is said, and the default used
	EBPROF_MAX_OPEN_OBJECTS=x run "$EBPROF" cpu -q -o txt:/dev/null -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"EBPROF_MAX_OPEN_OBJECTS=x is not a number from 1 to 1000000; using 256"* ]]
}

# A JIT's code in anonymous memory, named by the perf map it writes (/tmp/perf-PID.map, the
# file perf, bcc and bpftrace read): jitmap's two loops run 3 to 1; the first is named
# (jit_hot: its later line, over jit_old), the second, not in the map, stays [anon]+offset.
# Before, both were [anon]+offset.
@test "cpu: JIT code is named by the process's perf map (/tmp/perf-PID.map), the later line for code compiled again" {
	run "$EBPROF" cpu -q -F 499 -o "$T/c.folded" -o "$T/c.json" -- "$FIX/jitmap" 4
	pid=$(jq '.processes[0].pid' "$T/c.json")
	rm -f "/tmp/perf-$pid.map"
	[ "$status" -eq 0 ]
	read -r hot cold old < <(awk '/;call_jit;jit_hot( |;)/ { h += $NF }
		/;call_jit;\[anon\]\+0x10[0-9a-f]( |;)/ { c += $NF } /jit_old/ { o += $NF }
		END { print h + 0, c + 0, o + 0 }' "$T/c.folded")
	echo "jit_hot $hot, unnamed $cold, jit_old $old"
	[ "$old" -eq 0 ]
	[ "$cold" -gt 0 ]
	# 3 to 1 by their steps: the named code is the first loop's, all of it
	[ $((hot * 100)) -ge $(((hot + cold) * 65)) ]
	[ $((hot * 100)) -le $(((hot + cold) * 85)) ]
	jqe '[.sites[].frames[] | select(.function == "jit_hot")] | all(.module == "[anon]")' \
		"$T/c.json"
}
