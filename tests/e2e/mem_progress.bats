#!/usr/bin/env bats
# Progress on stderr: shown on a terminal (checked in tmux), never in a pipe, off with --quiet;
# the live-bytes series sampled during the run.

load helpers

# Run ebprof in a tmux pane; capture the pane while the demo runs. Sets $SCREEN.
screen_during_run() {
	command -v tmux >/dev/null || skip "tmux not installed (scripts/install-deps.sh installs it)"
	local sess=ebprof-test-$$
	tmux new-session -d -s "$sess" -x 160 -y 10 \
		"$EBPROF mem $* -o $T/p.json -- $OUT/demo/demo > /dev/null; touch $T/done; sleep 30"
	sleep 1.5
	SCREEN=$(tmux capture-pane -p -t "$sess")
	for i in $(seq 1 300); do [ -e "$T/done" ] && break; sleep 0.1; done
	[ -e "$T/done" ]
	FINAL=$(tmux capture-pane -p -t "$sess")
	tmux kill-session -t "$sess"
}

@test "progress: a line on a terminal while tracing, cleared at the end" {
	[ -x "$OUT/demo/demo" ] || skip "build/demo/demo not built (make build/demo/demo)"
	screen_during_run
	[[ "$SCREEN" == *"ebprof: "*" calls  live "*" drops 0"* ]]
	[[ "$FINAL" != *" calls  live "* ]]
}

@test "progress: --quiet silences it" {
	[ -x "$OUT/demo/demo" ] || skip "build/demo/demo not built (make build/demo/demo)"
	screen_during_run --quiet
	[[ "$SCREEN" != *" calls  live "* ]]
}

@test "progress: nothing when stderr is not a terminal" {
	run "$EBPROF" mem -o "$T/p.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	[[ "$output" != *" calls  live "* ]]
}

@test "series: live bytes sampled during the run end at the final live bytes" {
	run "$EBPROF" mem -o "$T/p.json" -- "$FIX/memfixture" --linger 0.5
	[ "$status" -eq 0 ]
	jqe '[.series[] | select(.name == "live_bytes")][0].points | length >= 4' "$T/p.json"
	jqe '([.series[] | select(.name == "live_bytes")][0].points[-1][1]) ==
	     .processes[0].live_bytes' "$T/p.json"
	jqe '[.series[] | select(.name == "live_bytes")][0].points
	     | [.[][0]] | . == sort' "$T/p.json"
}
