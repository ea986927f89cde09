#!/usr/bin/env bats
# The HTML report of a real run: one self-contained, well-formed page, and one that works in a
# real browser (tests/tools/html-check.js drives Debian's chromium through playwright-core).

load helpers
bats_require_minimum_version 1.5.0

TOOLS="$BATS_TEST_DIRNAME/../tools"

@test "html: a launched fixture's report is one self-contained, well-formed page" {
	run "$EBPROF" mem -o "$T/r.html" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	[ -s "$T/r.html" ]
	# every part of the report, the fixture's own sites with their source lines
	for id in processes timeline sites flame outstanding drops; do
		grep -q "<h2 id=\"$id\">" "$T/r.html"
	done
	grep -q '<span class="fn">leak_big</span> <span class="src">memfixture.c:[0-9]*</span>' \
		"$T/r.html"
	grep -q 'id="flame-svg-1" data-type="alloc_space"' "$T/r.html"
	grep -q '"series":\[{"name":"live_bytes"' "$T/r.html"
	# nothing to fetch: no external script, style, image or frame
	# (a bare '! cmd' cannot fail a bats test: errexit ignores negated commands)
	run grep -Eiq '(src|href)="?(https?:)?//' "$T/r.html"
	[ "$status" -eq 1 ]
	run grep -Eiq '<link ' "$T/r.html"
	[ "$status" -eq 1 ]
	if command -v xmllint >/dev/null; then
		out=$(xmllint --html --noout "$T/r.html" 2>&1)
		echo "$out"
		[ -z "$out" ]
	fi
}

@test "html: the report works in a browser (sort, stacks, filter, flame graph, chart)" {
	command -v node >/dev/null || skip "node not installed (apt-get install nodejs)"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		skip "playwright-core not installed (npm ci --prefix tests/tools)"
	[ -x /usr/bin/chromium ] || skip "chromium not installed (apt-get install chromium)"
	run "$EBPROF" mem -o "$T/r.html" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run node "$TOOLS/html-check.js" "$T/r.html" "$T/shot.png"
	echo "$output"
	[ "$status" -eq 0 ]
	# a PNG with something in it (a blank page compresses to a few KB)
	[ -s "$T/shot.png" ]
	[ "$(head -c 8 "$T/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(stat -c %s "$T/shot.png")" -gt 30000 ]
	# kept for a human to look at
	if [ -n "${OUT:-}" ] && [ -d "$OUT/tests" ]; then
		cp "$T/shot.png" "$OUT/tests/html-report.png"
	fi
}

@test "svg: the flame graph on its own works in a browser (zoom, reset, search)" {
	command -v node >/dev/null || skip "node not installed (scripts/install-deps.sh installs it)"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		skip "playwright-core not installed in tests/tools (run scripts/install-deps.sh)"
	[ -x /usr/bin/chromium ] || skip "chromium not installed (scripts/install-deps.sh installs it)"
	run "$EBPROF" mem -o "$T/f.svg" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	run node "$TOOLS/svg-check.js" "$T/f.svg" "$T/f.png"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/f.png")" -gt 10000 ]
}
