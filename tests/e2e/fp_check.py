#!/usr/bin/env python3
"""Stacks walked by frame pointers through code without unwind tables, against the fixture's
own structure: every folded stack whose innermost user frame is LEAF must be one of the CHAINs
(its user frames, root first, ';'-joined) or end in [truncated] over a right part of one
(a suffix of it): never a shorter or other chain that reads as whole.

    fp_check.py FOLDED LEAF CHAIN [CHAIN...]

Prints 'whole W truncated T wrong X' (samples) and the wrong stacks; exits 1 if X > 0."""
import sys


def main():
    folded, leaf, chains = sys.argv[1], sys.argv[2], [c.split(';') for c in sys.argv[3:]]
    whole = trunc = wrong = 0
    bad = []
    for line in open(folded):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        frames = [f for f in stack.split(';')[1:] if not f.endswith('_[k]')]
        if not frames or not frames[-1].startswith(leaf):
            continue
        frames[-1] = leaf	# [anon]+0x1c: [anon]
        n = int(n)
        if frames in chains:
            whole += n
        elif frames[0] == '[truncated]' and any(
                len(frames) - 1 <= len(c) and c[len(c) - len(frames) + 1:] == frames[1:]
                for c in chains):
            trunc += n
        else:
            wrong += n
            bad.append(';'.join(frames) + ' ' + str(n))
    print('whole %d truncated %d wrong %d' % (whole, trunc, wrong))
    for b in bad[:20]:
        print('wrong: ' + b)
    return 1 if wrong else 0


if __name__ == '__main__':
    sys.exit(main())
