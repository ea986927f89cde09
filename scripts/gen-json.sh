#!/usr/bin/env bash
# Deterministic JSON workload for the real-program tests (jq) and the benchmark.
#
#   scripts/gen-json.sh OUT N      write a JSON array of N objects to OUT (N=200000: ~1 s, 38 MB)
#   scripts/gen-json.sh --expect N print what JQ_FILTER below outputs (jq -c) on that array,
#                                  computed independently with awk, so a test can check jq's
#                                  answer while it runs under a tracer
#   scripts/gen-json.sh --filter   print JQ_FILTER
#
# The query the tests run, and its expected output:
#   jq -c "$(scripts/gen-json.sh --filter)" OUT     # = scripts/gen-json.sh --expect N
JQ_FILTER='{n: length, active: (map(select(.active)) | length), score: (map(.score) | add), cities: (group_by(.address.city) | length), tags: (map(.tags | length) | add)}'
# The same query on sqlite3 (the other real program; bench/README.md):
#   sqlite3 :memory: "create table t(a integer, b text); with recursive c(x) as (select 1 union
#   all select x+1 from c where x<200000) insert into t select x, printf('%08d-row', x) from c;
#   select count(*) from t;"            -> 200000
#
# Object i (1-based), all fields a function of i only:
#   {"id": i, "name": "user%06d", "email": "user<i>@example.com", "active": i % 3 != 0,
#    "score": i * 7919 % 1000, "ratio": (i % 100) / 100, "tags": first i % 4 of a fixed list,
#    "address": {"city": "city<i % 50>", "zip": "<10000 + i % 90000>"}, "history": [i % 7, i % 11, i % 13]}
set -euo pipefail

usage() {
	echo "usage: $0 OUT N | $0 --expect N | $0 --filter" >&2
	exit 2
}

if [ $# -eq 1 ] && [ "$1" = "--filter" ]; then
	printf '%s\n' "$JQ_FILTER"
	exit 0
fi
[ $# -eq 2 ] || usage
case "$2" in '' | *[!0-9]*) usage ;; esac

if [ "$1" = "--expect" ]; then
	awk -v n="$2" 'BEGIN {
		active = 0; score = 0; tags = 0
		for (i = 1; i <= n; i++) {
			if (i % 3 != 0)
				active++
			score += i * 7919 % 1000
			tags += i % 4
		}
		cities = n < 50 ? n : 50
		# jq: add of an empty array is null
		printf "{\"n\":%d,\"active\":%d,\"score\":%s,\"cities\":%d,\"tags\":%s}\n",
		       n, active, (n ? sprintf("%d", score) : "null"), cities,
		       (n ? sprintf("%d", tags) : "null")
	}'
	exit 0
fi

out=$1
awk -v n="$2" 'BEGIN {
	split("alpha beta gamma", tag, " ")
	printf "["
	for (i = 1; i <= n; i++) {
		t = ""
		for (k = 1; k <= i % 4; k++)
			t = t (k > 1 ? "," : "") "\"" tag[k] "\""
		printf "%s\n{\"id\":%d,\"name\":\"user%06d\",\"email\":\"user%d@example.com\",", \
		       (i > 1 ? "," : ""), i, i, i
		printf "\"active\":%s,\"score\":%d,\"ratio\":%.2f,\"tags\":[%s],", \
		       (i % 3 != 0 ? "true" : "false"), i * 7919 % 1000, (i % 100) / 100, t
		printf "\"address\":{\"city\":\"city%d\",\"zip\":\"%05d\"},\"history\":[%d,%d,%d]}", \
		       i % 50, 10000 + i % 90000, i % 7, i % 11, i % 13
	}
	printf "\n]\n"
}' >"$out"
