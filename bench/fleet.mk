# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-fleet: the cost per node of railbind fleet (bench/fleet.sh,
# results in bench/RESULTS.md). Needs TOP, BUILD, RAILBIND, RBGEN, Q.
.PHONY: bench-fleet
bench-fleet: $(RAILBIND) $(RBGEN)
	$(Q)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BENCH_TMP=$(BUILD)/bench/fleet \
		sh $(TOP)/bench/fleet.sh $(FLEET_BENCH_NODES)
