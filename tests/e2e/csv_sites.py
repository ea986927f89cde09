#!/usr/bin/env python3
"""The sites of one process from ebprof's CSV report, in the JSON report's shape:
{"sites": [{"pid", "frames": [{"function"}, ...] leaf first, "alloc_count", "alloc_bytes",
"live_count", "live_bytes"}]}, for tests/e2e/helpers.bash's fixture_sites. A machine-wide run's
JSON is hundreds of MB (a minute of jq); its CSV, a row per site with the frames' names, is read
in a second. Usage: csv_sites.py FILE.csv PID"""
import csv
import json
import sys

path, pid = sys.argv[1], sys.argv[2]
sites = []
with open(path, newline="") as f:
    for row in csv.DictReader(f):
        if row["pid"] != pid:
            continue
        frames = row["stack"].split(";") if row["stack"] else []
        sites.append({
            "pid": int(pid),
            "frames": [{"function": fn} for fn in reversed(frames)],
            "alloc_count": int(row["alloc_objects"]),
            "alloc_bytes": int(row["alloc_space"]),
            "live_count": int(row["inuse_objects"]),
            "live_bytes": int(row["inuse_space"]),
        })
json.dump({"sites": sites}, sys.stdout)
