# SPDX-License-Identifier: GPL-2.0-or-later
# railbind nccl-topo's round trip over every fixture and corpus machine.
CHECKS += check-ncclexport
.PHONY: check-ncclexport
check-ncclexport: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) sh $(TOP)/tests/ncclexport/run.sh

# The export under valgrind on every fixture: no leak, no invalid access.
CHECKS += check-ncclexport-valgrind
.PHONY: check-ncclexport-valgrind
check-ncclexport-valgrind: $(RAILBIND) $(RBGEN_FIXTURES)
	@set -e; for f in $(RBGEN_FIXTURES); do \
		$(VALGRIND) $(RAILBIND) nccl-topo --input $$f > /dev/null || \
		{ echo "check-ncclexport-valgrind: $$f"; exit 1; }; done; \
	echo "check-ncclexport-valgrind: $(words $(RBGEN_FIXTURES)) fixtures clean"
