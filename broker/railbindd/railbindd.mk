# SPDX-License-Identifier: GPL-2.0-or-later
# railbindd, the broker, and its integration tests (tests/broker).
# Needs TOP, BUILD, CC, CFLAGS, LDFLAGS, DEP_LIBS and the library's rules.
RAILBINDD_SRCS := main.c log.c conf.c sched.c ctl.c ops.c request.c unicode.c serve.c peer.c claim.c \
	lease.c state.c udevmon.c
RAILBINDD_SRCS += ncclout.c share.c gpuown.c peerenv.c
# The link and port counters (tests/health), the verify op (tests/verify).
RAILBINDD_SRCS += counters.c verifyop.c
RAILBINDD_OBJS = $(addprefix $(BUILD)/obj/broker/railbindd/,$(RAILBINDD_SRCS:.c=.o))
RAILBINDD_LIBS := $(shell $(PKG_CONFIG) --libs libudev libsystemd)
CFLAGS += $(shell $(PKG_CONFIG) --cflags libudev libsystemd)

$(RAILBINDD): $(RAILBINDD_OBJS) $(LIBAFF_A)
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $(RAILBINDD_OBJS) $(LIBAFF_A) $(DEP_LIBS) \
		$(RAILBINDD_LIBS)

all: $(RAILBINDD)

# A fixture shaped like the 2-CPU test machine, so bindings can be applied.
$(BUILD)/fixtures/broker-host2.xml: $(TOP)/tests/broker/host2.topo $(RBGEN)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$(RBGEN) -o $@ $<

.PHONY: check-broker
check-broker: $(RAILBINDD) $(RAILBIND) $(BUILD)/fixtures/dgx-h100.xml \
		$(BUILD)/fixtures/small.xml $(BUILD)/fixtures/broker-host2.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) \
		RB_NO_VALGRIND=$(SANITIZE) sh $(TOP)/tests/broker/run.sh

# The same tests against an ASan+UBSan build (valgrind left out there), in
# make check through check-asan's one sub-make.
.PHONY: check-broker-asan
check-broker-asan:
	$(Q)$(MAKE) SANITIZE=1 check-broker
CHECKS += check-broker
ASAN_CHECKS += check-broker

# The broker's pure parsers (request.c, claim.c), its reading of device
# rules (gpuown.c), and the library's local rank parser, with one test per
# fuzz finding.
BROKER_UNIT_OBJS := $(addprefix $(BUILD)/obj/broker/railbindd/,request.o unicode.o claim.o gpuown.o \
	conf.o)
$(BUILD)/tests/broker_request: $(TOP)/tests/broker/test_request.c $(BROKER_UNIT_OBJS) \
		$(LIBAFF_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) $(CMOCKA_CFLAGS) \
		-I$(TOP)/broker/railbindd -DBUILD='"$(BUILD)"' -o $@ $< $(BROKER_UNIT_OBJS) $(LDFLAGS) $(LIBAFF_A) \
		$(TEST_LIBS) $(CMOCKA_LIBS)

# The broker's table of invisible code points against the Unicode data
# (tests/broker/test_unicode.py: Python's unicodedata, perl's tables).
$(BUILD)/tests/broker_unicode_dump: $(TOP)/tests/broker/unicode_dump.c \
		$(addprefix $(BUILD)/obj/broker/railbindd/,request.o unicode.o)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) -I$(TOP)/broker/railbindd -o $@ $< \
		$(addprefix $(BUILD)/obj/broker/railbindd/,request.o unicode.o) $(LDFLAGS) $(TEST_LIBS)

.PHONY: check-broker-unit
check-broker-unit: $(BUILD)/tests/broker_request $(BUILD)/tests/broker_unicode_dump \
		$(BUILD)/fixtures/dgx-h100.xml
	$(call quiet,TEST,$@)$(BUILD)/tests/broker_request && \
		python3 $(TOP)/tests/broker/test_unicode.py $(BUILD)/tests/broker_unicode_dump
CHECKS += check-broker-unit

# A full and a read-only state directory, wall-clock jumps (tests/broker/faults.sh).
.PHONY: check-broker-faults
check-broker-faults: $(RAILBINDD) $(RAILBIND) $(BUILD)/fixtures/dgx-h100.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) \
		sh $(TOP)/tests/broker/faults.sh
CHECKS += check-broker-faults

# 1,000 clients with random hang-ups (tests/broker/load.sh): 10 s in make
# check, make check-broker-load LOAD_SECONDS=60 for the long form.
LOAD_SECONDS ?= 10
$(BUILD)/tests/broker_load: $(TOP)/tests/broker/load.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) $(JSON_LIBS)

.PHONY: check-broker-load
check-broker-load: $(RAILBINDD) $(BUILD)/tests/broker_load $(BUILD)/fixtures/dgx-h100.xml
	$(call quiet,TEST,$@)RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) LOAD=$(BUILD)/tests/broker_load \
		sh $(TOP)/tests/broker/load.sh $(LOAD_SECONDS)
CHECKS += check-broker-load

# The main broker of tests/broker under valgrind memcheck, for the tests
# without timing bounds (RB_VALGRIND in test_broker.py).
.PHONY: check-broker-valgrind
check-broker-valgrind: $(RAILBINDD) $(RAILBIND) $(BUILD)/fixtures/dgx-h100.xml \
		$(BUILD)/fixtures/small.xml $(BUILD)/fixtures/broker-host2.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) RB_VALGRIND=1 \
		sh $(TOP)/tests/broker/run.sh
CHECKS += check-broker-valgrind

# Local users attacking the broker (tests/broker/hostile.sh): real second and
# third uids (setpriv) fill connections, watchers and leases, flood it with
# half-closed requests, bust its plan cache, reuse a pid, break a reload,
# plant strings and files; a victim's railbind run must be served every time.
$(BUILD)/tests/broker_hostile: $(TOP)/tests/broker/hostile.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

.PHONY: check-broker-hostile
check-broker-hostile: $(RAILBINDD) $(RAILBIND) $(BUILD)/tests/broker_hostile \
		$(BUILD)/fixtures/dgx-h100.xml $(BUILD)/fixtures/small.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) \
		HOSTILE=$(BUILD)/tests/broker_hostile sh $(TOP)/tests/broker/hostile.sh
CHECKS += check-broker-hostile

# A client's GPUs by the devices cgroup (tests/broker/test_devices.py): fail
# closed under cgroup v1, proof by descriptor under a cgroup v2 device
# program. Needs root (cgroups, bpf(2), mknod in a private mount namespace)
# and setpriv; says it skipped otherwise.
$(BUILD)/tests/broker_devices: $(TOP)/tests/broker/devices.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) -lpthread

.PHONY: check-broker-devices
check-broker-devices: $(RAILBINDD) $(RAILBIND) $(BUILD)/tests/broker_devices \
		$(BUILD)/tests/broker_hostile $(BUILD)/fixtures/dgx-h100.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) \
		HOSTILE=$(BUILD)/tests/broker_hostile DEVICES=$(BUILD)/tests/broker_devices \
		timeout 600 python3 $(TOP)/tests/broker/test_devices.py
CHECKS += check-broker-devices
