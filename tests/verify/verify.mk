# SPDX-License-Identifier: GPL-2.0-or-later
# railbind verify's tests (tests/verify/run.sh: real processes against the
# tests/verify/*.topo machines; race.c: a process that exits or whose pid is
# reused while it is read) and its benchmark (bench/verify.sh). Included by
# the top-level Makefile (TOP, BUILD, RAILBIND, RBGEN, LIBAFF_A, VALGRIND).
#
# Against the ASan+UBSan build (check-asan's one sub-make, or check-verify-asan
# alone), a sanitizer report must not pass for an exit code the test expects.
VERIFY_DIR := $(TOP)/tests/verify
VERIFY_RANK := $(BUILD)/tests/verify-rank
VERIFY_RACE := $(BUILD)/tests/verify-race
VERIFY_FIXTURES := $(patsubst $(VERIFY_DIR)/%.topo,$(BUILD)/verify/%.xml,\
	$(wildcard $(VERIFY_DIR)/*.topo))
ifeq ($(SANITIZE),1)
VERIFY_ENV := ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1
endif

$(VERIFY_RANK): $(VERIFY_DIR)/rank.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -pthread -o $@ $< $(LDFLAGS) -pthread

$(VERIFY_RACE): $(VERIFY_DIR)/race.c $(LIBAFF_A) $(VERIFY_DIR)/verify.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) $(CMOCKA_CFLAGS) -DBUILD='"$(BUILD)"' \
		-o $@ $< $(LDFLAGS) $(LIBAFF_A) $(TEST_LIBS) $(CMOCKA_LIBS)

$(BUILD)/verify/%.xml: $(VERIFY_DIR)/%.topo $(RBGEN)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$(RBGEN) -o $@ $<

.PHONY: check-verify check-verify-asan check-verify-valgrind bench-verify
check-verify: $(RAILBIND) $(RAILBINDD) $(VERIFY_RANK) $(VERIFY_RACE) $(VERIFY_FIXTURES)
	$(call quiet,TEST,$@)$(VERIFY_ENV) RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) RANK=$(VERIFY_RANK) \
		sh $(VERIFY_DIR)/run.sh
	$(Q)$(VERIFY_ENV) $(VERIFY_RACE)

check-verify-asan:
	$(Q)$(MAKE) SANITIZE=1 check-verify
ASAN_CHECKS += check-verify

# The first scene (eight ranks, three mis-bound, then fixed) with railbind
# under valgrind: no leak, no invalid access in any output form.
check-verify-valgrind: $(RAILBIND) $(VERIFY_RANK) $(VERIFY_FIXTURES)
	$(call quiet,TEST,$@)WRAP="$(VALGRIND)" VERIFY_QUICK=1 RAILBIND=$(RAILBIND) BUILD=$(BUILD) \
		RANK=$(VERIFY_RANK) sh $(VERIFY_DIR)/run.sh

CHECKS += check-verify check-verify-valgrind

# verify --all over 1,000 ranks against ps + numastat -p (bench/verify.sh).
BENCH_VERIFY_N ?= 1000
bench-verify: $(RAILBIND) $(VERIFY_RANK) $(VERIFY_FIXTURES)
	$(Q)RAILBIND=$(RAILBIND) RANK=$(VERIFY_RANK) FIXTURE=$(BUILD)/verify/verify8.xml \
		N=$(BENCH_VERIFY_N) BENCH_TMP=$(BUILD)/bench/verify sh $(TOP)/bench/verify.sh
