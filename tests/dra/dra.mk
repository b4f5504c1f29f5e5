# SPDX-License-Identifier: GPL-2.0-or-later
# Kubernetes DRA attributes (libaffinity/out_dra.c): pcieRoot by Kubernetes'
# own rule on recorded sysfs trees and on files (tests/dra/run.sh).
.PHONY: check-dra
check-dra: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) FIXTURES=$(BUILD)/fixtures \
		TOPOLOGIES=$(TOP)/../shared/topologies $(TOP)/tests/dra/run.sh
CHECKS += check-dra
