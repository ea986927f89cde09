# gdb -batch -x chains_gdb.py --args PROGRAM ARGS, with CHAIN_BREAKS="fn[:hits],...": at each
# hit of each function's breakpoint, "CHAIN fn" then the return address of each real caller
# frame, innermost first, as "PC 0x... NAME" lines, to the outermost (past main) or to the
# first frame gdb has no name for (a coroutine's __start_context in a stripped libc: past it
# gdb reads makecontext's uc_link as a return address). Inline and gdb's synthesized tail call
# frames are left out (no frame on the stack), as in unwind_gdb.py.
import os

import gdb

gdb.execute("set pagination off")
gdb.execute("set startup-with-shell off")
gdb.execute("set backtrace past-main on")
gdb.execute("set breakpoint pending on")
want = {}
for b in os.environ["CHAIN_BREAKS"].split(","):
    fn, _, hits = b.partition(":")
    want[fn] = int(hits or "1")
    gdb.execute("break " + fn)
gdb.execute("run")
while any(want.values()):
    f = gdb.newest_frame()
    fn = f.name()
    if want.get(fn):
        want[fn] -= 1
        print("CHAIN %s" % fn)
        f = f.older()
        while f is not None:
            if f.type() == gdb.NORMAL_FRAME:
                print("PC %#x %s" % (f.pc(), f.name()))
                if f.name() is None:
                    break
            f = f.older()
        if not want[fn]:
            gdb.execute("delete")
            for k, n in want.items():
                if n:
                    gdb.execute("break " + k)
    try:
        gdb.execute("continue")
    except gdb.error:
        break
gdb.execute("kill")
