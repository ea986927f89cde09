#!/usr/bin/env python3
"""A --trace file (JSON lines) summed: calls by function and by result, calls per (pid, stack)
by function, each (pid, stack id)'s frame names, how many stack lines came twice (dup), and
the end line; the shape tests/e2e/mem_trace.bats checks (jq took 8 s for memfixture's
226,000 lines). Usage: trace_summary.py FILE.jsonl"""
import collections
import json
import sys


def key(v):
    # as jq's string interpolation writes a value: a string as it is, null as null
    return "null" if v is None else v if isinstance(v, str) else json.dumps(v)


calls = collections.Counter()
results = collections.Counter()
by_stack = collections.defaultdict(collections.Counter)
stacks = {}
dup = 0
end = None
with open(sys.argv[1]) as f:
    for line in f:
        l = json.loads(line)
        t = l.get("type")
        if t == "call":
            calls[key(l["function"])] += 1
            results[key(l["result"])] += 1
            by_stack["%s:%s" % (key(l["pid"]), key(l["stack"]))][key(l["function"])] += 1
        elif t == "stack":
            k = "%s:%s" % (key(l["pid"]), key(l["id"]))
            if k in stacks:
                dup += 1
            stacks[k] = [fr.get("function") for fr in l["frames"]]
        else:
            end = l
out = {"calls": calls, "results": results, "by_stack": by_stack, "stacks": stacks, "dup": dup}
if end is not None:
    out["end"] = end
json.dump(out, sys.stdout)
