# SPDX-License-Identifier: GPL-2.0-or-later
# railbind audit's tests. Included by the top-level Makefile (TOP, BUILD,
# RBGEN_FIXTURES; RAILBIND, LIBAFF_A and VALGRIND are defined after this is
# included, so prerequisites spell their paths out). check-audit runs in `make check`,
# again under ASan+UBSan, and the audit of every fixture under valgrind.
RAILBIND_TOPOLOGIES ?= $(TOP)/../shared/topologies
AUDIT_FIXTURES := $(filter $(BUILD)/fixtures/audit-%,$(RBGEN_FIXTURES))

AUDIT_KMODFEED := $(BUILD)/tests/audit-kmodfeed
$(AUDIT_KMODFEED): $(TOP)/tests/audit/kmodfeed.c $(BUILD)/libaffinity.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) $(BUILD)/libaffinity.a $(DEP_LIBS)

.PHONY: check-audit check-audit-asan check-audit-valgrind
check-audit: $(BUILD)/railbind $(RBGEN_FIXTURES) $(AUDIT_KMODFEED)
	RAILBIND=$(RAILBIND) BUILD=$(BUILD) RAILBIND_TOPOLOGIES="$(RAILBIND_TOPOLOGIES)" \
		KMODFEED=$(AUDIT_KMODFEED) \
		sh $(TOP)/tests/audit/run.sh
	RAILBIND=$(RAILBIND) BUILD=$(BUILD) bash $(TOP)/tests/audit/nhc.sh

# In make check through check-asan's one sub-make (see the Makefile).
check-audit-asan:
	$(MAKE) SANITIZE=1 check-audit
ASAN_CHECKS += check-audit

check-audit-valgrind: $(BUILD)/railbind $(RBGEN_FIXTURES)
	@set -e; for f in $(RBGEN_FIXTURES) --prom --nfd; do o=--json; \
		case $$f in --*) o=$$f; f=$(BUILD)/fixtures/audit-acs.xml ;; esac; \
		rc=0; $(VALGRIND) $(RAILBIND) audit $$o --input $$f > /dev/null || rc=$$?; \
		test $$rc -le 3 || { echo "check-audit-valgrind: $$o $$f (exit $$rc)"; exit 1; }; \
		done; \
	echo "check-audit-valgrind: $(words $(RBGEN_FIXTURES)) fixtures clean"

CHECKS += check-audit check-audit-valgrind
