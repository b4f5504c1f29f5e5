# SPDX-License-Identifier: GPL-2.0-or-later
# make check-static: cppcheck and clang-tidy (.clang-tidy) on the userspace
# C (library, CLI, fuzz targets, fixture generator). The kernel module has
# its own, checkpatch and sparse: check-kmod-style (kmod/kmod.mk).
# cppcheck's variableScope is off: STYLE.md declares at the top of a block.
STATIC_FILES = $(wildcard $(TOP)/libaffinity/*.c $(TOP)/broker/railbind/*.c $(TOP)/broker/railbindd/*.c $(TOP)/fuzz/*.c \
	$(TOP)/tests/gen/*.c $(TOP)/slurm/*.c)
STATIC_CFLAGS = -std=c11 -D_GNU_SOURCE -DRAILBIND_VERSION="$(VERSION)" \
	-I$(TOP)/libaffinity -I$(TOP)/broker/railbind -I$(TOP)/broker/railbindd -I$(TOP)/tests/gen -I$(TOP)/slurm \
	$(HWLOC_CFLAGS) $(JSON_CFLAGS) $(XML_CFLAGS)

CHECKS += check-static
.PHONY: check-static
check-static:
	$(call quiet,TEST,$@)TOP=$(TOP) FILES='$(STATIC_FILES)' CFLAGS_TIDY='$(STATIC_CFLAGS)' \
		sh $(TOP)/tests/static/run.sh

# make check-make (tests/static/makedeps.py): every file a recipe uses that
# make builds is reachable through the rule's prerequisites, so the build is
# right at any -j (a fragment naming LIBAFF_A before the Makefile set it
# left railbind.so without the archive it links).
CHECKS += check-make
.PHONY: check-make
check-make:
	$(call quiet,TEST,$@)python3 $(TOP)/tests/static/makedeps.py -f $(TOP)/Makefile
