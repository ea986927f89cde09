#!/usr/bin/env bats
# ebprof top end to end: the screen in tmux (160x48) on the cpuburn fixture (one spinning thread,
# 3/4 of its time in burn_heavy), the keys through send-keys and capture-pane, quitting (q,
# Ctrl-C) with nothing of its own left loaded; --batch's CPU% against the kernel's own account
# of the fixture's CPU time (/proc/PID/stat) and against the fixture's getrusage; bad input.

load helpers

setup() {
	: "${EBPROF:?run through tests/run-e2e.sh}"
	T=$(mktemp -d /tmp/ebprof-e2e.XXXXXX)
	BG_PIDS=()
	S="ebprof-top-$$-${BATS_TEST_NUMBER}"
}

teardown() {
	tmux kill-session -t "$S" 2>/dev/null || true
	[ -z "${VT:-}" ] || rm -rf "$VT"
	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$T"
}

# Run `ebprof top ARGS` in a detached tmux session of 160x48; its exit status goes to $T/rc.
start_top() {
	printf '#!/bin/bash\n"$@"\necho $? > %q/rc\nsleep 600\n' "$T" > "$T/run.sh"
	tmux new-session -d -s "$S" -x 160 -y 48 bash "$T/run.sh" "$EBPROF" top "$@"
	local i pane
	pane=$(tmux display-message -p -t "$S" '#{pane_pid}')
	for i in $(seq 100); do
		TOP_PID=$(pgrep -P "$pane" -x ebprof) && return 0
		sleep 0.05
	done
	echo "ebprof top did not start" >&2
	return 1
}

screen() {
	tmux capture-pane -p -t "$S"
}

# Wait until the screen matches the ERE $1, at most $2 seconds (default 5).
wait_screen() {
	local i
	for ((i = 0; i < ${2:-5} * 20; i++)); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.05
	done
	echo "the screen never matched '$1':" >&2
	screen >&2
	return 1
}

# The BPF programs a process holds (ids), from its file descriptors.
held_progs() {
	sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u
}

# None of these program ids is loaded any more (the kernel frees them a little after their
# last holder: 2 s).
assert_unloaded() {
	local id i left
	for i in $(seq 40); do
		left=
		for id in "$@"; do
			bpftool prog show id "$id" >/dev/null 2>&1 && left="$left $id"
		done
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	echo "still loaded:$left" >&2
	return 1
}

# Wait for ebprof top's exit status, at most $1 seconds; prints it.
wait_rc() {
	local i
	for ((i = 0; i < $1 * 20; i++)); do
		[ -s "$T/rc" ] && { echo "exited within $((i * 50 + 50)) ms" >&2; cat "$T/rc"; return 0; }
		sleep 0.05
	done
	echo "ebprof top did not exit within $1 s" >&2
	return 1
}

# alone: its screen read within seconds (tmux), CPU% over them
# bats test_tags=alone
@test "top: the fixture within 5 s at >= 50% CPU, burn_heavy in its panel; q exits 0, its programs gone" {
	# at the highest priority: its single thread gets a whole CPU on a loaded machine too
	bg nice -n -20 "$FIX/cpuburn" 120
	start_top -p "$BG"
	wait_screen "^ +$BG cpuburn +[0-9]+\.[0-9]" 5
	wait_screen "^ +[0-9.]+ +[0-9.]+  burn_heavy$" 5
	# its share: >= 50% of one CPU for a thread that spins, unless the machine does not give it
	# that much (other cgroups' load: nice works inside ours only); then what the screen
	# shows must be what the kernel accounts to it over the same seconds (/proc/PID/stat)
	hz=$(getconf CLK_TCK)
	t0=$(date +%s.%N)
	s0=$(stat_ticks "$BG")
	best=0
	for i in $(seq 25); do
		pct=$(screen | awk -v p="$BG" '$1 == p && $2 == "cpuburn" { print $3; exit }')
		best=$(awk -v a="$best" -v b="${pct:-0}" 'BEGIN { if (b + 0 > a + 0) print b; else print a }')
		awk -v v="$best" 'BEGIN { exit !(v >= 50) }' && break
		sleep 0.2
	done
	s1=$(stat_ticks "$BG")
	t1=$(date +%s.%N)
	real=$(awk -v k="$((s1 - s0))" -v hz="$hz" -v d="$(echo "$t1 - $t0" | bc)" \
		'BEGIN { printf "%.1f", (d > 0 ? 100 * k / hz / d : 0) }')
	echo "CPU% on screen: best $best, last $pct; the kernel's account over those seconds: $real%"
	if ! awk -v v="$best" 'BEGIN { exit !(v >= 50) }'; then
		awk -v r="$real" 'BEGIN { exit !(r < 55) }'
		awk -v v="$pct" -v r="$real" 'BEGIN { d = v - r; exit !(d < 15 && d > -15) }'
	fi
	screen | grep -q "hottest functions of cpuburn $BG"
	mapfile -t progs < <(held_progs "$TOP_PID")
	echo "programs held: ${progs[*]}"
	[ "${#progs[@]}" -ge 1 ]
	bpftool prog show id "${progs[0]}" | grep -q 'name cpu_sample'
	tmux send-keys -t "$S" q
	rc=$(wait_rc 10)
	[ "$rc" -eq 0 ]
	assert_unloaded "${progs[@]}"
	# the terminal is back as it was: the view is gone from the screen
	! screen | grep -q 'ebprof top -' || false
	kill -0 "$BG"
}

# alone: its screens read within seconds (tmux)
# bats test_tags=alone
@test "top: keys: filter, stacks, help, sort, views, pause, write, resize; Ctrl-C exits 0" {
	# a name of its own: other runs on the machine may spin a cpuburn too
	name="tb$$"
	cp "$FIX/cpuburn" "$T/$name"
	bg "$T/$name" 120
	start_top
	wait_screen '^ebprof top - .* CPUs [0-9,-]+  load ' 5
	# colour by default (the header cyan)
	tmux capture-pane -e -p -t "$S" | grep -qE $'\e\\[([0-9;]*;)?36(;[0-9;]*)?m'
	tmux send-keys -t "$S" / "$name" Enter
	wait_screen "filter: $name" 2
	wait_screen "^ +$BG $name " 5
	# only its row under the filter
	[ "$(screen | awk '/^ +PID COMMAND/ { t = 1; next } /SELF%|hottest/ { t = 0 } t && NF >= 3' | wc -l)" -eq 1 ]
	wait_screen "burn_heavy$" 5
	# Enter: the selected process's stacks, leaf first
	tmux send-keys -t "$S" Enter
	wait_screen "hottest stacks of $name $BG" 2
	wait_screen "burn_heavy < burn < main" 5
	tmux send-keys -t "$S" Enter
	wait_screen "hottest functions of $name $BG" 2
	# help, closed by any key
	tmux send-keys -t "$S" '?'
	wait_screen "^ebprof top: keys" 2
	tmux send-keys -t "$S" x
	wait_screen "sort: CPU%" 2
	# s: the next sort column, every column in turn, then the PID, then the first again
	tmux send-keys -t "$S" s
	wait_screen "sort: OFF-CPU%" 2
	tmux send-keys -t "$S" s s s s s s s
	wait_screen "sort: PID" 2
	tmux send-keys -t "$S" s
	wait_screen "sort: CPU%" 2
	# views: Tab goes to offcpu (its panel, its first column sorts), 4 to lock, 5 to io, 1
	# back to cpu; 2 names what is missing (no mem view with -a: no uprobes on every process)
	tmux send-keys -t "$S" Tab
	wait_screen "view: cpu \[offcpu\] lock io   sort: OFF-CPU%" 2
	wait_screen "offcpu: hottest functions of $name $BG" 2
	tmux send-keys -t "$S" 4
	wait_screen "view: cpu offcpu \[lock\] io   sort: LOCK/s" 2
	wait_screen "lock: hottest functions of $name $BG" 2
	tmux send-keys -t "$S" 5
	wait_screen "view: cpu offcpu lock \[io\]   sort: IO/s" 2
	tmux send-keys -t "$S" 2
	wait_screen "no mem view" 2
	tmux send-keys -t "$S" 1
	wait_screen "view: \[cpu\] offcpu lock io   sort: CPU%" 2
	# pause: the clock in the header stops with the table
	tmux send-keys -t "$S" p
	wait_screen "\[paused\]" 2
	tmux send-keys -t "$S" p
	wait_screen "filter: $name$" 2
	# w: the window shown, as folded stacks
	tmux send-keys -t "$S" w
	wait_screen "write the window to" 2
	tmux send-keys -t "$S" "$T/win.folded" Enter
	wait_screen "wrote $T/win.folded \(folded" 3
	grep -q "^$name ($BG);.*;main;burn;burn_heavy [0-9]*$" "$T/win.folded"
	# a bad name is a message, not an exit
	tmux send-keys -t "$S" w "$T/win.xyz" Enter
	wait_screen "cannot tell the format of '$T/win.xyz'" 2
	# resize: drawn again at the new size
	tmux resize-window -t "$S" -x 90 -y 20
	sleep 1.5
	wait_screen '^ebprof top - ' 3
	[ "$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m }')" -le 90 ]
	wait_screen "^ +$BG $name " 3
	mapfile -t progs < <(held_progs "$TOP_PID")
	[ "${#progs[@]}" -ge 1 ]
	tmux send-keys -t "$S" C-c
	rc=$(wait_rc 10)
	[ "$rc" -eq 0 ]
	assert_unloaded "${progs[@]}"
}

# utime + stime of a process, in clock ticks.
stat_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/"$1"/stat
}

@test "top -b: the fixture's CPU% agrees with /proc/PID/stat over the same run" {
	bg "$FIX/cpuburn" 120
	hz=$(getconf CLK_TCK)
	t0=$(date +%s.%N)
	s0=$(stat_ticks "$BG")
	"$EBPROF" top -b -n 4 -p "$BG" > "$T/out"
	s1=$(stat_ticks "$BG")
	t1=$(date +%s.%N)
	cat "$T/out"
	# the windows: each header's length, the fixture's CPU% in it
	seen=$(awk -v p="$BG" '/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) } $1 == p { s += w * $3 / 100; n++ }
		END { printf "%.3f %d", s, n }' "$T/out")
	windows=$(awk '/^ebprof top - / { match($0, /window [0-9.]+ s/); s += substr($0, RSTART + 7, RLENGTH - 9) }
		END { printf "%.3f", s }' "$T/out")
	read -r cpu n <<<"$seen"
	echo "ebprof: ${cpu} s of CPU in ${windows} s of windows ($n); /proc: $(((s1 - s0))) ticks in $(echo "$t1 - $t0" | bc) s"
	[ "$n" -eq 4 ]
	# the CPUs sampled as the report names them, the kernel's list of those online ("0-1"),
	# not a count
	grep -q "^ebprof top - .*  CPUs $(cat /sys/devices/system/cpu/online)  load " "$T/out"
	# the kernel's account covers the windows and ebprof's start and exit: ebprof never sees
	# more than it (a sample each 10.1 ms of CPU: 5% and a tick of slack), and over the
	# windows it sees its rate, loosely (a loaded 2-core VM moves the fixture's share)
	awk -v e="$cpu" -v k="$((s1 - s0))" -v hz="$hz" 'BEGIN { exit !(e <= k / hz * 1.05 + 0.05) }'
	awk -v e="$cpu" -v w="$windows" -v k="$((s1 - s0))" -v hz="$hz" -v d="$(echo "$t1 - $t0" | bc)" \
		'BEGIN { r1 = e / w; r2 = k / hz / d; print r1, r2; exit !(r1 >= r2 * 0.75 - 0.05) }'
}

@test "top -b -- cpuburn: the windows add up to the fixture's own CPU time within 10%" {
	"$EBPROF" top -b -- "$FIX/cpuburn" 1.5 > "$T/out"
	cat "$T/out"
	cpu_ms=$(awk '/^cpu_ms/ { print $2 }' "$T/out")
	seen_ms=$(awk '/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) } $2 == "cpuburn" { s += w * $3 * 10 }
		END { printf "%d", s }' "$T/out")
	echo "cpuburn says $cpu_ms ms, ebprof top $seen_ms ms"
	[ "$cpu_ms" -ge 1500 ]
	[ $((seen_ms * 100)) -ge $((cpu_ms * 90)) ]
	[ $((seen_ms * 100)) -le $((cpu_ms * 110)) ]
}

# A batch table's number with its unit (B, K, M, G, T: binary) in bytes.
bytes_awk='function bytes(s,  u, v) { u = substr(s, length(s)); v = substr(s, 1, length(s) - 1);
	if (u == "K") return v * 1024; if (u == "M") return v * 1048576
	if (u == "G") return v * 1073741824; if (u == "T") return v * 1099511627776; return v + 0 }'

# concurrent: its -a run (top -b -n 1) only checks a column is absent
# bats test_tags=concurrent
@test "top -b -- samplefixture: ALLOC/s over the windows adds up to its allocations within 10%, LIVE to what it keeps" {
	"$FIX/samplefixture" --truth > "$T/truth"
	"$EBPROF" top -b -i 0.5 -- "$FIX/samplefixture" > "$T/out"
	cat "$T/out"
	read -r seen live n <<<"$(awk "$bytes_awk"'
		/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) }
		/^ +PID COMMAND/ { a = 0; for (i = 1; i <= NF; i++) { if ($i == "ALLOC/s") a = i; if ($i == "LIVE") l = i } }
		$2 == "samplefixture" && a && $a != "-" { s += bytes($a) * w; live = bytes($l); n++ }
		END { printf "%.0f %.0f %d", s, live, n }' "$T/out")"
	alloc=$(jq '.alloc_bytes' "$T/truth")
	keep=$(jq '.live_bytes' "$T/truth")
	echo "allocated: $seen of $alloc; live at the end $live of $keep; $n windows"
	[ "$n" -ge 2 ]
	[ $((seen * 10)) -ge $((alloc * 9)) ]
	[ $((seen * 10)) -le $((alloc * 11)) ]
	# byte sampling's estimate of live bytes: its standard deviation is about
	# sqrt(period x bytes) (7% here, ~180 samples); four of them
	tol=$(awk -v k="$keep" 'BEGIN { printf "%.0f", 4 * sqrt(524288 * k) }')
	[ "$live" -ge $((keep - tol)) ]
	[ "$live" -le $((keep + tol)) ]
	# the columns are the targets': -a has none (no system-wide uprobes unless asked)
	"$EBPROF" top -b -n 1 > "$T/all"
	! grep -q 'ALLOC/s' "$T/all" || false
	"$EBPROF" top -b --no-mem -- "$FIX/cpuburn" 0.3 > "$T/nomem"
	! grep -q 'ALLOC/s' "$T/nomem"
}

@test "top -b -- offsleep: OFF-CPU% over the windows adds up to the fixture's own time around its naps within 10%" {
	# 10 naps of 100 ms in nap(): 1.0 s off the CPU, in windows of 0.5 s
	"$EBPROF" top -b -i 0.5 --no-mem -- "$FIX/offsleep" 10 100 > "$T/out"
	cat "$T/out"
	slept_ms=$(awk '/^slept_ns/ { printf "%d", $2 / 1e6 }' "$T/out")
	read -r off_ms waits n <<<"$(awk '
		/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) }
		/^ +PID COMMAND/ { for (i = 1; i <= NF; i++) { if ($i == "OFF-CPU%") a = i; if ($i == "WAITS/s") b = i } }
		$2 == "offsleep" && a && $a != "-" { s += $a * w * 10; c += $b * w; n++ }
		END { printf "%d %.0f %d", s, c, n }' "$T/out")"
	echo "offsleep says $slept_ms ms around its naps; ebprof top: $off_ms ms off the CPU, ~$waits waits, in $n windows"
	[ "$n" -ge 2 ]
	[ "$slept_ms" -ge 1000 ]
	# the naps, plus the little else it waits for (its start, its exit's write): a loose 10%
	[ $((off_ms * 100)) -ge $((slept_ms * 90)) ]
	[ $((off_ms * 100)) -le $((slept_ms * 110)) ]
	[ "$waits" -ge 1 ]
	"$EBPROF" top -b --no-offcpu --no-mem -- "$FIX/offsleep" 1 10 > "$T/nooff"
	! grep -q 'OFF-CPU%' "$T/nooff" || false
	assert_no_probes '^offcpu_(switch|waking|wakeup|wakeup_new)$'
}

# alone: its screen read within seconds (tmux)
# bats test_tags=alone
@test "top: offsleep's OFF-CPU% on screen near 100% of its one thread, nap() in the offcpu panel" {
	# one thread that sleeps all but a few microseconds of each 20 ms: 100% of one thread's
	# time off the CPU; a window holds the waits that ended in it (about 50 of 20 ms: +-2%)
	bg "$FIX/offsleep" 6000 20
	start_top -p "$BG"
	wait_screen "^ +$BG offsleep " 5
	tmux send-keys -t "$S" 3
	wait_screen "view: cpu \[offcpu\] lock io mem   sort: OFF-CPU%" 2
	wait_screen "offcpu: hottest functions of offsleep $BG" 3
	wait_screen "^ +[0-9.]+ +[0-9.]+  nap$" 5
	sleep 1.5
	screen
	pct=$(screen | awk -v p="$BG" '/^ +PID COMMAND/ { for (i = 1; i <= NF; i++) if ($i == "OFF-CPU%") a = i }
		a && $1 == p && $2 == "offsleep" { print $a; exit }')
	echo "OFF-CPU% on screen: $pct"
	awk -v v="$pct" 'BEGIN { exit !(v >= 80 && v <= 120) }'
	mapfile -t progs < <(held_progs "$TOP_PID")
	tmux send-keys -t "$S" q
	rc=$(wait_rc 10)
	[ "$rc" -eq 0 ]
	assert_unloaded "${progs[@]}"
	kill -0 "$BG"
}

# alone: the disk's requests
# bats test_tags=alone
@test "top -b -- dd: IO/s and IOB/s over the windows add up to its 2000 O_DIRECT reads within 5%" {
	var_tmp_disk
	make_file "$VT/f" 2000
	"$EBPROF" top -b -i 0.5 -- dd if="$VT/f" of=/dev/null bs=4096 count=2000 iflag=direct \
		status=none > "$T/out"
	cat "$T/out"
	read -r reqs bytes lat n <<<"$(awk "$bytes_awk"'
		/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) }
		/^ +PID COMMAND/ { for (i = 1; i <= NF; i++) { if ($i == "IO/s") a = i; if ($i == "IOB/s") b = i; if ($i == "IOLAT") l = i } }
		$2 == "dd" && a && $a != "-" { r += $a * w; s += bytes($b) * w; lat = $l; n++ }
		END { printf "%.0f %.0f %s %d", r, s, lat, n }' "$T/out")"
	echo "requests $reqs bytes $bytes (last mean latency $lat) in $n windows"
	[ "$n" -ge 1 ]
	[ "$reqs" -ge 1900 ]
	[ "$reqs" -le 2100 ]
	[ "$bytes" -ge $((8192000 * 95 / 100)) ]
	[ "$bytes" -le $((8192000 * 105 / 100)) ]
	[[ $lat =~ ^[0-9.]+(ns|us|ms|s)$ ]]
}

# alone: bpftrace counts every mutexfix's waits (another test's too)
# bats test_tags=alone
@test "top -b -- mutexfix: LOCK/s and WAIT% over the windows agree with bpftrace's futex waits of the same run within 10%" {
	# LOCK/s counts kernel locks' contention too (the futex hash bucket's spinlock, when four
	# threads hammer one futex): bpftrace counts those beside the futex waits
	start_bpftrace "$MUTEX_BT"$'\ntracepoint:lock:contention_begin /comm == "mutexfix"/ { @k = count(); }'
	"$EBPROF" top -b -i 0.5 --no-mem -- "$FIX/mutexfix" 4 20000 > "$T/out"
	stop_bpftrace
	cat "$T/out"
	grep -q "done 80000" "$T/out"
	read -r waits delay n <<<"$(awk '
		/^ebprof top - / { match($0, /window [0-9.]+ s/); w = substr($0, RSTART + 7, RLENGTH - 9) }
		/^ +PID COMMAND/ { for (i = 1; i <= NF; i++) { if ($i == "LOCK/s") a = i; if ($i == "WAIT%") b = i } }
		$2 == "mutexfix" && a && $a != "-" { c += $a * w; d += $b / 100 * w * 1e9; n++ }
		END { printf "%.0f %.0f %d", c, d, n }' "$T/out")"
	# every futex of the fixture (its mutex; its threads' joins wait too)
	bt_waits=$(sed -n 's/^@n\[[0-9a-fx]*\]: \([0-9]*\)$/\1/p' "$T/bt.out" | awk '{ s += $1 } END { printf "%.0f\n", s }')
	bt_delay=$(sed -n 's/^@t\[[0-9a-fx]*\]: \([0-9]*\)$/\1/p' "$T/bt.out" | awk '{ s += $1 } END { printf "%.0f\n", s }')
	k=$(sed -n 's/^@k: \([0-9]*\)$/\1/p' "$T/bt.out")
	bt_waits=$((bt_waits + ${k:-0}))
	echo "$n windows; kernel contentions $k"
	[ "$n" -ge 1 ]
	[ "$bt_waits" -gt 20 ]
	within "$waits" "$bt_waits" 10
	within "$delay" "$bt_delay" 10
}

@test "top: bad input: a clear sentence and exit 2 (not a terminal, -o, -i, -n, -F); a missing PID exits 1" {
	run "$EBPROF" top -p 1
	[ "$status" -eq 2 ]
	[[ $output == *"standard output is not a terminal: use --batch (-b)"* ]]
	run "$EBPROF" top -b -o "$T/x.json"
	[ "$status" -eq 2 ]
	[[ $output == *"writes no report at the end: press w"* ]]
	run "$EBPROF" top -b -i 0
	[ "$status" -eq 2 ]
	[[ $output == *"-i takes an interval in seconds from 0.1 to 3600"* ]]
	run "$EBPROF" top -b -n 0
	[ "$status" -eq 2 ]
	[[ $output == *"-n takes a number of intervals from 1"* ]]
	run "$EBPROF" top -b -F 0
	[ "$status" -eq 2 ]
	# the cpu part's own check of -F: top's help, not cpu's
	run "$EBPROF" top -b -F 100000000
	[ "$status" -eq 2 ]
	[[ $output == *"is above this machine's highest sampling rate"* ]]
	[[ $output == *"Try 'ebprof top --help'."* ]]
	run "$EBPROF" top -b -n 1 -p 4194303
	[ "$status" -eq 1 ]
	[[ $output == *"cannot attach to PID 4194303: no such process"* ]]
	# a terminal of a type nobody knows: a sentence and 1, not ncurses' exit
	run script -eqc "TERM=nonexistent-term '$EBPROF' top -p $$" /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"cannot use the terminal: TERM='nonexistent-term' is not a terminal type"* ]]
	run "$EBPROF" top --help
	[ "$status" -eq 0 ]
	[[ $output == *"Usage: ebprof top"* ]]
}

# alone: its screen read within seconds (tmux)
# bats test_tags=alone
@test "top: the documented launch with its output in a file works, and the header follows the command's exec in place" {
	# its --help's example: a > after the command would be the shell's, on top's own output
	run "$EBPROF" top --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"top -- sh -c './myprog > out.log'"* ]]
	! grep -E 'top -- [^'"'"']*>' <<< "$output" || false
	start_top -- sh -c "exec '$FIX/cpuburn' 3 > '$T/out.log'"
	# sh, then the program it became
	wait_screen "tracing command $FIX/cpuburn: " 5
	rc=$(wait_rc 10)
	[ "$rc" = 0 ]
	grep -q '^cpu_ms ' "$T/out.log"
}

# alone: its screen read within seconds (tmux)
# bats test_tags=alone
@test "top: SIGTERM ends the view with exit 0 and gives the terminal back" {
	bg "$FIX/cpuburn" 120
	start_top -p "$BG" --no-color
	wait_screen "^ +$BG cpuburn " 5
	# --no-color: attributes (reverse video) but no colour (SGR 30-37, 40-47)
	! tmux capture-pane -e -p -t "$S" | grep -qE $'\e\\[([0-9;]*;)?(3|4)[0-7](;[0-9;]*)?m' || false
	mapfile -t progs < <(held_progs "$TOP_PID")
	kill -TERM "$TOP_PID"
	rc=$(wait_rc 10)
	[ "$rc" -eq 0 ]
	assert_unloaded "${progs[@]}"
	! screen | grep -q 'ebprof top -'
}

# alone: its screen read within seconds (tmux)
# bats test_tags=alone
@test "top: the terminal closing (SIGHUP) ends it with its programs unloaded" {
	bg "$FIX/cpuburn" 120
	start_top -p "$BG"
	wait_screen "^ +$BG cpuburn " 5
	mapfile -t progs < <(held_progs "$TOP_PID")
	[ "${#progs[@]}" -ge 1 ]
	tmux kill-session -t "$S"
	wait_gone "$TOP_PID" 10 || { echo "ebprof top did not exit within 10 s of its terminal closing"; false; }
	assert_unloaded "${progs[@]}"
	kill -0 "$BG"
}

# A PID the kernel gave another process during a run cut into windows was said only at a run's
# end, which top never has: its rows took the newer program's numbers with nothing said. Each
# window now says the reuses it saw, on the second header line: cpuburn, then its copy burnb
# with the same PID (-a: other processes' reuses may show too, in other windows or this one).
# alone: -a, and a PID given again (other processes must not take it)
# bats test_tags=alone
@test "top -b -a: a PID used again is said in the header of the window that saw it" {
	cp "$FIX/cpuburn" "$T/burnb"
	bg "$EBPROF" top -b -a -i 0.5 --no-io --no-lock --no-offcpu > "$T/out" 2> "$T/err"
	e=$BG
	wait_for "$T/out" '^ebprof top - ' 30
	st=0
	out=$("$FIX/pidreuse" "$FIX/cpuburn" 0.2 -- "$T/burnb" 0.3) || st=$?
	# two windows more: the one burnb ended in is printed
	n=$(grep -c '^ebprof top - ' "$T/out")
	for ((i = 0; i < 200 && $(grep -c '^ebprof top - ' "$T/out") < n + 2; i++)); do
		sleep 0.05
	done
	kill -TERM "$e"
	wait "$e"
	[ "$st" -ne 3 ] || skip "the PID was taken by another process meanwhile (pidreuse could not reuse it)"
	[ "$st" -eq 0 ]
	pid=$(echo "$out" | sed -n 's/^b \([0-9][0-9]*\)$/\1/p')
	# the window whose rows have burnb (under its PID) says a PID recycled in it
	awk -v p="$pid" '/^ebprof top - / { w++ } /^tracing / { said[w] = /[0-9]+ PIDs? recycled by the kernel in this window \(a row sums the processes that had its PID, under the last one.s name\)$/ }
		$1 == p && / burnb/ { burnb[w] = 1 }
		END { for (i in burnb) if (said[i]) { print "window " i " says it"; found = 1 } exit !found }' "$T/out"
}
