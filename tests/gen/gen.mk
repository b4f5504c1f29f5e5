# SPDX-License-Identifier: GPL-2.0-or-later
# rbgen, the hwloc XML fixture generator, and its checks.
# Needs TOP, BUILD, RBGEN, CC, CFLAGS, LDFLAGS, quiet from the including Makefile.

RBGEN_HWCHECK := $(BUILD)/rbgen-hwcheck
RBGEN_DIR := $(TOP)/tests/gen
RBGEN_SRCS := $(addprefix $(RBGEN_DIR)/,main.c model.c parse.c layout.c param.c xml.c nvml.c)
RBGEN_FIXTURES := $(patsubst $(TOP)/tests/fixtures/%.topo,$(BUILD)/fixtures/%.xml,\
	$(wildcard $(TOP)/tests/fixtures/*.topo))

$(RBGEN): $(RBGEN_SRCS) $(RBGEN_DIR)/rbgen.h $(RBGEN_DIR)/gen.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -D_DEFAULT_SOURCE $(CPPFLAGS) -o $@ $(RBGEN_SRCS) $(LDFLAGS)

$(RBGEN_HWCHECK): $(RBGEN_DIR)/hwcheck.c $(RBGEN_DIR)/gen.mk
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CPPFLAGS) $$(pkg-config --cflags hwloc) -o $@ $< $(LDFLAGS) \
		$$(pkg-config --libs hwloc)

$(BUILD)/fixtures/%.xml: $(TOP)/tests/fixtures/%.topo $(RBGEN)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$(RBGEN) -o $@ $<

.PHONY: fixtures check-gen
fixtures: $(RBGEN_FIXTURES)

check-gen: $(RBGEN) $(RBGEN_HWCHECK)
	$(call quiet,TEST,$@)RBGEN=$(RBGEN) RBGEN_HWCHECK=$(RBGEN_HWCHECK) RBGEN_TMP=$(BUILD)/gen-test \
		sh $(RBGEN_DIR)/test-rbgen.sh $(TOP)/tests/fixtures $(RBGEN_DIR)/bad
