# ebprof build. Out-of-tree: everything generated goes to $(OUT) (default build/).
#   make            build build/ebprof
#   make demo       install deps, build, profile the bundled demo, write report + flame graph
#   make check      install deps, build, run unit and end-to-end tests
#   make unit       unit tests only (no root)
#   make e2e        end-to-end tests only (root, real BPF)
#   make bench      overhead benchmark (root)
#   make bench-scan leak scan cost per MB of heap (root)
#   make bench-trees what following real process trees costs, start to report (root)
#   make bench-placement  what probe placement saves per call (root)
#   make bench-cpu  what `ebprof cpu` costs beside perf record and bpftrace (root)
#   make bench-kmem what `ebprof kmem` costs beside bpftrace (root)
#   make bench-io   what `ebprof io` costs per block request beside bpftrace (root)
#   make bench-top  what `ebprof top` itself costs at the default interval (root, tmux)
#   make bench-agent what `ebprof agent` costs over 60 s at 99 Hz -a (root)
#   make bench-lock what `ebprof lock` costs on a mutex-heavy loop beside bpftrace (root)
#   make bench-profile  what `ebprof profile` costs beside its modes alone (root)
#   make bench-offcpu  what `ebprof offcpu` costs per context switch beside bpftrace (root)
#   make bench-allprocs  what -a costs, and gets, on a storm of short processes beside perf (root)
#   V=1             show full commands

OUT        ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
LLVM_STRIP ?= llvm-strip
PREFIX     ?= /usr/local

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

ARCH_DEFINE := -D__TARGET_ARCH_x86
# CFLAGS, CPPFLAGS and LDLIBS are the user's (`make CFLAGS=-O0` replaces them whole); what the
# code cannot build without is kept apart and always added: the user's flags come first, so
# these win where both set the same thing (-std).
CFLAGS     ?= -O2 -g
EBPROF_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	      -fno-omit-frame-pointer -D_GNU_SOURCE
EBPROF_CPPFLAGS := -Isrc -I$(OUT) -MMD -MP
EBPROF_LDLIBS := -lbpf -lelf -ldw -lz -llzma -liberty -lncursesw -lpthread -lm
ALL_CFLAGS  = $(EBPROF_CPPFLAGS) $(CPPFLAGS) $(CFLAGS) $(EBPROF_CFLAGS)
ALL_LDLIBS  = $(LDLIBS) $(EBPROF_LDLIBS)

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 $(ARCH_DEFINE) -I$(OUT) -Isrc -Wall -Wno-unused-function

BPF_SRCS   := $(wildcard src/bpf/*.bpf.c)
BPF_OBJS   := $(patsubst src/bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS      := $(patsubst src/bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))

# Only the modes (src/modes/<mode>/: collector, options, command) and the CLI see BPF
# skeletons; everything else, the shared runtime in src/core and the shared option parsing in
# src/cli/options.c included, goes into libebprof.a and is unit-testable without root.
SKEL_USERS := $(wildcard src/modes/*/*.c)
LIB_CLI    := src/cli/options.c
LIB_SRCS   := $(wildcard src/util/*.c src/profile/*.c src/symbolize/*.c src/output/*.c src/top/*.c \
		src/agent/*.c) \
	      $(wildcard src/core/*.c) $(LIB_CLI)
CORE_SRCS  := $(SKEL_USERS) $(filter-out $(LIB_CLI),$(wildcard src/cli/*.c))
SKEL_OBJS  := $(patsubst src/%.c,$(OUT)/obj/%.o,$(SKEL_USERS))
LIB_OBJS   := $(patsubst src/%.c,$(OUT)/obj/%.o,$(LIB_SRCS)) $(OUT)/obj/assets.o
CORE_OBJS  := $(patsubst src/%.c,$(OUT)/obj/%.o,$(CORE_SRCS))

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

# Fixture programs: built the way a user's debug build is (frame pointers, -O0/-O1, DWARF).
FIX_SRCS   := $(wildcard tests/fixtures/*.c)
FIX_BINS   := $(patsubst tests/fixtures/%.c,$(OUT)/fixtures/%,$(filter-out %_preload.c %_lib.c,$(FIX_SRCS)))
FIX_SOS    := $(patsubst tests/fixtures/%_preload.c,$(OUT)/fixtures/%.so,$(filter %_preload.c,$(FIX_SRCS)))
FIX_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -Wall

DEMO_BIN   := $(OUT)/demo/demo

.PHONY: all deps demo check unit e2e bench bench-scan bench-trees bench-render bench-placement bench-cpu bench-kmem bench-io bench-profile bench-lock bench-top bench-agent bench-offcpu bench-allprocs bench-stacks clean install fixtures
all: $(OUT)/ebprof

deps:
	$(Q)bash scripts/install-deps.sh

# The builds `make check` and `make demo` run after installing the dependencies: on every CPU,
# unless the caller's make already runs jobs (-jN, whose job server the sub-make shares).
SUBMAKE_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

$(OUT) $(OUT)/bpf $(OUT)/tests $(OUT)/fixtures $(OUT)/demo:
	$(Q)mkdir -p $@

$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUT)/bpf/%.bpf.o: src/bpf/%.bpf.c $(OUT)/vmlinux.h | $(OUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@
	$(Q)# the skeleton embeds the object: without DWARF (BTF and .BTF.ext stay), ~770 -> ~125 KB
	$(Q)# for cpu's, less for libbpf to parse and for the cache key to hash at every start
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUT)/obj/%.o: src/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# x86_64 syscall numbers by name, for `ebprof stacks -e syscalls:sys_enter_X` (no tracefs needed).
SYSCALL_HDR ?= /usr/include/x86_64-linux-gnu/asm/unistd_64.h
$(OUT)/syscall_table.h: $(SYSCALL_HDR) | $(OUT)
	$(call msg,GEN,$@)
	$(Q)sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/\t{ "\1", \2 },/p' $< > $@
	$(Q)test -s $@ || { echo "no syscall numbers found in $<" >&2; exit 1; }

# The HTML report's and the flame graph's CSS and JavaScript, embedded (src/output/assets.h).
ASSETS     := $(wildcard src/output/assets/*.css src/output/assets/*.js)
$(OUT)/assets.c: $(ASSETS) scripts/embed-assets.sh | $(OUT)
	$(call msg,GEN,$@)
	$(Q)sh scripts/embed-assets.sh $@ $(ASSETS)

$(OUT)/obj/assets.o: $(OUT)/assets.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# Core objects include the skeletons.
$(CORE_OBJS): $(SKELS) $(OUT)/syscall_table.h

$(OUT)/libebprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/ebprof: $(CORE_OBJS) $(OUT)/libebprof.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(EBPROF_CFLAGS) $(LDFLAGS) $^ $(ALL_LDLIBS) -o $@

$(OUT)/tests/%: tests/unit/%.c $(OUT)/libebprof.a | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $< $(OUT)/libebprof.a $(ALL_LDLIBS) -lcmocka -o $@

# BPF-level tests: a collector and its skeleton loaded in the test process (root).
BPF_TEST_SRCS := $(wildcard tests/bpf/test_*.c)
BPF_TEST_BINS := $(patsubst tests/bpf/%.c,$(OUT)/tests/bpf_%,$(BPF_TEST_SRCS))

$(OUT)/tests/bpf_%: tests/bpf/%.c $(SKEL_OBJS) $(OUT)/libebprof.a | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(SKEL_OBJS) $(OUT)/libebprof.a $(ALL_LDLIBS) -lcmocka -o $@

$(OUT)/fixtures/%: tests/fixtures/%.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) $< -o $@

# The exactness fixture linked statically: its allocator is in the executable itself.
$(OUT)/fixtures/memfixture_static: tests/fixtures/memfixture.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -static $< -o $@

$(OUT)/fixtures/%.so: tests/fixtures/%_preload.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wall $< -ldl -o $@

# C++ operators (every variant) and the malloc family, for each allocator (tests/e2e/mem_alloc.bats).
$(OUT)/fixtures/cxxfixture: tests/fixtures/cxxfixture.cpp | $(OUT)/fixtures
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(FIX_CFLAGS) $< -o $@

# Failing operator new calls, caught (tests/e2e/mem_alloc.bats).
$(OUT)/fixtures/badalloc: tests/fixtures/badalloc.cpp | $(OUT)/fixtures
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(FIX_CFLAGS) $< -o $@

$(OUT)/fixtures/cxxfixture_static: tests/fixtures/cxxfixture.cpp | $(OUT)/fixtures
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(FIX_CFLAGS) -static $< -o $@

# A C program whose C++ is in a library: libstdc++ is mapped after libc.
$(OUT)/fixtures/libcxxlate.so: tests/fixtures/cxxlate_lib.cpp | $(OUT)/fixtures
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(FIX_CFLAGS) -fPIC -shared $< -o $@

$(OUT)/fixtures/cxxlate: tests/fixtures/cxxlate.c $(OUT)/fixtures/libcxxlate.so | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) $< -L$(OUT)/fixtures -lcxxlate -Wl,-rpath,'$$ORIGIN' -o $@

# An allocator with prefixed names (--symbol-prefix pf_).
$(OUT)/fixtures/libprefixalloc.so: tests/fixtures/prefixalloc_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared $< -o $@

$(OUT)/fixtures/prefixalloc: tests/fixtures/prefixalloc.c $(OUT)/fixtures/libprefixalloc.so | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) $< -L$(OUT)/fixtures -lprefixalloc -Wl,-rpath,'$$ORIGIN' -o $@

# A library loaded, run and unloaded (dlclose) before the program ends.
# Stacks without frame pointers (the .eh_frame unwinder's fixture): built as Debian builds -O2.
$(OUT)/fixtures/qsortfix: tests/fixtures/qsortfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

# the same, twice, each function at the same address in both, other rules in level3 (the exec
# tests: another program in the same process)
QSORTEXEC_CFLAGS = -O2 -g -fomit-frame-pointer -Wall -falign-functions=256 -fno-toplevel-reorder
$(OUT)/fixtures/qsortexec_a: tests/fixtures/qsortfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(QSORTEXEC_CFLAGS) -DFRAME=16 $< -o $@

$(OUT)/fixtures/qsortexec_b: tests/fixtures/qsortfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(QSORTEXEC_CFLAGS) -DFRAME=96 -DPAD $< -o $@

# wakeexec and the program its waker execs: the same functions at the same addresses, named
# apart (other_*), and more code after them in the other
WAKEEXEC_CFLAGS = $(FIX_CFLAGS) -falign-functions=256 -fno-toplevel-reorder
$(OUT)/fixtures/wakeexec: tests/fixtures/wakeexec.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(WAKEEXEC_CFLAGS) $< -o $@

$(OUT)/fixtures/wakeexec_other: tests/fixtures/wakeexec.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(WAKEEXEC_CFLAGS) -DOTHER $< -o $@

# spinname and its copy with other names: the same functions at the same fixed addresses (no
# PIE), named apart (other_*)
$(OUT)/fixtures/spinname: tests/fixtures/spinname.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -no-pie $< -o $@

$(OUT)/fixtures/spinname_other: tests/fixtures/spinname.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -no-pie -DOTHER $< -o $@

$(OUT)/fixtures/startfix: tests/fixtures/startfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/samesite: tests/fixtures/samesite.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/rbxcfa: tests/fixtures/rbxcfa.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/sigfix: tests/fixtures/sigfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/ctxfix: tests/fixtures/ctxfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall -D_FORTIFY_SOURCE=2 $< -o $@

$(OUT)/fixtures/jmpfix: tests/fixtures/jmpfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall -D_FORTIFY_SOURCE=2 $< -o $@

$(OUT)/fixtures/vforkfix: tests/fixtures/vforkfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/libdlburn.so: tests/fixtures/dlburn_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared $< -o $@

$(OUT)/fixtures/liblazyfix.so: tests/fixtures/lazyfix_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fPIC -shared -Wall $< -o $@

$(OUT)/fixtures/lazyfix: tests/fixtures/lazyfix.c $(OUT)/fixtures/liblazyfix.so | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall $< -o $@

# Code without unwind tables walked by frame pointers (tests/e2e/unwind_fp.bats): a JIT leaf
# with frame pointers in its callers, and without them and %rbp 0; a program without call
# frame information whose leaf keeps no frame pointer.
$(OUT)/fixtures/jitleaf: tests/fixtures/jitleaf.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall $< -o $@

$(OUT)/fixtures/jitleaf_nofp: tests/fixtures/jitleaf.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -ffixed-rbp -DZERO_RBP -Wall $< -o $@

# mutexfix without frame pointers, %rbp never written by its own code (-ffixed-rbp): its
# threads wait in libc with the %rbp they started with, 0 (tests/e2e/lock.bats, --unwind fp)
$(OUT)/fixtures/mutexfix_nofp: tests/fixtures/mutexfix.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -ffixed-rbp -pthread -Wall $< -o $@

$(OUT)/fixtures/nocfi: tests/fixtures/nocfi.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g0 -fno-omit-frame-pointer -momit-leaf-frame-pointer \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -Wall $< -o $@

# cpuburn with a build-id said, not left to the compiler's default: tests copy and strip it (a
# stripped copy and the full file share the build-id; a debug file is found by it)
$(OUT)/fixtures/cpuburn_bid: tests/fixtures/cpuburn.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -Wl,--build-id $< -o $@

# cpuburn without a build-id: each copy of it is a file of its own to the symbolizer, known
# by its identity (device, inode, size, time), as a program rebuilt in place is
$(OUT)/fixtures/cpuburn_nobid: tests/fixtures/cpuburn.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -Wl,--build-id=none $< -o $@

# two files with a static function of one name each, linked together
$(OUT)/fixtures/dupstatic: tests/fixtures/dupstatic.c tests/fixtures/dupstatic_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) $^ -o $@

# replug's plugin in two versions: the same code, the hot function named for each
$(OUT)/fixtures/libreplug%.so: tests/fixtures/replug_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared -DVERSION=$* $< -o $@

# vmaswap's library in two versions that unwind differently at the same offsets
$(OUT)/fixtures/libvmaswap%.so: tests/fixtures/vmaswap_lib.c | $(OUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -falign-functions=256 -fno-toplevel-reorder -Wall \
		-fPIC -shared -DVERSION=$* $< -o $@

fixtures: $(OUT)/fixtures/cpuburn_bid $(OUT)/fixtures/cpuburn_nobid $(OUT)/fixtures/libreplug1.so $(OUT)/fixtures/libreplug2.so \
	  $(OUT)/fixtures/libvmaswap1.so $(OUT)/fixtures/libvmaswap2.so \
	  $(OUT)/fixtures/libdlburn.so $(OUT)/fixtures/liblazyfix.so \
	  $(FIX_BINS) $(FIX_SOS) $(OUT)/fixtures/memfixture_static $(OUT)/fixtures/cxxfixture \
	  $(OUT)/fixtures/cxxlate $(OUT)/fixtures/cxxfixture_static $(OUT)/fixtures/badalloc $(OUT)/fixtures/prefixalloc \
	  $(OUT)/fixtures/qsortexec_a $(OUT)/fixtures/qsortexec_b $(OUT)/fixtures/jitleaf_nofp \
	  $(OUT)/fixtures/mutexfix_nofp $(OUT)/fixtures/wakeexec_other $(OUT)/fixtures/spinname_other

$(DEMO_BIN): demo/demo.c | $(OUT)/demo
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) $< -o $@

demo: deps
	$(Q)$(MAKE) --no-print-directory $(SUBMAKE_JOBS) $(OUT)/ebprof $(DEMO_BIN)
	$(Q)bash scripts/demo.sh $(OUT)

unit: $(UNIT_BINS) fixtures
	$(Q)bash tests/run-unit.sh $(OUT)

e2e: $(OUT)/ebprof fixtures $(BPF_TEST_BINS) $(DEMO_BIN)
	$(Q)bash tests/run-e2e.sh $(OUT)

check: deps
	$(Q)$(MAKE) --no-print-directory $(SUBMAKE_JOBS) all $(UNIT_BINS) $(BPF_TEST_BINS) $(DEMO_BIN) fixtures
	$(Q)bash tests/run-all.sh $(OUT)

# The benchmark's floor: empty uprobes placed by src/core/probes.c (bench/floor.c).
BENCH_TOOLS := $(OUT)/bench/floor

$(OUT)/bench/floor.bpf.o: bench/floor.bpf.c $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/bench/floor.skel.h: $(OUT)/bench/floor.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(OUT)/bench/floor: bench/floor.c $(OUT)/bench/floor.skel.h $(OUT)/libebprof.a
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUT)/libebprof.a $(ALL_LDLIBS) -o $@

bench: $(OUT)/ebprof fixtures $(BENCH_TOOLS)
	$(Q)bash bench/run.sh $(OUT)

bench-scan: $(OUT)/ebprof
	$(Q)bash bench/scan.sh $(OUT)

bench-trees: $(OUT)/ebprof
	$(Q)bash bench/trees.sh $(OUT)

bench-placement: $(OUT)/libebprof.a
	$(Q)bash bench/placement.sh $(OUT)

bench-render: $(OUT)/libebprof.a
	$(Q)bash bench/render.sh $(OUT)

# the anchors (perf, bpftrace) are measured even while ebprof has no cpu mode
bench-cpu: $(OUT)/ebprof
	$(Q)bash bench/cpu.sh $(OUT)

bench-kmem: $(OUT)/ebprof
	$(Q)bash bench/kmem.sh $(OUT)

bench-offcpu: $(OUT)/ebprof fixtures
	$(Q)bash bench/offcpu.sh $(OUT)

bench-allprocs: $(OUT)/ebprof
	$(Q)bash bench/allprocs.sh $(OUT)

bench-io: $(OUT)/ebprof
	$(Q)bash bench/io.sh $(OUT)

bench-top: $(OUT)/ebprof fixtures
	$(Q)bash bench/top.sh $(OUT)

bench-agent: $(OUT)/ebprof
	$(Q)bash bench/agent.sh 60 $(OUT)

bench-lock: $(OUT)/ebprof
	$(Q)bash bench/lock.sh $(OUT)

bench-profile: $(OUT)/ebprof
	$(Q)bash bench/profile.sh $(OUT)

bench-stacks: $(OUT)/ebprof $(BENCH_TOOLS)
	$(Q)bash bench/stacks.sh $(OUT)

install: $(OUT)/ebprof
	install -D -m 0755 $(OUT)/ebprof $(DESTDIR)$(PREFIX)/sbin/ebprof
	install -D -m 0644 docs/ebprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/ebprof.8

clean:
	rm -rf $(OUT)

# Extra build rules of test inputs (e.g. stripped/debuglink ELF files for symbolizer tests).
-include $(wildcard tests/unit/*.mk)

-include $(wildcard $(OUT)/obj/*/*.d $(OUT)/obj/*/*/*.d $(OUT)/bpf/*.d $(OUT)/tests/*.d $(OUT)/bench/*.d)
