#!/usr/bin/env python3
"""Checks of a fixture's stacks against gdb's (tests/e2e/unwind_ctx.bats).

chains_check.py JSON GDB FIXTURE
    GDB: chains_gdb.py's output, "CHAIN fn" then the "PC 0x... NAME" return addresses of fn's
    caller frames (the runs without ASLR, like gdb's); a chain ends at the outermost frame, or
    before a frame gdb has no name for (a coroutine's __start_context, the return address
    makecontext pushed: ebprof's stack ends there, its renderer leaves it out as it follows no
    call). Every site of JSON with a frame in FIXTURE (the program's file name) whose first
    fixture frame is in a chain must be right from there on: exactly the chain's return
    addresses after it, or a prefix of them and a [truncated] frame; a stack missing a frame,
    with a frame more, or ending early without [truncated] is wrong. A library's address may
    be one page lower than gdb's (addr_match.same: the [uprobes] page of ebprof's loader hook). Sites first in other
    fixture code (start-up, exit) are printed, not checked. Prints each site and "complete N
    (V of the values), truncated M, wrong W"; exit 1 if any site is wrong or none complete.
"""
import json
import sys

from addr_match import same


def value(s):
    for k in ("samples", "alloc_count", "switches", "events", "count", "value"):
        if k in s:
            return s[k]
    return 0

def main(path, gdb_path, fixture):
    d = json.load(open(path))
    chains, cur = [], None
    for line in open(gdb_path):
        w = line.split()
        if line.startswith("CHAIN "):
            cur = [(w[1], None)]
            chains.append(cur)
        elif line.startswith("PC ") and cur is not None:
            if w[2] == "None":
                cur = None	# makecontext's __start_context: the end
            else:
                cur.append((w[2], int(w[1], 16)))
    # each function of a chain: the return addresses above it
    want = {}
    for c in chains:
        for j, (name, _) in enumerate(c):
            want.setdefault(name, [])
            rest = [a for _, a in c[j + 1:]]
            if rest not in want[name]:
                want[name].append(rest)
    complete = truncated = wrong = 0
    cval = 0
    for s in d["sites"]:
        fr = [f for f in s["frames"] if not f.get("inlined")]
        k = next((i for i, f in enumerate(fr)
                  if (f.get("module") or "").endswith("/" + fixture)), None)
        if k is None:
            continue
        names = ";".join(str(f["function"]) for f in s["frames"])
        first = fr[k]["function"]
        if first not in want:
            print("other %s" % names)
            continue
        rest = fr[k + 1:]
        trunc = bool(rest) and rest[-1]["function"] == "[truncated]"
        if trunc:
            rest = rest[:-1]
        got = [int(f["address"], 16) for f in rest]
        ok = any(same(got, w) or (trunc and same(got, w[:len(got)])) for w in want[first])
        print("%s %s %s" % ("ok   " if ok else "WRONG", value(s), names))
        if not ok:
            wrong += 1
        elif trunc:
            truncated += 1
        else:
            complete += 1
            cval += value(s)
    print("complete %d (%d of the values), truncated %d, wrong %d" %
          (complete, cval, truncated, wrong))
    return 0 if complete and not wrong else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
