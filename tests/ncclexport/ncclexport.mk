# SPDX-License-Identifier: GPL-2.0-or-later
# railbind nccl-topo's round trip over every fixture and corpus machine.
CHECKS += check-ncclexport
.PHONY: check-ncclexport
check-ncclexport: $(RAILBIND) $(RBGEN_FIXTURES)
	RAILBIND=$(RAILBIND) BUILD=$(BUILD) sh $(TOP)/tests/ncclexport/run.sh
