#!/usr/bin/env python3
"""The sites of one process from ebprof's CSV report, in the JSON report's shape:
{"sites": [{"pid", "frames": [{"function"}, ...] leaf first (a kernel frame keeps the CSV's
_[k] suffix), and each value column of the CSV under its name (alloc_objects, samples,
contentions, ...)}]}; a memory profile's also under the JSON's other names (alloc_count,
alloc_bytes, live_count, live_bytes) for tests/e2e/helpers.bash's fixture_sites. A
machine-wide run's JSON is hundreds of MB (a minute of jq); its CSV, a row per site with the
frames' names, is read in a second.
Usage: csv_sites.py FILE.csv PID"""
import csv
import json
import sys

ALIASES = {"alloc_objects": "alloc_count", "alloc_space": "alloc_bytes",
           "inuse_objects": "live_count", "inuse_space": "live_bytes"}

path, pid = sys.argv[1], sys.argv[2]
sites = []
with open(path, newline="") as f:
    for row in csv.DictReader(f):
        if row["pid"] != pid:
            continue
        frames = row["stack"].split(";") if row["stack"] else []
        site = {"pid": int(pid), "frames": [{"function": fn} for fn in reversed(frames)]}
        for col, val in row.items():
            if col in ("pid", "comm", "stack") or val == "":
                continue
            site[col] = int(val)
            if col in ALIASES:
                site[ALIASES[col]] = int(val)
        sites.append(site)
json.dump({"sites": sites}, sys.stdout)
