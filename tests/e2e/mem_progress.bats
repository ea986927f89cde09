#!/usr/bin/env bats
# Progress on stderr: shown on a terminal (checked in tmux), never in a pipe, off with --quiet;
# the live-bytes series sampled during the run.

load helpers

# Run ebprof in a tmux pane; capture the pane every 0.1 s while the demo runs (a capture at a
# fixed 1.5 s saw nothing yet when a loaded machine started ebprof late), its screens in
# $SCREENS, the last one after the run in $FINAL.
screen_during_run() {
	command -v tmux >/dev/null || skip "tmux not installed (scripts/install-deps.sh installs it)"
	local sess=ebprof-test-$$-$BATS_TEST_NUMBER i
	tmux new-session -d -s "$sess" -x 160 -y 10 \
		"$EBPROF mem $* -o $T/p.json -- $OUT/demo/demo > /dev/null; touch $T/done; sleep 30"
	SCREENS=
	for ((i = 0; i < 600; i++)); do
		[ -e "$T/done" ] && break
		SCREENS+=$(tmux capture-pane -p -t "$sess")$'\n'
		sleep 0.1
	done
	[ -e "$T/done" ]
	FINAL=$(tmux capture-pane -p -t "$sess")
	tmux kill-session -t "$sess"
}

@test "progress: a line on a terminal while tracing, cleared at the end" {
	[ -x "$OUT/demo/demo" ] || skip "build/demo/demo not built (make build/demo/demo)"
	screen_during_run
	grep -q 'ebprof: .* calls  live .* drops 0' <<< "$SCREENS"
	[[ "$FINAL" != *" calls  live "* ]]
}

@test "progress: --quiet silences it" {
	[ -x "$OUT/demo/demo" ] || skip "build/demo/demo not built (make build/demo/demo)"
	screen_during_run --quiet
	[ -n "$SCREENS" ]
	[[ "$SCREENS" != *" calls  live "* ]]
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
