// SPDX-License-Identifier: GPL-2.0
/*
 * Which PCI devices are GPUs and NICs: DESIGN.md's classes plus the
 * extra_classes parameter (test rigs use it for virtio-gpu stand-ins).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/string.h>

#include "railbind.h"

#ifndef PCI_BASE_CLASS_PROCESSING_ACCEL
#define PCI_BASE_CLASS_PROCESSING_ACCEL 0x12
#endif

#define RAILBIND_MAX_EXTRA 16
#define RAILBIND_ANY_VENDOR 0xffffffffu

struct railbind_match_rule {
	enum railbind_role role;
	u32 vendor;	/* RAILBIND_ANY_VENDOR for any */
	u16 class;	/* base class << 8 | sub class */
};

static struct railbind_match_rule railbind_extra[RAILBIND_MAX_EXTRA];
static unsigned int railbind_nextra;

const char *railbind_role_name(enum railbind_role role)
{
	return role == RAILBIND_GPU ? "gpu" : "nic";
}

static int railbind_parse_rule(char *tok, struct railbind_match_rule *r)
{
	char *vendor, *class;
	u16 v;

	vendor = strchr(tok, '=');
	if (!vendor)
		return -EINVAL;
	*vendor++ = '\0';
	if (!strcmp(tok, "gpu"))
		r->role = RAILBIND_GPU;
	else if (!strcmp(tok, "nic"))
		r->role = RAILBIND_NIC;
	else
		return -EINVAL;
	class = strchr(vendor, ':');
	if (!class)
		return -EINVAL;
	*class++ = '\0';
	r->vendor = RAILBIND_ANY_VENDOR;
	if (strcmp(vendor, "*")) {
		if (kstrtou16(vendor, 16, &v))
			return -EINVAL;
		r->vendor = v;
	}
	return kstrtou16(class, 16, &r->class) ? -EINVAL : 0;
}

int railbind_match_init(const char *spec)
{
	char *copy, *cur, *tok;
	int ret = 0;

	railbind_nextra = 0;
	if (!spec || !*spec)
		return 0;
	copy = kstrdup(spec, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	cur = copy;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		if (railbind_nextra == RAILBIND_MAX_EXTRA) {
			ret = -E2BIG;
			break;
		}
		ret = railbind_parse_rule(tok, &railbind_extra[railbind_nextra]);
		if (ret)
			break;
		railbind_nextra++;
	}
	kfree(copy);
	return ret;
}

static bool railbind_builtin_gpu(struct pci_dev *pdev)
{
	u16 class = pdev->class >> 8;

	if (class >> 8 == PCI_BASE_CLASS_PROCESSING_ACCEL)
		return true;
	if (pdev->vendor != PCI_VENDOR_ID_NVIDIA && pdev->vendor != PCI_VENDOR_ID_ATI)
		return false;
	return class == PCI_CLASS_DISPLAY_VGA || class == PCI_CLASS_DISPLAY_3D ||
	       class == PCI_CLASS_DISPLAY_OTHER;
}

/* Bridges are never GPUs or NICs: they are tracked as the chain above one. */
bool railbind_match(struct pci_dev *pdev, enum railbind_role *role)
{
	u16 class = pdev->class >> 8;
	unsigned int i;

	if (pci_is_bridge(pdev))
		return false;
	if (railbind_builtin_gpu(pdev)) {
		*role = RAILBIND_GPU;
		return true;
	}
	if (class >> 8 == PCI_BASE_CLASS_NETWORK) {
		*role = RAILBIND_NIC;
		return true;
	}
	for (i = 0; i < railbind_nextra; i++) {
		const struct railbind_match_rule *r = &railbind_extra[i];

		if (r->class != class)
			continue;
		if (r->vendor != RAILBIND_ANY_VENDOR && r->vendor != pdev->vendor)
			continue;
		*role = r->role;
		return true;
	}
	return false;
}
