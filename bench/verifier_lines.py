#!/usr/bin/env python3
# Where the verifier's work on one program goes: the instructions it processed, by function and
# by source line, from the log of `EBPROF_VERIFIER_STATS=full ebprof MODE ... 2> LOG` (the
# kernel's log level 2: every instruction it processes, with the source line before it).
# A line processed many times more than it has instructions is checked in many states: look
# for what keeps them apart there (a constant from a branch, a loop's counter, an inlined
# function reached from several places). docs/PERFORMANCE.md, "How to measure".
#
# Usage: bench/verifier_lines.py LOG PROGRAM [LINES]   (LINES: how many source lines, 40)
import bisect
import collections
import re
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: verifier_lines.py LOG PROGRAM [LINES]")
    path, want = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    log, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"libbpf: prog '(\w+)': -- BEGIN PROG LOAD LOG --", line)
            if m:
                cur = m.group(1)
                continue
            if cur == want:
                log.append(line.rstrip("\n"))
    if not log:
        sys.exit(f"no load log of program {want} in {path}")
    funcs, first_line, visits, pending = [], {}, collections.Counter(), None
    for line in log:
        m = re.match(r"func#\d+ @(\d+)$", line)
        if m:
            funcs.append(int(m.group(1)))
        elif line.startswith("; "):
            pending = line[2:]
        else:
            m = re.match(r"(\d+): \(", line)
            if m:
                i = int(m.group(1))
                visits[i] += 1
                if pending is not None:
                    first_line.setdefault(i, pending)
                    pending = None
    starts = sorted(first_line)
    funcs = funcs or [0]

    def source(i):
        k = bisect.bisect_right(starts, i) - 1
        return first_line[starts[k]] if k >= 0 else "?"

    names = {}
    for n, off in enumerate(funcs):
        m = re.search(r"(\w+)\s*\(", source(off))
        names[n] = f"{m.group(1) if m else '?'}#{n}"

    def func(i):
        return names[bisect.bisect_right(funcs, i) - 1]

    by_func, by_line = collections.Counter(), collections.Counter()
    for i, c in visits.items():
        by_func[func(i)] += c
        text, _, where = source(i).rpartition(" @ ")
        by_line[(func(i), where, text.strip()[:70])] += c
    print(f"{want}: {sum(visits.values())} instructions processed in the log")
    for name, c in by_func.most_common():
        print(f"{c:8d}  {name}")
    print()
    for (name, where, text), c in by_line.most_common(top):
        print(f"{c:8d}  {name:28s} {where:24s} {text}")


main()
