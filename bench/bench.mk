# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: railbind against hwloc on the corpus and generated machines
# (bench/README.md). Needs TOP, BUILD, CC, CFLAGS, LDFLAGS and DEP_LIBS from
# the including Makefile, and the rules for the library, railbind and rbgen.
# Prerequisites name the files, not LIBAFF_A/RAILBIND/RBGEN, so this
# fragment may be included before those variables are set.

BENCH_DIR := $(TOP)/bench
BENCH_ALT := $(BUILD)/bench/alt
BENCH_PLANBENCH := $(BUILD)/bench/planbench

$(BENCH_ALT): $(BENCH_DIR)/alt.c $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

$(BENCH_PLANBENCH): $(BENCH_DIR)/planbench.c $(BUILD)/libaffinity.a $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) $(BUILD)/libaffinity.a $(DEP_LIBS)

.PHONY: bench
bench: $(BUILD)/railbind $(BUILD)/rbgen $(BENCH_ALT) $(BENCH_PLANBENCH)
	RAILBIND=$(BUILD)/railbind RBGEN=$(BUILD)/rbgen ALT=$(BENCH_ALT) \
		PLANBENCH=$(BENCH_PLANBENCH) BENCH_TMP=$(BUILD)/bench/tmp \
		sh $(BENCH_DIR)/run.sh

# The broker's benchmarks (bench/broker.sh).
BENCH_BROKERBENCH := $(BUILD)/bench/brokerbench
$(BENCH_BROKERBENCH): $(BENCH_DIR)/brokerbench.c $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -o $@ $< $(LDFLAGS) -pthread

.PHONY: bench-broker
bench-broker: $(BUILD)/railbind $(BUILD)/railbindd $(BENCH_BROKERBENCH) \
		$(BUILD)/fixtures/broker-host2.xml
	RAILBIND=$(BUILD)/railbind RAILBINDD=$(BUILD)/railbindd \
		BROKERBENCH=$(BENCH_BROKERBENCH) FIXTURE=$(BUILD)/fixtures/broker-host2.xml \
		sh $(BENCH_DIR)/broker.sh
