# SPDX-License-Identifier: GPL-2.0-or-later
# railbind.so, the Slurm SPANK plugin, and its tests (included by the
# top-level Makefile). Built when Debian's libslurm-dev spank.h is there.
#   make check-slurm      a real slurmctld + slurmd on this host (root)
SLURM_INCLUDE ?= /usr/include/slurm
SPANK_SO := $(BUILD)/railbind.so
SPANK_SRCS := railbind_spank.c spank_opts.c
SPANK_OBJS = $(addprefix $(BUILD)/obj/slurm/,$(SPANK_SRCS:.c=.o))
# Where Debian's slurm-wlm loads plugins from (PluginDir's default).
SLURMPLUGINDIR ?= /usr/lib/$(shell $(CC) -print-multiarch)/slurm-wlm

ifneq ($(wildcard $(SLURM_INCLUDE)/spank.h),)
all: $(SPANK_SO)

# libaffinity linked in statically and hidden by the version script: the
# plugin lives in srun and slurmstepd, next to whatever else they load.
$(SPANK_SO): $(SPANK_OBJS) $(LIBAFF_A) $(TOP)/slurm/railbind.sym
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -shared -Wl,--version-script=$(TOP)/slurm/railbind.sym \
		-o $@ $(SPANK_OBJS) $(LIBAFF_A) $(DEP_LIBS)

# The option parser without Slurm (cmocka).
$(BUILD)/tests/test_spank_opts: $(TOP)/tests/slurm/test_spank_opts.c \
		$(BUILD)/obj/slurm/spank_opts.o
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CMOCKA_CFLAGS) -I$(TOP)/slurm -o $@ $^ $(LDFLAGS) $(CMOCKA_LIBS)

# The fixture shaped like this 2-CPU host: 2 GPUs, 2 rails, one NUMA node.
$(BUILD)/fixtures/slurm-host2.xml: $(TOP)/tests/slurm/host2.topo $(RBGEN)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$(RBGEN) -o $@ $<

.PHONY: check-slurm check-spank-opts
check-spank-opts: $(BUILD)/tests/test_spank_opts
	$(call quiet,TEST,$@)$(VALGRIND) $(BUILD)/tests/test_spank_opts

check-slurm: check-spank-opts $(SPANK_SO) $(RAILBIND) $(RAILBINDD) \
		$(BUILD)/fixtures/slurm-host2.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RAILBINDD=$(RAILBINDD) SPANK_SO=$(SPANK_SO) \
		FIXTURE=$(BUILD)/fixtures/slurm-host2.xml LOGDIR=$(BUILD)/logs \
		$(TOP)/tests/slurm/run.sh
CHECKS += check-slurm

INSTALLED_FILES += $(SLURMPLUGINDIR)/railbind.so $(DATADIR)/railbind/plugstack.conf \
	$(MANDIR)/man8/railbind-spank.8
install: install-spank
.PHONY: install-spank
install-spank: $(SPANK_SO)
	$(call quiet,INSTALL,$(DESTDIR)$(SLURMPLUGINDIR)/railbind.so)$(INSTALL) -d $(DESTDIR)$(SLURMPLUGINDIR) $(DESTDIR)$(DATADIR)/railbind \
		$(DESTDIR)$(MANDIR)/man8
	$(Q)$(INSTALL) -m 0755 $(SPANK_SO) $(DESTDIR)$(SLURMPLUGINDIR)/railbind.so
	$(Q)$(INSTALL) -m 0644 $(TOP)/slurm/plugstack.conf $(DESTDIR)$(DATADIR)/railbind/plugstack.conf
	$(Q)$(INSTALL) -m 0644 $(TOP)/man/railbind-spank.8 $(DESTDIR)$(MANDIR)/man8/railbind-spank.8
else
.PHONY: check-slurm
check-slurm:
	@echo "check-slurm: $(SLURM_INCLUDE)/spank.h missing (./scripts/setup installs libslurm-dev)" >&2; exit 1
CHECKS += check-slurm
endif
