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
unwind_check.py pids FOLDED PIDS MIN_PERCENT
    The same for the samples of the processes PIDS (a comma-separated list: -a's profile has
    every process), and every one of their stacks must be right: from _start, or from
    [truncated], a run of the fixture's chain (_start, __libc_start_main, __libc_start_call_main,
    main, level1, level2, level3, qsort_r, msort_with_tmp..., cmp) without a frame missing or
    added, under which only frames outside the chain (malloc, free, the kernel's); a frame said
    to be [ambiguous: A or B] (two programs' code at its address during the run, named from
    neither) stands for the chain's frame there; exit 1 for a wrong stack.
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


CHAIN = list(reversed(OUTER)) + ["msort", "cmp"]


def position(name):
    if re.fullmatch(r"msort_with_tmp(\.part\.0)?", name):
        return CHAIN.index("msort")
    return CHAIN.index(name) if name in CHAIN else -1


def right(names):
    """names: a stack root first. A run of CHAIN (from _start unless it starts in
    [truncated]; an [ambiguous: ...] frame in its place), then frames outside it only."""
    truncated = bool(names) and names[0] == "[truncated]"
    if truncated:
        names = names[1:]
    # "[ambiguous: A or B]": a frame two files named differently (an earlier program at the
    # same addresses, no ASLR), said and named from neither: it stands for the chain's next
    pos = []
    for n in names:
        if n.startswith("[ambiguous: "):
            pos.append(pos[-1] + 1 if pos and pos[-1] >= 0 else 0)
        else:
            pos.append(position(n))
    while pos and pos[-1] < 0:	# the leaf's callees outside the chain
        pos.pop()
    if not pos:
        return True
    if not truncated and pos[0] != 0:
        return False
    msort = CHAIN.index("msort")
    for a, b in zip(pos, pos[1:]):
        if b < 0 or not (b == a + 1 or a == b == msort):
            return False
    return True


def pids(path, pid_list, min_percent):
    want = set(pid_list.split(","))
    ok = total = wrong = 0
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        n = int(n)
        fields = stack.split(";")
        m = re.fullmatch(r".* \((\d+)\)", fields[0])
        if not m or m.group(1) not in want:
            continue
        total += n
        names = [re.sub(r"_\[i\]$", "", x) for x in fields[1:]]
        if not right(names):
            wrong += n
            print("wrong (%d): %s" % (n, stack))
        if "cmp" in names and complete(list(reversed(names[:names.index("cmp")]))):
            ok += n
    share = 100.0 * ok / total if total else 0
    print("samples of %s: %d, %d with the complete stack down to cmp (%.1f%%), %d wrong" %
          (pid_list, total, ok, share, wrong))
    return 0 if share >= min_percent and not wrong and total else 1


if __name__ == "__main__":
    if sys.argv[1] == "pids":
        sys.exit(pids(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    if sys.argv[1] == "mem":
        sys.exit(mem(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    sys.exit(cpu(sys.argv[2], float(sys.argv[3])))
