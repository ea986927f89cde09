#!/usr/bin/env bats
# The HTML report of a real run: one self-contained, well-formed page, and one that works in a
# real browser (tests/tools/html-check.js drives Debian's chromium through playwright-core).

load helpers
bats_require_minimum_version 1.5.0

TOOLS="$BATS_TEST_DIRNAME/../tools"
SRC="$BATS_TEST_DIRNAME/../.."

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

@test "html: a --leaks run's Leaks section works in a browser and agrees with the JSON report" {
	command -v node >/dev/null || skip "node not installed (scripts/install-deps.sh installs it)"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		skip "playwright-core not installed in tests/tools (run scripts/install-deps.sh)"
	[ -x /usr/bin/chromium ] || skip "chromium not installed (scripts/install-deps.sh installs it)"
	printf 'leak:lose_definite\n' > "$T/known.supp"
	run "$EBPROF" mem --leaks --suppressions "$T/known.supp" -o "$T/r.html" -o "$T/r.json" \
		-- "$FIX/leakfixture"
	[ "$status" -eq 0 ]
	# the JSON the page is checked against has memcheck's numbers (mem_leaks.bats), the
	# suppressed site's moved: 3 x 100 bytes of lose_definite
	jqe '.processes[0].leaks | .definite == {count: 4, bytes: 128} and
	     .suppressed == {count: 3, bytes: 300} and .indirect == {count: 4, bytes: 184} and
	     .possible == {count: 2, bytes: 272} and .reachable == {count: 8, bytes: 264}' "$T/r.json"
	grep -q '<h2 id="leaks">Leaks</h2>' "$T/r.html"
	grep -q '<span class="fn">lose_definite</span> .* <span class="badge">suppressed</span>' \
		"$T/r.html"
	if command -v xmllint >/dev/null; then
		out=$(xmllint --html --noout "$T/r.html" 2>&1)
		echo "$out"
		[ -z "$out" ]
	fi
	run node "$TOOLS/html-check.js" --leaks "$T/r.json" "$T/r.html" "$T/shot.png"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"definitely lost 4/128, indirectly lost 4/184, possibly lost 2/272, still reachable 8/264, of which reachable via heuristic length64 1/64, suppressed 3/300"* ]]
	[[ "$output" == *"11 lost sites, 1 suppressed"* ]]
	[[ "$output" == *"by definitely lost: lose_definite 300 bytes"* ]]
	[[ "$output" == *"total 428 B in 4 stacks"* ]]
	if [ -n "${OUT:-}" ] && [ -d "$OUT/tests" ]; then
		cp "$T/shot.png" "$OUT/tests/html-leaks.png"
	fi
}

@test "html: a diff's page compares: its totals and rows are the diff's JSON, no processes or timeline, the differential flame graph" {
	command -v node >/dev/null || skip "node not installed (scripts/install-deps.sh installs it)"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		skip "playwright-core not installed in tests/tools (run scripts/install-deps.sh)"
	[ -x /usr/bin/chromium ] || skip "chromium not installed (scripts/install-deps.sh installs it)"
	# one thread, then two: the burn stacks move from main to the threads
	"$EBPROF" cpu -q -F 499 -o "$T/a.pb.gz" -- "$FIX/cpuburn" 0.3 > /dev/null
	"$EBPROF" cpu -q -F 499 -o "$T/b.pb.gz" -- "$FIX/cpuburn" 0.3 2 > /dev/null
	run "$EBPROF" diff "$T/a.pb.gz" "$T/b.pb.gz" -o "$T/d.html" -o "$T/d.json"
	[ "$status" -eq 0 ]
	# (it said "Total samples" for the sum of max(base, new), "0 processes", "nothing was
	# sampled during the run", a PID 0 on every row and a delta flame graph)
	! grep -q 'No processes were traced' "$T/d.html" || false
	! grep -q '<th>Total samples</th>' "$T/d.html" || false
	run node "$TOOLS/html-check.js" --diff "$T/d.json" "$T/d.html" "$T/shot.png"
	echo "$output"
	[ "$status" -eq 0 ]
	# an allocation diff: no Temporary column (a diff has none)
	"$EBPROF" mem -q -o "$T/m.pb.gz" -- "$FIX/memfixture" > /dev/null
	run "$EBPROF" diff "$T/m.pb.gz" "$T/m.pb.gz" -o "$T/md.html" -o "$T/md.json"
	[ "$status" -eq 0 ]
	! grep -q '>Temporary</th>' "$T/md.html" || false
	run node "$TOOLS/html-check.js" --diff "$T/md.json" "$T/md.html" "$T/mshot.png"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "assets: the report's and the flame graph's scripts are valid JavaScript, embedded as written" {
	command -v node >/dev/null || skip "node not installed (scripts/install-deps.sh installs it)"
	local js
	for js in "$SRC"/src/output/assets/*.js; do
		run node --check "$js"
		echo "$js: $output"
		[ "$status" -eq 0 ]
	done
	# the page carries report.js byte for byte (the embedding changed nothing)
	run "$EBPROF" mem -o "$T/r.html" -- "$FIX/memfixture"
	[ "$status" -eq 0 ]
	node -e '
		const fs = require("fs");
		const page = fs.readFileSync(process.argv[1], "utf8");
		const js = fs.readFileSync(process.argv[2], "utf8");
		const css = fs.readFileSync(process.argv[3], "utf8");
		if (!page.includes("<script>\n" + js + "</script>")) { console.error("report.js not inlined as written"); process.exit(1); }
		if (!page.includes("<style>\n" + css + "</style>")) { console.error("report.css not inlined as written"); process.exit(1); }
	' "$T/r.html" "$SRC/src/output/assets/report.js" "$SRC/src/output/assets/report.css"
}

@test "assets: a script that would end its inlined element fails the build with the rule" {
	printf 'var a = "</script>";\n' > "$T/bad.js"
	run sh "$SRC/scripts/embed-assets.sh" "$T/out.c" "$T/bad.js"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"write '<\\/'"* ]]
	[ ! -e "$T/out.c" ]
}
