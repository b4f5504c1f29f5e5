# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-fleet: the cost per node of railbind fleet (bench/fleet.sh,
# results in bench/RESULTS.md). Prerequisites spell out their paths, so this
# fragment may be included before RAILBIND and RBGEN are set.
.PHONY: bench-fleet
bench-fleet: $(BUILD)/railbind $(BUILD)/rbgen
	RAILBIND=$(BUILD)/railbind RBGEN=$(BUILD)/rbgen BENCH_TMP=$(BUILD)/bench/fleet \
		sh $(TOP)/bench/fleet.sh $(FLEET_BENCH_NODES)
