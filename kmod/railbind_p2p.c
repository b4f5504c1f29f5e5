// SPDX-License-Identifier: GPL-2.0
/*
 * P2P mapping type and distance between two tracked functions, ported from
 * drivers/pci/p2pdma.c of the kernel this module builds against: Debian
 * builds without CONFIG_PCI_P2PDMA and p2pdma.c exports none of it. The
 * functions below are the same in 6.1.192 and 6.12.117 (checked by diff;
 * only a comment and map_types_idx(), not used here, differ).
 *
 * Ported from p2pdma.c ("PCI Peer 2 Peer DMA support", GPL-2.0):
 *   Copyright (c) 2016-2018, Logan Gunthorpe
 *   Copyright (c) 2016-2017, Microsemi Corporation
 *   Copyright (c) 2017, Christoph Hellwig
 *   Copyright (c) 2018, Eideticom Inc.
 *
 * calc_map_type_and_dist(), pci_bridge_has_acs_redir(), cpu_supports_p2pdma(),
 * pci_p2pdma_whitelist[], pci_host_bridge_dev(), __host_bridge_whitelist()
 * and host_bridge_whitelist() keep their control flow step for step. What
 * differs, and why:
 *  - they walk the render's copy of the tracked set (railbind_model_build()):
 *    pci_upstream_bridge() is ->up (the same bridge, VFs included), and
 *    pci_bridge_has_acs_redir() tests the ACS control register cached when
 *    the notifier fired or the snapshot refreshed, instead of a config read
 *    per hop of every pair; a port whose ACS control could never be read
 *    counts as not redirecting (its dev record says acs_ctl=?);
 *  - pci_host_bridge_dev() runs when the model is built, under
 *    railbind_lock with references held on devices below the host bridge
 *    (what p2pdma.c asks of its callers), and keeps the root's IDs;
 *  - no warnings (verbose is false) and no per-provider map_types cache;
 *  - the p2p_hostbridges parameter may replace the whitelist, and then the
 *    AMD Zen rule too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-map-ops.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#ifdef CONFIG_X86
#include <asm/processor.h>
#endif

#include "railbind.h"

#define RAILBIND_MAX_HB 32

struct railbind_p2pdma_whitelist_entry {
	unsigned short vendor;
	unsigned short device;
	enum {
		REQ_SAME_HOST_BRIDGE	= 1 << 0,
	} flags;
};

/* pci_p2pdma_whitelist[] as p2pdma.c has it. */
static const struct railbind_p2pdma_whitelist_entry pci_p2pdma_whitelist[] = {
	/* Intel Xeon E5/Core i7 */
	{PCI_VENDOR_ID_INTEL,	0x3c00, REQ_SAME_HOST_BRIDGE},
	{PCI_VENDOR_ID_INTEL,	0x3c01, REQ_SAME_HOST_BRIDGE},
	/* Intel Xeon E7 v3/Xeon E5 v3/Core i7 */
	{PCI_VENDOR_ID_INTEL,	0x2f00, REQ_SAME_HOST_BRIDGE},
	{PCI_VENDOR_ID_INTEL,	0x2f01, REQ_SAME_HOST_BRIDGE},
	/* Intel Skylake-E */
	{PCI_VENDOR_ID_INTEL,	0x2030, 0},
	{PCI_VENDOR_ID_INTEL,	0x2031, 0},
	{PCI_VENDOR_ID_INTEL,	0x2032, 0},
	{PCI_VENDOR_ID_INTEL,	0x2033, 0},
	{PCI_VENDOR_ID_INTEL,	0x2020, 0},
	{PCI_VENDOR_ID_INTEL,	0x09a2, 0},
	{}
};

/* The whitelist in effect (terminated by a zero vendor) and the Zen rule. */
static struct railbind_p2pdma_whitelist_entry railbind_whitelist[RAILBIND_MAX_HB + 1];
static bool railbind_zen_rule;

static int railbind_parse_hostbridge(char *tok, struct railbind_p2pdma_whitelist_entry *e)
{
	char *dev, *flag;
	u16 v, d;

	dev = strchr(tok, ':');
	if (!dev)
		return -EINVAL;
	*dev++ = '\0';
	flag = strchr(dev, ':');
	if (flag)
		*flag++ = '\0';
	if (flag && strcmp(flag, "same"))
		return -EINVAL;
	if (kstrtou16(tok, 16, &v) || kstrtou16(dev, 16, &d) || !v)
		return -EINVAL;
	e->vendor = v;
	e->device = d;
	e->flags = flag ? REQ_SAME_HOST_BRIDGE : 0;
	return 0;
}

/**
 * railbind_p2p_init - choose the host bridge whitelist
 * @spec: the p2p_hostbridges parameter: NULL for p2pdma.c's own table and
 *	  AMD Zen rule, "none", or a comma list of VVVV:DDDD[:same]
 *
 * Return: 0, -EINVAL for a malformed entry, -E2BIG past RAILBIND_MAX_HB
 * entries (both refuse the load, so no entry is dropped silently).
 */
int railbind_p2p_init(const char *spec)
{
	char *copy, *cur, *tok;
	unsigned int n = 0;
	int ret = 0;

	memset(railbind_whitelist, 0, sizeof(railbind_whitelist));
	if (!spec) {
		memcpy(railbind_whitelist, pci_p2pdma_whitelist, sizeof(pci_p2pdma_whitelist));
		railbind_zen_rule = true;
		return 0;
	}
	railbind_zen_rule = false;
	if (!strcmp(spec, "none") || !*spec)
		return 0;
	copy = kstrdup(spec, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	cur = copy;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (n == RAILBIND_MAX_HB) {
			ret = -E2BIG;
			break;
		}
		ret = railbind_parse_hostbridge(tok, &railbind_whitelist[n]);
		if (ret)
			break;
		n++;
	}
	kfree(copy);
	if (ret)
		memset(railbind_whitelist, 0, sizeof(railbind_whitelist));
	return ret;
}

/* pci_bridge_has_acs_redir(), on the cached ACS control register. */
bool railbind_p2p_redirects(const struct railbind_mnode *n)
{
	if (!n->has_acs || !n->cfg.have_acs)
		return false;
	return n->cfg.acs_ctl & (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC);
}

static bool cpu_supports_p2pdma(void)
{
	if (!railbind_zen_rule)
		return false;
#ifdef CONFIG_X86
	{
		struct cpuinfo_x86 *c = &cpu_data(0);

		/* Any AMD CPU whose family ID is Zen or newer supports p2pdma */
		if (c->x86_vendor == X86_VENDOR_AMD && c->x86 >= 0x17)
			return true;
	}
#endif
	return false;
}

static int railbind_p2p_first(struct pci_dev *pdev, void *data)
{
	*(struct pci_dev **)data = pci_dev_get(pdev);
	return 1;
}

/**
 * railbind_p2p_host_root - pci_host_bridge_dev(), kept in the model
 * @below: a device below the host bridge, referenced (keeps the bridge)
 * @hb: its model record: ->root and the root's IDs are set
 *
 * "If the first device on host's root bus is either devfn 00.0 or a PCIe
 * Root Port, return it": the device the whitelist is matched against
 * (Skylake has no 00.0 host bridge function, and lists root ports). The
 * first device is taken under pci_bus_sem, with a reference, by
 * pci_walk_bus(), whose first callback is the root bus's first device.
 *
 * Context: process; takes pci_bus_sem, so never under railbind_lock.
 */
void railbind_p2p_host_root(struct pci_dev *below, struct railbind_mhb *hb)
{
	struct pci_host_bridge *host = pci_find_host_bridge(below->bus);
	struct pci_dev *root = NULL;

	pci_walk_bus(host->bus, railbind_p2p_first, &root);
	if (!root)
		return;
	if (root->devfn == PCI_DEVFN(0, 0) || pci_pcie_type(root) == PCI_EXP_TYPE_ROOT_PORT) {
		hb->root = true;
		hb->root_vendor = root->vendor;
		hb->root_device = root->device;
	}
	pci_dev_put(root);
}

static bool __host_bridge_whitelist(const struct railbind_mhb *host, bool same_host_bridge)
{
	const struct railbind_p2pdma_whitelist_entry *entry;
	unsigned short vendor, device;

	if (!host->root)
		return false;

	vendor = host->root_vendor;
	device = host->root_device;

	for (entry = railbind_whitelist; entry->vendor; entry++) {
		if (vendor != entry->vendor || device != entry->device)
			continue;
		if (entry->flags & REQ_SAME_HOST_BRIDGE && !same_host_bridge)
			return false;

		return true;
	}

	return false;
}

/*
 * If we can't find a common upstream bridge take a look at the root
 * complex and compare it to a whitelist of known good hardware.
 */
static bool host_bridge_whitelist(const struct railbind_model *m, int a, int b)
{
	const struct railbind_mhb *host_a = &m->hbs[m->nodes[a].hb];
	const struct railbind_mhb *host_b = &m->hbs[m->nodes[b].hb];

	if (host_a == host_b)
		return __host_bridge_whitelist(host_a, true);

	if (__host_bridge_whitelist(host_a, false) &&
	    __host_bridge_whitelist(host_b, false))
		return true;

	return false;
}

#define UPSTREAM(i) (m->nodes[i].up)

/**
 * railbind_p2p_calc - calc_map_type_and_dist() on the model
 * @m: the render's model
 * @provider: index of the GPU (the memory provider)
 * @client: index of the NIC (the DMA client)
 * @out: distance, map type name, common bridge and the first redirecting
 *	 port, as p2pdma.c finds them
 *
 * Two functions under one PCIe switch are 4 apart; through the host bridge
 * the distance counts both whole chains. ACS redirect on any port of the
 * path sends the traffic through the host bridge, which must then be
 * whitelisted (or be an AMD Zen) for the map to be "host" and not "none".
 */
void railbind_p2p_calc(const struct railbind_model *m, int provider, int client,
		       struct railbind_p2p *out)
{
	enum pci_p2pdma_map_type map_type = PCI_P2PDMA_MAP_THRU_HOST_BRIDGE;
	int a = provider, b = client, bb;
	bool acs_redirects = false;
	int acs_first = -1;
	int acs_cnt = 0;
	int dist_a = 0;
	int dist_b = 0;

	out->common = -1;
	while (a >= 0) {
		dist_b = 0;

		if (railbind_p2p_redirects(&m->nodes[a])) {
			if (!acs_cnt)
				acs_first = a;
			acs_cnt++;
		}

		bb = b;

		while (bb >= 0) {
			if (a == bb)
				goto check_b_path_acs;

			bb = UPSTREAM(bb);
			dist_b++;
		}

		a = UPSTREAM(a);
		dist_a++;
	}

	out->distance = dist_a + dist_b;
	goto map_through_host_bridge;

check_b_path_acs:
	out->common = a;
	bb = b;

	while (bb >= 0) {
		if (a == bb)
			break;

		if (railbind_p2p_redirects(&m->nodes[bb])) {
			if (!acs_cnt)
				acs_first = bb;
			acs_cnt++;
		}

		bb = UPSTREAM(bb);
	}

	out->distance = dist_a + dist_b;

	if (!acs_cnt) {
		map_type = PCI_P2PDMA_MAP_BUS_ADDR;
		goto done;
	}

	acs_redirects = true;

map_through_host_bridge:
	if (!cpu_supports_p2pdma() &&
	    !host_bridge_whitelist(m, provider, client))
		map_type = PCI_P2PDMA_MAP_NOT_SUPPORTED;
done:
	out->redirected = acs_redirects;
	out->acs_port = acs_redirects ? acs_first : -1;
	switch (map_type) {
	case PCI_P2PDMA_MAP_BUS_ADDR:
		out->map = "bus";
		break;
	case PCI_P2PDMA_MAP_THRU_HOST_BRIDGE:
		out->map = "host";
		break;
	default:
		out->map = "none";
		break;
	}
}
