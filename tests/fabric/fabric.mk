# SPDX-License-Identifier: GPL-2.0-or-later
# Rails as the fabric sees them (tests/fabric/run.sh): --root sysfs trees the
# script writes (InfiniBand and RoCE ports, healthy and each fault), made
# into snapshots the way live discovery annotates (the audit's kmodfeed),
# audited offline; libibverbs' MTUs through a stand-in library. Included by
# the top-level Makefile (TOP, BUILD, RAILBIND, LIBAFF_A, RBGEN_FIXTURES).
FABRIC_VERBS_STUB := $(BUILD)/tests/fabric/verbs/libibverbs.so.1
FABRIC_VERBSFEED := $(BUILD)/tests/fabric-verbsfeed

$(FABRIC_VERBS_STUB): $(TOP)/tests/fabric/verbs_stub.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -shared \
		-Wl,-soname,libibverbs.so.1 -o $@ $<

$(FABRIC_VERBSFEED): $(TOP)/tests/fabric/verbsfeed.c $(LIBAFF_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) -o $@ $< $(LDFLAGS) $(LIBAFF_A) \
		$(TEST_LIBS)

.PHONY: check-fabric
check-fabric: $(RAILBIND) $(RBGEN_FIXTURES) $(AUDIT_KMODFEED) $(FABRIC_VERBS_STUB) $(FABRIC_VERBSFEED)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) KMODFEED=$(AUDIT_KMODFEED) \
		VERBSFEED=$(FABRIC_VERBSFEED) VERBS_STUB=$(FABRIC_VERBS_STUB) sh $(TOP)/tests/fabric/run.sh
CHECKS += check-fabric
ASAN_CHECKS += check-fabric
