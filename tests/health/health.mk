# SPDX-License-Identifier: GPL-2.0-or-later
# Health over time through the broker (tests/health/run.sh): railbindd's link
# and port counters on a fake sysfs, a snapshot of them, the audit's
# link-flapping and port-flapping. Included by the top-level Makefile after
# tests/audit/audit.mk (AUDIT_KMODFEED). About 20 s.
.PHONY: check-health check-health-asan
check-health: $(RAILBIND) $(RAILBINDD) $(AUDIT_KMODFEED) $(BUILD)/fixtures/audit-ok.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) KMODFEED=$(AUDIT_KMODFEED) \
		BUILD=$(BUILD) sh $(TOP)/tests/health/run.sh

check-health-asan:
	$(Q)$(MAKE) SANITIZE=1 check-health
ASAN_CHECKS += check-health
CHECKS += check-health
