# SPDX-License-Identifier: GPL-2.0-or-later
# GPU-NIC complexes (tests/complex/run.sh): Data Direct, inline, Grace
# fixtures from rbgen and the corpus's GB300/B300 NCCL files. A few seconds.
.PHONY: check-complex
check-complex: $(RAILBIND) $(RBGEN) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) \
		sh $(TOP)/tests/complex/run.sh
ASAN_CHECKS += check-complex
CHECKS += check-complex
