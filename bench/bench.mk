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
