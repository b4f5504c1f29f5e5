# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: railbind against hwloc on the corpus and generated machines
# (bench/README.md). Needs TOP, BUILD, CC, CFLAGS, LDFLAGS and TEST_LIBS from
# the including Makefile, and its LIBAFF_A, RAILBIND, RBGEN and quiet.

BENCH_DIR := $(TOP)/bench
BENCH_ALT := $(BUILD)/bench/alt
BENCH_PLANBENCH := $(BUILD)/bench/planbench

$(BENCH_ALT): $(BENCH_DIR)/alt.c $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

$(BENCH_PLANBENCH): $(BENCH_DIR)/planbench.c $(LIBAFF_A) $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) $(LIBAFF_A) $(TEST_LIBS)

.PHONY: bench
bench: $(RAILBIND) $(RBGEN) $(BENCH_ALT) $(BENCH_PLANBENCH)
	$(Q)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) ALT=$(BENCH_ALT) \
		PLANBENCH=$(BENCH_PLANBENCH) BENCH_TMP=$(BUILD)/bench/tmp \
		sh $(BENCH_DIR)/run.sh

# The broker's benchmarks (bench/broker.sh).
BENCH_BROKERBENCH := $(BUILD)/bench/brokerbench
$(BENCH_BROKERBENCH): $(BENCH_DIR)/brokerbench.c $(BENCH_DIR)/bench.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -pthread -o $@ $< $(LDFLAGS) -pthread

.PHONY: bench-broker
bench-broker: $(RAILBIND) $(RAILBINDD) $(BENCH_BROKERBENCH) \
		$(BUILD)/tests/broker_hostile $(BUILD)/fixtures/broker-host2.xml \
		$(BUILD)/fixtures/dgx-h100.xml
	$(Q)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) \
		BROKERBENCH=$(BENCH_BROKERBENCH) HOSTILE=$(BUILD)/tests/broker_hostile \
		FIXTURE=$(BUILD)/fixtures/broker-host2.xml \
		FIXTURE_DGX=$(BUILD)/fixtures/dgx-h100.xml sh $(BENCH_DIR)/broker.sh
