# gdb -batch -x startfix_gdb.py --args startfix MODE: at the entry of startfix_inner, the return
# address of each real caller frame, innermost first, through main to the outermost (_start),
# as "PC 0x... NAME" lines (inline and gdb's synthesized tail call frames left out, as in
# unwind_gdb.py).
import gdb

gdb.execute("set pagination off")
gdb.execute("set startup-with-shell off")
gdb.execute("set backtrace past-main on")
gdb.execute("break startfix_inner")
gdb.execute("run")
f = gdb.newest_frame().older()
while f is not None:
    if f.type() == gdb.NORMAL_FRAME:
        print("PC %#x %s" % (f.pc(), f.name()))
    f = f.older()
gdb.execute("kill")
