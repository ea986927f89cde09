# Test inputs of tests/unit/test_symbolize.c, built from tests/fixtures/sym_target.c (by the
# Makefile's fixture rule) and tests/fixtures/sym_cxx.cpp. Included by the top-level Makefile.
#   sym_target          PIE with DWARF and .symtab; -rdynamic so its functions are in .dynsym
#   sym_target.debug    its separate debug file (objcopy --only-keep-debug)
#   sym_target.zdebug   the same with its DWARF zlib-compressed, as distributions ship them
#   sym_target.stripped stripped of everything but .dynsym, .gnu_debuglink to sym_target.debug
#   sym_target.dynsym   stripped of everything but .dynsym, no debug link
#   sym_target.mini     stripped, plus .gnu_debugdata (xz MiniDebugInfo with the static symbols)
#   sym_target.nopie    ET_EXEC build of the same source
#   sym_cxx             C++ member function in a namespace

SYM_FIXDIR   := $(OUT)/fixtures
SYM_FIXTURES := $(addprefix $(SYM_FIXDIR)/,sym_target sym_target.debug sym_target.zdebug \
		sym_target.stripped \
		sym_target.dynsym sym_target.mini sym_target.nopie sym_cxx)

$(SYM_FIXDIR)/sym_target: FIX_CFLAGS += -rdynamic

$(SYM_FIXDIR)/sym_target.debug: $(SYM_FIXDIR)/sym_target
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --only-keep-debug $< $@

$(SYM_FIXDIR)/sym_target.zdebug: $(SYM_FIXDIR)/sym_target
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --only-keep-debug --compress-debug-sections=zlib $< $@

# The debug link stores a bare file name, looked up next to the stripped file: run in its dir.
$(SYM_FIXDIR)/sym_target.stripped: $(SYM_FIXDIR)/sym_target $(SYM_FIXDIR)/sym_target.debug
	$(call msg,OBJCOPY,$@)
	$(Q)cd $(@D) && objcopy --strip-all --add-gnu-debuglink=sym_target.debug \
		sym_target sym_target.stripped

$(SYM_FIXDIR)/sym_target.dynsym: $(SYM_FIXDIR)/sym_target
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# MiniDebugInfo as distributions build it: the function symbols that are not in .dynsym, in an
# otherwise empty ELF file, xz-compressed into .gnu_debugdata of the stripped binary.
$(SYM_FIXDIR)/sym_target.mini: $(SYM_FIXDIR)/sym_target
	$(call msg,MINIDBG,$@)
	$(Q)set -e; t=$@.tmp; \
	nm -D --format=posix --defined-only $< | awk '{ print $$1 }' | sort > $$t.dynsyms; \
	nm --format=posix --defined-only $< | awk '$$2 == "T" || $$2 == "t" { print $$1 }' \
		| sort > $$t.funcsyms; \
	comm -13 $$t.dynsyms $$t.funcsyms > $$t.keep; \
	objcopy --only-keep-debug $< $$t.full; \
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$$t.keep $$t.full $$t.minidbg; \
	xz -f $$t.minidbg; \
	strip --strip-all -R .comment -o $$t $<; \
	objcopy --add-section .gnu_debugdata=$$t.minidbg.xz $$t; \
	rm -f $$t.dynsyms $$t.funcsyms $$t.keep $$t.full $$t.minidbg.xz; \
	mv $$t $@

$(SYM_FIXDIR)/sym_target.nopie: tests/fixtures/sym_target.c | $(SYM_FIXDIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fno-pie -no-pie $< -o $@

$(SYM_FIXDIR)/sym_cxx: tests/fixtures/sym_cxx.cpp | $(SYM_FIXDIR)
	$(call msg,CXX,$@)
	$(Q)g++ -O1 -g -fno-omit-frame-pointer -Wall $< -o $@

fixtures: $(SYM_FIXTURES)
$(OUT)/tests/test_symbolize: $(SYM_FIXTURES)
