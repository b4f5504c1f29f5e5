# SPDX-License-Identifier: GPL-2.0-or-later
# railbind fleet's tests: 1,000 generated snapshots with planted faults, audit
# documents, bad files (tests/fleet/run.sh). Needs TOP, BUILD, RAILBIND, RBGEN.
#
# Against the ASan+UBSan build (in make check through check-asan's one
# sub-make, or alone as check-fleet-asan): 200 nodes, valgrind cannot run it,
# and a sanitizer report must not pass for an exit code the test expects (1, 2).
ifeq ($(SANITIZE),1)
FLEET_ENV := ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1 \
	FLEET_NODES=$(or $(FLEET_NODES),200) FLEET_VALGRIND=no
endif

.PHONY: check-fleet check-fleet-asan
CHECKS += check-fleet
ASAN_CHECKS += check-fleet
check-fleet: $(RAILBIND) $(RBGEN)
	$(call quiet,TEST,$@)$(FLEET_ENV) RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) sh $(TOP)/tests/fleet/run.sh

check-fleet-asan:
	$(Q)$(MAKE) SANITIZE=1 check-fleet
