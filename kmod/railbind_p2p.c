// SPDX-License-Identifier: GPL-2.0
/*
 * P2P distance and ACS redirection between two PCI functions, after the
 * logic of drivers/pci/p2pdma.c, which Debian builds without
 * (CONFIG_PCI_P2PDMA off) and whose ACS helper is not exported.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/string.h>

#ifdef CONFIG_X86
#include <asm/processor.h>
#endif

#include "railbind.h"

#define RAILBIND_MAX_HB 32
#define RAILBIND_HB_SAME 1	/* only between ports of this same host bridge */

struct railbind_hb_rule {
	u16 vendor;
	u16 device;
	unsigned int flags;
};

/*
 * Host bridges known to forward P2P between their root ports: the table
 * p2pdma.c carries. p2p_hostbridges replaces it (and the AMD Zen rule).
 */
static const struct railbind_hb_rule railbind_hb_builtin[] = {
	{ PCI_VENDOR_ID_AMD, 0x1450, 0 },
	{ PCI_VENDOR_ID_AMD, 0x15d0, 0 },
	{ PCI_VENDOR_ID_AMD, 0x1630, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x3c00, RAILBIND_HB_SAME },
	{ PCI_VENDOR_ID_INTEL, 0x3c01, RAILBIND_HB_SAME },
	{ PCI_VENDOR_ID_INTEL, 0x2f00, RAILBIND_HB_SAME },
	{ PCI_VENDOR_ID_INTEL, 0x2f01, RAILBIND_HB_SAME },
	{ PCI_VENDOR_ID_INTEL, 0x2030, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x2031, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x2032, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x2033, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x2020, 0 },
	{ PCI_VENDOR_ID_INTEL, 0x09a2, 0 },
};

static struct railbind_hb_rule railbind_hb[RAILBIND_MAX_HB];
static unsigned int railbind_nhb;
static bool railbind_hb_zen;

int railbind_p2p_init(const char *spec)
{
	char *copy, *cur, *tok;
	int ret = 0;

	if (!spec) {
		railbind_nhb = ARRAY_SIZE(railbind_hb_builtin);
		memcpy(railbind_hb, railbind_hb_builtin, sizeof(railbind_hb_builtin));
		railbind_hb_zen = true;
		return 0;
	}
	railbind_nhb = 0;
	railbind_hb_zen = false;
	if (!strcmp(spec, "none") || !*spec)
		return 0;
	copy = kstrdup(spec, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	cur = copy;
	while ((tok = strsep(&cur, ",")) != NULL) {
		struct railbind_hb_rule *r = &railbind_hb[railbind_nhb];
		char *dev, *flag;

		if (railbind_nhb == RAILBIND_MAX_HB) {
			ret = -E2BIG;
			break;
		}
		dev = strchr(tok, ':');
		if (!dev) {
			ret = -EINVAL;
			break;
		}
		*dev++ = '\0';
		flag = strchr(dev, ':');
		if (flag)
			*flag++ = '\0';
		r->flags = 0;
		if (flag && strcmp(flag, "same")) {
			ret = -EINVAL;
			break;
		}
		if (flag)
			r->flags = RAILBIND_HB_SAME;
		if (kstrtou16(tok, 16, &r->vendor) || kstrtou16(dev, 16, &r->device)) {
			ret = -EINVAL;
			break;
		}
		railbind_nhb++;
	}
	kfree(copy);
	return ret;
}

bool railbind_acs_redirects(struct pci_dev *pdev)
{
	int pos = pci_find_ext_capability(pdev, PCI_EXT_CAP_ID_ACS);
	u16 ctrl;

	if (!pos)
		return false;
	pci_read_config_word(pdev, pos + PCI_ACS_CTRL, &ctrl);
	return ctrl & (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC);
}

/* The host bridge's own function: device 0.0 on the root bus, as p2pdma.c does. */
static const struct railbind_hb_rule *
railbind_hb_lookup(struct pci_dev *pdev, bool *zen)
{
	struct pci_bus *root = pdev->bus;
	struct pci_dev *hb;
	const struct railbind_hb_rule *found = NULL;
	unsigned int i;

	*zen = false;
	while (!pci_is_root_bus(root))
		root = root->parent;
	hb = pci_get_slot(root, PCI_DEVFN(0, 0));
	if (!hb)
		return NULL;
	for (i = 0; i < railbind_nhb; i++) {
		if (railbind_hb[i].vendor == hb->vendor &&
		    railbind_hb[i].device == hb->device) {
			found = &railbind_hb[i];
			break;
		}
	}
	pci_dev_put(hb);
#ifdef CONFIG_X86
	if (!found && railbind_hb_zen &&
	    boot_cpu_data.x86_vendor == X86_VENDOR_AMD && boot_cpu_data.x86 >= 0x17)
		*zen = true;
#endif
	return found;
}

static bool railbind_hb_allows(struct pci_dev *a, struct pci_dev *b)
{
	const struct railbind_hb_rule *ra, *rb;
	bool za, zb;

	ra = railbind_hb_lookup(a, &za);
	rb = railbind_hb_lookup(b, &zb);
	if (za && zb)
		return true;
	if (!ra || !rb)
		return false;
	if ((ra->flags | rb->flags) & RAILBIND_HB_SAME)
		return pci_find_host_bridge(a->bus) == pci_find_host_bridge(b->bus);
	return true;
}

/*
 * distance = hops from each device up to their closest common upstream
 * bridge; any RR, CR or EC on either leg (common bridge included) sends the
 * traffic to the root complex. Without a common bridge both full legs count.
 */
void railbind_p2p_calc(struct pci_dev *gpu, struct pci_dev *nic,
		       struct railbind_p2p *out)
{
	struct pci_dev *a, *bb;
	int dist_a = 0, dist_b = 0;

	memset(out, 0, sizeof(*out));
	for (a = gpu; a; a = pci_upstream_bridge(a), dist_a++) {
		dist_b = 0;
		if (railbind_acs_redirects(a) && !out->acs_port)
			out->acs_port = a;
		for (bb = nic; bb; bb = pci_upstream_bridge(bb), dist_b++)
			if (bb == a)
				break;
		if (bb)
			break;
	}
	out->distance = dist_a + dist_b;
	if (!a) {
		out->acs_port = NULL;
		out->redirected = false;
		out->map = railbind_hb_allows(gpu, nic) ? "host" : "none";
		return;
	}
	out->common = a;
	for (bb = nic; bb && bb != a; bb = pci_upstream_bridge(bb))
		if (railbind_acs_redirects(bb) && !out->acs_port)
			out->acs_port = bb;
	out->redirected = out->acs_port;
	out->map = out->redirected ? "host" : "bus";
}
