# SPDX-License-Identifier: GPL-2.0-or-later
# railbind slurm-gres in a real slurmctld + slurmd (root, about 30 s; skipped,
# saying so, as another user): the gres.conf it writes decides a gpu:1 job's
# cores (tests/slurm/gres.sh).
ifneq ($(wildcard $(SLURM_INCLUDE)/spank.h),)
$(BUILD)/fixtures/slurm-gres2.xml: $(TOP)/tests/slurm/gres2.topo $(RBGEN)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$(RBGEN) -o $@ $<

.PHONY: check-slurm-gres
check-slurm-gres: $(SPANK_SO) $(RAILBIND) $(BUILD)/fixtures/slurm-gres2.xml
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) SPANK_SO=$(SPANK_SO) \
		FIXTURE=$(BUILD)/fixtures/slurm-gres2.xml LOGDIR=$(BUILD)/logs \
		$(TOP)/tests/slurm/gres.sh
CHECKS += check-slurm-gres
endif

# Without Slurm or root: the lines and the audit on the alt-numbering fixture.
.PHONY: check-gres
# (The NVML stand-in's rule is tests/gpu/gpu.mk's, read after this file.)
check-gres: $(RAILBIND) $(RBGEN) $(BUILD)/fixtures/alt-numbering.xml \
		$(BUILD)/tests/gpu/nvml/libnvidia-ml.so.1
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) STUBS=$(BUILD)/tests/gpu \
		TOPOLOGIES=$(TOP)/../shared/topologies FIXTURE=$(BUILD)/fixtures/alt-numbering.xml $(TOP)/tests/slurm/gres-audit.sh
CHECKS += check-gres
