# Test input of tests/unit/test_placement.c: hand-written prologues, one per placement rule.
# Included by the top-level Makefile.

$(OUT)/fixtures/placement_cases.so: tests/fixtures/placement_cases.S | $(OUT)/fixtures
	$(call msg,AS,$@)
	$(Q)$(CC) -shared -nostdlib -Wl,--no-undefined $< -o $@

$(OUT)/tests/test_placement: $(OUT)/fixtures/placement_cases.so
