# Shared set-up for the end-to-end tests: real BPF, real processes, root.
# EBPROF, FIX and OUT come from tests/run-e2e.sh.

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
	local pid=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# Fail if any ebprof BPF link or uprobe is still attached.
assert_no_probes() {
	local links perf
	links=$(bpftool link show 2>/dev/null | grep -E 'mem_(enter|exit)' || true)
	perf=$(bpftool perf show 2>/dev/null | grep -E 'mem_(enter|exit)' || true)
	if [ -n "$links$perf" ]; then
		echo "probes left behind:" >&2
		echo "$links$perf" >&2
		return 1
	fi
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
