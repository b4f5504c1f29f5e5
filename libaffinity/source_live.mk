# SPDX-License-Identifier: LGPL-2.1-or-later
# Live discovery (source_live.c and its annotators), PCI config-space walker and
# snapshot writer. Included by the top-level Makefile, which defines TOP, BUILD, CC,
# CFLAGS, HWLOC_CFLAGS/LIBS, CMOCKA_CFLAGS/LIBS, quiet.

LIBAFF_SRCS += source_live.c sysfs.c annotate_pci.c annotate_rdma.c annotate_host.c annotate_health.c \
	pcicfg.c out_snapshot.c
# Rail ports as the fabric sees them (fabric.h): sysfs, libibverbs (dlopen()ed,
# its header only), read back for the audit's fabric checks.
LIBAFF_SRCS += fabric_parse.c fabric_info.c annotate_port.c annotate_port_verbs.c audit_fabric.c
# Transceivers: module EEPROM through ethtool netlink (libmnl) or the ioctl,
# decoded per SFF-8472, SFF-8636 and CMIS; the audit's transceiver check.
LIBAFF_SRCS += optics_decode.c optics_sff8472.c optics_sff8636.c optics_cmis.c optics_read.c \
	optics_info.c optics_history.c annotate_optics.c audit_optics.c
# Lossless RoCE: DCB netlink (libmnl, loaded by mnl_lazy.c, as for ethtool) and
# MLNX_OFED's ECN files; the audit's roce-lossless and pause-storm checks.
LIBAFF_SRCS += mnl_lazy.c dcb_parse.c dcb_read.c dcb_info.c annotate_dcb.c roce_judge.c roce_env.c audit_roce.c
# libmnl's headers only: optics_read.c dlopen()s the library on first use.
CFLAGS += $(shell $(PKG_CONFIG) --cflags libmnl)

# The unit tests build their own objects, so they run before (or without) libaffinity.
DISCOVER_OBJDIR := $(BUILD)/check-discover
DISCOVER_TESTS := $(BUILD)/tests/unit/test_pcicfg $(BUILD)/tests/unit/test_discover
RAILBIND_TOPOLOGIES ?= $(TOP)/../shared/topologies

$(DISCOVER_OBJDIR)/%.o: $(TOP)/libaffinity/%.c $(TOP)/libaffinity/source_live.h $(TOP)/libaffinity/annotate.h \
		$(TOP)/libaffinity/pcicfg.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(HWLOC_CFLAGS) -c -o $@ $<

$(DISCOVER_OBJDIR)/test_%.o: $(TOP)/tests/unit/test_%.c $(TOP)/libaffinity/source_live.h $(TOP)/libaffinity/pcicfg.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -I$(TOP)/libaffinity $(HWLOC_CFLAGS) $(CMOCKA_CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/test_pcicfg: $(DISCOVER_OBJDIR)/test_pcicfg.o $(DISCOVER_OBJDIR)/pcicfg.o
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS)

$(BUILD)/tests/unit/test_discover: $(DISCOVER_OBJDIR)/test_discover.o \
		$(DISCOVER_OBJDIR)/source_live.o $(DISCOVER_OBJDIR)/sysfs.o \
		$(DISCOVER_OBJDIR)/annotate_pci.o $(DISCOVER_OBJDIR)/annotate_rdma.o \
		$(DISCOVER_OBJDIR)/annotate_port.o $(DISCOVER_OBJDIR)/fabric_parse.o \
		$(DISCOVER_OBJDIR)/annotate_host.o $(DISCOVER_OBJDIR)/pcicfg.o \
		$(DISCOVER_OBJDIR)/out_snapshot.o $(DISCOVER_OBJDIR)/source_kmod.o \
		$(DISCOVER_OBJDIR)/err.o $(DISCOVER_OBJDIR)/fileio.o $(DISCOVER_OBJDIR)/annotate_gpu.o \
		$(DISCOVER_OBJDIR)/annotate_health.o $(DISCOVER_OBJDIR)/health.o
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(HWLOC_LIBS) $(JSON_LIBS) $(CMOCKA_LIBS)

.PHONY: check-discover
check-discover: $(DISCOVER_TESTS)
	$(call quiet,TEST,$@)$(BUILD)/tests/unit/test_pcicfg
	RAILBIND_TOPOLOGIES="$(RAILBIND_TOPOLOGIES)" $(BUILD)/tests/unit/test_discover
