#!/usr/bin/env bats
# ebprof agent end to end: a receiver on 127.0.0.1 (agent_receiver.py, Python's standard
# library) plays Pyroscope's /ingest and Parca's WriteRaw gateway; the agent profiles the
# cpuburn fixture in 1-second windows. Every push is checked (path, query, labels, windows
# that follow each other without gap or overlap), every body read by Go's pprof; the
# receiver down, slow, answering 500 and 413: the agent's counters are compared with what the
# receiver saw. With --modes: a pprof per mode and service in each window (the mode told by its
# sample types), lock's futex waits of mutexfix against bpftrace on the same run, mem's
# windows adding up to profilemix's 500,000 allocations, offcpu said as not yet.
# No timing asserts: the tests wait for events, with generous limits.

load helpers

PPROF=/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof
RECEIVER="$BATS_TEST_DIRNAME/agent_receiver.py"

# Start the receiver in directory ${1:-$T/rx} (answering as its file "mode" says) on any free
# port; sets RX_PORT and RX_PID.
start_receiver() {
	local dir=${1:-$T/rx}
	mkdir -p "$dir"
	rm -f "$dir/port"
	python3 "$RECEIVER" "$dir" 0 &
	RX_PID=$!
	BG_PIDS+=("$RX_PID")
	wait_for "$dir/port" '^[0-9]+$' 10
	RX_PORT=$(cat "$dir/port")
}

# A receiver down (its port bound, not listened on: connections refused) until receiver_up.
# The port stays its own meanwhile: a port freed and bound again later could be taken by
# another program in between.
start_receiver_down() {
	mkdir -p "${1:-$T/rx}"
	touch "${1:-$T/rx}/down"
	start_receiver "$@"
}

receiver_up() {
	rm "${1:-$T/rx}/down"
}

answer() {
	echo "$*" > "$T/rx/mode"
}

# The agent in the background on cpuburn (started first, $BURN) with 1-second windows;
# stderr in $T/agent.err; AGENT its pid.
start_agent() {
	bg "$FIX/cpuburn" "${BURN_SECS:-30}"
	BURN=$BG
	bg "$EBPROF" agent -p "$BURN" --period 1 --status-interval 1 "$@" 3>&-
	AGENT=$BG
}

# Requests the receiver answered with $1 (default ok) for service cpuburn.
count_answered() {
	[ -f "$T/rx/requests.jsonl" ] || { echo 0; return; }
	jq -s --arg a "${1:-ok}" '[.[] | select(.answer == $a) |
		select(.query.name[0] | startswith("cpuburn{"))] | length' "$T/rx/requests.jsonl"
}

# Wait until the receiver has answered at least $1 cpuburn pushes with ${2:-ok}, $3 s at most.
wait_answered() {
	local i
	for ((i = 0; i < ${3:-20} * 10; i++)); do
		[ "$(count_answered "${2:-ok}")" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $1 pushes answered '${2:-ok}'; have $(count_answered "${2:-ok}")" >&2
	cat "$T/agent.err" >&2 || true
	return 1
}

# Stop the agent with SIGTERM; its exit status in AGENT_STATUS.
stop_agent() {
	kill -TERM "$AGENT"
	AGENT_STATUS=0
	wait "$AGENT" || AGENT_STATUS=$?
}

# "from until" of every distinct cpuburn window the receiver took, in order.
windows_taken() {
	jq -r -s '[.[] | select(.answer == "ok") | select(.query.name[0] | startswith("cpuburn{")) |
		[(.query.from[0] | tonumber), (.query.until[0] | tonumber)]] | unique | .[] |
		"\(.[0]) \(.[1])"' "$T/rx/requests.jsonl"
}

# The windows follow each other: each one's from is the previous one's until.
assert_contiguous() {
	windows_taken | awk 'NR > 1 && $1 != prev { print "gap or overlap: " prev " then " $0; bad = 1 }
		$2 <= $1 { print "empty window " $0; bad = 1 }
		{ prev = $2 } END { exit bad }'
}

# A counter of the agent's last line ("agent stopped: ...").
stopped_count() {
	grep 'agent stopped:' "$T/agent.err" | sed -n "s/.*$1 \([0-9]*\).*/\1/p"
}

# "Total samples = N" of a pprof body.
body_samples() {
	"$PPROF" -symbolize=none -top "$1" 2>/dev/null | sed -n 's/.*Total samples = \([0-9]*\).*/\1/p'
}

setup_file() {
	: "${EBPROF:?run through tests/run-e2e.sh}"
}

@test "agent: pushes well-formed Pyroscope windows without gaps; the samples match cpuburn's own CPU time" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	host=$(hostname | sed 's/[^A-Za-z0-9_.\/:-]/_/g')
	bg "$FIX/cpuburn" 3.5
	BURN=$BG
	t0=$(date +%s)
	run "$EBPROF" agent -p "$BURN" --period 1 --tags env=test,team=perf \
		--server "http://127.0.0.1:$RX_PORT/"
	t1=$(date +%s)
	echo "$output"
	# -p: the agent ends with its target, after pushing the last window
	[ "$status" -eq 0 ]
	[[ "$output" == *"agent stopped: windows"* ]]
	n=$(count_answered ok)
	echo "pushes: $n"
	[ "$n" -ge 3 ]
	# path and query, every push
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe 'all(.[];
		.method == "POST" and .path == "/ingest" and
		.query.name == ["cpuburn{host='"$host"',env=test,team=perf}"] and
		.query.format == ["pprof"] and .query.sampleRate == ["99"] and
		.query.spyName == ["ebprof"] and
		.headers["Content-Type"] == "application/octet-stream")' "$T/requests.json"
	assert_contiguous
	first=$(windows_taken | head -1 | cut -d' ' -f1)
	last=$(windows_taken | tail -1 | cut -d' ' -f2)
	[ "$first" -ge "$t0" ]
	[ "$last" -le $((t1 + 1)) ]
	# each push once: as many requests as windows
	[ "$(windows_taken | wc -l)" -eq "$n" ]
	# every body is a pprof Go reads, with the fixture's functions and its pid as a label
	total=0
	for f in "$T"/rx/*.body; do
		run "$PPROF" -symbolize=none -top "$f"
		[ "$status" -eq 0 ]
		[[ "$output" == *"burn_"* ]]
		run "$PPROF" -symbolize=none -tags "$f"
		[[ "$output" == *"pid: "*"$BURN"* ]]
		total=$((total + $(body_samples "$f")))
	done
	echo "samples $total"
	[ "$total" -ge 200 ]
	assert_no_probes '^cpu_sample$'
}

# The oracle: cpuburn's own CPU time (getrusage) over the 10.1 ms period. A sample counted in
# two windows, or in none (lost at a window's cut), would show.
@test "agent: the samples of all windows add up to cpuburn's CPU time (within 8%)" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	"$FIX/cpuburn" 3 > "$T/burn.out" &
	BURN=$!
	BG_PIDS+=("$BURN")
	run "$EBPROF" agent -p "$BURN" --period 1 --server "http://127.0.0.1:$RX_PORT"
	[ "$status" -eq 0 ]
	wait "$BURN" || true
	cpu_ms=$(sed -n 's/^cpu_ms //p' "$T/burn.out")
	total=0
	for f in "$T"/rx/*.body; do
		total=$((total + $(body_samples "$f")))
	done
	expect=$((cpu_ms * 99 / 1000))
	echo "samples $total, cpuburn cpu_ms $cpu_ms -> $expect expected"
	[ "$total" -ge $((expect * 92 / 100)) ]
	[ "$total" -le $((expect * 108 / 100)) ]
}

# A window holds the samples of its own time: it is read at its boundary, not up to a tick
# (100 ms) later with that tick's samples in it; the first one's start is the run's.
# alone: a window's samples are held to its duration: a late read (a loaded machine) adds some
# bats test_tags=alone
@test "agent: no window holds more samples than its duration at -F 999 (a busy thread)" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	"$FIX/cpuburn" 2.5 > "$T/burn.out" &
	BURN=$!
	BG_PIDS+=("$BURN")
	run "$EBPROF" agent -F 999 -p "$BURN" --period 1 --server "http://127.0.0.1:$RX_PORT"
	[ "$status" -eq 0 ]
	n=0
	for f in "$T"/rx/*.body; do
		# "Duration: 62.32ms, Total samples = 61": one thread samples at most 999 Hz, with
		# 3% and 3 samples for the time it takes to read a window once it is due (before:
		# 100 samples in a 28.9 ms first window, up to a tick's more)
		"$PPROF" -symbolize=none -top "$f" 2>/dev/null |
			sed -n 's/^Duration: \([0-9.]*\)\(m*s\), Total samples = \([0-9]*\).*/\1 \2 \3/p' \
			> "$T/win"
		read -r d unit samples < "$T/win"
		ms=$(awk -v d="$d" -v u="$unit" 'BEGIN { print (u == "s" ? d * 1000 : d) }')
		echo "window of $ms ms: $samples samples"
		awk -v ms="$ms" -v n="$samples" 'BEGIN { exit !(n <= ms * 0.999 * 1.03 + 3) }'
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}

@test "agent: receiver down, then back: the agent keeps profiling, retries, says so, and catches up" {
	start_receiver_down
	port=$RX_PORT
	start_agent --server "http://127.0.0.1:$port" --backoff-max 1 --queue 100 2> "$T/agent.err"
	wait_for "$T/agent.err" "pushing to http://127.0.0.1:$port failed: .*Couldn't connect to server; retrying in" 20
	wait_for "$T/agent.err" "queued 3 windows" 20
	receiver_up
	wait_for "$T/agent.err" "takes pushes again" 20
	n0=$(count_answered ok)
	wait_answered $((n0 + 1))
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	assert_contiguous
	# nothing was lost: every window the agent made (with samples) reached the receiver
	windows=$(stopped_count windows)
	[ "$(stopped_count dropped)" -eq 0 ]
	[ "$(windows_taken | wc -l)" -eq $((windows - $(stopped_count empty))) ]
	[ "$(stopped_count 'failed attempts')" -ge 1 ]
	grep -q 'agent: windows' "$T/agent.err"	# the status line
}

@test "agent: a full queue drops the oldest windows, counted; the rest arrive" {
	start_receiver_down
	port=$RX_PORT
	start_agent --server "http://127.0.0.1:$port" --backoff-max 1 --queue 2 2> "$T/agent.err"
	wait_for "$T/agent.err" "the queue is full \(2 windows\): dropped the oldest" 20
	wait_for "$T/agent.err" "\(2 windows dropped so far\)" 20
	receiver_up
	wait_for "$T/agent.err" "takes pushes again" 20
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	windows=$(stopped_count windows)
	dropped=$(stopped_count dropped)
	unsent=$(stopped_count unsent)
	taken=$(windows_taken | wc -l)
	empty=$(stopped_count empty)
	echo "windows $windows dropped $dropped unsent $unsent empty $empty taken $taken"
	[ "$dropped" -ge 2 ]
	# every window is accounted for: taken by the receiver, dropped, left at exit, or empty
	# (no sample: the first one may last a few milliseconds, up to the first boundary)
	[ "$((taken + dropped + unsent + empty))" -eq "$windows" ]
	grep -q "windows .* dropped $dropped" <(grep 'agent stopped' "$T/agent.err")
}

@test "agent: a full queue never drops the window a push of which is on its way: no window both dropped and taken" {
	# each push takes 2 s, windows come every second, one may wait: the window being sent was
	# the oldest, pushed out (counted dropped) while the server took it
	start_receiver
	answer slow 2
	start_agent --server "http://127.0.0.1:$RX_PORT" --queue 1 2> "$T/agent.err"
	wait_answered 3 "slow 2"
	wait_for "$T/agent.err" "the queue is full \(1 window\): dropped the oldest" 20
	answer ok
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	windows=$(stopped_count windows)
	dropped=$(stopped_count dropped)
	unsent=$(stopped_count unsent)
	empty=$(stopped_count empty)
	# every window the receiver took whole (its one push for cpuburn), whatever it answered
	taken=$(jq -r -s '[.[] | select(.query.name[0] | startswith("cpuburn{")) |
		.query.from[0]] | unique | length' "$T/rx/requests.jsonl")
	echo "windows $windows dropped $dropped unsent $unsent empty $empty taken $taken"
	[ "$dropped" -ge 1 ]
	[ "$((taken + dropped + unsent + empty))" -eq "$windows" ]
}

@test "agent: a receiver slower than --timeout: timed out, retried, caught up" {
	start_receiver
	answer slow 3
	start_agent --server "http://127.0.0.1:$RX_PORT" --timeout 0.5 --backoff-max 1 \
		2> "$T/agent.err"
	wait_for "$T/agent.err" "failed: .*[Tt]imeout|timed out" 20
	wait_answered 2 "slow 3"
	answer ok
	wait_for "$T/agent.err" "takes pushes again" 20
	n0=$(count_answered ok)
	wait_answered $((n0 + 1))
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	assert_contiguous
	[ "$(stopped_count dropped)" -eq 0 ]
	[ "$(windows_taken | wc -l)" -eq $(($(stopped_count windows) - $(stopped_count empty))) ]
}

@test "agent: HTTP 500 is retried (each failed attempt counted), then the queue catches up" {
	start_receiver
	answer status 500
	start_agent --server "http://127.0.0.1:$RX_PORT" --backoff-max 1 2> "$T/agent.err"
	wait_answered 3 "status 500"
	grep -q "failed: HTTP 500: refused by the test receiver; retrying in" "$T/agent.err"
	answer ok
	wait_for "$T/agent.err" "takes pushes again" 20
	n0=$(count_answered ok)
	wait_answered $((n0 + 1))
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	assert_contiguous
	[ "$(windows_taken | wc -l)" -eq $(($(stopped_count windows) - $(stopped_count empty))) ]
	# the agent's count of failed attempts is the receiver's count of 500s
	[ "$(stopped_count 'failed attempts')" -eq "$(count_answered 'status 500')" ]
}

@test "agent: HTTP 413 is not retried, said and counted (its window refused, not sent); profiling goes on" {
	start_receiver
	answer status 413
	start_agent --server "http://127.0.0.1:$RX_PORT" --backoff-max 1 2> "$T/agent.err"
	wait_answered 2 "status 413"
	grep -q "refused the cpu profile of 'cpuburn', [0-9]*-[0-9]*: HTTP 413: the server refused a [0-9]*-byte profile as too large.*; not retried" "$T/agent.err"
	answer ok
	wait_answered 2 ok
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	rejected=$(count_answered 'status 413')
	[ "$(stopped_count rejected)" -eq "$rejected" ]
	# a window the server refused is counted refused, not sent: sent are the ones it took
	[ "$(stopped_count refused)" -eq "$rejected" ]
	[ "$(stopped_count '(sent')" -eq "$(windows_taken | wc -l)" ]
	[ "$(stopped_count 'failed attempts')" -eq 0 ]
	# each refused window was sent once: no retry
	dup=$(jq -r -s '[.[] | select(.answer == "status 413") | .query.from[0]] |
		(length - (unique | length))' "$T/rx/requests.jsonl")
	[ "$dup" -eq 0 ]
}

@test "agent: --config file, a bearer token from a file, SIGHUP reloads the server and tags" {
	# a port nobody listens on, for the first server
	start_receiver_down "$T/dead"
	dead=$RX_PORT
	start_receiver
	printf 'secret-token-42\n' > "$T/token"
	chmod 600 "$T/token"
	cat > "$T/agent.conf" <<-EOF
	# the agent's settings
	server = http://127.0.0.1:$dead
	tags = env=one
	token-file = $T/token
	backoff-max = 1
	EOF
	start_agent --config "$T/agent.conf" 2> "$T/agent.err"
	wait_for "$T/agent.err" "pushing to http://127.0.0.1:$dead failed" 20
	sed -i "s/:$dead/:$RX_PORT/; s/env=one/env=two/" "$T/agent.conf"
	kill -HUP "$AGENT"
	wait_for "$T/agent.err" "SIGHUP: reloaded $T/agent.conf" 10
	wait_answered 2 ok
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe 'all(.[]; .headers.Authorization == "Bearer secret-token-42")' "$T/requests.json"
	jqe 'all(.[]; .query.name[0] | test("^cpuburn\\{host=[^,]*,env=two\\}$"))' \
		"$T/requests.json"
	# and the secret never appears on stderr
	! grep -q secret-token "$T/agent.err"
}

@test "agent: https: the server's certificate is verified (--ca-file), basic auth from a file" {
	command -v openssl >/dev/null || skip "openssl not installed (scripts/install-deps.sh)"
	mkdir -p "$T/rx"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" \
		2> /dev/null
	cat "$T/cert.pem" "$T/key.pem" > "$T/rx/tls.pem"
	start_receiver
	printf 'ebprof:s3cret\n' > "$T/basic"
	# a certificate nobody vouches for: refused, said, retried
	start_agent --server "https://127.0.0.1:$RX_PORT" --backoff-max 1 \
		--basic-auth-file "$T/basic" 2> "$T/agent.err"
	wait_for "$T/agent.err" "pushing to https://127.0.0.1:$RX_PORT failed: .*certificate" 20
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	[ "$(count_answered ok)" -eq 0 ]
	# with its CA: taken, with the credentials
	start_agent --server "https://127.0.0.1:$RX_PORT" --ca-file "$T/cert.pem" \
		--basic-auth-file "$T/basic" 2> "$T/agent.err"
	wait_answered 2 ok
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe "all(.[]; .headers.Authorization == \"Basic $(printf 'ebprof:s3cret' | base64)\")" \
		"$T/requests.json"
	! grep -q s3cret "$T/agent.err"
}

@test "agent: --protocol parca posts a WriteRawRequest in JSON whose raw profile Go's pprof reads" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	start_agent --server "http://127.0.0.1:$RX_PORT" --protocol parca --tags env=test \
		2> "$T/agent.err"
	wait_for "$T/rx/requests.jsonl" '"path": "/profiles/writeraw"' 20
	stop_agent
	[ "$AGENT_STATUS" -eq 0 ]
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe 'all(.[]; .path == "/profiles/writeraw" and
		.headers["Content-Type"] == "application/json")' "$T/requests.json"
	body="$T/rx/1.body"
	jqe '.series[0].labels.labels | from_entries as $l |
		$l.__name__ == "ebprof_cpu" and $l.env == "test" and ($l.host | length > 0)' "$body"
	jq -r '.series[0].samples[0].rawProfile' "$body" | base64 -d > "$T/p.pb.gz"
	run "$PPROF" -symbolize=none -top "$T/p.pb.gz"
	[ "$status" -eq 0 ]
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "agent: -a --comm pushes only the processes of that name; -d ends the run with exit 0" {
	start_receiver
	bg "$FIX/cpuburn" 10
	run "$EBPROF" agent -a --comm cpuburn --period 1 -d 2.5 \
		--server "http://127.0.0.1:$RX_PORT"
	[ "$status" -eq 0 ]
	[ "$(count_answered ok)" -ge 2 ]
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe 'all(.[]; .query.name[0] | startswith("cpuburn{"))' "$T/requests.json"
	assert_no_probes '^cpu_sample$'
}

@test "agent: -d ends the run of a launched command: last pushes and status said, every BPF object released, while the command runs on; its exit status is the agent's" {
	start_receiver
	# before, the agent kept its memory (3.1 GB after a long mem run) and every BPF map and
	# program while it waited for the command, and said its last status only at its end
	bg "$EBPROF" agent -v --modes cpu,mem --sample-bytes 1 --period 1 -d 2 \
		--server "http://127.0.0.1:$RX_PORT" -- sh -c \
		'"$1" k > /dev/null; while [ ! -e "$0" ]; do sleep 0.1; done; exit 7' \
		"$T/go" "$FIX/profilemix" 2> "$T/agent.err"
	AGENT=$BG
	wait_for "$T/agent.err" 'waiting for PID [0-9]+, which runs on untraced' 30
	grep 'agent stopped: windows [1-9]' "$T/agent.err"
	kill -0 "$AGENT"
	ls -l "/proc/$AGENT/fd" > "$T/fds"
	[ "$(grep -c 'anon_inode:bpf' "$T/fds")" -eq 0 ]
	[ "$(jq -s 'length' "$T/rx/requests.jsonl")" -ge 1 ]
	touch "$T/go"
	st=0
	wait "$AGENT" || st=$?
	[ "$st" -eq 7 ]
}

@test "agent: a process whose name is punctuation only is pushed as service unknown, not _" {
	start_receiver
	# its comm is its file's name: "[?]", as a process's is during an exec
	cp "$FIX/cpuburn" "$T/[?]"
	bg "$T/[?]" 10
	# (the shell's fork has its name until its exec)
	for _ in $(seq 100); do
		[ "$(cat /proc/$BG/comm)" != "[?]" ] || break
		sleep 0.05
	done
	[ "$(cat /proc/$BG/comm)" = "[?]" ]
	run "$EBPROF" agent -p "$BG" --period 1 -d 2.5 --server "http://127.0.0.1:$RX_PORT"
	echo "$output"
	[ "$status" -eq 0 ]
	jq -r 'select(.answer == "ok") | .query.name[0]' "$T/rx/requests.jsonl" > "$T/names"
	cat "$T/names"
	[ -s "$T/names" ]
	! grep -v '^unknown{host=' "$T/names"
}

# concurrent: its -a runs are usage errors: nothing is traced
# bats test_tags=concurrent
@test "agent: bad settings are usage errors with a clear sentence" {
	run "$EBPROF" agent -a
	[ "$status" -eq 2 ]
	[[ "$output" == *"no server to push to"* ]]
	run "$EBPROF" agent -a --server ftp://x
	[ "$status" -eq 2 ]
	[[ "$output" == *"starts with http:// or https://"* ]]
	# a URL libcurl would refuse at every push is refused now, not retried for ever
	run "$EBPROF" agent -a --server 'http://127.0.0.1:18931/base path' -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--server: 'http://127.0.0.1:18931/base path' is not a valid URL (libcurl: "* ]]
	[[ "$output" != *"retrying"* ]]
	run "$EBPROF" agent -a --server 'http://h:4040/?x=1' -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"has a query"* ]]
	printf 'server = http://a b\n' > "$T/bad.conf"
	run "$EBPROF" agent -a --config "$T/bad.conf" -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.conf:1: server: 'http://a b' is not a valid URL"* ]]
	run "$EBPROF" agent -a --server http://x --tags env
	[ "$status" -eq 2 ]
	[[ "$output" == *"k=v pairs"* ]]
	# secrets come from files only: --token is --token-file's abbreviation, and a file
	# that cannot be read is said before anything runs
	run "$EBPROF" agent -a --server http://x --token secret
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot read the token file 'secret'"* ]]
	run "$EBPROF" agent -a --server http://x -o x.pb.gz
	[ "$status" -eq 2 ]
	[[ "$output" == *"-o does not go with"* ]]
	# --modes: the five modes only; mem on chosen processes, never -a
	run "$EBPROF" agent -a --server http://x --modes cpu,gpu
	[ "$status" -eq 2 ]
	[[ "$output" == *"modes: unknown mode 'gpu' (the modes are cpu, offcpu, mem, lock and io)"* ]]
	run "$EBPROF" agent -a --server http://x --modes ,
	[ "$status" -eq 2 ]
	[[ "$output" == *"modes separated by commas"* ]]
	run "$EBPROF" agent -a --server http://x --modes cpu,mem
	[ "$status" -eq 2 ]
	[[ "$output" == *"--modes mem traces chosen processes only"* ]]
	run "$EBPROF" agent --server http://x --modes mem
	[ "$status" -eq 2 ]
	run "$EBPROF" agent -p 1 --server http://x --modes mem --sample-bytes 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"sample-bytes takes a whole number"* ]]
	# a mode's option without its mode is not ignored
	run "$EBPROF" agent -a --server http://x --sample-bytes 4096 -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--sample-bytes is an option of mem, and mem is not among --modes: add it to --modes"* ]]
	run "$EBPROF" agent -a --server http://x --modes io,lock -F 49 -d 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"-F is an option of cpu, and cpu is not among --modes: add it to --modes"* ]]
	run "$EBPROF" agent -a --server http://x --comm averyveryverylongname
	[ "$status" -eq 2 ]
	[[ "$output" == *"at most 15 characters"* ]]
	printf 'server = http://x\nperiod = 0\n' > "$T/bad.conf"
	run "$EBPROF" agent -a --config "$T/bad.conf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.conf:2: period takes a whole number from 1 to 3600"* ]]
	printf 'sever = http://x\n' > "$T/bad.conf"
	run "$EBPROF" agent -a --config "$T/bad.conf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.conf:1: unknown key 'sever'"* ]]
}

# "from until service mode" of every push the receiver took, in the order taken; the mode told
# by the body's sample types, as Go's pprof reads them.
pushes_by_mode() {
	local n from until svc types m
	jq -r 'select(.answer == "ok") | "\(.n) \(.query.from[0]) \(.query.until[0]) \(.query.name[0] | split("{")[0])"' \
		"$T/rx/requests.jsonl" |
	while read -r n from until svc; do
		types=$("$PPROF" -symbolize=none -raw "$T/rx/$n.body" 2>/dev/null | sed -n '/^Samples:/{n;s/\[dflt\]//g;p;q}')
		case "$types" in
		"contentions/count delay/nanoseconds timeouts/count timeout_delay/nanoseconds") m=lock ;;
		"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes") m=mem ;;
		"requests/count io_bytes/bytes latency/nanoseconds queue/nanoseconds") m=io ;;
		"samples/count cpu/nanoseconds") m=cpu ;;
		*) m="unknown:$types" ;;
		esac
		echo "$from $until $svc $m $n"
	done
}

# The cum value of function $3 in body $1 by sample type $2 (0 when absent), in the samples
# with a frame matching the regular expression $4 (default: every sample).
body_cum() {
	"$PPROF" -symbolize=none -sample_index="$2" -top -cum -nodecount=1000 -focus="${4:-.}" \
		"$1" 2>/dev/null |
		awk -v f="$3" '$NF == f { v = $4 } END { print v + 0 }'
}

# alone: bpftrace counts every mutexfix's waits (another test's too); the disk's requests
# bats test_tags=alone
@test "agent: --modes cpu,io,lock,mem: each window pushes a pprof per mode; lock's waits match bpftrace's; windows without gaps" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	var_tmp_disk
	start_receiver
	start_bpftrace "$MUTEX_BT"
	# mutexfix contends (cpu, lock; its threads' allocations held: mem's inuse) all along;
	# fsyncfix writes and fsyncs meanwhile (io)
	run "$EBPROF" agent --modes cpu,io,lock,mem --sample-bytes 1 --period 1 \
		--server "http://127.0.0.1:$RX_PORT" -- sh -c "(for i in 1 2 3 4 5 6; do
			'$FIX/fsyncfix' '$VT/f' 256 >/dev/null; sleep 0.3; done) &
			'$FIX/mutexfix' 4 ${MUTEX_ITERS:-120000}; wait"
	stop_bpftrace
	echo "$output" | grep -v '^ebprof: agent.*window' | tail -20
	[ "$status" -eq 0 ]
	mu=$(echo "$output" | sed -n 's/^mutex \(0x[0-9a-f]*\)$/\1/p')
	[ -n "$mu" ]
	pushes_by_mode > "$T/pushes"
	cat "$T/pushes"
	# every push is one of the modes, each a pprof Go reads
	[ "$(grep -c unknown "$T/pushes")" -eq 0 ]
	jq -s . "$T/rx/requests.jsonl" > "$T/requests.json"
	jqe 'all(.[]; .path == "/ingest" and .query.format == ["pprof"])' "$T/requests.json"
	# the windows follow each other, every mode's pushes on the same bounds
	awk '{ print $1, $2 }' "$T/pushes" | sort -n -u > "$T/windows"
	cat "$T/windows"
	[ "$(wc -l < "$T/windows")" -ge 3 ]
	awk 'NR > 1 && $1 != prev { print "gap or overlap: " prev " then " $0; bad = 1 }
		$2 <= $1 { print "empty window " $0; bad = 1 } { prev = $2 } END { exit bad }' \
		"$T/windows"
	# each window but the last (cut short at the end) has mutexfix's cpu, lock and mem
	head -n -1 "$T/windows" | while read -r from until; do
		for m in cpu lock mem; do
			grep -q "^$from $until mutexfix $m " "$T/pushes" ||
				{ echo "window $from-$until: no $m push for mutexfix"; return 1; }
		done
	done
	# each (service, mode) at most once a window
	[ "$(awk '{ print $1, $3, $4 }' "$T/pushes" | sort | uniq -d | wc -l)" -eq 0 ]
	# io: fsyncfix's writes
	grep -q " fsyncfix io " "$T/pushes"
	# lock: the waits on the mutex's futex through contend() (its leaf; the futex's hash
	# bucket spinlocks contend too, in the wake path) of all windows: bpftrace's waits on it
	total=0
	for n in $(awk '$3 == "mutexfix" && $4 == "lock" { print $5 }' "$T/pushes"); do
		c=$(body_cum "$T/rx/$n.body" contentions contend "mu in mutexfix")
		echo "push $n: $c waits on mu ($mu) through contend"
		total=$((total + c))
	done
	within "$total" "$(bt n "$mu")" 10
	# cpu: mutexfix's functions; mem: sites with stacks in its program
	n=$(awk '$3 == "mutexfix" && $4 == "cpu" { print $5; exit }' "$T/pushes")
	"$PPROF" -symbolize=none -top "$T/rx/$n.body" | grep -qE ' (work|contend)$'
	n=$(awk '$3 == "mutexfix" && $4 == "mem" { print $5; exit }' "$T/pushes")
	"$PPROF" -symbolize=none -sample_index=inuse_space -traces "$T/rx/$n.body" | grep -q main
	assert_no_probes '^(cpu_sample|io_(start|issue|insert|complete|done)|lock_(begin|end)|futex_(enter|exit)|mem_(enter|exit))$'
}

# mem's windows are differences of the kernel's site counts: over all windows, churn_memory's
# 500,000 allocations of 48 bytes (profilemix), each counted once, every allocation recorded
# (--sample-bytes 1: the weight of a 48-byte block is 1).
@test "agent: --modes mem: the allocations of all windows add up to the fixture's 500,000" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	run "$EBPROF" agent --modes mem --sample-bytes 1 --period 1 \
		--server "http://127.0.0.1:$RX_PORT" -- "$FIX/profilemix" ms
	[ "$status" -eq 0 ]
	pushes_by_mode > "$T/pushes"
	cat "$T/pushes"
	[ "$(awk '$4 != "mem"' "$T/pushes" | wc -l)" -eq 0 ]
	[ "$(awk '$3 == "profilemix"' "$T/pushes" | wc -l)" -ge 2 ]
	total=0
	for n in $(awk '$3 == "profilemix" { print $5 }' "$T/pushes"); do
		total=$((total + $(body_cum "$T/rx/$n.body" alloc_objects churn_memory)))
	done
	echo "churn_memory: $total allocations over the windows"
	within "$total" 500000 1
}

# What the run's own profile of each mode holds at the end of a run cut into windows (-v): the
# windows are the output, so nothing should be left there. "MODE SAMPLES PROCESSES POINTS".
leftovers() {
	sed -n "s/.*windows: the run's own \([a-z]*\) profile holds \([0-9]*\) samples of \([0-9]*\) processes, \([0-9]*\) series points.*/\1 \2 \3 \4/p" "$1"
}

@test "agent: --modes mem over 400 short processes: nothing kept in the run's profile; the windows add up to their 40,000 allocations" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	# each process ended was finalized into the run's profile, which an agent never writes:
	# ~120 KB a process, 3.1 GB after 10 minutes of a forking tree (sweep K, 1)
	"$EBPROF" agent -v --modes mem --sample-bytes 1 --period 1 \
		--server "http://127.0.0.1:$RX_PORT" -- sh -c \
		'i=0; while [ $i -lt 400 ]; do "$0" k > /dev/null; i=$((i + 1)); done' \
		"$FIX/profilemix" 2> "$T/agent.err"
	leftovers "$T/agent.err" > "$T/left"
	cat "$T/left"
	[ "$(cat "$T/left")" = "mem 0 0 0" ]
	pushes_by_mode > "$T/pushes"
	total=0
	for n in $(awk '$4 == "mem" { print $5 }' "$T/pushes"); do
		total=$((total + $(body_cum "$T/rx/$n.body" alloc_objects load_config load_config)))
	done
	echo "load_config: $total allocations over the windows"
	[ "$total" -eq 40000 ]
}

@test "agent: --modes cpu,offcpu,io,lock,mem: a program's counts read out at its exec go to a window, not the run's profile" {
	[ -x "$PPROF" ] || skip "go tool pprof not installed ($PPROF)"
	start_receiver
	# each child spins in the shell (CPU samples, its waits), then execs profilemix: what the
	# shell counted is read out at the exec; it stayed in the run's profile, never pushed
	"$EBPROF" agent -v --modes cpu,offcpu,io,lock,mem --sample-bytes 1 --period 1 \
		--server "http://127.0.0.1:$RX_PORT" -- sh -c \
		'n=0; while [ $n -lt 20 ]; do
			sh -c '"'"'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exec "$0" k'"'"' "$0" > /dev/null
			n=$((n + 1)); done' "$FIX/profilemix" 2> "$T/agent.err"
	leftovers "$T/agent.err" > "$T/left"
	cat "$T/left"
	[ "$(wc -l < "$T/left")" -eq 5 ]
	[ "$(awk '$2 || $3 || $4' "$T/left" | wc -l)" -eq 0 ]
	pushes_by_mode > "$T/pushes"
	# the shells' spinning is in the windows: sh's CPU samples at the spin
	cpu=0
	for n in $(awk '$3 == "sh" && $4 == "cpu" { print $5 }' "$T/pushes"); do
		cpu=$((cpu + $(body_samples "$T/rx/$n.body")))
	done
	echo "sh: $cpu CPU samples over the windows"
	[ "$cpu" -gt 0 ]
	# (under either name: a window names a pid by its last program; the shell's thousands
	# of allocations would hide load_config's 100 without the focus)
	total=0
	for n in $(awk '$4 == "mem" { print $5 }' "$T/pushes"); do
		total=$((total + $(body_cum "$T/rx/$n.body" alloc_objects load_config load_config)))
	done
	echo "load_config: $total allocations over the windows"
	[ "$total" -eq 2000 ]
}

# alone: -a: the whole machine
# bats test_tags=alone
@test "agent: -a --modes cpu,io,lock,offcpu: each mode its own push; Parca's __name__ is ebprof_MODE; nothing left attached" {
	start_receiver
	bg "$FIX/mutexfix" 4 2000000
	run "$EBPROF" agent -a --modes cpu,io,lock,offcpu --comm mutexfix --period 1 -d 2.5 \
		--protocol parca --server "http://127.0.0.1:$RX_PORT"
	echo "$output"
	[ "$status" -eq 0 ]
	# one WriteRaw per (service, mode) and window: mutexfix's cpu, lock and offcpu (its
	# threads wait on the mutex), named by the mode
	for f in "$T"/rx/*.body; do
		jq -r '.series[0].labels.labels | map(select(.name == "__name__" or .name == "service"))
			| map(.value) | join(" ")' "$f"
	done | sort | uniq -c > "$T/names"
	cat "$T/names"
	grep -qE '^ +[2-9] ebprof_cpu mutexfix$' "$T/names"
	grep -qE '^ +[2-9] ebprof_lock mutexfix$' "$T/names"
	grep -qE '^ +[2-9] ebprof_offcpu mutexfix$' "$T/names"
	[ "$(grep -vc ' mutexfix$' "$T/names")" -eq 0 ]
	assert_no_probes '^(cpu_sample|io_(start|issue|insert|complete|done)|lock_(begin|end)|futex_(enter|exit)|offcpu_(switch|waking|wakeup|wakeup_new))$'
}

# The windows' lines of the agent's -v stderr ($1) so far.
windows_said() {
	grep -c '^ebprof: window [0-9]*-[0-9]*:' "$1" || true
}

# offcpu's run-queue table (a process's first run-queue wait makes it an entry) was taken only
# at the run's end in a run cut into windows: a long agent or top run filled it with its first
# processes and refused every later one's waits (runq_table_full), and no push had any. Now
# each window takes it. A table of 10 (EBPROF_TEST_MAX_RUNQ, tests only); 2 waves of 6 children
# (with their parent, 13 processes), beside offsleep, which naps all along so that every window
# is pushed and said at -v; a wave is let go only once a window was cut after the last one
# ended (the second window line after it: windows are cut and said one after another), so
# that no timing matters. Each push says its processes' waits (pprof comments, "info:
# runq_waits"); each child naps twice: 2 wakeups each at least (runqwaves.c).
@test "agent --modes offcpu: each window takes the run-queue table: no runq_table_full over more processes than it holds, each push's waits said" {
	start_receiver
	mkfifo "$T/go"
	EBPROF_TEST_MAX_RUNQ=10 bg "$EBPROF" agent -v --modes offcpu --period 1 \
		--server "http://127.0.0.1:$RX_PORT" -- sh -c "'$FIX/offsleep' 2000 5 > /dev/null &
			k=\$!; '$FIX/runqwaves' 2 6 '$T/go'; kill \$k; wait" > "$T/out" 2> "$T/err"
	exec {go}> "$T/go"
	for w in 1 2; do
		printf x >&"$go"
		wait_for "$T/out" "^wave $w\$"
		[ "$w" -eq 2 ] && break	# (the last one's is read at the end)
		n=$(windows_said "$T/err")
		for ((i = 0; i < 400 && $(windows_said "$T/err") < n + 2; i++)); do
			sleep 0.05
		done
	done
	exec {go}>&-
	wait "$BG"
	tail -3 "$T/err"
	[ "$(grep -c '^child ' "$T/out")" -eq 12 ]
	waits=0
	full=0
	bare=0
	for f in "$T"/rx/*.body; do
		"$EBPROF" report "$f" -o "$T/p.json"
		jq -c '[(.processes | map(.comm) | unique), .info.window, .info.runq_waits,
			.drops.runq_table_full]' "$T/p.json"
		full=$((full + $(jq '.drops.runq_table_full // 0' "$T/p.json")))
		# a window's drops are in each of its pushes: where it has several, each says so
		from=$(jq -r --argjson n "$(basename "$f" .body)" 'select(.n == $n) | .query.from[0]' \
			"$T/rx/requests.jsonl")
		echo "$from $(jq -r '.info.drops_scope // "-"' "$T/p.json")" >> "$T/scopes"
		# a push's samples are waits that ended with a switch-in after a wakeup
		n=$(jq -r '.info.runq_waits // "0"' "$T/p.json")
		[ "$n" -gt 0 ] || bare=$((bare + 1))
		if jq -e '.processes | any(.comm == "runqwaves")' "$T/p.json" > /dev/null; then
			waits=$((waits + n))
		fi
	done
	echo "runq_table_full $full, pushes without run-queue waits $bare, runqwaves' waits $waits"
	cat "$T/scopes"
	python3 - "$T/scopes" <<'PY'
import collections, sys
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, scope = line.rstrip("\n").split(" ", 1)
    by[w].append(scope)
assert any(len(v) > 1 for v in by.values()), by
for w, v in by.items():
    want = "the window's: the same in each of its %d offcpu pushes" % len(v) if len(v) > 1 else "-"
    assert all(s == want for s in v), (w, v)
PY
	[ "$full" -eq 0 ]
	[ "$bare" -eq 0 ]
	[ "$waits" -ge 24 ]
}

# A PID the kernel gave another process during a run cut into windows was said only at the
# run's end, which such a run never writes: no push said it, and the row took the newer
# program's numbers under whichever name. Each window now says the reuses it saw: cpuburn,
# then its copy burnb with the same PID; burnb's push says it (pprof comments: the note
# "during the window" and the fact pids_reused), its row named burnb.
# alone: -a, and a PID given again (other processes must not take it)
# bats test_tags=alone
@test "agent -a: a PID used again is said in the push of the window that saw it" {
	start_receiver
	cp "$FIX/cpuburn" "$T/burnb"
	pidreuse_under '^ebprof: sampling ' \
		agent -a -v --comm burnb --period 1 --server "http://127.0.0.1:$RX_PORT" :: \
		"$FIX/cpuburn" 0.2 -- "$T/burnb" 0.3
	said=0
	for f in "$T"/rx/*.body; do
		"$EBPROF" report "$f" -o "$T/p.json"
		jq -c '[(.processes | map([.pid, .comm])), .info.pids_reused,
			(.notes | map(select(test("recycled"))))]' "$T/p.json"
		if jq -e --argjson p "$PID" '(.processes | any(.pid == $p and .comm == "burnb")) and
		      (.info.pids_reused | tonumber) >= 1 and
		      ([.notes[] | select(test("^(PID [0-9]+ was|[0-9]+ PIDs were) used by (two processes|more than one process) during the window \\(the kernel recycled"))] | length == 1)' \
		      "$T/p.json" > /dev/null; then
			said=$((said + 1))
		fi
	done
	[ "$said" -ge 1 ]
}
