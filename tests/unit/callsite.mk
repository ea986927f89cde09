# Test inputs of tests/unit/test_callsite.c. The Makefile's own rules build
# tests/fixtures/callsite_target.c (default flags) and the interposer
# tests/fixtures/callsite_preload.c (as callsite.so); the other call layouts come from here.
# Included by the top-level Makefile.
#   callsite_target           PIE, default flags: lazy .plt entries, .plt.got for calloc
#   callsite_noplt            -fno-plt: call *slot(%rip) straight through the GOT
#   callsite_ibt              -fcf-protection -z ibtplt: endbr64 stubs in .plt.sec and .plt.got
#                             (Debian's crt files carry no IBT note, so without -z ibtplt the
#                             linker keeps the classic .plt)
#   callsite_nopie            ET_EXEC
#   callsite_target.stripped  strip --strip-all (section headers, .dynsym, .rela.* stay)
#   callsite_target.noshdr    no section headers at all (e_shoff, e_shnum, e_shstrndx zeroed)

CS_FIXDIR   := $(OUT)/fixtures
CS_FIXTURES := $(addprefix $(CS_FIXDIR)/,callsite_target callsite.so callsite_noplt callsite_ibt \
		callsite_nopie callsite_target.stripped callsite_target.noshdr)

$(CS_FIXDIR)/callsite_noplt: tests/fixtures/callsite_target.c | $(CS_FIXDIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fno-plt $< -o $@

$(CS_FIXDIR)/callsite_ibt: tests/fixtures/callsite_target.c | $(CS_FIXDIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fcf-protection=full -Wl,-z,ibtplt $< -o $@

$(CS_FIXDIR)/callsite_nopie: tests/fixtures/callsite_target.c | $(CS_FIXDIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FIX_CFLAGS) -fno-pie -no-pie $< -o $@

$(CS_FIXDIR)/callsite_target.stripped: $(CS_FIXDIR)/callsite_target
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# ELF64 header: e_shoff is 8 bytes at 0x28, e_shnum and e_shstrndx 2 bytes each at 0x3c, 0x3e.
$(CS_FIXDIR)/callsite_target.noshdr: $(CS_FIXDIR)/callsite_target.stripped
	$(call msg,GEN,$@)
	$(Q)set -e; cp $< $@.tmp; \
	head -c 8 /dev/zero | dd of=$@.tmp bs=1 seek=40 conv=notrunc status=none; \
	head -c 4 /dev/zero | dd of=$@.tmp bs=1 seek=60 conv=notrunc status=none; \
	mv $@.tmp $@

fixtures: $(CS_FIXTURES)
$(OUT)/tests/test_callsite: $(CS_FIXTURES)
