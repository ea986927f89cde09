#!/usr/bin/env bats
# speedscope, the real consumer: its own app (shipped by the npm package) opens our pprof and our
# speedscope JSON through its file picker, in Debian's chromium.

load helpers

TOOLS="$BATS_TEST_DIRNAME/../tools"

need_app() {
	command -v node >/dev/null || skip "node not installed (scripts/install-deps.sh installs it)"
	[ -f "$TOOLS/node_modules/speedscope/dist/release/index.html" ] ||
		skip "speedscope not installed in tests/tools (run scripts/install-deps.sh)"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		skip "playwright-core not installed in tests/tools (run scripts/install-deps.sh)"
	[ -x /usr/bin/chromium ] || skip "chromium not installed (scripts/install-deps.sh installs it)"
}

@test "speedscope opens ebprof's pprof and speedscope JSON" {
	need_app
	run "$EBPROF" mem -o "$T/run.pb.gz" -o "$T/run.speedscope.json" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	for f in run.pb.gz run.speedscope.json; do
		run node "$TOOLS/speedscope-import.js" "$T/$f" "$T/$f.png"
		echo "$output"
		[ "$status" -eq 0 ]
		[ "$(stat -c %s "$T/$f.png")" -gt 10000 ]
	done
}
