# SPDX-License-Identifier: GPL-2.0-or-later
# Make fragment for railbind.ko, its style checks, the snapshot parser's
# unit test and the QEMU tests. Included by the top-level Makefile, which
# defines TOP := $(CURDIR), Q and quiet (kbuild's own output needs neither).

TOP ?= $(CURDIR)
KMOD_BUILD := $(TOP)/build

# Debian's headers, not the running kernel's: this build host runs another.
KMOD_KDIR_61 := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))
KMOD_KDIR_612 := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.12.*-amd64)))
KDIR ?= $(KMOD_KDIR_61)
KDIR_612 ?= $(KMOD_KDIR_612)
KMOD_SRCS := $(wildcard $(TOP)/kmod/*.c $(TOP)/kmod/*.h) $(TOP)/kmod/Kbuild $(TOP)/Kbuild

# Each kernel builds in its own copy of the sources under build/, so 6.1
# and 6.12 objects never mix and the source tree stays clean.
define kmod_build
	@if [ -z "$(1)" ] || [ ! -d "$(1)" ]; then \
		echo "kmod: no kernel headers for $(2) (run tests/vm/deps.sh)" >&2; exit 1; fi
	@mkdir -p $(KMOD_BUILD)/kmod-$(2)/kmod
	@cp $(TOP)/Kbuild $(KMOD_BUILD)/kmod-$(2)/Kbuild
	@cp $(TOP)/kmod/Kbuild $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(KMOD_BUILD)/kmod-$(2)/kmod/
	$(Q)$(MAKE) -C $(1) M=$(KMOD_BUILD)/kmod-$(2) W=1 $(3) modules
endef

.PHONY: kmod kmod-6.12 kmod-clean check-kmod-style check-kmod-unit check-vm check-vm-6.1 check-vm-6.12 \
	check-vm-harness

kmod: $(KMOD_BUILD)/kmod-6.1/kmod/railbind.ko
kmod-6.12: $(KMOD_BUILD)/kmod-6.12/kmod/railbind.ko

$(KMOD_BUILD)/kmod-6.1/kmod/railbind.ko: $(KMOD_SRCS)
	$(call kmod_build,$(KDIR),6.1,)

$(KMOD_BUILD)/kmod-6.12/kmod/railbind.ko: $(KMOD_SRCS)
	$(call kmod_build,$(KDIR_612),6.12,)

# Sparse over every file (C=2), warnings made fatal by grepping its output.
KMOD_CHECKPATCH ?= $(firstword $(wildcard $(KMOD_BUILD)/checkpatch/scripts/checkpatch.pl) \
	$(shell command -v checkpatch.pl 2>/dev/null))

$(KMOD_BUILD)/checkpatch/scripts/checkpatch.pl:
	@src=$$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null); \
	if [ -z "$$src" ]; then echo "check-kmod-style: checkpatch.pl needs linux-source-6.1 (run tests/vm/deps.sh)" >&2; exit 1; fi; \
	mkdir -p $(KMOD_BUILD)/checkpatch && \
	tar -xJf $$src -C $(KMOD_BUILD)/checkpatch --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'

check-kmod-style: $(KMOD_BUILD)/checkpatch/scripts/checkpatch.pl
	@command -v sparse >/dev/null || { echo "check-kmod-style: sparse not installed (run tests/vm/deps.sh)" >&2; exit 1; }
	$(call quiet,CHECK,kmod checkpatch)perl $(KMOD_BUILD)/checkpatch/scripts/checkpatch.pl --no-tree --strict --quiet \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $(TOP)/kmod/*.c $(TOP)/kmod/*.h \
		$(TOP)/tests/vm/provider/*.[ch] $(TOP)/tests/vm/fakebus/*.c $(TOP)/tests/vm/p2pref/*.c
	$(Q)rm -rf $(KMOD_BUILD)/kmod-sparse $(KMOD_BUILD)/kmod-sparse-6.12
	@$(call kmod_build,$(KDIR),sparse,C=2) 2>&1 | tee $(KMOD_BUILD)/sparse.log
	@$(call kmod_build,$(KDIR_612),sparse-6.12,C=2) 2>&1 | tee -a $(KMOD_BUILD)/sparse.log
	@if grep -E '(warning|error):' $(KMOD_BUILD)/sparse.log | grep -v 'jobserver'; then \
		echo "check-kmod-style: sparse or compiler warnings above" >&2; exit 1; fi
	@echo "check-kmod-style: checkpatch and sparse clean"

# Userspace parser of the snapshot, unit-tested with cmocka.
KMOD_UNIT_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -O1 \
	-I$(TOP)/libaffinity $(KMOD_UNIT_SAN)

$(KMOD_BUILD)/kmod-unit/test_kmod_snapshot: $(TOP)/tests/unit/test_kmod_snapshot.c \
		$(TOP)/libaffinity/source_kmod.c $(TOP)/libaffinity/source_kmod.h
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(KMOD_UNIT_CFLAGS) -o $@ $(TOP)/tests/unit/test_kmod_snapshot.c \
		$(TOP)/libaffinity/source_kmod.c -lcmocka

check-kmod-unit: KMOD_UNIT_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all
check-kmod-unit: $(KMOD_BUILD)/kmod-unit/test_kmod_snapshot
	$(call quiet,TEST,$@)$<

# QEMU scenarios, one boot per kernel (see tests/vm/README.md); a QEMU
# that dies by a signal is retried once from its scenario on a fresh boot.
check-vm: check-vm-6.1 check-vm-6.12

# The harness's own boot loop, against a fake QEMU: no QEMU, a few seconds.
CHECKS += check-vm-harness
check-vm-harness:
	$(call quiet,TEST,$@)/usr/bin/python3 -B $(TOP)/tests/vm/test_vmdrive.py -q

check-vm-6.1: kmod
	$(call quiet,TEST,$@)$(TOP)/tests/vm/run.sh 6.1 $(KDIR)

check-vm-6.12: kmod-6.12
	$(call quiet,TEST,$@)$(TOP)/tests/vm/run.sh 6.12 $(KDIR_612)

kmod-clean:
	$(Q)rm -rf $(KMOD_BUILD)/kmod-6.1 $(KMOD_BUILD)/kmod-6.12 $(KMOD_BUILD)/kmod-sparse \
		$(KMOD_BUILD)/kmod-sparse-6.12 $(KMOD_BUILD)/checkpatch \
		$(KMOD_BUILD)/kmod-unit $(KMOD_BUILD)/vm $(KMOD_BUILD)/sparse.log
