# SPDX-License-Identifier: GPL-2.0-or-later
# railbind nccl-check (broker/railbind/nccl_check.c, nccllog_*.c): its sources,
# its tests (tests/nccllog/run.sh: generated NCCL logs and nccl-tests output of
# each version's format against the rbgen fixtures) and its fuzz target
# (fuzz/fuzz_nccllog.c, the reader compiled into it). Included by the
# top-level Makefile after fuzz/fuzz.mk (TOP, BUILD, RAILBIND, RBGEN_FIXTURES,
# FUZZ_*).
CLI_SRCS += nccl_check.c nccllog_map.c nccllog_parse.c nccllog_tests.c nccllog_judge.c

NCCLLOG_DIR := $(TOP)/tests/nccllog
ifeq ($(SANITIZE),1)
NCCLLOG_ENV := ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1
endif

.PHONY: check-nccllog
CHECKS += check-nccllog
ASAN_CHECKS += check-nccllog
check-nccllog: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)$(NCCLLOG_ENV) RAILBIND=$(RAILBIND) BUILD=$(BUILD) \
		TMPDIR=$(BUILD)/nccllog-tmp sh $(NCCLLOG_DIR)/run.sh

# The reader and the judge, compiled into the target as the broker's parsers are.
FUZZ_NCCLLOG_SRCS := $(addprefix $(TOP)/broker/railbind/,nccllog_map.c nccllog_parse.c \
	nccllog_tests.c nccllog_judge.c)
FUZZ_ALL += nccllog
$(FUZZ_BUILD)/fuzz_nccllog: $(TOP)/fuzz/fuzz_nccllog.c $(FUZZ_NCCLLOG_SRCS) \
		$(TOP)/broker/railbind/nccllog.h $(TOP)/broker/railbind/nccllog_judge.h \
		$(TOP)/tests/nccllog/nccllog.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(TOP)/broker/railbind -fsanitize=fuzzer \
		$(FUZZ_SAN) -o $@ $< $(FUZZ_NCCLLOG_SRCS) $(JSON_LIBS) -lm
fuzz-build fuzz check-fuzz: $(FUZZ_BUILD)/fuzz_nccllog
