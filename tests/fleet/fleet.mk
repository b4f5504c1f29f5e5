# SPDX-License-Identifier: GPL-2.0-or-later
# railbind fleet's tests: 1,000 generated snapshots with planted faults, audit
# documents, bad files (tests/fleet/run.sh). Needs TOP, BUILD, RAILBIND, RBGEN.
.PHONY: check-fleet
CHECKS += check-fleet
check-fleet: $(RAILBIND) $(RBGEN)
	RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) sh $(TOP)/tests/fleet/run.sh
