# SPDX-License-Identifier: GPL-2.0-or-later
# railbindd, the broker, and its integration tests (tests/broker).
# Needs TOP, BUILD, CC, CFLAGS, LDFLAGS, DEP_LIBS and the library's rules.
RAILBINDD := $(BUILD)/railbindd
RAILBINDD_SRCS := main.c conf.c sched.c ctl.c ops.c serve.c peer.c lease.c state.c udevmon.c
RAILBINDD_SRCS += ncclout.c
RAILBINDD_OBJS = $(addprefix $(BUILD)/obj/broker/railbindd/,$(RAILBINDD_SRCS:.c=.o))
RAILBINDD_LIBS := $(shell $(PKG_CONFIG) --libs libudev libsystemd)
CFLAGS += $(shell $(PKG_CONFIG) --cflags libudev libsystemd)

$(RAILBINDD): $(RAILBINDD_OBJS) $(BUILD)/libaffinity.a
	$(CC) $(LDFLAGS) -o $@ $(RAILBINDD_OBJS) $(BUILD)/libaffinity.a $(DEP_LIBS) \
		$(RAILBINDD_LIBS)

all: $(RAILBINDD)

# A fixture shaped like the 2-CPU test machine, so bindings can be applied.
$(BUILD)/fixtures/broker-host2.xml: $(TOP)/tests/broker/host2.topo $(BUILD)/rbgen
	@mkdir -p $(@D)
	$(BUILD)/rbgen -o $@ $<

.PHONY: check-broker
check-broker: $(RAILBINDD) $(BUILD)/railbind $(BUILD)/fixtures/dgx-h100.xml \
		$(BUILD)/fixtures/small.xml $(BUILD)/fixtures/broker-host2.xml
	RAILBIND=$(BUILD)/railbind RAILBINDD=$(RAILBINDD) BUILD=$(BUILD) \
		RB_NO_VALGRIND=$(SANITIZE) sh $(TOP)/tests/broker/run.sh

# The same tests against an ASan+UBSan build (valgrind left out there).
.PHONY: check-broker-asan
check-broker-asan:
	$(MAKE) SANITIZE=1 check-broker
CHECKS += check-broker check-broker-asan
