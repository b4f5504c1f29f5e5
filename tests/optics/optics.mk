# SPDX-License-Identifier: GPL-2.0-or-later
# The transceiver check, black box (tests/optics/run.sh); its decoders are
# tested in tests/unit/test_optics.c (check-unit), fuzzed by fuzz_optics.
# The live part reads this host's own NICs: as root it compares root and
# nobody (needs setpriv); without a PCI netdev it skips, saying so.
CHECKS += check-optics
ASAN_CHECKS += check-optics
.PHONY: check-optics
check-optics: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) sh $(TOP)/tests/optics/run.sh
