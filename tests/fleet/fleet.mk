# SPDX-License-Identifier: GPL-2.0-or-later
# railbind fleet's tests: 1,000 generated snapshots with planted faults, audit
# documents, bad files (tests/fleet/run.sh). Needs TOP, BUILD, RAILBIND, RBGEN.
.PHONY: check-fleet
CHECKS += check-fleet
check-fleet: $(RAILBIND) $(RBGEN)
	RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) BUILD=$(BUILD) sh $(TOP)/tests/fleet/run.sh

# The same against the ASan+UBSan build, on 200 nodes (valgrind cannot run it).
# A sanitizer report must not pass for an exit code the test expects (1, 2).
.PHONY: check-fleet-asan
CHECKS += check-fleet-asan
check-fleet-asan:
	ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1 \
		$(MAKE) SANITIZE=1 check-fleet FLEET_NODES=200 FLEET_VALGRIND=no
