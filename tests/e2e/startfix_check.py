#!/usr/bin/env python3
"""Checks of the startfix fixture's stacks (tests/e2e/unwind.bats): its event (malloc, sleep,
spin) happens at once after the exec, in code mapped after the profiler loaded the program's
tables.

startfix_check.py JSON GDB
    GDB: startfix_gdb.py's "PC" lines (the return addresses of startfix_inner's callers up to
    _start, the run without ASLR like gdb's). Every site of JSON with a frame in the fixture
    whose first fixture frame is startfix_inner, startfix_outer or main must be right from
    there on: exactly gdb's callers from there (by address; see same) to the outermost, or a prefix of
    them and a [truncated] frame; a stack missing a frame or ending early without [truncated]
    is wrong. (Sites first in the fixture's start-up or exit code are left alone.) Prints each
    site and "complete N" (sites whose stack is complete from startfix_inner, their first
    value); exit 1 if any site is wrong or none is complete.
"""
import json
import sys


def same(got, want):
    """The same return addresses: the executable's exactly; a library's at the same offset in
    its page, at most 16 pages away. A uprobe's first hit in a process maps the kernel's
    one-page execute-out-of-line area ([uprobes]), so the libraries mapped after it (ebprof's
    hold at the loader's hook is hit before libc is mapped) sit a page lower than under gdb."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if g == w:
            continue
        if g < 0x7f0000000000 or w < 0x7f0000000000 or (g ^ w) & 0xfff or abs(g - w) > 0x10000:
            return False
    return True


def main(path, gdb_path):
    d = json.load(open(path))
    gdb = [(int(l.split()[1], 16), l.split()[2]) for l in open(gdb_path) if l.startswith("PC ")]
    # the chain from startfix_inner: (name, return address of the caller frame or None)
    chain = [("startfix_inner", None)] + [(n, a) for a, n in gdb]
    wrong = complete = 0
    for s in d["sites"]:
        fr = [f for f in s["frames"] if not f.get("inlined")]
        k = next((i for i, f in enumerate(fr)
                  if (f.get("module") or "").endswith("/startfix")), None)
        if k is None:
            continue
        names = ";".join(str(f["function"]) for f in s["frames"])
        first = fr[k]["function"]
        if first not in ("startfix_inner", "startfix_outer", "main"):
            print("other %s" % names)	# start-up and exit code (_start, destructors)
            continue
        j = next(i for i, c in enumerate(chain) if c[0] == first)
        ok = True
        rest = fr[k + 1:]
        truncated = bool(rest) and rest[-1]["function"] == "[truncated]"
        if truncated:
            rest = rest[:-1]
        if ok:
            want = [a for _, a in chain[j + 1:]]
            got = [int(f["address"], 16) for f in rest]
            ok = same(got, want) or (truncated and same(got, want[:len(got)]))
        print("%s %s" % ("ok   " if ok else "WRONG", names))
        if not ok:
            wrong += 1
        elif first == "startfix_inner" and not truncated:
            complete += 1
    print("complete %d, wrong %d" % (complete, wrong))
    return 0 if complete and not wrong else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
