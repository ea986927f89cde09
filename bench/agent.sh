#!/usr/bin/env bash
# What `ebprof agent` costs: CPU time and RSS over a run at 99 Hz system-wide (-a), pushing
# 10-second windows to a local receiver (tests/e2e/agent_receiver.py playing Pyroscope), beside
# `ebprof cpu -a` over the same time in the same run (the same sampling, one report at the end).
# With MODES=cpu,io,lock (say) in the environment, the agent runs those modes, and beside it is
# the agent with cpu alone (its own receiver) instead of `ebprof cpu -a`.
# Usage: [MODES=LIST] bench/agent.sh [SECONDS] [OUT]   (root; default 60 s, build/)
set -euo pipefail
secs=${1:-60}
out=${2:-build}
cd "$(dirname "$0")/.."
E="$PWD/$out/ebprof"
d=$(mktemp -d /tmp/ebprof-bench-agent.XXXXXX)
modes=${MODES:-cpu}
rx2=
trap 'kill $rx $rx2 2>/dev/null || true; rm -rf "$d"' EXIT
mkdir -p "$d/rx" "$d/rx2"
python3 tests/e2e/agent_receiver.py "$d/rx" &
rx=$!
for _ in $(seq 100); do [ -s "$d/rx/port" ] && break; sleep 0.05; done
port=$(cat "$d/rx/port")
if [ "$modes" != cpu ]; then
	python3 tests/e2e/agent_receiver.py "$d/rx2" &
	rx2=$!
	for _ in $(seq 100); do [ -s "$d/rx2/port" ] && break; sleep 0.05; done
fi

/usr/bin/time -f '%U %S %M' -o "$d/agent.time" \
	"$E" agent -a -F 99 --period 10 -d "$secs" --modes "$modes" \
	--server "http://127.0.0.1:$port" 2> "$d/agent.err" &
agent=$!
if [ "$modes" = cpu ]; then
	other="cpu -a (one report at the end)"
	/usr/bin/time -f '%U %S %M' -o "$d/cpu.time" \
		"$E" cpu -a -F 99 -q -d "$secs" -o "$d/cpu.pb.gz" 2> "$d/cpu.err" &
else
	other="agent --modes cpu"
	/usr/bin/time -f '%U %S %M' -o "$d/cpu.time" \
		"$E" agent -a -F 99 --period 10 -d "$secs" --modes cpu \
		--server "http://127.0.0.1:$(cat "$d/rx2/port")" 2> "$d/cpu.err" &
fi
cpu=$!
# the agent's RSS every 5 s (its own process: the child of time)
sleep 1
apid=$(pgrep -P "$agent" ebprof || true)
: > "$d/rss"
while kill -0 "$agent" 2>/dev/null; do
	# resident: anonymous (its heap: what it holds) + file-backed (mapped binaries and debug
	# files it symbolizes with: clean pages the kernel can drop)
	[ -n "$apid" ] && awk '/RssAnon/ { a = $2 } /RssFile/ { f = $2 } END { print a "+" f }' \
		"/proc/$apid/status" 2>/dev/null >> "$d/rss" || true
	sleep 5
done
wait "$agent" || true
wait "$cpu" || true
read -r au as am < "$d/agent.time"
read -r cu cs cm < "$d/cpu.time"
pushes=$(wc -l < "$d/rx/requests.jsonl")
bytes=$(jq -s 'map(.len) | add' "$d/rx/requests.jsonl")
echo "run: ${secs} s, 99 Hz, -a, $(nproc) CPUs, machine shared with other work"
printf 'agent --modes %s: user %.2f s sys %.2f s = %.2f%% of one CPU; max RSS %d KiB; RSS every 5 s (KiB, anon+file): %s\n' \
	"$modes" "$au" "$as" "$(awk -v u="$au" -v s="$as" -v t="$secs" 'BEGIN { print (u + s) * 100 / t }')" "$am" "$(tr '\n' ' ' < "$d/rss")"
printf '%s: user %.2f s sys %.2f s = %.2f%% of one CPU; max RSS %d KiB\n' \
	"$other" "$cu" "$cs" "$(awk -v u="$cu" -v s="$cs" -v t="$secs" 'BEGIN { print (u + s) * 100 / t }')" "$cm"
echo "pushes: $pushes, $bytes bytes of gzipped pprof"
grep 'agent stopped' "$d/agent.err" || true
