#!/usr/bin/env python3
"""Checks of the qsortfix fixture's stacks (tests/e2e/unwind.bats).

unwind_check.py mem JSON GDB MALLOCS
    The comparator's mallocs (sites whose frames are malloc, cmp, ...): the share of MALLOCS
    (the fixture's own count) whose stack is complete (cmp, libc's msort frames, qsort_r,
    level3, level2, level1, main, __libc_start_call_main, __libc_start_main, _start and nothing
    else), and whether one of them has exactly gdb's caller frames (GDB: unwind_gdb.py's "PC"
    lines, return addresses; the run without ASLR like gdb's). Prints both; exit 1 below 95%
    or without gdb's stack.
unwind_check.py cpu FOLDED MIN_PERCENT
    The share of samples whose stack is complete down to cmp (frames under cmp allowed: malloc,
    free); exit 1 below MIN_PERCENT.
"""
import json
import re
import sys

OUTER = ["qsort_r", "level3", "level2", "level1", "main", "__libc_start_call_main",
         "__libc_start_main", "_start"]


def complete(names):
    """names: cmp's callers, innermost first (inline frames included)."""
    i = 0
    while i < len(names) and re.fullmatch(r"msort_with_tmp(\.part\.0)?", names[i]):
        i += 1
    return i > 0 and names[i:] == OUTER


def mem(path, gdb_path, mallocs):
    d = json.load(open(path))
    want = [int(l.split()[1], 16) for l in open(gdb_path) if l.startswith("PC ")]
    ok = total = 0
    exact = False
    for s in d["sites"]:
        fr = s["frames"]
        if len(fr) < 2 or fr[0]["function"] != "malloc" or fr[1]["function"] != "cmp":
            continue
        total += s["alloc_count"]
        callers = fr[2:]
        if not complete([f["function"] for f in callers]):
            print("incomplete (%d): %s" % (s["alloc_count"],
                  ";".join(str(f["function"]) for f in fr)))
            continue
        ok += s["alloc_count"]
        addrs = []
        for f in callers:
            if not f.get("inlined"):	# an inline frame shares its caller's address
                addrs.append(int(f["address"], 16))
            if f["function"] == "main":
                break
        if addrs == want:
            exact = True
    share = 100.0 * ok / mallocs if mallocs else 0
    print("comparator mallocs: %d by the fixture, %d traced, %d with the complete stack "
          "(%.2f%%); gdb's stack found: %s" % (mallocs, total, ok, share, exact))
    return 0 if share >= 95 and exact and want else 1


def cpu(path, min_percent):
    ok = total = 0
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        n = int(n)
        total += n
        names = [re.sub(r"_\[i\]$", "", x) for x in stack.split(";")[1:]]
        if "cmp" not in names:
            continue
        above = names[:names.index("cmp")]
        if complete(list(reversed(above))):
            ok += n
    share = 100.0 * ok / total if total else 0
    print("samples: %d, %d with the complete stack down to cmp (%.1f%%)" % (total, ok, share))
    return 0 if share >= min_percent else 1


if __name__ == "__main__":
    if sys.argv[1] == "mem":
        sys.exit(mem(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    sys.exit(cpu(sys.argv[2], float(sys.argv[3])))
