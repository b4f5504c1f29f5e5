# SPDX-License-Identifier: GPL-2.0-or-later
# railbind audit's tests. Included by the top-level Makefile (TOP, BUILD,
# RBGEN_FIXTURES, RAILBIND, LIBAFF_A, VALGRIND). check-audit runs in `make check`,
# again under ASan+UBSan, and the audit of every fixture under valgrind.
RAILBIND_TOPOLOGIES ?= $(TOP)/../shared/topologies
AUDIT_FIXTURES := $(filter $(BUILD)/fixtures/audit-%,$(RBGEN_FIXTURES))

AUDIT_KMODFEED := $(BUILD)/tests/audit-kmodfeed
$(AUDIT_KMODFEED): $(TOP)/tests/audit/kmodfeed.c $(LIBAFF_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) -o $@ $< $(LDFLAGS) $(LIBAFF_A) \
		$(TEST_LIBS)

.PHONY: check-audit check-audit-asan check-audit-valgrind
check-audit: $(RAILBIND) $(RBGEN) $(RBGEN_FIXTURES) $(AUDIT_KMODFEED)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) RAILBIND_TOPOLOGIES="$(RAILBIND_TOPOLOGIES)" \
		KMODFEED=$(AUDIT_KMODFEED) \
		sh $(TOP)/tests/audit/run.sh
	$(Q)RAILBIND=$(RAILBIND) BUILD=$(BUILD) bash $(TOP)/tests/audit/nhc.sh
	$(Q)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) RAILBIND_TOPOLOGIES="$(RAILBIND_TOPOLOGIES)" \
		sh $(TOP)/tests/audit/acs.sh

# ACS per complex kind, the config_acs= remedy, gdr-readiness (tests/audit/acs/),
# alone; check-audit runs it too.
.PHONY: check-acs
check-acs: $(RAILBIND) $(RBGEN) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) RAILBIND_TOPOLOGIES="$(RAILBIND_TOPOLOGIES)" \
		sh $(TOP)/tests/audit/acs.sh

# In make check through check-asan's one sub-make (see the Makefile).
check-audit-asan:
	$(Q)$(MAKE) SANITIZE=1 check-audit
ASAN_CHECKS += check-audit

check-audit-valgrind: $(RAILBIND) $(RBGEN_FIXTURES)
	@set -e; for f in $(RBGEN_FIXTURES) --prom --nfd; do o=--json; \
		case $$f in --*) o=$$f; f=$(BUILD)/fixtures/audit-acs.xml ;; esac; \
		rc=0; $(VALGRIND) $(RAILBIND) audit $$o --input $$f > /dev/null || rc=$$?; \
		test $$rc -le 3 || { echo "check-audit-valgrind: $$o $$f (exit $$rc)"; exit 1; }; \
		done; \
	echo "check-audit-valgrind: $(words $(RBGEN_FIXTURES)) fixtures clean"

CHECKS += check-audit check-audit-valgrind
