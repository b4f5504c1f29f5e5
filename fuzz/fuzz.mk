# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer targets (fuzz/fuzz_*.c) with ASan+UBSan, built by Debian's clang
# into build-fuzz/ against a copy of the library compiled the same way.
#   make fuzz            each target for FUZZ_SECONDS (default 60), in turn
#   make fuzz FUZZ_TARGETS=nccl FUZZ_SECONDS=3600
#   make check-fuzz      committed reproducers, then each target a fixed number
#                        of executions from a fixed seed (CI: the same every run)
# Working corpora and crashing inputs stay in build-fuzz/ (see
# docs/RELIABILITY.md). Needs TOP, BUILD, WARN, TEST_LIBS, *_CFLAGS, RBGEN_FIXTURES.

FUZZ_CC ?= clang
FUZZ_BUILD := $(TOP)/build-fuzz
FUZZ_SECONDS ?= 60
# check-fuzz: executions per target (fuzz_hwloc: a few a second, under ASan on
# seeds of up to 212 KiB).
FUZZ_CHECK_RUNS ?= 4000
FUZZ_CHECK_RUNS_HWLOC ?= 60
FUZZ_SEED ?= 1
FUZZ_PROGS := nccl hwloc config cpumask kmod_snapshot pcicfg plan_spec broker_request rank_env verify \
	optics optics_history gres dcb fabric
# hwloc-minimal: fuzz_hwloc with hwloc's minimal XML importer (HWLOC_LIBXML=0).
FUZZ_ALL := $(FUZZ_PROGS) hwloc-minimal
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_BINS := $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_PROGS))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=c11 -D_GNU_SOURCE $(WARN) $(AFF_PRIVATE_CFLAGS) \
	$(HWLOC_CFLAGS) $(JSON_CFLAGS) $(XML_CFLAGS) \
	-DFUZZ_TOPO='"$(BUILD)/fixtures/dgx-h100.xml"'

# The library again, instrumented for coverage (fuzzer-no-link) and sanitized.
# A sub-make with its own BUILD, so its objects never mix with build/'s.
# (Only in the outer make: in the sub-make, the Makefile's own rule builds it.)
ifneq ($(BUILD),$(FUZZ_BUILD))
$(FUZZ_BUILD)/libaffinity.a: FORCE
	@$(MAKE) --no-print-directory CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) \
		SAN_FLAGS='-fsanitize=fuzzer-no-link $(FUZZ_SAN)' $@
endif

$(FUZZ_BUILD)/fuzz_%: $(TOP)/fuzz/fuzz_%.c $(TOP)/fuzz/fuzz.h $(FUZZ_BUILD)/libaffinity.a
	$(call quiet,CC,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< \
		$(FUZZ_BUILD)/libaffinity.a $(TEST_LIBS)

# The broker's pure parts (request.c, unicode.c, claim.c), compiled into the target itself.
FUZZ_BROKER_SRCS := $(TOP)/broker/railbindd/request.c $(TOP)/broker/railbindd/unicode.c \
	$(TOP)/broker/railbindd/claim.c
FUZZ_BROKER_DEPS := $(FUZZ_BROKER_SRCS) $(TOP)/broker/railbindd/request.h \
	$(TOP)/broker/railbindd/railbindd.h $(TOP)/fuzz/fuzz_utf8.h
$(FUZZ_BUILD)/fuzz_broker_request $(FUZZ_BUILD)/fuzz_rank_env: $(FUZZ_BUILD)/fuzz_%: \
		$(TOP)/fuzz/fuzz_%.c $(TOP)/fuzz/fuzz.h $(FUZZ_BROKER_DEPS) $(FUZZ_BUILD)/libaffinity.a
	$(call quiet,CC,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(TOP)/broker/railbindd -fsanitize=fuzzer $(FUZZ_SAN) \
		-o $@ $< $(FUZZ_BROKER_SRCS) $(FUZZ_BUILD)/libaffinity.a $(TEST_LIBS)

# fuzz_optics's seeds: module images written from the specifications by
# tests/optics/eeprom_gen.h (seed.sh runs it).
FUZZ_MKEEPROM := $(FUZZ_BUILD)/mkeeprom
$(FUZZ_MKEEPROM): $(TOP)/tests/optics/mkeeprom.c $(TOP)/tests/optics/eeprom_gen.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(FUZZ_CC) -O1 -g -std=c11 -D_GNU_SOURCE $(WARN) -o $@ $<
fuzz-build fuzz check-fuzz: $(FUZZ_MKEEPROM)
# fuzz_dcb's seeds: DCB replies written from the kernel's dcbnl layouts by
# tests/dcb/mkdcb.c (seed.sh runs it).
FUZZ_MKDCB := $(FUZZ_BUILD)/mkdcb
$(FUZZ_MKDCB): $(TOP)/tests/dcb/mkdcb.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(FUZZ_CC) -O1 -g -std=c11 -D_GNU_SOURCE $(WARN) -o $@ $<
fuzz-build fuzz check-fuzz: $(FUZZ_MKDCB)

# fuzz_plan_spec plans every input on these (a no-NUMA, a four-NUMA AMD, a
# Grace and an unknown-NUMA node besides the DGX).
FUZZ_TOPOS := $(subst $(eval) ,:,$(patsubst %,$(BUILD)/fixtures/%.xml,\
	dgx-h100 amd-nps4 grace unknown-numa gpu-only))
export RAILBIND_FUZZ_TOPOS = $(FUZZ_TOPOS)

FUZZ_RUN = FUZZ_BIN=$(FUZZ_BUILD) FUZZ_CORPUS=$(FUZZ_BUILD)/corpus \
	FUZZ_ARTIFACTS=$(FUZZ_BUILD)/artifacts TOP=$(TOP) FIXTURES='$(RBGEN_FIXTURES)' \
	RAILBIND_TOPOLOGIES=$(RAILBIND_TOPOLOGIES) sh $(TOP)/fuzz/run.sh

CHECKS += check-fuzz
.PHONY: fuzz fuzz-build check-fuzz FORCE
FORCE:
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS) $(RBGEN_FIXTURES)
	$(call quiet,FUZZ,$(FUZZ_TARGETS))$(FUZZ_RUN) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# CI: the short version on the project's own seeds only (no shared topologies),
# each run from a fresh corpus, a fixed seed and a fixed number of executions,
# so every run tries the same inputs. fuzz_hwloc without leak checking here
# (leaks: check-asan, check-valgrind), with each of hwloc's XML importers.
check-fuzz: $(FUZZ_BINS) $(RBGEN_FIXTURES)
	$(Q)rm -rf $(FUZZ_BUILD)/check
	$(call quiet,TEST,$@)FUZZ_BIN=$(FUZZ_BUILD) FUZZ_CORPUS=$(FUZZ_BUILD)/check/corpus \
		FUZZ_ARTIFACTS=$(FUZZ_BUILD)/check/artifacts TOP=$(TOP) \
		FIXTURES='$(RBGEN_FIXTURES)' RAILBIND_TOPOLOGIES= \
		FUZZ_HWLOC_ASAN=detect_leaks=0 FUZZ_SEED=$(FUZZ_SEED) \
		FUZZ_RUNS_hwloc=$(FUZZ_CHECK_RUNS_HWLOC) \
		sh $(TOP)/fuzz/run.sh -runs $(FUZZ_CHECK_RUNS) $(FUZZ_ALL)
