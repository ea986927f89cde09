# gdb -batch -x unwind_gdb.py --args PROGRAM ARGS: at the first call of the fixture's comparator
# (cmp), the return address of each real caller frame, innermost first, up to main, as
# "PC 0x... NAME" lines. Inline frames share their outer frame's address, and gdb's synthesized
# tail call frames (from DWARF call site information: qsort's jmp to qsort_r) are no frame on
# the stack: both left out.
import gdb

gdb.execute("set pagination off")
gdb.execute("set startup-with-shell off")
gdb.execute("break cmp")
gdb.execute("run")
f = gdb.newest_frame().older()
while f is not None:
    if f.type() == gdb.NORMAL_FRAME:
        print("PC %#x %s" % (f.pc(), f.name()))
    if f.name() == "main":
        break
    f = f.older()
gdb.execute("kill")
