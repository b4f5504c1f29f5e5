# SPDX-License-Identifier: GPL-2.0-or-later
# Lossless RoCE, black box (tests/dcb/run.sh): DCB replies written from the
# kernel's dcbnl layouts (mkdcb), through the library's parser into the
# snapshot attributes (dcbplant), planted in the audit-ok node and judged by
# the audit's roce-lossless and pause-storm, and by verify; then this host's
# own netdevs (no DCB: undecided with the driver's reason). Fuzzed by fuzz_dcb.
DCB_MKDCB := $(BUILD)/tests/dcb/mkdcb
DCB_PLANT := $(BUILD)/tests/dcb/dcbplant
$(DCB_MKDCB): $(TOP)/tests/dcb/mkdcb.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)
$(DCB_PLANT): $(TOP)/tests/dcb/dcbplant.c $(LIBAFF_A) $(TOP)/libaffinity/dcb.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) -o $@ $< $(LDFLAGS) $(LIBAFF_A) $(TEST_LIBS)

CHECKS += check-dcb
ASAN_CHECKS += check-dcb
.PHONY: check-dcb
# verify's part uses its stand-in rank and machine (tests/verify/verify.mk).
check-dcb: $(RAILBIND) $(RBGEN_FIXTURES) $(DCB_MKDCB) $(DCB_PLANT) $(BUILD)/tests/verify-rank \
		$(BUILD)/verify/verify8.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) MKDCB=$(DCB_MKDCB) \
		DCBPLANT=$(DCB_PLANT) RANK=$(BUILD)/tests/verify-rank VERIFY8=$(BUILD)/verify/verify8.xml \
		TOPDIR=$(TOP) sh $(TOP)/tests/dcb/run.sh
