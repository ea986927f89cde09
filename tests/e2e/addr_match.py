"""Return addresses from ebprof against gdb's, for the e2e checkers (chains_check.py,
outermost_check.py): the same, exactly, or a library's one page lower. A uprobe's first hit in
a process maps the kernel's one-page execute-out-of-line area ([uprobes]); where ebprof holds
the process at its loader's hook (mem, stacks), that hit comes before libc is mapped, which
then sits a page lower than under gdb (the program's own code does not move)."""


def same(got, want):
    """got and want: lists of addresses, leaf first."""
    return len(got) == len(want) and all(
        g == w or (w >= 0x7f0000000000 and w - g == 0x1000) for g, w in zip(got, want))
