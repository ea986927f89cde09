#!/usr/bin/env python3
"""Stacks through a thread's or goroutine's outermost frame against gdb's
(tests/e2e/unwind_outermost.bats).

outermost_check.py JSON GDB LEAF [alone]
    GDB: gdb's "bt" at a stop in LEAF ("#N  0x... in NAME ..." lines; backtrace past-main on,
    ASLR off on both sides), ending at the outermost frame (a frame at pc 0, gdb's end mark
    past it, is left out). Every site of JSON whose first user frame (not kernel, not the
    event's) is LEAF must have exactly gdb's return addresses after it (a library's may be one
    page lower: addr_match.same), no [truncated] and no frame more; with "alone", a site of LEAF alone is another thread's whole stack (clone3's
    child), counted apart. Prints each site and "right N (V events or samples), alone A (V),
    wrong W"; exit 1 if any site is wrong or none is right.
"""
import json
import re
import sys

from addr_match import same


def main(path, gdb_path, leaf, alone_ok=False):
    want = []
    for line in open(gdb_path):
        m = re.match(r"#(\d+)\s+0x([0-9a-f]+) in (\S+)", line)
        if m and int(m.group(1)) > 0 and int(m.group(2), 16):
            want.append(int(m.group(2), 16))
    d = json.load(open(path))
    right = wrong = val = alone = aval = 0
    for s in d["sites"]:
        fr = [f for f in s["frames"] if not f.get("kernel") and not f.get("inlined") and
              (f.get("module") or f["function"] == "[truncated]")]
        if not fr or fr[0]["function"] != leaf:
            continue
        names = ";".join(str(f["function"]) for f in fr)
        got = [int(f["address"], 16) if f.get("address") else 0 for f in fr[1:]]
        n = s.get("events", s.get("samples", 0))
        ok = same(got, want)
        if alone_ok and not got:
            print("alone %s %s" % (n, names))
            alone += 1
            aval += n
            continue
        print("%s %s %s" % ("ok   " if ok else "WRONG", n, names))
        if ok:
            right += 1
            val += n
        else:
            wrong += 1
    print("right %d (%d events or samples), alone %d (%d), wrong %d" %
          (right, val, alone, aval, wrong))
    return 0 if right and not wrong else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3],
                  len(sys.argv) > 4 and sys.argv[4] == "alone"))
