// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which PCI devices are accelerators, per DESIGN.md's vocabulary. */
#include <string.h>

#include "model.h"

#define VENDOR_NVIDIA 0x10de
#define VENDOR_AMD 0x1002

/*
 * Display chips of baseboard management controllers sit on every server and
 * must never count as a GPU: ASPEED, Matrox, and AMD's (ATI) ES1000.
 */
bool aff_is_bmc_display(int vendor, int device)
{
	return vendor == 0x1a03 || vendor == 0x102b ||
	       (vendor == VENDOR_AMD && device == 0x515e);
}

bool aff_is_accelerator(const struct aff_config *conf, const struct aff_dev *d)
{
	int base = d->class_id >= 0 ? d->class_id >> 8 : -1;
	size_t i;

	for (i = 0; i < conf->naccel; i++)
		if (conf->accel[i].vendor == d->vendor &&
		    (conf->accel[i].device < 0 ||
		     conf->accel[i].device == d->device))
			return true;
	if (aff_is_bmc_display(d->vendor, d->device))
		return false;
	/* Processing accelerators (Gaudi, Instinct in some modes). */
	if (base == 0x12)
		return true;
	/* NCCL topology files list only what NCCL uses and may omit the
	 * vendor: a display-class device there is a GPU. */
	if ((d->class_id == 0x0300 || d->class_id == 0x0302 ||
	     d->class_id == 0x0380) &&
	    (d->vendor == VENDOR_NVIDIA || d->vendor == VENDOR_AMD ||
	     d->vendor < 0))
		return true;
	/*
	 * hwloc (or NCCL's <gpu>) saw a compute OS device on it: CUDA, ROCm,
	 * oneAPI, a NEC vector engine. A display class alone is not enough.
	 */
	return d->has_gpu_osdev && base != 0x02;
}

bool aff_nic_listed(char *const *list, size_t n, const char *name,
		    const char *pci)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((name && !strcmp(list[i], name)) ||
		    (pci && *pci && !strcasecmp(list[i], pci)))
			return true;
	return false;
}
