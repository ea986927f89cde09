# Shared set-up for the end-to-end tests: real BPF, real processes, root.
# EBPROF, FIX and OUT come from tests/run-e2e.sh.
#
# A negated command (`! grep -q x f`) fails a test only as its last command: bash's errexit
# ignores a `!`. Anywhere else write `! grep -q x f || false` (tests/run-e2e.sh refuses a bare
# one that is not a test's last command).
#
# Tests run two at a time (tests/run-e2e.sh), beside any other test, unless tagged `alone`:
# put `# bats test_tags=alone` (with a comment line saying why) right before the @test of a
# test that
#   - runs anything machine-wide: -a, or a mode with no target; bpftrace (its probes see every
#     process, its comm filters another test's fixture of the same name);
#   - counts a disk (/sys/block, --device, var_tmp_disk), a loop device, a fixed or random
#     port, a fixed path outside $T, or finds BPF programs by name (another test's would do);
#   - asserts what a second test's load would change: CPU share or samples over wall-clock
#     time, calls made in a fixed duration, a screen read at a moment.
# (Chromium's tests run beside another: each step waits up to 15-20 s for what takes well under
# a second, and they passed with a sixfold slowdown on a machine at load average 13.)
# (`# bats file_tags=alone` after `load helpers` tags a whole file.) A test whose -a runs are
# only usage errors, checked, is tagged `concurrent`. tests/run-e2e.sh refuses a test that
# runs -a or bpftrace or counts a disk and has neither tag. When in doubt: alone. Everything a
# test makes goes under $T (mktemp), never at a fixed name.

setup() {
	: "${EBPROF:?run through tests/run-e2e.sh}"
	T=$(mktemp -d /tmp/ebprof-e2e.XXXXXX)
	BG_PIDS=()
}

teardown() {
	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$T"
	# a cgroup a test made (its processes killed above: it empties as they die)
	if [ -n "${CGDIR:-}" ] && [ -d "$CGDIR" ]; then
		for ((i = 0; i < 100; i++)); do rmdir "$CGDIR" 2>/dev/null && break; sleep 0.05; done
	fi
	# var_tmp_disk's directory (agent.bats left one per run)
	[ -z "${VT:-}" ] || rm -rf "$VT"
}

# Start a command in the background, remembering its pid in $BG (and for teardown).
bg() {
	"$@" &
	BG=$!
	BG_PIDS+=("$BG")
}

# Wait until FILE contains PATTERN (grep -E), at most SECS seconds (default 10).
wait_for() {
	local file=$1 pat=$2 secs=${3:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		grep -qE "$pat" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "timed out waiting for '$pat' in $file:" >&2
	cat "$file" >&2 || true
	return 1
}

# Wait for a process to end, at most SECS seconds.
wait_gone() {
	local pid=$1 secs=${2:-10} i st
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		# exited, not yet reaped: a process whose parent is gone waits for PID 1 to reap
		# it, which this VM's init does only every second or two
		st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$pid/stat" 2>/dev/null) || true
		[ "$st" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# Programs whose name matches the ERE $1 that are still loaded with no process holding them:
# what a run left behind (pinned, or attached to something that outlives it). Each line
# "prog ID NAME". Programs of other runs going on at the same time (other tests, other
# engineers' runs on the machine) are held by those runs and do not count: a check by name
# alone saw them.
left_behind() {
	local id name
	bpftool -j prog show 2>/dev/null |
		jq -r 'if type == "array" then .[] else . end | "\(.id) \(.name // "")"' |
		while read -r id name; do
			[[ $name =~ $1 ]] || continue
			grep -qs "^prog_id:[[:space:]]*$id\$" /proc/[0-9]*/fdinfo/* ||
				echo "prog $id $name"
		done
}

# Fail if a program of the ERE $1 (mem's by default) was left behind, and say which. The kernel
# frees a program a little after its last holder is gone (deferred work): give it 2 s.
assert_no_probes() {
	local left i
	for i in $(seq 40); do
		left=$(left_behind "${1:-^(mem_(enter|exit)|held_)}")
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	if [ -n "$left" ]; then
		echo "left behind:" >&2
		echo "$left" >&2
		bpftool link show >&2
		return 1
	fi
}

# A JSON report without its sites (which come last, docs/JSON.md), read only up to them: a
# machine-wide run's sites are hundreds of MB, a minute of jq's parsing; the rest is small.
json_summary() {
	jq -n --stream 'reduce (label $out | inputs
		| if .[0][0] == "sites" then break $out else . end
		| select(length == 2)) as [$p, $v] ({}; setpath($p; $v))' "$1"
}

# jq -e with the expression; prints the document's relevant part on failure.
jqe() {
	local expr=$1 file=$2
	if ! jq -e "$expr" "$file" >/dev/null; then
		echo "assertion failed: $expr" >&2
		return 1
	fi
}

# Per fixture function, what ebprof attributes to it: sites grouped by the first frame after the
# allocator leaf that is one of the fixture's own functions.
fixture_sites() {
	local json=$1 truth=$2
	jq -n --slurpfile e "$json" --slurpfile t "$truth" '
		($t[0].sites | keys) as $names
		| [$e[0].sites[]
		   | {fn: ([.frames[1:][] | .function | select(. as $f | $names | index($f))][0]),
		      alloc_count, alloc_bytes, live_count, live_bytes}
		   | select(.fn != null)]
		| group_by(.fn)
		| map({key: .[0].fn, value: {alloc_count: (map(.alloc_count) | add),
					     alloc_bytes: (map(.alloc_bytes) | add),
					     leak_count: (map(.live_count) | add),
					     leak_bytes: (map(.live_bytes) | add)}})
		| from_entries'
}

# The truth's per-site numbers in the same shape (sites that allocate).
truth_sites() {
	jq '.sites | with_entries(select(.value.alloc_count > 0)
		| .value |= {alloc_count, alloc_bytes, leak_count, leak_bytes})' "$1"
}

# The disk under /var/tmp, found at run time, in $DISK (a whole disk: the kernel queues
# requests per disk; /sys/block/$DISK/stat is its accounting), and a directory there in $VT
# (the test's teardown removes it); skip, saying why, where there is none to measure. For
# the modes that count block requests (io, top).
var_tmp_disk() {
	local maj min sys real
	read -r maj min < <(stat -c '%Hd %Ld' /var/tmp) || skip "cannot stat /var/tmp"
	sys=/sys/dev/block/$maj:$min
	[ "$maj" -ne 0 ] && [ -e "$sys" ] ||
		skip "/var/tmp is on $(stat -f -c %T /var/tmp) (device $maj:$min), no block device: no request to measure"
	real=$(readlink -f "$sys")
	# a partition's directory is inside its disk's
	[ -e "$real/partition" ] && real=${real%/*}
	DISK=${real##*/}
	[ -d "/sys/block/$DISK" ] || skip "no /sys/block/$DISK for /var/tmp's device $maj:$min"
	if [ -n "$(ls -A "/sys/block/$DISK/slaves" 2>/dev/null)" ]; then
		skip "/var/tmp is on $DISK, a stacked device (device mapper, md): its requests reach the disks below it"
	fi
	VT=$(mktemp -d /var/tmp/ebprof-e2e-io.XXXXXX)
}

# A file of $2 4 KiB blocks at $1, on the disk, out of the page cache's way (O_DIRECT reads).
make_file() {
	dd if=/dev/urandom of="$1" bs=4096 count="$2" status=none
	sync "$1"
}

# bpftrace in the background running the script $1 (its output in $T/bt.out), attached (BEGIN
# runs once every probe is).
start_bpftrace() {
	command -v bpftrace >/dev/null || skip "bpftrace is not installed (the independent oracle)"
	# bpftrace's syscalls: and lock: tracepoints are classic tracepoints: they need tracefs
	grep -q tracefs /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing
	bg bpftrace -e "$1" > "$T/bt.out" 2>&1
	BT=$BG
	wait_for "$T/bt.out" "^ready" 60
}

# SIGINT ends bpftrace once it has printed its maps. Now and then one has not ended within a
# minute of it, having printed nothing (kmem's and lock's oracles, once each in a suite run of
# 2026-11-24): SIGINT is sent again every 20 s, three times in all, before that is a failure.
stop_bpftrace() {
	local i
	for i in 1 2 3; do
		kill -INT "$BT" 2>/dev/null || true
		if wait_gone "$BT" 20; then
			cat "$T/bt.out"
			return 0
		fi
		echo "bpftrace still running $((i * 20)) s after SIGINT" >&2
	done
	echo "bpftrace did not exit within 60 s of SIGINT" >&2
	cat "$T/bt.out"
	return 1
}

# bpftrace's value of map $1 at key $2 (the whole line "@name[key]: value"), 0 if absent
bt() {
	local v
	v=$(sed -n "s/^@$1\[$2\]: \([0-9]*\)$/\1/p" "$T/bt.out")
	echo "${v:-0}"
}

# |a - b| <= pct% of b (b = 0: a = 0)
within() {
	local a=$1 b=$2 pct=$3
	echo "ebprof $a, bpftrace $b (within $pct%)" >&2
	[ "$b" -gt 0 ] || { [ "$a" -eq 0 ]; return; }
	local d=$((a > b ? a - b : b - a))
	[ $((d * 100)) -le $((b * pct)) ]
}

# The futex waits of tests/fixtures/mutexfix as bpftrace sees them (the lock tests' oracle, lock
# and top), per futex address: @n waits (woken: contentions), @t their durations (ns), @nowait
# those that returned EAGAIN at once (the value had changed), @to those that ended by their
# timeout (ETIMEDOUT, -110: nobody woke them, not contention) and @tt their durations, as the
# lock mode counts them apart.
MUTEX_BT='BEGIN { printf("ready\n"); }
tracepoint:syscalls:sys_enter_futex /comm == "mutexfix"/ {
	$cmd = args->op & 127;
	if ($cmd == 0 || $cmd == 9 || $cmd == 6 || $cmd == 13 || $cmd == 11) {
		@s[tid] = nsecs; @a[tid] = args->uaddr;
	}
}
tracepoint:syscalls:sys_exit_futex /@s[tid]/ {
	if (args->ret == -11) { @nowait[@a[tid]] = count(); }
	else if (args->ret == -110) { @to[@a[tid]] = count(); @tt[@a[tid]] = sum(nsecs - @s[tid]); }
	else { @n[@a[tid]] = count(); @t[@a[tid]] = sum(nsecs - @s[tid]); }
	delete(@s[tid]); delete(@a[tid]);
}
END { clear(@s); clear(@a); }'

# entryfault's profile (FOLDED, JSON; WEIGHT: the sites' count field): its waits in the page
# fault at entryfault_load's first instruction have that function as their leaf, never
# entryfault_before (which ends where entryfault_load starts: ip - 1 is in it), at least 20 of
# them through handle_userfault
entryfault_leaf() {
	local folded=$1 json=$2 weight=$3
	grep entryfault_ "$folded"
	! grep entryfault_before "$folded" || false
	! grep ';entryfault_wait;' "$folded" | grep -v ';entryfault_wait;entryfault_load;' || false
	jqe '[.sites[] | select(any(.frames[]; .function == "entryfault_load"))
		| select(any(.frames[]; .function == "handle_userfault")) | .'"$weight"'] | add >= 20' \
		"$json"
}

# memfixture --wait-start --linger S (default 30) on its own copy of the C library, deleted once
# it runs, as after an upgrade of libc6 under a running daemon: maps says "PATH (deleted)";
# $FXPID, $FXLOG, $DLIB (the copy's path). The copy is a new inode wherever $T lives (its own
# filesystem or /lib's), and the process maps no other C library: a probe on the system's
# file counts nothing of it.
start_deleted_libc_fixture() {
	local sys
	sys=$(ldd "$FIX/memfixture" | awk '$1 == "libc.so.6" {print $3}')
	[ -f "$sys" ]
	mkdir -p "$T/dlib"
	DLIB=$T/dlib/libc.so.6
	cp "$sys" "$DLIB"
	FXLOG=$T/fx.$RANDOM
	LD_LIBRARY_PATH=$T/dlib bg "$FIX/memfixture" --wait-start --linger "${1:-30}" \
		< /dev/null > "$FXLOG" 2>&1
	FXPID=$BG
	wait_for "$FXLOG" 'waiting'
	rm "$DLIB"
	grep -q " $DLIB (deleted)\$" "/proc/$FXPID/maps"
	! grep -v " $DLIB (deleted)\$" "/proc/$FXPID/maps" | grep -q 'libc\.so' || false
	[ "$(stat -c %i "$sys")" != "$(awk -v f="$DLIB" '$6 == f {print $5; exit}' \
		"/proc/$FXPID/maps")" ]
}

# Tests of 32-bit system calls (int $0x80 from tests/fixtures/compat32): skipped, said why, on a
# kernel that runs none (CONFIG_IA32_EMULATION off, or booted with ia32_emulation=0)
need_ia32() {
	"$FIX/compat32" > /dev/null 2>&1 ||
		skip "this kernel runs no 32-bit system calls (CONFIG_IA32_EMULATION off, or ia32_emulation=0)"
}

# A machine-wide run in which one PID serves two programs: `pidreuse_under READY EBPROF_ARGS...
# :: A... -- B...` starts ebprof EBPROF_ARGS (with -v: its stderr, in $T/err, says READY once
# it counts), runs tests/fixtures/pidreuse (A, then B given A's PID through clone3's set_tid;
# its output in $PR_OUT), stops ebprof with SIGINT and sets $PID to the PID both had. Skips,
# saying why, when another process took the PID between them (pidreuse exits 3).
pidreuse_under() {
	local ready=$1 e args=() st=0
	shift
	while [ "$1" != "::" ]; do
		args+=("$1")
		shift
	done
	shift
	bg "$EBPROF" "${args[@]}" 2> "$T/err"
	e=$BG
	wait_for "$T/err" "$ready" 30
	PR_OUT=$("$FIX/pidreuse" "$@") || st=$?
	kill -INT "$e"
	wait "$e"
	[ "$st" -ne 3 ] || skip "the PID was taken by another process meanwhile (pidreuse could not reuse it)"
	[ "$st" -eq 0 ]
	PID=$(echo "$PR_OUT" | sed -n "s/^b \([0-9][0-9]*\)$/\1/p")
	[ -n "$PID" ] && [ "$PID" = "$(echo "$PR_OUT" | sed -n "s/^a \([0-9][0-9]*\)$/\1/p")" ]
}

# After pidreuse_under: the JSON report J says so, on the row of $PID (named COMM, the last
# program's) and in the run (info.pids_reused, one note naming the PIDs); the text report X
# too. Other processes of the machine may have had their PIDs reused as well: only "at least".
assert_pid_reused() {
	local j=$1 x=$2 comm=$3
	jq -c --argjson p "$PID" '.processes[] | select(.pid == $p)' "$j"
	jq -e --argjson p "$PID" --arg c "$comm" '[.processes[] | select(.pid == $p)] | length == 1 and
	      (.[0] | .comm == $c and (.note | test("^PID used by [0-9]+ processes during the run \\(the kernel recycled it\\): their numbers are summed here, under the last one.s name$")))' "$j"
	jq -e '(.info.pids_reused | tonumber) >= 1' "$j"
	jq -e '[.notes[] | select(test("^(PID [0-9]+ was|[0-9]+ PIDs were) used by (two processes|more than one process) during the run \\(the kernel recycled"))] | length == 1' "$j"
	grep -q "note: PID used by" "$x"
}
